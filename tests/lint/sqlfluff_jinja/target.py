"""The `target` of dbt's Jinja context: the `local` output of profiles.yml."""

name = "local"
schema = "silver"
type = "sparksession"
