"""Code generation for the dbt project (in the spirit of dbt-codegen).

``python -m cdc_lakehouse.codegen gold-tables``: one typed gold model per source table found in
silver (:mod:`.cli`; the pure generator is :mod:`.gold_tables`, the type mapping
:mod:`.type_mapping`, the Spark reading :mod:`.silver`).
"""
