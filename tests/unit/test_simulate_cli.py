"""``python -m cdc_lakehouse.tools.simulate``: argument errors say what to fix; a run writes the
batch dumps and the expected gold, here with a tiny fake encoder registered for the test."""

from __future__ import annotations

import json
import types

import pytest

from cdc_lakehouse.tools.simulate import __main__ as cli
from cdc_lakehouse.tools.simulate.encoders import ENCODERS
from cdc_lakehouse.tools.simulate.generate import ALL_FEATURES, SimulationConfig, generate
from cdc_lakehouse.tools.simulate.history import Column, History, RowChange, Value
from cdc_lakehouse.tools.simulate.messages import Message
from cdc_lakehouse.tools.simulate.oracle import current_state
from ingest.dump import load_dump


def _fake_encoder() -> types.ModuleType:
    module = types.ModuleType("fake_json")
    module.FORMAT = "fake_json"
    module.FEATURES = ALL_FEATURES - {"heartbeat"}

    def topics(history: History, prefix: str) -> list[str]:
        return [f"{prefix}.fake_json"]

    def value_text(column: Column, value: Value) -> str | None:
        return None if value is None else repr(value)

    def encode(history: History, prefix: str) -> list[Message]:
        out = []
        for item in history.transactions:
            for event in item.events:
                if not isinstance(event, RowChange):
                    continue
                image = event.after or event.before or {}
                key = json.dumps([repr(v) for v in event.table.key_of(image)]).encode()
                body = {"table": event.table.name, "op": event.op}
                out.append(
                    Message(
                        topic=f"{prefix}.fake_json",
                        key=key if event.table.key_columns else None,
                        value=json.dumps(body).encode(),
                        timestamp_ms=item.commit_time_ms,
                        sequence=item.sequence,
                    )
                )
        return out

    module.topics = topics
    module.encode = encode
    module.value_text = value_text
    module.source_type = lambda column: column.type.upper()
    return module


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> types.ModuleType:
    """The fake encoder as the only registered one (the real ones have their own tests)."""
    module = _fake_encoder()
    for name in list(ENCODERS):
        monkeypatch.delitem(ENCODERS, name)
    monkeypatch.setitem(ENCODERS, module.FORMAT, module)
    return module


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--format", "nope", "--out", "x"], "unknown --format nope; choose from fake_json"),
        (["--format", "all", "--duplicate-rate", "1.5", "--out", "x"], "outside 0..1"),
        (["--format", "all", "--malformed-rate", "lots", "--out", "x"], "not a number"),
        (["--format", "all", "--partitions", "0", "--out", "x"], "must be 1 or more"),
        (["--format", "all", "--prefix", "a/b", "--out", "x"], "not a valid Kafka topic prefix"),
        (["--format", "all"], "give --out DIR"),
        (["--out", "x"], "--format"),
    ],
)
def test_bad_arguments_stop_with_what_to_fix(fake, capsys, args, message):
    with pytest.raises(SystemExit) as exit_info:
        cli.main(args)
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err


def test_a_non_empty_out_directory_is_refused(fake, tmp_path, capsys):
    (tmp_path / "old.txt").write_text("keep me")
    with pytest.raises(SystemExit):
        cli.main(["--format", "fake_json", "--out", str(tmp_path)])
    assert "is not empty" in capsys.readouterr().err
    assert (tmp_path / "old.txt").read_text() == "keep me"


def test_without_encoders_the_message_says_so(monkeypatch, capsys):
    for name in list(ENCODERS):
        monkeypatch.delitem(ENCODERS, name)
    with pytest.raises(SystemExit):
        cli.main(["--format", "all", "--out", "x"])
    assert "no encoder is registered" in capsys.readouterr().err


def test_a_run_writes_batches_and_the_expected_gold(fake, tmp_path, capsys):
    out = tmp_path / "sim"
    code = cli.main(
        ["--format", "all", "--changes", "1500", "--seed", "3", "--batches", "2",
         "--duplicate-rate", "0.05", "--malformed-rate", "0.01", "--out", str(out)]
    )  # fmt: skip
    assert code == 0
    summary = capsys.readouterr().out.strip()
    assert summary.startswith("fake_json: changes=1500 messages=1500 records=1590 duplicates=75")
    assert "malformed=15 batches=2" in summary

    assert sorted(p.name for p in out.iterdir()) == ["batch-1", "batch-2", "expected"]
    records = [*load_dump(out / "batch-1"), *load_dump(out / "batch-2")]
    assert len(records) == 1590
    assert {r.topic for r in records} == {"sim.fake_json"}

    expected = json.loads((out / "expected" / "fake_json.json").read_text(encoding="utf-8"))
    assert expected["format"] == "fake_json" and expected["changes"] == 1500
    assert len(expected["malformed"]) == 15
    history = generate(SimulationConfig(seed=3, changes=1500, features=fake.FEATURES))
    state = current_state(history)
    assert {name: len(t["rows"]) for name, t in expected["tables"].items()} == {
        name: len(rows) for name, rows in state.items()
    }
    customers = expected["tables"]["customers"]
    assert customers["key_columns"] == ["customer_id"]
    assert customers["column_types"]["balance"] == "DECIMAL"
    first = customers["rows"][0]
    key_text = json.loads(first["row_key"])["customer_id"]
    assert first["row_key"] == json.dumps({"customer_id": key_text}, separators=(",", ":"))
    live = {repr(r["customer_id"]): r for r in state["customers"]}
    assert first["row_values"] == {k: fake.value_text(None, v) for k, v in live[key_text].items()}
    assert expected["tables"]["audit_log"]["rows"][0]["row_key"] is None
