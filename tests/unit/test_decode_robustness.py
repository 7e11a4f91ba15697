"""No single record can fail a decoder (issue 19): the one nesting limit, duplicate keys, time
ranges, and the per-record catch-all of the shared Arrow loop."""

from __future__ import annotations

import importlib

import pyarrow as pa
import pytest

from cdc_lakehouse.decode import batches, shared
from cdc_lakehouse.decode.batches import append_decoded
from cdc_lakehouse.decode.json_text import (
    MAX_JSON_DEPTH,
    DuplicateKeyError,
    JsonTooDeepError,
    _exact_loads,
    depth,
    loads,
    value_text,
)
from cdc_lakehouse.formats import MANIFEST
from tests.dbt_models import conformance, fault_matrix_cases
from tests.dbt_models.fault_matrix_cases import NUMBER_FORMS


def nested(levels: int) -> str:
    return "[" * levels + "]" * levels


# --------------------------------------------------------------------------- json_text


def test_the_nesting_limit_is_exact():
    assert depth(loads(nested(MAX_JSON_DEPTH))) == MAX_JSON_DEPTH
    with pytest.raises(JsonTooDeepError, match=f"nested deeper than {MAX_JSON_DEPTH} levels"):
        loads(nested(MAX_JSON_DEPTH + 1))


@pytest.mark.parametrize("levels", [MAX_JSON_DEPTH + 1, 1_000, 100_000])
def test_deep_nesting_is_refused_at_any_depth(levels):
    with pytest.raises(JsonTooDeepError):
        loads(nested(levels))
    with pytest.raises(JsonTooDeepError):
        loads('{"a":' * levels + "1" + "}" * levels)


def test_many_brackets_that_do_not_nest_are_fine():
    text = "[" + ",".join(["[1]"] * 5_000) + "]"
    assert len(loads(text)) == 5_000


def test_depth_counts_objects_and_arrays_not_scalars():
    assert depth(1) == 0
    assert depth([]) == 1
    assert depth({"a": [{"b": 1}]}) == 3


def test_a_repeated_key_is_refused_wherever_it_is():
    for text in ('{"a":1,"a":2}', '{"x":[{"b":1,"c":2,"b":3}]}'):
        with pytest.raises(DuplicateKeyError):
            loads(text)
    assert loads('{"a":{"a":1}}') == {"a": {"a": 1}}  # the same key in two objects is fine


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_non_standard_constants_are_refused(constant):
    with pytest.raises(ValueError, match=constant):
        loads(f'{{"a":{constant}}}')


def test_exact_number_text_is_kept():
    value = loads('{"a":1.50,"b":1e3,"c":' + "9" * 60 + "}")
    assert (value["a"], value["b"], str(value["c"])) == ("1.50", "1e3", "9" * 60)


@pytest.mark.parametrize(
    "form", NUMBER_FORMS, ids=lambda f: f if len(f) < 30 else f"{len(f)} chars"
)
def test_every_json_number_form_keeps_its_text(form):
    """Issue 48: ``-0`` came back as ``0`` (an integer to the parser); every form keeps the
    text as sent, alone, as an object's value beside a date, and inside a nested value."""
    text = f'{{"d":"2024-01-05","v":{form},"j":{{"w":[{form}, -0.5]}}}}'
    for given in (text, text.encode()):
        value = loads(given)
        assert value_text(value["v"]) == form
        assert value_text(value["j"]) == f'{{"w":[{form},-0.5]}}'
        assert value_text(loads(form if isinstance(given, str) else form.encode())) == form


def test_negative_zero_still_reads_as_the_integer_zero():
    """``-0`` keeps its text, and a field that reads an integer still reads 0, as before."""
    value = loads('{"id":-0,"n":[-0]}')
    assert value["id"] == 0 and isinstance(value["id"], int)
    assert shared.digits(value, "id") == "0"


@pytest.mark.parametrize(
    "text",
    [
        '{"a\\u003a":1,"a":1,"a":2}',  # an escaped colon makes up for the lost entry's ":"
        '{"k":"\\u003A","k":1}',
        '{"a":{"x:":1,"y":[2]},"a":3}',  # the dropped value held ":" of its own
        '{"n":' + "9" * 30 + ',"n":1}',  # beyond 64 bits: nothing to count
        '{"a" : 1 ,\n "b":{"c":2, "c" :3}}',
    ],
)
def test_a_repeated_key_is_refused_whatever_the_colon_count_sees(text):
    for given in (text, text.encode()):
        with pytest.raises(DuplicateKeyError):
            loads(given)


PARITY_TEXTS = [
    '{"a":1.50,"b":1e3,"c":-0.0,"d":1E+03,"e":-0,"f":' + "4" * 40 + "}",
    "-0",
    '{"t":"12:00 -0","u":"a-0","d":"2024-01-05","n":-0.5,"z":[0,-0 ,-1]}',
    "[-0]",
    '[-0.0,-0e1,"-0",{"k-0":"-0"},-0]',
    '{"x":"-0","y":"3ccc1ca4-0b8e"}',
    '{"a":"\\u002d0","b":-0}',  # an escaped "-" before the 0 of a string, and -0
    '{"a":"\\u002d0","b":0}',
    '["a\\"b", -0]',
    "1" * 4300,
    "1" * 4301,  # Python's int limit: the stdlib error
    '["\\ud800", "\\udc00x", "\\ud83d\\ude00", "\\u0000"]',
    '{"k:":"v:","t":"12:00:00","u":"\\u003a"}',
    '"\x01"',
    " \t\r\n[1] \n",
    "[1]\x0c",
    "\ufeff[1]",
    "[NaN]",
    '{"a":-Infinity}',
    "[1,]",
    '{"a" 1}',
    "",
    nested(MAX_JSON_DEPTH),
    nested(MAX_JSON_DEPTH + 1),
    '{"a":' * 200 + "1" + "}" * 200,
]


def types(value):
    """``value`` with every scalar replaced by its type (JsonFloat vs int vs str counts)."""
    if isinstance(value, dict):
        return {key: types(item) for key, item in value.items()}
    if isinstance(value, list):
        return [types(item) for item in value]
    return type(value)


def outcome(parse, text):
    try:
        value = parse(text)
    except Exception as exc:  # the error is part of the outcome
        return type(exc), str(exc)
    return value, types(value)


@pytest.mark.parametrize("text", PARITY_TEXTS)
def test_the_fast_parse_gives_what_the_stdlib_parse_gives(text):
    """msgspec first, the stdlib parser when in doubt: the same values (and number types) and
    the same errors as the stdlib path alone, for str and UTF-8 bytes alike."""
    expected = outcome(_exact_loads, text)
    assert outcome(loads, text) == expected
    assert outcome(loads, text.encode("utf-8", "surrogatepass")) == expected


@pytest.mark.parametrize(
    "raw", [b"\xff", b'{"a":"\xc3"}', b'{"a":"\xed\xa0\x80"}', b'["\xc0\x80"]']
)
def test_bytes_that_are_not_utf8_are_refused_as_bytes_decode_refuses_them(raw):
    with pytest.raises(UnicodeDecodeError) as error:
        loads(raw)
    with pytest.raises(UnicodeDecodeError) as reference:
        raw.decode("utf-8")
    assert (error.value.reason, error.value.start) == (
        reference.value.reason,
        reference.value.start,
    )


def test_parse_json_maps_errors_to_reasons():
    with pytest.raises(shared.DecodeError) as deep:
        shared.parse_json(nested(500))
    assert (deep.value.reason, deep.value.detail) == (
        "invalid_json",
        f"not valid JSON: nested deeper than {MAX_JSON_DEPTH} levels",
    )
    with pytest.raises(shared.DecodeError) as twice:
        shared.parse_json('{"op":"c","op":"d"}', "envelope message")
    assert (twice.value.reason, twice.value.detail) == (
        "duplicate_key",
        "the key 'op' appears twice in one object of the envelope message",
    )


@pytest.mark.parametrize(
    ("value", "unit", "ok"),
    [
        (0, "ms", True),
        (253_402_300_799_999, "ms", True),  # 9999-12-31T23:59:59.999Z
        (253_402_300_800_000, "ms", False),
        (-62_135_596_800_000, "ms", True),  # 0001-01-01
        (-62_135_596_800_001, "ms", False),
        (2**62, "s", False),
        (10**60, "us", False),
    ],
)
def test_epoch_times_must_fit_spark_timestamps(value, unit, ok):
    if ok:
        assert shared.epoch(value, unit, "t") == value
    else:
        with pytest.raises(shared.DecodeError) as error:
            shared.epoch(value, unit, "t")
        assert error.value.reason == "invalid_field_value"
        assert error.value.detail.startswith(f"t = {value} is not a time")


# --------------------------------------------------------------------------- every decoder
# Every Python decoder of the manifest; a format decoded in SQL (decoder None: DTS Canal JSON,
# DataWorks / DataHub Blob, by the exact JSON function) is checked by that function's tests
# (tests/unit/test_exact_json.py).

PYTHON_DECODED = [fmt for fmt in MANIFEST if fmt.decoder is not None]
DEEP = ('{"a":' * 1_000 + "1" + "}" * 1_000).encode()
DECODERS = {
    fmt.staging_folder: importlib.import_module(fmt.decoder_module).decode_one
    for fmt in PYTHON_DECODED
    if fmt.value_encoding == "json" and fmt.decoder_module is not None
}
"""Staging folder -> ``decode_one`` of each Python JSON decoder, from the plug-ins."""


def test_every_python_json_decoder_is_checked_for_nesting_and_repeated_keys():
    # the plug-ins' decoders are found (a new format's decoder joins them without an edit)
    assert {"datahub_tuple", "dts_shareplex", "lindorm", "qlik"} <= set(DECODERS)


@pytest.mark.parametrize("name", sorted(DECODERS))
def test_every_json_decoder_quarantines_deep_nesting(name):
    """The issue's reproduction: RecursionError escaped from lindorm.decode_one."""
    row = DECODERS[name](DEEP)
    assert (row["decode_error"], row["decode_error_detail"]) == (
        "invalid_json",
        f"not valid JSON: nested deeper than {MAX_JSON_DEPTH} levels",
    )


@pytest.mark.parametrize("name", sorted(DECODERS))
def test_every_json_decoder_quarantines_a_repeated_key(name):
    row = DECODERS[name](b'{"a":1,"a":2}')
    assert row["decode_error"] == "duplicate_key"
    assert "'a'" in row["decode_error_detail"]


@pytest.mark.parametrize("module", sorted({str(fmt.decoder_module) for fmt in PYTHON_DECODED}))
def test_every_decoder_names_decoder_error_among_its_reasons(module):
    assert shared.DECODER_ERROR in importlib.import_module(module).REASONS


NUMBER_FORM_FORMATS = conformance.formats_for("number_form_image")
"""Every JSON format with a Python decoder (the shared parser's users); each one's cases file
reads an insert's row values with ``number_form_image`` (tests/dbt_models/conformance.py)."""


def test_every_json_format_is_checked_for_number_forms():
    json_formats = {fmt.name for fmt in PYTHON_DECODED if fmt.value_encoding == "json"}
    opted_out = conformance.opted_out("number_form_image")
    assert set(NUMBER_FORM_FORMATS) | set(opted_out) == json_formats


@pytest.mark.parametrize("format_", NUMBER_FORM_FORMATS)
def test_every_json_decoder_keeps_the_text_of_every_number_form(format_):
    """Issue 48: DataWorks, Canal and Lindorm stored ``-0`` as ``"0"`` (Canal JSON is decoded
    in SQL now: the exact JSON function's tests check its number texts)."""
    got = {}
    for form in NUMBER_FORMS:
        row = {"id": 1, "note": "n", "amount": fault_matrix_cases.raw(form)}
        raw = fault_matrix_cases.good_message(format_, 1, row)
        got[form] = conformance.provide(format_, "number_form_image", raw)
    assert {form: image["amount"] for form, image in got.items()} == {f: f for f in NUMBER_FORMS}


# --------------------------------------------------------------------------- the Arrow loop

FIELDS = [
    pa.field("decode_error", pa.string()),
    pa.field("decode_error_detail", pa.string()),
    pa.field("n", pa.int64()),
]


def run(decode_one, values, fields=FIELDS, **kwargs):
    batch = pa.RecordBatch.from_pydict({"value": values, "offset": list(range(len(values)))})
    table = pa.Table.from_batches(list(append_decoded(iter([batch]), decode_one, fields, **kwargs)))
    return table.to_pylist()


def test_a_decoder_bug_costs_one_record_not_the_batch():
    def decode_one(value):
        if value == b"boom":
            raise KeyError("surprise")
        return {"n": len(value)}

    rows = run(decode_one, [b"ab", b"boom", b"abc"])
    assert [(r["offset"], r["decode_error"], r["n"]) for r in rows] == [
        (0, None, 2),
        (1, "decoder_error", None),
        (2, None, 3),
    ]
    assert rows[1]["decode_error_detail"] == "KeyError: 'surprise'"


def test_a_recursion_error_inside_a_decoder_is_one_record():
    def decode_one(value):
        def down(n):
            return down(n + 1)

        return down(0) if value == b"deep" else {"n": 1}

    rows = run(decode_one, [b"deep", b"ok"])
    assert [r["decode_error"] for r in rows] == ["decoder_error", None]
    assert rows[0]["decode_error_detail"].startswith("RecursionError")


def test_a_value_that_does_not_fit_its_arrow_type_costs_one_record():
    rows = run(lambda value: {"n": int(value)}, [b"1", b"9" * 30, b"3"])
    assert [(r["offset"], r["n"], r["decode_error"]) for r in rows] == [
        (0, 1, None),
        (1, None, "decoder_error"),
        (2, 3, None),
    ]
    assert rows[1]["decode_error_detail"].startswith("n does not fit int64")


MAP_FIELDS = [*FIELDS, pa.field("m", pa.map_(pa.string(), pa.string()))]


def test_a_map_object_shared_by_rows_is_in_each_of_them():
    """Records may share one map object (a decoder's cached column types): each row holds it."""
    shared_map = {"id": "1", "note": None}

    def decode_one(value):
        return {"m": {"x": value.decode()} if value == b"own" else shared_map}

    batch = pa.RecordBatch.from_pydict({"value": [b"a", b"own", b"b", b"a"]})
    (out,) = append_decoded(iter([batch]), decode_one, MAP_FIELDS)
    row = [("id", "1"), ("note", None)]
    assert out.column("m").to_pylist() == [row, [("x", "own")], row, row]


@pytest.mark.parametrize(
    "bad", [[["k", "v"]], [("k", "v", "w")], [(None, "v")], [("k", 1)], "kv", {"k": 1}]
)
def test_a_map_value_arrow_refuses_is_a_decoder_error_naming_the_field(bad):
    def decode_one(value):
        return {"m": bad if value == b"bad" else [("k", "v")]}

    batch = pa.RecordBatch.from_pydict({"value": [b"ok", b"bad", b"ok"]})
    out = pa.Table.from_batches(list(append_decoded(iter([batch]), decode_one, MAP_FIELDS)))
    rows = out.to_pylist()
    assert [r["decode_error"] for r in rows] == [None, "decoder_error", None]
    assert rows[1]["decode_error_detail"].startswith("m does not fit map<string, string>")
    assert rows[0]["m"] == rows[2]["m"] == [("k", "v")]


@pytest.mark.parametrize("returned", [[], [{"n": 1}, {"n": 2}], None])
def test_a_decoder_returning_no_row_is_an_error_row_not_a_lost_record(returned):
    """One row per record: anything else a decoder returns costs that record, visibly."""
    rows = run(lambda value: returned if value == b"none" else {"n": 1}, [b"none", b"x"])
    assert [(r["offset"], r["decode_error"], r["n"]) for r in rows] == [
        (0, "decoder_error", None),
        (1, None, 1),
    ]
    assert "not one row for the record" in rows[0]["decode_error_detail"]


def test_the_error_row_is_the_decoders_own_shape():
    def error(reason, detail):
        return {"decode_error": reason, "decode_error_detail": detail, "n": -1}

    rows = run(lambda value: 1 / 0, [b"x"], error=error)
    assert (rows[0]["decode_error"], rows[0]["n"]) == ("decoder_error", -1)


def test_the_decoded_column_is_not_passed_through_unless_kept():
    """The raw value goes back to Spark only when asked for: the models drop it (issue 48)."""
    batch = pa.RecordBatch.from_pydict({"offset": [1], "value": [b"ab"]})
    (out,) = append_decoded(iter([batch]), lambda value: {"n": len(value)}, FIELDS)
    assert out.schema.names == ["offset", *(f.name for f in FIELDS)]
    (kept,) = append_decoded(iter([batch]), lambda v: {"n": 2}, FIELDS, keep_column=True)
    assert kept.schema.names == ["offset", "value", *(f.name for f in FIELDS)]
    assert kept.column("value").to_pylist() == [b"ab"]


def test_batches_are_decoded_and_sent_in_parts_of_bounded_size(monkeypatch):
    """Output batches stay under BATCH_BYTES (one row excepted): every row is there, in
    order, with its input columns."""
    monkeypatch.setattr(batches, "BATCH_BYTES", 10_000)
    sizes = [10, 3_000, 1, 20_000, 5, 700] * 20

    def decode_one(value):
        return {"n": len(value), "m": {"k": "x" * len(value)}}

    batch = pa.RecordBatch.from_pydict(
        {"offset": list(range(len(sizes))), "value": [b"v" * size for size in sizes]}
    )
    out = list(append_decoded(iter([batch]), decode_one, MAP_FIELDS))
    assert len(out) > 10
    assert all(part.nbytes <= 10_000 or part.num_rows == 1 for part in out)
    rows = pa.Table.from_batches(out).to_pylist()
    expected = [(offset, size, [("k", "x" * size)]) for offset, size in enumerate(sizes)]
    assert [(r["offset"], r["n"], r["m"]) for r in rows] == expected


def test_a_record_whose_value_passes_what_an_arrow_array_holds_is_a_decoder_error(monkeypatch):
    """A column that would pass what one Arrow array holds is found before any copy; the
    record whose value makes it is one decoder_error row naming the field, and the records
    beside it are decoded (the capacity is lowered here: 2 GiB of test data would be slow)."""
    monkeypatch.setattr(batches, "_ARRAY_CAPACITY", 1_000)
    fields = [*FIELDS, pa.field("s", pa.string())]

    def decode_one(value):
        return {"n": len(value), "s": value.decode() * (600 if value == b"wide" else 1)}

    rows = run(decode_one, [b"a", b"wide", b"bc"], fields=fields)
    assert [(r["offset"], r["decode_error"], r["n"], r["s"]) for r in rows] == [
        (0, None, 1, "a"),
        (1, "decoder_error", None, None),
        (2, None, 2, "bc"),
    ]
    assert rows[1]["decode_error_detail"].startswith("s does not fit string")
