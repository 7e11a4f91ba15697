"""What `make lint` and `make test` check besides pytest: the Jinja context sqlfluff renders
the SQL with (`sqlfluff_jinja`, see `.sqlfluff`) and the project's own dbt-bouncer check
(`dbt_bouncer_checks`, see `dbt-bouncer.yml`)."""
