{# The sparksession adapter reuses dbt-spark's macros (plugin dependency "spark"). #}
