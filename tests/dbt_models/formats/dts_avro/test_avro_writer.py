"""Unit tests of cdc_lakehouse.formats.dts_avro.avro_writer (the encoder the sample and the change
simulator use) and of the committed sample dump sample_data/dump/dts.sample.avro.jsonl."""

from __future__ import annotations

import base64
import json
from decimal import Decimal
from pathlib import Path

import pytest

from cdc_lakehouse.formats.dts_avro import avro_writer as avro
from cdc_lakehouse.formats.dts_avro import sample as dts_avro_sample
from cdc_lakehouse.formats.dts_avro.decoder import decode_record

ROOT = Path(__file__).resolve().parents[4]
COLUMNS = [("id", 3), ("name", 253), ("price", 246), ("ratio", 5), ("photo", 252), ("flag", 1)]


def round_trip(**kw):
    record = avro.make_record(
        kw.pop("operation", "INSERT"),
        record_id=7,
        source_timestamp=1700000000,
        object_name="db.t",
        columns=COLUMNS,
        primary_key=["id"],
        **kw,
    )
    row = decode_record(avro.encode(record))
    assert row["decode_error"] is None, row["decode_error_detail"]
    return record, row


def test_python_values_map_to_value_types():
    record, row = round_trip(
        after={
            "id": 1,
            "name": "NULL",  # the text NULL, not SQL NULL
            "price": Decimal("1.50"),
            "ratio": 0.25,
            "photo": b"\x00\x01",
            "flag": True,
        }
    )
    names = [element[0].rsplit(".", 1)[-1] for element in record["afterImages"]]
    assert names == ["Integer", "Character", "Decimal", "Float", "BinaryObject", "Integer"]
    assert record["afterImages"][2][1] == {"value": "1.50", "precision": 3, "scale": 2}
    assert dict(row["after_image"]) == {
        "id": "1",
        "name": "NULL",
        "price": "1.50",
        "ratio": "0.25",
        "photo": "AAE=",
        "flag": "1",
    }


def test_missing_columns_are_none_and_none_is_sql_null():
    record, row = round_trip(operation="UPDATE", before={"id": 1, "name": None}, after={"id": 1})
    assert record["afterImages"][1:] == ["NONE"] * 5
    assert record["beforeImages"][1] == "NULL"
    assert dict(row["before_image"]) == {"id": "1", "name": None}
    assert dict(row["after_image"]) == {"id": "1"}
    assert row["after_image_is_partial"] is True


def test_revisions_and_tags():
    old = avro.make_record("BEGIN", record_id=1, source_timestamp=2, born_timestamp=None)
    new = avro.make_record("BEGIN", record_id=1, source_timestamp=2, born_timestamp=5)
    assert "bornTimestamp" not in old and new["bornTimestamp"] == 5
    assert decode_record(avro.encode(old))["born_timestamp_ms"] is None
    assert decode_record(avro.encode(new))["born_timestamp_ms"] == 5
    _record, row = round_trip(unique_keys={"uk": ["name"]}, tags={"k": "v"}, after={"id": 1})
    assert dict(row["tags"]) == {"pk_uk_info": '{"PRIMARY":["id"],"uk":["name"]}', "k": "v"}


def test_unknown_column_and_unsupported_value_are_errors():
    with pytest.raises(ValueError, match="not in columns: nope"):
        avro.image(COLUMNS, {"nope": 1})
    with pytest.raises(TypeError):
        avro.element(object())


def test_helpers_write_each_value_type():
    _record, row = round_trip(
        after={
            "id": avro.integer("-9223372036854775808"),
            "name": avro.character("中", charset="gbk"),
            "price": avro.decimal("-0.000100"),
            "ratio": avro.floating(1e300),
            "photo": avro.timestamp(0, 1),
            "flag": avro.timestamp_tz("UTC", 2024, 2, 29, micros=7),
        }
    )
    assert dict(row["after_image"]) == {
        "id": "-9223372036854775808",
        "name": "中",
        "price": "-0.000100",
        "ratio": "1e+300",
        "photo": "1970-01-01T00:00:00.000001Z",
        "flag": "2024-02-29 00:00:00.000007 UTC",
    }


def test_committed_sample_equals_what_the_encoder_produces_now():
    committed = (ROOT / "sample_data" / "dump" / "dts.sample.avro.jsonl").read_text("utf-8")
    assert committed == dts_avro_sample.dump_text(), (
        "regenerate with: .venv/bin/python -m cdc_lakehouse.formats.dts_avro.sample"
    )


def test_sample_covers_what_seed_003_describes():
    ops = []
    for line in dts_avro_sample.dump_lines():
        row = decode_record(base64.b64decode(json.loads(line)["value_base64"]))
        assert row["decode_error"] is None, row["decode_error_detail"]
        ops.append(row["operation"])
    assert ops == [
        "DDL",
        "BEGIN",
        "INSERT",
        "COMMIT",
        "UPDATE",
        "HEARTBEAT",
        "DELETE",
        "DDL",
        "INSERT",
        "UPDATE",
        "INIT",
        "CHECKPOINT",
    ]


def test_main_writes_the_file(tmp_path):
    out = tmp_path / "x.jsonl"
    dts_avro_sample.main(["--out", str(out)])
    assert out.read_text("utf-8") == dts_avro_sample.dump_text()
