"""Tests of the exact JSON function of Spark SQL (cdc_lakehouse.decode.exact_json, jvm/exact-json):
number texts as sent, strings and nested values as Python's json_text gives them, every
refusal with its reason, and parity with json_text on Canal messages (simulated and random)."""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from typing import Any

import pytest
from pyspark.errors import IllegalArgumentException

from cdc_lakehouse.decode import exact_json, json_text, shared
from cdc_lakehouse.decode.shared import DecodeError
from cdc_lakehouse.formats.dts_canal import encoder_dts_canal_json as dts_canal_json
from cdc_lakehouse.tools.simulate.generate import SimulationConfig, generate

SCHEMA = (
    "v string, b boolean, n bigint, m map<string,string>, l array<string>, "
    "d array<map<string,string>>"
)
FIELDS = ["v", "b", "n", "m", "l", "d"]
CANAL_SCHEMA = (
    "data array<map<string,string>>, old array<map<string,string>>, "
    "mysqlType map<string,string>, pkNames array<string>, type string, isDdl boolean, "
    "es bigint, ts bigint, database string, `table` string, `sql` string"
)

Decode = Callable[[list[bytes | None]], list[dict[str, Any]]]


def _runner(spark: Any, function: str, columns: str = "d.*") -> Decode:
    def run(values: list[bytes | None]) -> list[dict[str, Any]]:
        frame = spark.createDataFrame(list(enumerate(values)), "i int, value binary")
        frame.createOrReplaceTempView("exact_json_input")
        rows = spark.sql(
            f"SELECT i, {columns} FROM (SELECT i, {function}(value) AS d FROM exact_json_input) "
            "ORDER BY i"
        ).collect()
        return [{k: v for k, v in row.asDict().items() if k != "i"} for row in rows]

    return run


@pytest.fixture(scope="module")
def decode(spark: Any) -> Decode:
    exact_json.register(spark, "exact_json_test", SCHEMA)
    return _runner(spark, "exact_json_test")


@pytest.fixture(scope="module")
def decode_canal(spark: Any) -> Decode:
    exact_json.register(spark, "exact_json_canal", CANAL_SCHEMA)
    # maps as their entries: collect() turns a map into a dict through a Java HashMap, which
    # loses the map's order
    columns = (
        "transform(d.data, m -> map_entries(m)) AS data, "
        "transform(d.old, m -> map_entries(m)) AS old, map_entries(d.mysqlType) AS mysqlType, "
        "d.pkNames, d.type, d.isDdl, d.es, d.ts, d.database, d.table, d.sql, d.decode_error, "
        "d.decode_error_detail"
    )
    return _runner(spark, "exact_json_canal", columns)


def field(name: str, text: str) -> bytes:
    return ("{" + json.dumps(name) + ":" + text + "}").encode()


NUMBERS = [
    "1.50",
    "1e3",
    "1E+3",
    "-0",
    "-0.0",
    "-0E+0",
    "0e0",
    "0",
    "-1.5e-10",
    "1E400",
    "18446744073709551615",
    "12345678901234567890.123456789012345678901",  # 41 digits
    "-9223372036854775809",
    "7" * 1500,  # beyond Jackson's default number length (1,000)
    "3." + "1" * 2000 + "e-7",
]


def test_numbers_keep_their_text(decode: Decode) -> None:
    rows = decode(
        [field("v", n) for n in NUMBERS]
        + [("{" + f'"m":{{"x":{n}}},"l":[{n}],"d":[{{"y":{n}}}]' + "}").encode() for n in NUMBERS]
    )
    assert [row["v"] for row in rows[: len(NUMBERS)]] == NUMBERS
    for number, row in zip(NUMBERS, rows[len(NUMBERS) :], strict=True):
        assert row["decode_error"] is None
        assert row["m"] == {"x": number}
        assert row["l"] == [number]
        assert row["d"] == [{"y": number}]
    for number in NUMBERS:  # the same texts as Python's exact parser
        assert json_text.value_text(json_text.loads(field("v", number))["v"]) == number


STRINGS = [
    r'"plain"',
    r'"a\"b\\c\/d\b\f\n\r\t\u0001\u001f"',
    r'"\u00e9\ud83d\ude00"',
    '"é😀 raw UTF-8, 中文"',
    r'"\u0000 NUL and \u2028 line separator"',
    '""',
]


def test_strings_are_unescaped(decode: Decode) -> None:
    rows = decode([field("v", text) for text in STRINGS])
    assert [row["v"] for row in rows] == [json.loads(text) for text in STRINGS]
    assert rows[2]["v"] == "é😀"
    assert rows[1]["v"] == 'a"b\\c/d\b\f\n\r\t\x01\x1f'


def test_booleans_as_text_and_as_booleans(decode: Decode) -> None:
    rows = decode([b'{"v":true,"b":true,"l":[false,true]}', b'{"v":false,"b":false}'])
    assert (rows[0]["v"], rows[0]["b"], rows[0]["l"]) == ("true", True, ["false", "true"])
    assert (rows[1]["v"], rows[1]["b"]) == ("false", False)


NESTED = [
    '{"b":[1.50,-0,1e3,-0E+0,true,false,null,{},[]],"a":{"z":1,"a":2}}',
    '[{"\\u00e9 k\\u007f":"\\u00e9\\u007f\\u2028\\ud83d\\ude00\\n\\u0001/\\\\\\""}]',
    '{"é😀":"é😀","tab\\tkey":"x"}',
    '{ "spaced" : [ 1 , 2 ] ,\n "x" :\t{ } }',
    "[]",
    "{}",
    '[[[[["deep"]]]]]',
    '{"k":"' + "x" * 5000 + '"}',
    "[" * 127 + "]" * 127,  # the document's 128th level: the most accepted
]


def test_nested_values_are_python_value_text(decode: Decode) -> None:
    rows = decode(
        [field("v", text) for text in NESTED]
        # one level deeper: all but the deepest
        + [("{" + f'"m":{{"k":{text}}},"l":[{text}]' + "}").encode() for text in NESTED[:-1]]
    )
    expected = [json_text.value_text(json_text.loads(text)) for text in NESTED]
    assert [row["v"] for row in rows[: len(NESTED)]] == expected
    assert rows[0]["v"] == '{"b":[1.50,-0,1e3,-0E+0,true,false,null,{},[]],"a":{"z":1,"a":2}}'
    assert rows[1]["v"] == '[{"\\u00e9 k\\u007f":"é\x7f\u2028😀\\n\\u0001/\\\\\\""}]'
    assert rows[2]["v"] == '{"\\u00e9\\ud83d\\ude00":"é😀","tab\\tkey":"x"}'
    assert rows[3]["v"] == '{"spaced":[1,2],"x":{}}'
    for text, row in zip(expected[:-1], rows[len(NESTED) :], strict=True):
        assert row["decode_error"] is None
        assert row["m"] == {"k": text}
        assert row["l"] == [text]


def test_nulls_absent_fields_and_integers(decode: Decode) -> None:
    rows = decode(
        [
            b"{}",
            b'{"v":null,"b":null,"n":null,"m":null,"l":null,"d":null}',
            b'{"n":-9223372036854775808,"other":[1,{"x":2}]}',
            b'{"n":9223372036854775807}',
            b'{"n":-0}',
            b'{"m":{"a":null,"b":"1"},"l":[null,"x"],"d":[null,{}]}',
        ]
    )
    empty = dict.fromkeys([*FIELDS, "decode_error", "decode_error_detail"])
    assert rows[0] == empty
    assert rows[1] == empty
    assert rows[2] == {**empty, "n": -9223372036854775808}
    assert rows[3]["n"] == 9223372036854775807
    assert rows[4]["n"] == 0
    assert rows[5]["m"] == {"a": None, "b": "1"}
    assert rows[5]["l"] == [None, "x"]
    assert rows[5]["d"] == [None, {}]


def test_map_keeps_message_order(spark: Any, decode: Decode) -> None:
    decode([])  # registers the function
    frame = spark.createDataFrame(
        [(b'{"m":{"z":"1","a":"2","m":"3"},"d":[{"q":1,"b":2}]}',)], "value binary"
    )
    row = frame.selectExpr(
        "map_keys(exact_json_test(value).m) AS m", "map_keys(exact_json_test(value).d[0]) AS d"
    ).collect()[0]
    assert (row["m"], row["d"]) == (["z", "a", "m"], ["q", "b"])


DEEP_129 = field("v", "[" * 128 + "]" * 128)

REFUSED: list[tuple[bytes | None, str]] = [
    (None, "empty_value"),
    (b"", "empty_value"),
    (b"\xc0\x80", "invalid_utf8"),  # overlong NUL
    (b'{"v":"\xc1\xbf"}', "invalid_utf8"),  # overlong 2-byte
    (b'{"v":"\xe0\x80\xaf"}', "invalid_utf8"),  # overlong "/"
    (b'{"v":"\xf0\x82\x82\xac"}', "invalid_utf8"),  # overlong euro sign
    (b'{"v":"\xed\xa0\x80"}', "invalid_utf8"),  # surrogate U+D800 in UTF-8
    (b'{"v":"\xed\xbf\xbf"}', "invalid_utf8"),  # surrogate U+DFFF in UTF-8
    (b'{"v":"\xf4\x90\x80\x80"}', "invalid_utf8"),  # beyond U+10FFFF
    (b'{"v":"\xff"}', "invalid_utf8"),
    (b'{"v":"\x80"}', "invalid_utf8"),  # a lone continuation byte
    (b'{"v":"\xe2\x82', "invalid_utf8"),  # truncated in a sequence
    (b'{"v":"\xe2\x82"}', "invalid_utf8"),
    (b'{"v":1', "invalid_json"),
    (b'{"v":"abc', "invalid_json"),
    (b'{"v":[1,2', "invalid_json"),
    (b'{"v":1}x', "invalid_json"),
    (b'{"v":1} {}', "invalid_json"),
    (b'{"v":1}{"v":2}', "invalid_json"),
    (b'{"v":1} 2', "invalid_json"),
    (b'{"v":NaN}', "invalid_json"),
    (b'{"v":Infinity}', "invalid_json"),
    (b'{"v":-Infinity}', "invalid_json"),
    (b'{"x":[NaN]}', "invalid_json"),  # in a skipped key
    (b'{"v":01}', "invalid_json"),
    (b'{"v":1.}', "invalid_json"),
    (b'{"v":+1}', "invalid_json"),
    (b"{'v':1}", "invalid_json"),
    (b'{"v":1,}', "invalid_json"),
    (b'{"v":"a\tb"}', "invalid_json"),  # a raw control character in a string
    (b'{"v":"\\x"}', "invalid_json"),  # an invalid escape
    (b"\xef\xbb\xbf{}", "invalid_json"),  # a byte order mark
    (b"\x00{}", "invalid_json"),
    (b"\x00{\x00}", "invalid_json"),  # UTF-16 to Jackson's detection
    (b" \n\t", "invalid_json"),
    (DEEP_129, "invalid_json"),
    (field("x", "{" + '"a":{' * 127 + "}" * 128), "invalid_json"),  # 129 in a skipped key
    (b'{"v":1,"v":2}', "duplicate_key"),
    (b'{"x":1,"x":1}', "duplicate_key"),  # a key outside the schema
    (b'{"x":{"a":1,"a":2}}', "duplicate_key"),
    (b'{"v":[[{"q":1,"q":1}]]}', "duplicate_key"),
    (b'{"m":{"a":1,"a":2}}', "duplicate_key"),
    (b'{"d":[{"k":1,"k":2}]}', "duplicate_key"),
    (b'{"l":[{"k":1,"k":2}]}', "duplicate_key"),
    (b"[1]", "not_an_object"),
    (b'"text"', "not_an_object"),
    (b"1.50", "not_an_object"),
    (b"null", "not_an_object"),
    (b"true", "not_an_object"),
    (b'{"b":"true"}', "invalid_field_type"),
    (b'{"b":1}', "invalid_field_type"),
    (b'{"b":{}}', "invalid_field_type"),
    (b'{"n":"1"}', "invalid_field_type"),
    (b'{"n":1.0}', "invalid_field_type"),
    (b'{"n":1e3}', "invalid_field_type"),
    (b'{"n":true}', "invalid_field_type"),
    (b'{"n":[1]}', "invalid_field_type"),
    (b'{"m":[]}', "invalid_field_type"),
    (b'{"m":"x"}', "invalid_field_type"),
    (b'{"l":{}}', "invalid_field_type"),
    (b'{"l":"x"}', "invalid_field_type"),
    (b'{"d":{}}', "invalid_field_type"),
    (b'{"d":[1]}', "invalid_field_type"),
    (b'{"d":[{},"x"]}', "invalid_field_type"),
    (b'{"d":[[]]}', "invalid_field_type"),
    (b'{"n":9223372036854775808}', "invalid_field_value"),
    (b'{"n":-9223372036854775809}', "invalid_field_value"),
    (b'{"n":' + b"9" * 30 + b"}", "invalid_field_value"),
    # a syntax error wins over a field error found before it
    (b'{"b":"x","v":', "invalid_json"),
    (b'{"b":"x","v":1,"v":2}', "duplicate_key"),
    # a string escaping a lone surrogate: no Unicode text (Python accepts it, see below)
    (b'{"v":"\\ud800"}', "invalid_json"),
    (b'{"v":"\\udc00\\ud800"}', "invalid_json"),
    (b'{"x":["\\uDBFF"]}', "invalid_json"),
    (b'{"m":{"\\ud800":"1"}}', "invalid_json"),
]
STRUCTURAL = {"empty_value", "invalid_utf8", "invalid_json", "duplicate_key", "not_an_object"}


def json_type_name(value: Any) -> str:
    """The JSON type of a parsed value as the exact JSON function names it in its
    ``not_an_object`` detail (``JSON an array, not an object``)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, str) and not isinstance(value, json_text.JsonFloat):
        return "a string"
    if isinstance(value, int | json_text.JsonFloat):
        return "a number"
    if isinstance(value, list):
        return "an array"
    return "an object"


def python_reason(raw: bytes | None) -> tuple[str, str] | None:
    """The reason and detail of the Python decoders' structural checks, or None."""
    try:
        shared.parse_json_object(raw, describe=json_type_name)
    except DecodeError as error:
        return error.reason, error.detail
    return None


def test_refusals(decode: Decode) -> None:
    rows = decode([raw for raw, _reason in REFUSED])
    for (raw, reason), row in zip(REFUSED, rows, strict=True):
        assert row["decode_error"] == reason, (raw, row)
        assert row["decode_error_detail"], raw
        assert all(row[name] is None for name in FIELDS), (raw, row)
        python = python_reason(raw)
        if reason in STRUCTURAL and b"\\u" not in (raw or b""):
            # the same reason as the Python decoders, and for UTF-8 and the shapes the same text
            assert python is not None and python[0] == reason, (raw, python)
            if reason in ("invalid_utf8", "not_an_object", "empty_value"):
                assert row["decode_error_detail"] == python[1], raw
    details = {raw: row["decode_error_detail"] for (raw, _), row in zip(REFUSED, rows, strict=True)}
    assert details[b'{"v":"\xe2\x82'] == "not UTF-8: unexpected end of data at byte 6"
    assert details[b'{"v":"\xe0\x80\xaf"}'] == "not UTF-8: invalid continuation byte at byte 6"
    assert details[b'{"v":1,"v":2}'] == "the key 'v' appears twice in one object"
    assert details[DEEP_129] == "not valid JSON: nested deeper than 128 levels"
    assert details[b"[1]"] == "JSON an array, not an object"
    assert details[b'{"b":"true"}'] == "b must be true or false, not a string"
    assert details[b'{"d":[{},"x"]}'] == "d[1] must be an object, not a string"
    assert details[b'{"v":"\\ud800"}'] == (
        "not valid JSON: a string escapes the lone surrogate \\ud800, which is no Unicode text"
    )
    # what Python does with a lone surrogate: it parses (and fails later, writing Arrow)
    assert json_text.loads(b'{"v":"\\ud800"}') == {"v": "\ud800"}


def test_register_refuses_unsupported_schemas(spark: Any) -> None:
    for ddl, says in [
        ("a int", "has the type int"),
        ("a map<string,bigint>", "has the type map<string,bigint>"),
        ("decode_error string", "decode_error"),
    ]:
        with pytest.raises(IllegalArgumentException, match=says):
            exact_json.register(spark, "exact_json_refused", ddl)


NESTED_SCHEMA = (
    "s struct<v: string, n: bigint, t: struct<m: map<string,string>>>, "
    "a array<struct<name: string, l: array<string>>>"
)


def test_nested_objects_are_structs_with_the_same_rules(spark: Any) -> None:
    """A struct field reads an object by the same rules as the top level (nested to any
    depth), an array of structs an array of objects; a field error names the field's path."""
    exact_json.register(spark, "exact_json_nested", NESTED_SCHEMA)
    decode = _runner(
        spark,
        "exact_json_nested",
        "d.s.v, d.s.n, map_entries(d.s.t.m) AS m, d.a, d.decode_error, d.decode_error_detail",
    )
    rows = decode(
        [
            b'{"s":{"v":1.50,"x":[1],"n":-0,"t":{"m":{"b":2e0,"a":null}}},'
            b'"a":[{"name":"id","l":[7,"x"]},null,{}]}',
            b'{"s":null,"a":null}',
            b'{"s":{"t":[]}}',
            b'{"a":[{"name":"id"},5]}',
            b'{"s":{"n":1.5}}',
            b'{"s":{"v":"x","v":"y"}}',
        ]
    )
    assert rows[0] == {
        "v": "1.50",
        "n": 0,
        "m": [("b", "2e0"), ("a", None)],
        "a": [("id", ["7", "x"]), None, (None, None)],
        "decode_error": None,
        "decode_error_detail": None,
    }
    assert (rows[1]["v"], rows[1]["a"], rows[1]["decode_error"]) == (None, None, None)
    assert [(r["decode_error"], r["decode_error_detail"]) for r in rows[2:]] == [
        ("invalid_field_type", "s.t must be an object, not an array"),
        ("invalid_field_type", "a[1] must be an object, not a number"),
        (
            "invalid_field_type",
            "s.n must be an integer, not a number with a fraction or an exponent",
        ),
        ("duplicate_key", "the key 'v' appears twice in one object"),
    ]


# --- parity with json_text on Canal messages --------------------------------------------------

TRICKY_NUMBERS = [
    "0",
    "-0",
    "-0.0",
    "-0E+0",
    "0e0",
    "1.50",
    "1e3",
    "1E-7",
    "-12.000",
    "18446744073709551615",
    "-9223372036854775808",
    "12345678901234567890.123456789012345678901",
    "1E400",
    "4.9e-324",
]
TRICKY_STRINGS = [
    "",
    "plain",
    "é",
    "😀",
    'quote " backslash \\ slash /',
    "\n\r\t\b\f\x01\x1f\x7f",
    "\u2028\u2029",
    "中文 Łukasz",
    "2024-02-29 23:59:59.999",
    "-0",
    "1.50",
]


def _random_value(rng: random.Random, depth: int = 0) -> str:
    """The JSON text of a random value (numbers written as their tricky texts)."""
    kind = rng.random()
    if kind < 0.3:
        return rng.choice(TRICKY_NUMBERS)
    if kind < 0.6:
        return json.dumps(rng.choice(TRICKY_STRINGS), ensure_ascii=rng.random() < 0.5)
    if kind < 0.7:
        return rng.choice(["null", "true", "false"])
    if kind < 0.8 and depth < 3:
        items = [
            json.dumps(f"k{i}{rng.choice(TRICKY_STRINGS)}") + ":" + _random_value(rng, depth + 1)
            for i in range(rng.randint(0, 3))
        ]
        return "{" + ",".join(items) + "}"
    if kind < 0.9 and depth < 3:
        return (
            "[" + ", ".join(_random_value(rng, depth + 1) for _ in range(rng.randint(0, 3))) + "]"
        )
    return json.dumps(str(rng.randint(-(10**20), 10**20)))


def _random_canal(rng: random.Random) -> bytes:
    columns = [f"c{i}_{rng.choice(['é', 'x', '😀'])}" for i in range(rng.randint(1, 6))]

    def row() -> str:
        names = columns if rng.random() < 0.7 else rng.sample(columns, rng.randint(0, len(columns)))
        return "{" + ",".join(json.dumps(n) + ":" + _random_value(rng) for n in names) + "}"

    rows = rng.randint(0, 3)
    parts = {
        "data": rng.choice(["null", "[" + ",".join(row() for _ in range(rows)) + "]"]),
        "old": rng.choice(["null", "[" + ",".join(row() for _ in range(rows)) + "]"]),
        "mysqlType": "{"
        + ",".join(json.dumps(c) + ":" + _random_value(rng) for c in columns)
        + "}",
        "sqlType": "{"
        + ",".join(json.dumps(c) + ":" + rng.choice(TRICKY_NUMBERS) for c in columns)
        + "}",
        "pkNames": rng.choice(["null", "[]", json.dumps(columns[:1]), json.dumps(columns)]),
        "type": json.dumps(rng.choice(["INSERT", "UPDATE", "DELETE", "ALTER", "INIT"])),
        "isDdl": rng.choice(["true", "false", "null"]),
        "es": str(rng.randint(0, 2**62)),
        "ts": rng.choice(["-0", "0", str(rng.randint(-(2**63), 2**63 - 1))]),
        "id": rng.choice(TRICKY_NUMBERS),
        "database": json.dumps(rng.choice(TRICKY_STRINGS), ensure_ascii=False),
        "table": json.dumps(rng.choice(TRICKY_STRINGS)),
        "sql": rng.choice(['""', json.dumps("ALTER TABLE `t` ADD COLUMN `x` INT"), "null"]),
        "gtid": json.dumps("3ccc1ca4-0b8e-11ee-9d2a-00163e0a1c2f:42"),
    }
    keys = list(parts)
    rng.shuffle(keys)
    keys = [k for k in keys if rng.random() < 0.9]  # some fields absent
    separator = rng.choice([",", ", ", ",\n  "])
    return ("{" + separator.join(f'"{k}":{parts[k]}' for k in keys) + "}").encode()


def _python_canal(raw: bytes) -> dict[str, Any]:
    """What json_text gives for the fields of CANAL_SCHEMA."""
    message = json_text.loads(raw)

    def rows(key: str) -> list[list[tuple[str, str | None]] | None] | None:
        value = message.get(key)
        if value is None:
            return None
        return [
            None if r is None else [(k, json_text.value_text(v)) for k, v in r.items()]
            for r in value
        ]

    def text(key: str) -> str | None:
        return json_text.value_text(message.get(key))

    mysql_type = message.get("mysqlType")
    pk_names = message.get("pkNames")
    return {
        "data": rows("data"),
        "old": rows("old"),
        "mysqlType": None
        if mysql_type is None
        else [(k, json_text.value_text(v)) for k, v in mysql_type.items()],
        "pkNames": None if pk_names is None else [json_text.value_text(v) for v in pk_names],
        "type": text("type"),
        "isDdl": message.get("isDdl"),
        "es": None if message.get("es") is None else int(message["es"]),
        "ts": None if message.get("ts") is None else int(message["ts"]),
        "database": text("database"),
        "table": text("table"),
        "sql": text("sql"),
        "decode_error": None,
        "decode_error_detail": None,
    }


def _ordered(row: dict[str, Any]) -> dict[str, Any]:
    """A decoded row with its maps' entries as (key, value) lists."""

    def items(entries: list[Any] | None) -> list[tuple[str, str | None]] | None:
        return None if entries is None else [(entry[0], entry[1]) for entry in entries]

    out = dict(row)
    for key in ("data", "old"):
        if out[key] is not None:
            out[key] = [items(m) for m in out[key]]
    out["mysqlType"] = items(out["mysqlType"])
    return out


def test_canal_parity_with_json_text(decode_canal: Decode) -> None:
    rng = random.Random(50)
    history = generate(SimulationConfig(seed=50, changes=300, features=dts_canal_json.FEATURES))
    simulated = [message.value for message in dts_canal_json.encode(history, "t")]
    built = [_random_canal(rng) for _ in range(300)]
    messages = [*simulated, *built]
    assert len(simulated) > 100
    rows = decode_canal(messages)
    for raw, row in zip(messages, rows, strict=True):
        assert _ordered(row) == _python_canal(raw), raw
    # the cases the random messages are for did occur
    decoded = [_python_canal(raw) for raw in built]
    assert any(
        r["data"] and any(v == "-0E+0" for m in r["data"] if m for _, v in m) for r in decoded
    )
    assert any(r["ts"] == 0 for r in decoded)
    assert sum(r["type"] is None for r in decoded) > 5
