"""Delivery: Kafka partitioning, dense offsets, duplicates, malformed copies, per-partition
batch cuts, continuation, and topic dumps that ingest.dump reads back."""

from __future__ import annotations

import json
from collections import Counter, defaultdict

import pytest

from cdc_lakehouse.tools.simulate.delivery import (
    Delivery,
    DeliveryConfig,
    deliver,
    murmur2,
    partition_of,
    write_batches,
    write_dump,
)
from cdc_lakehouse.tools.simulate.messages import Message
from ingest.dump import DumpRecord, load_dump


def messages(n: int = 2_000, topics: tuple[str, ...] = ("sim.a", "sim.b")) -> list[Message]:
    out = []
    for i in range(n):
        key = None if i % 10 == 9 else f'{{"id":{i % 150}}}'.encode()
        value = json.dumps({"seq": i, "text": "ü"}).encode()
        out.append(Message(topics[i % len(topics)], key, value, 1_700_000_000_000 + i, i + 1))
    return out


def coords(record: DumpRecord) -> tuple[str, int, int]:
    return record.topic, record.partition, record.offset


@pytest.mark.parametrize(
    ("text", "expected"),
    [("21", -973932308), ("foobar", -790332482), ("a-little-bit-long-string", -985981536),
     ("abc", 479470107), ("", 275646681), ("éèê", -1401640301)],
)  # fmt: skip
def test_murmur2_is_kafkas(text, expected):
    assert murmur2(text.encode()) == expected


def test_a_key_always_lands_in_the_same_partition_and_keyless_go_round_robin():
    msgs = messages()
    delivery = deliver(msgs, DeliveryConfig(partitions=4, seed=1))
    by_key: dict[bytes, set[int]] = defaultdict(set)
    keyless: dict[str, list[int]] = defaultdict(list)
    for record in sorted(delivery.records, key=coords):
        if record.key is None:
            keyless[record.topic].append(record.partition)
        else:
            by_key[record.key].add(record.partition)
    assert all(parts == {partition_of(k, 4)} for k, parts in by_key.items())
    assert len({p for parts in by_key.values() for p in parts}) == 4
    for parts in keyless.values():
        assert Counter(parts) == Counter({p: len(parts) // 4 for p in range(4)})


def test_offsets_are_dense_per_partition_and_keep_production_order():
    msgs = messages()
    delivery = deliver(msgs, DeliveryConfig(partitions=3, batches=3, seed=2))
    lanes: dict[tuple[str, int], list[DumpRecord]] = defaultdict(list)
    for record in delivery.records:
        lanes[(record.topic, record.partition)].append(record)
    assert len(delivery.records) == len(msgs) == delivery.messages
    for records in lanes.values():
        records.sort(key=lambda r: r.offset)
        assert [r.offset for r in records] == list(range(len(records)))
        sequences = [json.loads(r.value or b"")["seq"] for r in records]
        assert sequences == sorted(sequences)


def test_duplicates_are_exact_copies_later_in_the_same_partition():
    msgs = messages()
    delivery = deliver(msgs, DeliveryConfig(duplicate_rate=0.05, seed=3))
    assert len(delivery.duplicates) == 100
    assert len(delivery.records) == len(msgs) + 100
    duplicate_coords = {coords(r) for r in delivery.duplicates}
    originals = {
        (r.topic, r.partition, r.key, r.value, r.timestamp_ms): r.offset
        for r in delivery.records
        if coords(r) not in duplicate_coords
    }
    for copy in delivery.duplicates:
        original = originals[(copy.topic, copy.partition, copy.key, copy.value, copy.timestamp_ms)]
        assert 0 < copy.offset - original <= 60


def test_malformed_records_come_in_addition_and_are_listed():
    msgs = messages()
    delivery = deliver(msgs, DeliveryConfig(malformed_rate=0.01, duplicate_rate=0.01, seed=4))
    assert len(delivery.malformed) == 20
    assert len(delivery.records) == len(msgs) + 20 + 20
    malformed = {coords(r) for r in delivery.malformed}
    intact = Counter(r.value for r in delivery.records if coords(r) not in malformed)
    assert all(intact[m.value] >= 1 for m in msgs), "every original still arrives intact"
    for record in delivery.malformed:
        with pytest.raises(ValueError):  # JSONDecodeError / UnicodeDecodeError
            json.loads((record.value or b"").decode("utf-8"))


def test_small_rates_give_at_least_one_and_zero_gives_none():
    msgs = messages(100)
    assert len(deliver(msgs, DeliveryConfig(malformed_rate=0.001)).malformed) == 1
    assert deliver(msgs, DeliveryConfig()).duplicates == []


def test_batches_are_per_partition_slices_cut_at_different_points():
    delivery = deliver(messages(3_000), DeliveryConfig(partitions=3, batches=3, seed=5))
    shares = set()
    for tp in {(r.topic, r.partition) for r in delivery.records}:
        per_batch = [
            [r.offset for r in batch if (r.topic, r.partition) == tp] for batch in delivery.batches
        ]
        flat = [offset for offsets in per_batch for offset in offsets]
        assert flat == list(range(len(flat))), "batch k continues batch k-1 in every partition"
        shares.add(round(len(per_batch[0]) / len(flat), 3))
    assert len(shares) > 1, "partitions are cut at their own points"


def test_continuation_carries_offsets_and_round_robin_on():
    first = deliver(messages(500), DeliveryConfig(seed=6))
    second = deliver(messages(500), DeliveryConfig(seed=7), after=first)
    for tp, end in first.next_offsets.items():
        offsets = sorted(r.offset for r in second.records if (r.topic, r.partition) == tp)
        assert offsets == list(range(end, end + len(offsets)))


def test_config_refuses_bad_values():
    with pytest.raises(ValueError, match="duplicate_rate"):
        DeliveryConfig(duplicate_rate=1.5)
    with pytest.raises(ValueError, match="partitions"):
        DeliveryConfig(partitions=0)


def test_dump_files_are_read_back_by_cdc_lakehouse_dump(tmp_path):
    msgs = [
        *messages(300),
        Message("sim.a", b"\xff\x00bin", b"\x80\x81 not utf-8", 5, 0),
        Message("sim.b", None, None, 6, 0),
        Message("sim.b", b"k", "line\nbreak \U0001f600".encode(), 7, 0),
    ]
    delivery = deliver(msgs, DeliveryConfig(batches=2, malformed_rate=0.02, seed=8))
    dirs = write_batches(tmp_path, delivery)
    assert [d.name for d in dirs] == ["batch-1", "batch-2"]
    assert sorted(p.name for p in dirs[0].iterdir()) == ["sim.a.jsonl", "sim.b.jsonl"]
    got = sorted(load_dump(tmp_path), key=coords)
    want = sorted(delivery.records, key=coords)

    def content(r: DumpRecord) -> tuple[object, ...]:
        return (*coords(r), r.timestamp_ms, r.key, r.value)

    assert [content(r) for r in got] == [content(r) for r in want]
    text = (tmp_path / "batch-1" / "sim.a.jsonl").read_text(encoding="utf-8")
    assert json.dumps(msgs[0].value.decode(), ensure_ascii=False) in text  # readable, not base64


def test_write_dump_uses_base64_only_for_bytes_that_are_not_utf8(tmp_path):
    records = deliver(
        [Message("t", b"\xff", b"\xfe", 1, 0), Message("t", b"k", "ü".encode(), 2, 0)],
        DeliveryConfig(partitions=1),
    ).records
    (path,) = write_dump(tmp_path, records)
    first, second = (json.loads(line) for line in path.read_text(encoding="utf-8").splitlines())
    assert first["key_base64"] == "/w==" and first["value_base64"] == "/g=="
    assert second["key"] == "k" and second["value"] == "ü"
    assert isinstance(deliver([], DeliveryConfig()), Delivery)
