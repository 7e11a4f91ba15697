"""Stand-in of dbt's Jinja ``exceptions`` for sqlfluff's jinja templater. It renders nothing:
sqlfluff's ``var()`` gives placeholder values that the project's checks of vars (e.g.
``macros/cdc_freshness.sql``) would reject, and the lint is about the SQL around them."""


def raise_compiler_error(message: str) -> str:
    return ""


def warn(message: str) -> str:
    return ""
