"""One source table delivered through two topics, for every format (issue 19, "Ties across
topics"): a replication task re-created on a new topic, or a migration between topics.

Per format, topics ``xtopic.<format>.a`` and ``xtopic.<format>.b`` (seeds/cdc_topics.csv)
carry changes of the same row (key 1) of table ``xtopic_items`` of database ``xtopic`` where
the format names one (upper-case for Shareplex and Qlik). Both topics restart at offset 0 of
partition 0, and the change at each offset has the same format ordering fields in both topics
(same sequenceId, es, sourceTimestamp and id, scn, changeSequence...) but different values:
``<side>-insert``, then ``<side>-update``. Only the topic tells the two changes apart, so the
ordering keys must end in it: the changes order (format fields, partition, offset, topic
name), i.e. a-insert, b-insert, a-update, b-update, and the current row is ``b-update``
whatever the delivery order (topic b's records are written first).

DataHub Tuple sends its update as two records (before half, after half); Qlik sends a
metadata message first. Tuple and Lindorm SQL messages carry no key: ``id`` is declared for
both topics in seeds/cdc_declared_keys.csv.

Each format's messages are in its cases file: ``cross_topic_case(format_name) -> Case``
(tests/dbt_models/conformance.py).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from tests.dbt_models import conformance
from tests.dbt_models.helpers import DumpLine, dump_line

SIDES = ("a", "b")
"""The two topics of each format, in name order: b's changes win ties."""
TABLE = "xtopic_items"
DB = "xtopic"
"""The database (schema for Shareplex, task for Qlik) of the table, where the format has one."""
T = 1700000000000  # event time base (ms)


def topic(source_format: str, side: str) -> str:
    return f"xtopic.{source_format}.{side}"


@dataclass(frozen=True)
class Case:
    """One format's table delivered through its two topics.

    Attributes:
        messages: side -> the topic's record values, in offset order (partition 0).
        source_table: the table as the format names it.
        key: the key column; name: the column whose value names the change.
        changes: rows each topic gives silver.change_events (Tuple: its before half too).
        row_index_in_key: the ordering key has the row's index in its message after the
            offset (a message of several rows: Canal).
        record_key: the Kafka key of every record (Debezium takes the key columns from it;
            None: no key).
    """

    messages: Callable[[str], list[str | bytes]]
    source_table: str
    key: str
    name: str
    changes: int
    row_index_in_key: bool = False
    record_key: str | None = None


def cases() -> dict[str, Case]:
    """format -> its case, from each format's cases file (``cross_topic_case``,
    tests/dbt_models/conformance.py); a format whose cases file lacks it is left out here
    (tests/unit/test_conformance.py fails for it)."""
    return conformance.provided("cross_topic_case")


EXPECTED_VERSIONS = ["a-insert", "b-insert", "a-update", "b-update"]
"""The row's versions in order: by change (format fields and offset), then topic name."""
EXPECTED_CURRENT = "b-update"


def dump_lines() -> list[DumpLine]:
    """Every format's two topics as topic dump lines (topic b's records before topic a's)."""
    lines = []
    for source_format, case in cases().items():
        for side in reversed(SIDES):
            for offset, value in enumerate(case.messages(side)):
                lines.append(
                    dump_line(
                        topic(source_format, side),
                        0,
                        offset,
                        value,
                        timestamp=T,
                        key=case.record_key,
                    )
                )
    return lines
