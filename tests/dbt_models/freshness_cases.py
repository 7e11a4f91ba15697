"""Topics of the freshness tests (silver.source_freshness, tests/dbt_models/test_freshness.py).

- ``freshness.heartbeats_only`` (dataworks_json): a DataWorks sync task of an idle database. It
  sends no row change, only ``MHEARTBEAT`` messages (docs/formats.md section 1,
  "Heartbeats"), the newest at :data:`NEWEST_HEARTBEAT`: the source is alive up to then, so it
  is fresh shortly after.
- ``freshness.silent`` (dts_canal_json): registered in seeds/cdc_topics.csv, never sends a
  record: stale at every configured level.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime

from tests.dbt_models.helpers import DumpLine, dump_line

HEARTBEATS_TOPIC = "freshness.heartbeats_only"
SILENT_TOPIC = "freshness.silent"
NEWEST_HEARTBEAT = datetime(2024, 6, 1, 12, 0, 30, tzinfo=UTC)
"""Event time of the newest heartbeat of :data:`HEARTBEATS_TOPIC` (UTC)."""
HEARTBEAT_MS = [
    int(NEWEST_HEARTBEAT.timestamp() * 1000) - 30_000,
    int(NEWEST_HEARTBEAT.timestamp() * 1000),
]
"""eventTime (epoch ms) of its heartbeats, 30 s apart, in offset order."""


def heartbeat(event_ms: int) -> str:
    """A DataWorks MHEARTBEAT message, shaped like seed 000's example: schema and data members
    null, ``payload.timestamp`` with eventTime and checkpointTime."""
    return json.dumps(
        {
            "schema": {"dataColumn": None, "primaryKey": None, "source": None},
            "payload": {
                "before": None,
                "after": None,
                "sequenceId": None,
                "timestamp": {"eventTime": event_ms, "checkpointTime": event_ms},
                "op": "MHEARTBEAT",
                "ddl": None,
            },
            "version": "0.0.1",
        },
        separators=(",", ":"),
    )


def dump_lines() -> list[DumpLine]:
    """The heartbeats (and nothing for the silent topic) as topic dump lines."""
    return [
        dump_line(HEARTBEATS_TOPIC, 0, offset, heartbeat(ms), timestamp=ms)
        for offset, ms in enumerate(HEARTBEAT_MS)
    ]
