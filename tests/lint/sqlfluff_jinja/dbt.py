"""The `dbt` namespace of dbt's Jinja context, as the project's macros use it.

`macros/cdc_interrupted_writes.sql` overrides `is_incremental()` and calls dbt's own through
`dbt.is_incremental()`.
"""


def is_incremental() -> bool:
    """Render the incremental branch of a model, as sqlfluff's own dbt builtin does."""
    return True
