"""The `dbt` namespace of dbt's Jinja context, as the project's macros use it.

The project's macros call dbt's own `is_incremental()` through `dbt.is_incremental()`.
"""


def is_incremental() -> bool:
    """Render the incremental branch of a model, as sqlfluff's own dbt builtin does."""
    return True
