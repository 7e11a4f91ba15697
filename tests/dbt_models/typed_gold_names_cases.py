"""Source tables whose names are hostile to the typed gold generator, for the pipeline tests.

Names are data: a Kafka message may name its table and columns anything. These DataWorks JSON
messages (docs/formats.md 1, the registered topic ``typed.cases.dataworks`` of
typed_gold_cases.py, partition 7, database ``typed_cases``) carry names that are Jinja
(``{{ log(...) }}``, ``{% do run_query(...) %}``, an unclosed ``{#``, the ``{% raw %}`` /
``{% endraw %}`` trick), SQL (quotes, backslashes, backticks, comments, Spark's ``${...}``
variable substitution), YAML (``ON``, ``yes``, ``null``: booleans and null to a YAML reader),
control and format characters (newline, carriage return, NUL, ESC, a right-to-left override,
a line separator, a byte order mark), unicode beyond the BMP, a 1,000-character column name
and a 300-character table name.

:data:`EXPECTED_VALUES` holds each table's one row: source column -> the value its typed model
must return (a string column's value is its own name, exactly).
"""

from __future__ import annotations

import json
from typing import Any

from tests.dbt_models.helpers import DumpLine
from tests.dbt_models.typed_gold_cases import DATAWORKS_TOPIC, DB, EVENT_MS

PARTITION = 7
LOG_MARKER = "HOSTILE-NAME-LOG-RAN"
"""What the names' ``log()`` calls would print, had dbt run them."""
PWNED_TABLE = "default.hostile_name_pwned"
"""The table the hostile table name's ``run_query`` would create, had dbt run it."""

LOG = f'{{{{ log("{LOG_MARKER}", info=true) }}}}'
HOSTILE_TABLE = f'{{% do run_query("create table {PWNED_TABLE} as select 1") %}}t'
LONG_TABLE = "t" * 300

HOSTILE_COLUMNS: list[tuple[str, str]] = [
    ("id", "LONG"),
    ("ON", "LONG"),  # a key column: YAML reads `on` as true
    (LOG, "STRING"),
    ("c$}{%", "LONG"),
    ("{# unclosed", "STRING"),
    ("{% raw %}{% endraw %}" + LOG, "STRING"),
    ("{%- endraw %}{% raw -%}" + LOG, "STRING"),
    ("#} %} }} {{", "STRING"),
    ("${spark.app.name}", "STRING"),
    ("${env:HOME}", "STRING"),
    ("it's", "STRING"),
    ("back\\slash\\", "STRING"),
    ("\\u007b\\'", "STRING"),
    ("back`tick", "STRING"),
    ('"double" quotes', "STRING"),
    ("'; drop table x; --", "STRING"),
    ("*/ -- /*", "STRING"),
    ("new\nline\r\nend", "STRING"),
    ("nul\x00byte", "STRING"),
    ("tab\tesc\x1b[31mred", "STRING"),
    ("\u2028sep\x85nel\ufeffbom", "STRING"),
    ("\u202eright to left", "STRING"),
    ("中文 名字", "STRING"),
    ("emoji 😀 \U000e0041", "STRING"),
    ("yes", "STRING"),
    ("null", "STRING"),
    ("from", "STRING"),
    ("x" * 1000, "STRING"),
]
HOSTILE_KEY = ["id", "ON"]
LONG_COLUMNS: list[tuple[str, str]] = [("id", "LONG"), ("name", "STRING")]

TABLES: dict[str, tuple[list[tuple[str, str]], list[str]]] = {
    HOSTILE_TABLE: (HOSTILE_COLUMNS, HOSTILE_KEY),
    LONG_TABLE: (LONG_COLUMNS, ["id"]),
}
"""source table -> (its columns and DataWorks types, its key)."""


def _value(name: str, source_type: str) -> Any:
    """The value a column holds in the one row: a number for a LONG column, else the
    column's own name."""
    if source_type == "LONG":
        return 7 if name == "id" else len(name)
    return name


EXPECTED_VALUES: dict[str, dict[str, Any]] = {
    table: {name: _value(name, source_type) for name, source_type in columns}
    for table, (columns, _key) in TABLES.items()
}
"""source table -> source column -> the typed value of its one row."""


def _dataworks(offset: int, table: str) -> str:
    columns, key = TABLES[table]
    return json.dumps(
        {
            "schema": {
                "dataColumn": [{"name": n, "type": t} for n, t in columns],
                "primaryKey": key,
                "source": {"dbType": "MySQL", "dbName": DB, "tableName": table},
            },
            "payload": {
                "before": None,
                "after": {"dataColumn": EXPECTED_VALUES[table]},
                "sequenceId": str(EVENT_MS * 1000000 + offset),
                "op": "INSERT",
                "timestamp": {"eventTime": EVENT_MS + offset},
                "ddl": None,
            },
            "version": "1.0.0",
        },
        ensure_ascii=False,
    )


def records() -> list[dict[str, Any]]:
    """One insert per table, in partition :data:`PARTITION` of the DataWorks typed topic."""
    return [
        {
            "topic": DATAWORKS_TOPIC,
            "partition": PARTITION,
            "offset": offset,
            "key": None,
            "value": _dataworks(offset, table),
            "timestamp": EVENT_MS,
        }
        for offset, table in enumerate(TABLES)
    ]


def dump_lines() -> list[DumpLine]:
    """The cases as topic dump lines (JSON texts keeping non-ASCII characters as they are)."""
    return [json.dumps(r, ensure_ascii=False) for r in records()]
