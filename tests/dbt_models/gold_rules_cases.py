"""Hand-written DTS Canal JSON messages that pin the truncate rules of gold (issue 5, item 3).

Topic ``gold.rules.canal`` (seeds/cdc_topics.csv), database ``gold_rules``, table ``items``
(key ``id``). Canal orders by ``es`` (ms), then the row index; a TRUNCATE statement
(``isDdl``, docs/formats.md 4c) orders on the same key as the table's row changes.

Expected current state of ``gold_rules.items`` after every record: ids 3, 4 and 5 only.
"""

from __future__ import annotations

from tests.dbt_models.conformance import Truncate
from tests.dbt_models.formats.dts_canal.cases import canal, item
from tests.dbt_models.helpers import DumpLine, Offsets

TOPIC = "gold.rules.canal"
DB = "gold_rules"
T = 1710000000000  # es base (ms)


def message(type_: str, rows: list | None = None, old: list | None = None, **kwargs) -> str:
    return canal(type_, rows, old, database=DB, **kwargs)


# (partition, value) in offset order per partition.
RECORDS: list[tuple[int, str]] = [
    # ids 1, 2: inserted and updated before the truncate -> gone.
    (0, message("INSERT", [item(1, "a"), item(2, "b")], es=T + 1000)),
    (0, message("UPDATE", [item(1, "a2")], [{"name": "a"}], es=T + 2000)),
    (0, message("TRUNCATE", es=T + 5000, is_ddl=True, sql="TRUNCATE TABLE items")),
    # id 3: inserted after the truncate -> kept.
    (0, message("INSERT", [item(3, "c")], es=T + 6000)),
    # id 2: an update older than the truncate, delivered after it -> still gone.
    (1, message("UPDATE", [item(2, "late")], [{"name": "b"}], es=T + 3000)),
    # id 4: inserted before the truncate and again after it (a re-insert) -> the new row.
    (1, message("INSERT", [item(4, "before")], es=T + 4000)),
    (1, message("INSERT", [item(4, "after")], es=T + 7000)),
    # id 5: updated after the truncate without a new insert (the source re-created it by an
    # upsert): its after image is the whole row -> kept, with the update's values only.
    (2, message("UPDATE", [item(5, "upsert", "n")], [{"name": "x"}], es=T + 8000)),
]

EXPECTED_ITEMS: dict[str, dict[str, str | None]] = {
    '{"id":"3"}': {"id": "3", "name": "c", "note": None},
    '{"id":"4"}': {"id": "4", "name": "after", "note": None},
    '{"id":"5"}': {"id": "5", "name": "upsert", "note": "n"},
}


def dump_lines() -> list[DumpLine]:
    """The records as topic dump lines (docs/architecture.md), without a key field."""
    offsets = Offsets()
    return [
        {
            "topic": TOPIC,
            "partition": partition,
            "offset": offsets(TOPIC, partition),
            "timestamp": T,
            "value": value,
        }
        for partition, value in RECORDS
    ]


TRUNCATES: list[tuple[str, Truncate]] = [
    ("dts_canal_json", Truncate(DB, None, "items", "TRUNCATE"))
]
"""(format, row of silver.table_truncates) of the truncate of these cases
(tests/dbt_models/conformance.py ``truncates`` gives each format's own)."""
