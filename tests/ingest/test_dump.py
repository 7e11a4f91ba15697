"""Unit tests of the topic dump (parsing, validation, offsets) and the ``cdc_dump`` source's
planning and reading logic, without Spark."""

from __future__ import annotations

import base64
import json
import os
from pathlib import Path
from typing import Any

import pytest

from cdc_lakehouse.runtime.settings import ConfigError
from ingest.dump import DumpError, build_index, dump_files, load_dump, parse_line
from ingest.dump_source import CdcDumpStreamReader, DumpFilePartition
from ingest.offsets import from_json_offsets, next_end_offsets, to_json_offsets

TOPICS = ("orders", "users")


def write_lines(path: Path, lines: list[Any]) -> Path:
    """Write ``lines`` (dicts as JSON, strings as they are) to ``path``, one per line."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as handle:
        for line in lines:
            handle.write((line if isinstance(line, str) else json.dumps(line)) + "\n")
    return path


def keyed(records: list) -> list[tuple]:
    return [(r.topic, r.partition, r.offset, r.key, r.value) for r in records]


# --------------------------------------------------------------------------- parsing


def test_text_record_with_every_field() -> None:
    line = parse_line(
        json.dumps(
            {
                "topic": "orders",
                "partition": 2,
                "offset": 41,
                "timestamp": 1_700_000_000_123,
                "key": '{"id": 1}',
                "value": "caf\u00e9",
                "headers": [{"key": "h1", "value": "v"}, {"key": "h2", "value": None}],
            }
        ),
        "f:1",
    )
    assert (line.topic, line.partition, line.offset) == ("orders", 2, 41)
    assert line.timestamp_ms == 1_700_000_000_123
    assert line.timestamp_type == 0
    assert line.key == b'{"id": 1}'
    assert line.value == "caf\u00e9".encode()
    assert line.headers == (("h1", b"v"), ("h2", None))


def test_base64_record_and_binary_header() -> None:
    raw = bytes([0, 1, 254, 255])
    line = parse_line(
        json.dumps(
            {
                "topic": "orders",
                "key_base64": base64.b64encode(b"\x00k").decode(),
                "value_base64": base64.b64encode(raw).decode(),
                "timestampType": 1,
                "headers": [{"key": "bin", "value_base64": base64.b64encode(raw).decode()}],
            }
        ),
        "f:1",
    )
    assert line.key == b"\x00k"
    assert line.value == raw
    assert line.timestamp_type == 1
    assert line.headers == (("bin", raw),)


def test_omitted_fields_default() -> None:
    line = parse_line('{"topic": "orders"}', "f:1")
    assert (line.partition, line.offset, line.timestamp_ms, line.timestamp_type) == (0, None, 0, 0)
    assert (line.key, line.value, line.headers) == (None, None, ())


def test_omitted_offsets_follow_line_order_per_topic_partition(tmp_path: Path) -> None:
    """Line order counts per topic-partition, across files in sorted path order; blank lines
    do not count."""
    write_lines(
        tmp_path / "b.jsonl",
        [{"topic": "orders", "value": "b0"}, {"topic": "orders", "partition": 1, "value": "p1"}],
    )
    write_lines(
        tmp_path / "a.jsonl",
        [{"topic": "orders", "value": "a0"}, "", "   ", {"topic": "users", "value": "u0"}],
    )
    write_lines(tmp_path / "sub" / "c.jsonl", [{"topic": "orders", "value": "c0"}])
    (tmp_path / "ignored.json").write_text("not a dump")
    assert [p.name for p in dump_files(tmp_path)] == ["a.jsonl", "b.jsonl", "c.jsonl"]
    records = load_dump(tmp_path, TOPICS)
    assert keyed(records) == [
        ("orders", 0, 0, None, b"a0"),
        ("users", 0, 0, None, b"u0"),
        ("orders", 0, 1, None, b"b0"),
        ("orders", 1, 0, None, b"p1"),
        ("orders", 0, 2, None, b"c0"),
    ]
    assert records[1].line == 4


def test_identical_duplicates_are_dropped(tmp_path: Path) -> None:
    rec = {"topic": "orders", "offset": 3, "value": "x", "timestamp": 5}
    write_lines(tmp_path / "a.jsonl", [rec, rec, {"topic": "orders", "offset": 4, "value": "y"}])
    write_lines(tmp_path / "b.jsonl", [rec, {"topic": "orders", "offset": 5, "value": "z"}])
    index = build_index(tmp_path, TOPICS)
    assert (index.lines, index.records) == (5, 3)
    assert index.end_offsets == {("orders", 0): 6}
    assert index.files[1].skip == {("orders", 0): [(3, 4)]}
    assert [r.offset for r in load_dump(tmp_path, TOPICS)] == [3, 4, 5]


# --------------------------------------------------------------------------- errors


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("{not json", "not valid JSON"),
        ("[1, 2]", "expected a JSON object"),
        ('{"value": "x"}', "'topic' must be a non-empty string (missing)"),
        ('{"topic": 7}', "'topic' must be a non-empty string"),
        ('{"topic": ""}', "'topic' must be a non-empty string"),
        ('{"topic": "orders", "value": "x", "value_base64": "eA=="}', "both 'value' and"),
        ('{"topic": "orders", "key": "x", "key_base64": "eA=="}', "both 'key' and"),
        ('{"topic": "orders", "value_base64": "not base64!"}', "'value_base64' is not valid"),
        ('{"topic": "orders", "offset": -1}', "'offset' must be >= 0"),
        ('{"topic": "orders", "offset": 1.5}', "'offset' must be an integer"),
        ('{"topic": "orders", "offset": "3"}', "'offset' must be an integer"),
        ('{"topic": "orders", "offset": true}', "'offset' must be an integer"),
        ('{"topic": "orders", "partition": -2}', "'partition' must be >= 0"),
        (
            '{"topic": "orders", "offset": 99999999999999999999999}',
            "'offset' must be at most 9223372036854775807 (a Kafka offset is a 64-bit signed "
            "integer), got 99999999999999999999999.",
        ),
        ('{"topic": "orders", "offset": 9223372036854775808}', "'offset' must be at most 922"),
        ('{"topic": "orders", "partition": 2147483648}', "'partition' must be at most 214"),
        ('{"topic": "orders", "timestamp": 9223372036854776}', "'timestamp' must be at most"),
        ('{"topic": "orders", "timestamp": -9223372036854776}', "'timestamp' must be >= -922"),
        ('{"topic": "orders", "timestamp": "now"}', "'timestamp' must be an integer"),
        ('{"topic": "orders", "timestampType": 2}', "'timestampType' must be 0"),
        ('{"topic": "orders", "value": {"a": 1}}', "'value' must be a string or null"),
        ('{"topic": "orders", "vaule": "x"}', "unknown field(s) vaule"),
        ('{"topic": "orders", "headers": {"a": "b"}}', "'headers' must be a list"),
        ('{"topic": "orders", "headers": [{"value": "b"}]}', "headers[0]: 'key' must be"),
        (
            '{"topic": "orders", "headers": [{"key": "k", "value_base64": "@@"}]}',
            "headers[0]: 'value_base64' is not valid base64",
        ),
    ],
)
def test_malformed_line_names_file_and_line(tmp_path: Path, line: str, message: str) -> None:
    dump = write_lines(tmp_path / "d.jsonl", [{"topic": "orders"}, "", line])
    with pytest.raises(DumpError) as err:
        build_index(dump, TOPICS)
    assert str(err.value).startswith(f"{dump}:3: ")
    assert message in str(err.value)
    assert isinstance(err.value, ConfigError)


def test_not_utf8(tmp_path: Path) -> None:
    dump = tmp_path / "d.jsonl"
    dump.write_bytes(b'{"topic": "orders"}\n{"topic": "orders", "value": "\xff"}\n')
    with pytest.raises(DumpError, match=rf"^{dump}:2: not UTF-8"):
        build_index(dump, TOPICS)


def test_unknown_topic(tmp_path: Path) -> None:
    dump = write_lines(tmp_path / "d.jsonl", [{"topic": "orders"}, {"topic": "nope"}])
    with pytest.raises(DumpError) as err:
        build_index(dump, TOPICS, registry_label="seeds/cdc_topics.csv")
    assert str(err.value) == (
        f"{dump}:2: topic 'nope' is not in seeds/cdc_topics.csv: add a row to "
        "seeds/cdc_topics.csv or remove the records."
    )


def test_conflicting_duplicate_gives_both_locations(tmp_path: Path) -> None:
    first = write_lines(tmp_path / "a.jsonl", [{"topic": "orders", "offset": 7, "value": "x"}])
    second = write_lines(
        tmp_path / "b.jsonl",
        [{"topic": "users"}, {"topic": "orders", "offset": 7, "value": "y"}],
    )
    with pytest.raises(DumpError) as err:
        build_index(tmp_path, TOPICS)
    message = str(err.value)
    assert message.startswith(f"{second}:2: orders partition 0 offset 7 is also at {first}:1")
    assert "different content" in message


def test_implicit_offset_colliding_with_explicit_one(tmp_path: Path) -> None:
    dump = write_lines(
        tmp_path / "a.jsonl",
        [{"topic": "orders", "offset": 1, "value": "x"}, {"topic": "orders", "value": "y"}],
    )
    with pytest.raises(DumpError, match=rf"^{dump}:2: orders partition 0 offset 1 is also at"):
        build_index(dump, TOPICS)


def test_missing_dump_path_and_empty_directory(tmp_path: Path) -> None:
    with pytest.raises(DumpError, match="no such file or directory"):
        dump_files(tmp_path / "missing")
    with pytest.raises(DumpError, match=r"holds no \*\.jsonl file"):
        dump_files(tmp_path)


# --------------------------------------------------------------------------- offsets


def test_offset_json_round_trip_is_canonical() -> None:
    offsets = {("b", 10): 3, ("a", 2): 1, ("b", 9): 0}
    as_json = to_json_offsets(offsets)
    assert json.dumps(as_json) == '{"a": {"2": 1}, "b": {"9": 0, "10": 3}}'
    assert from_json_offsets(as_json) == offsets
    assert from_json_offsets(json.loads(json.dumps(as_json))) == offsets
    assert from_json_offsets({}) == {}


def test_next_end_offsets() -> None:
    available = {("a", 0): [0, 1, 2, 5, 9], ("b", 0): [0, 1]}
    target = {("a", 0): 10, ("b", 0): 2}
    assert next_end_offsets({}, target, available) == target
    # capped: sorted topic-partition order, gaps in offsets counted as absent records
    assert next_end_offsets({}, target, available, 4) == {("a", 0): 6}
    assert next_end_offsets({("a", 0): 6}, target, available, 2) == {("a", 0): 10, ("b", 0): 1}
    # nothing new: exactly the start (also for topic-partitions the dump no longer has)
    done = {("a", 0): 10, ("b", 0): 2, ("gone", 0): 7}
    assert next_end_offsets(done, target, available, 4) == done
    # a dump older than the checkpoint never moves offsets backwards
    assert next_end_offsets({("a", 0): 50}, target, available) == {("a", 0): 50, ("b", 0): 2}


# --------------------------------------------------------------------------- source logic


def reader_for(dump: Path, max_records: int | None = None) -> CdcDumpStreamReader:
    options = {"path": str(dump), "topics": json.dumps(list(TOPICS))}
    if max_records:
        options["maxrecordsperbatch"] = str(max_records)
    return CdcDumpStreamReader(options)


def read_all(reader: CdcDumpStreamReader, start: dict, end: dict) -> list[tuple]:
    rows = []
    for part in reader.partitions(start, end):
        for batch in reader.read(part):
            for row in batch.to_pylist():
                rows.append((row["topic"], row["partition"], row["offset"], row["value"]))
    return rows


def test_source_batches_partitions_and_arrow_rows(tmp_path: Path) -> None:
    from pyspark.sql.streaming.datasource import ReadAllAvailable, ReadMaxRows

    write_lines(
        tmp_path / "a.jsonl",
        [
            {"topic": "orders", "offset": i, "value": f"a{i}", "timestamp": 1000 + i}
            for i in range(4)
        ]
        + [{"topic": "users", "partition": 1, "key_base64": "AP8=", "headers": [{"key": "h"}]}],
    )
    write_lines(  # overlaps a.jsonl at offsets 2..3 (identical), then adds 4..5
        tmp_path / "b.jsonl",
        [{"topic": "orders", "offset": i, "value": f"a{i}", "timestamp": 1000 + i} for i in (2, 3)]
        + [{"topic": "orders", "offset": i, "value": f"b{i}"} for i in (4, 5)],
    )
    reader = reader_for(tmp_path, max_records=4)
    assert reader.initialOffset() == {}
    assert reader.getDefaultReadLimit() == ReadMaxRows(4)
    reader.prepareForTriggerAvailableNow()
    assert reader.latestOffset({}, ReadAllAvailable()) == {"orders": {"0": 6}, "users": {"1": 1}}

    end1 = reader.latestOffset({}, ReadMaxRows(4))
    assert end1 == {"orders": {"0": 4}}
    parts = reader.partitions({}, end1)
    assert len(parts) == 2 and all(isinstance(p, DumpFilePartition) for p in parts)
    assert read_all(reader, {}, end1) == [("orders", 0, i, f"a{i}".encode()) for i in range(4)]

    end2 = reader.latestOffset(end1, ReadMaxRows(4))
    assert end2 == {"orders": {"0": 6}, "users": {"1": 1}}
    windows = [(p.window.first_line, p.window.last_line) for p in reader.partitions(end1, end2)]
    assert windows == [(5, 5), (3, 4)]  # only these lines are parsed by read()
    assert read_all(reader, end1, end2) == [
        ("users", 1, 0, None),
        ("orders", 0, 4, b"b4"),
        ("orders", 0, 5, b"b5"),
    ]
    assert reader.latestOffset(end2, ReadMaxRows(4)) == end2
    assert reader.partitions(end2, end2) == []

    batch = next(reader.read(reader.partitions(end1, end2)[0]))
    row = batch.to_pylist()[0]
    assert row["key"] == b"\x00\xff"
    assert row["headers"] == [{"key": "h", "value": None}]
    assert row["timestampType"] == 0
    first = next(reader.read(reader.partitions({}, end1)[0])).to_pylist()[0]
    assert first["timestamp"].timestamp() == 1.0  # 1000 ms after the epoch, UTC


def test_frozen_index_ignores_appended_lines_and_reader_refuses_changed_file(
    tmp_path: Path,
) -> None:
    from pyspark.sql.streaming.datasource import ReadAllAvailable

    dump = write_lines(tmp_path / "a.jsonl", [{"topic": "orders", "value": "x"}])
    reader = reader_for(dump)
    reader.prepareForTriggerAvailableNow()
    parts = reader.partitions({}, {"orders": {"0": 1}})
    with dump.open("a") as handle:
        handle.write(json.dumps({"topic": "orders", "value": "y"}) + "\n")
    os.utime(dump, ns=(1, 1))
    assert reader.latestOffset({}, ReadAllAvailable()) == {"orders": {"0": 1}}
    with pytest.raises(DumpError, match="changed or vanished"):
        list(reader.read(parts[0]))
    assert reader_for(dump).latestOffset({}, ReadAllAvailable()) == {"orders": {"0": 2}}


# --------------------------------------------------------------------------- Arrow reading


def _plain(topic: str, partition: int, offset: int, value: str, **extra: Any) -> dict[str, Any]:
    return {"topic": topic, "partition": partition, "offset": offset, "value": value, **extra}


def _arrow_rows(plan: Any, start: dict, end: dict, window: Any) -> list[tuple]:
    from ingest.dump import read_plain_table

    table = read_plain_table(plan, start, end, window)
    return [
        (
            r["topic"],
            r["partition"],
            r["offset"],
            None if r["key"] is None else r["key"].encode(),
            r["value"].encode(),
        )
        for r in table.to_pylist()
    ]


def test_plain_files_read_with_arrow_give_the_same_records(tmp_path: Path) -> None:
    """Plain files are read with Arrow, the others line by line; windows of 2 records split a
    file; an identical copy of an offset in a later file is dropped by both readers."""
    from ingest.dump import read_file_records, read_windows

    write_lines(
        tmp_path / "a.jsonl",
        [
            _plain("orders", p % 2, p // 2, f"v{p}", key=f"k{p}", timestamp=1000 + p)
            for p in range(7)
        ],
    )
    write_lines(
        tmp_path / "b.jsonl",
        [_plain("orders", 0, 3, "v6", key="k6", timestamp=1006), _plain("users", 0, 0, "u0")],
    )
    write_lines(tmp_path / "c.jsonl", [{"topic": "users", "value_base64": "AAE="}, ""])
    index = build_index(tmp_path, TOPICS)
    assert [plan.plain for plan in index.files] == [True, True, False]
    assert index.files[1].skip == {("orders", 0): [(3, 4)]}
    start = {("orders", 0): 1}
    end = {("orders", 0): 4, ("orders", 1): 3, ("users", 0): 2}
    arrow: list[tuple] = []
    lines: list[tuple] = []
    for plan in index.files:
        for window in read_windows(plan, start, end, max_records=2):
            assert window.records is not None and window.records <= 2
            lines += keyed(list(read_file_records(plan, start, end, window)))
            if plan.plain:
                arrow += _arrow_rows(plan, start, end, window)
    assert arrow == [r for r in lines if r[0] == "orders" or r[2] == 0]
    assert sorted(lines) == sorted(
        [("orders", 0, o, f"k{2 * o}".encode(), f"v{2 * o}".encode()) for o in (1, 2, 3)]
        + [("orders", 1, o, f"k{2 * o + 1}".encode(), f"v{2 * o + 1}".encode()) for o in (0, 1, 2)]
        + [("users", 0, 0, None, b"u0"), ("users", 0, 1, None, b"\x00\x01")]
    )


def test_conflicting_duplicate_in_plain_files_gives_both_locations(tmp_path: Path) -> None:
    first = write_lines(
        tmp_path / "a.jsonl", [_plain("orders", 0, 0, "x"), _plain("orders", 0, 1, "x")]
    )
    second = write_lines(
        tmp_path / "b.jsonl", [_plain("orders", 0, 2, "y"), _plain("orders", 0, 1, "y")]
    )
    assert all(plan.plain for plan in build_index(first, TOPICS).files)
    with pytest.raises(DumpError) as err:
        build_index(tmp_path, TOPICS)
    assert str(err.value).startswith(
        f"{second}:2: orders partition 0 offset 1 is also at {first}:2"
    )


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('{"topic": "orders", "offset": -1}', "'offset' must be >= 0"),
        ('{"topic": "", "offset": 1}', "'topic' must be a non-empty string"),
        ('{"topic": "orders", "offset": 1, "timestampType": 3}', "'timestampType' must be 0"),
        ('{"topic": "orders", "offset": 1, "partition": 1.0}', "'partition' must be an integer"),
        ('{"topic": "orders", "offset": 1, "topic": "users"}', None),
        # beyond 64 bits (Arrow refuses the file) and beyond the 32 / 64 bits of bronze's
        # partition and timestamp columns (Arrow's int64 holds them)
        ('{"topic": "orders", "offset": 9223372036854775808}', "'offset' must be at most"),
        ('{"topic": "orders", "offset": 1, "partition": 2147483648}', "'partition' must be at"),
        ('{"topic": "orders", "offset": 1, "timestamp": 9223372036854776}', "'timestamp' must"),
    ],
)
def test_plain_looking_line_that_arrow_would_accept_is_still_checked(
    tmp_path: Path, line: str, message: str | None
) -> None:
    """Arrow's reader is only a fast path: whatever it lets through or rejects, the line-by-line
    parser decides, with its file:line message."""
    dump = write_lines(tmp_path / "d.jsonl", [_plain("orders", 0, 0, "x"), line])
    if message is None:  # a repeated field: last one wins, as json.loads does
        assert [r.topic for r in load_dump(dump, TOPICS)] == ["orders", "users"]
        return
    with pytest.raises(DumpError) as err:
        build_index(dump, TOPICS)
    assert str(err.value).startswith(f"{dump}:2: ")
    assert message in str(err.value)


def test_the_largest_kafka_partition_offset_and_timestamp_are_accepted(tmp_path: Path) -> None:
    """Partition 2**31 - 1, offset 2**63 - 1 and the timestamps at the bounds of bronze's
    microsecond timestamp, in a plain file (Arrow) and in one read line by line."""
    records = [
        _plain("orders", 2**31 - 1, 2**63 - 1, "x", timestamp=(2**63 - 1) // 1000),
        _plain("orders", 0, 0, "y", timestamp=-((2**63 - 1) // 1000)),
    ]
    plain = write_lines(tmp_path / "plain" / "a.jsonl", records)
    lines = write_lines(tmp_path / "lines" / "a.jsonl", [*records, ""])
    for dump, read_with_arrow in ((plain, True), (lines, False)):
        assert [plan.plain for plan in build_index(dump, TOPICS).files] == [read_with_arrow]
        assert [(r.partition, r.offset, r.timestamp_ms) for r in load_dump(dump, TOPICS)] == [
            (2147483647, 9223372036854775807, 9223372036854775),
            (0, 0, -9223372036854775),
        ]


def test_a_second_process_loads_the_saved_scans_instead_of_scanning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The ingest CLI scans the dump once and saves the scans; the Spark planner (another
    process) loads them: same index, no second pass over the files."""
    from ingest import dump

    data = tmp_path / "dump"
    write_lines(data / "a.jsonl", [_plain("orders", p % 2, p // 2, f"v{p}") for p in range(5)])
    write_lines(data / "b.jsonl", [{"topic": "users", "value_base64": "AAE="}, ""])
    cache = tmp_path / "scans"
    first = build_index(data, TOPICS, scan_cache_dir=cache)
    assert len(list(cache.glob("*.npz"))) == 2

    def no_scan(*_args: Any) -> None:
        raise AssertionError("scanned again")

    dump._SCAN_CACHE.clear()  # a new process
    monkeypatch.setattr(dump, "_scan_plain", no_scan)
    monkeypatch.setattr(dump, "_scan_lines", no_scan)
    second = build_index(data, TOPICS, scan_cache_dir=cache)
    assert [(p.plain, p.bounds, p.skip) for p in second.files] == [
        (p.plain, p.bounds, p.skip) for p in first.files
    ]
    assert second.end_offsets == first.end_offsets
    assert keyed(load_dump(data, TOPICS)) == [
        ("orders", 0, 0, None, b"v0"),
        ("orders", 1, 0, None, b"v1"),
        ("orders", 0, 1, None, b"v2"),
        ("orders", 1, 1, None, b"v3"),
        ("orders", 0, 2, None, b"v4"),
        ("users", 0, 0, None, b"\x00\x01"),
    ]


def test_a_changed_file_is_scanned_again_not_loaded_from_the_saved_scan(tmp_path: Path) -> None:
    from ingest import dump

    data = write_lines(tmp_path / "a.jsonl", [_plain("orders", 0, 0, "x")])
    cache = tmp_path / "scans"
    assert build_index(data, TOPICS, scan_cache_dir=cache).end_offsets == {("orders", 0): 1}
    write_lines(data, [_plain("orders", 0, 0, "x"), _plain("orders", 0, 1, "y")])
    os.utime(data, ns=(1, 1))  # a new mtime, whatever the clock's resolution
    dump._SCAN_CACHE.clear()
    assert build_index(data, TOPICS, scan_cache_dir=cache).end_offsets == {("orders", 0): 2}
