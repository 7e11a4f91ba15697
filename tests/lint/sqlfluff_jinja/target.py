"""The `target` of dbt's Jinja context: the `prod` output of profiles.yml (the default)."""

name = "prod"
schema = "silver"
type = "sparksession"
