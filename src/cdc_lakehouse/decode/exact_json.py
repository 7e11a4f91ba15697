"""Exact JSON decoding in Spark SQL: a JVM function that keeps every value's text as sent.

Spark's ``from_json`` reads a JSON number into a string field as a double's text (``1.50``
becomes ``1.5``, ``12345678901234567890123.456789`` becomes ``1.2345678901234568E22``). The
function :func:`register` installs (``cdc.lakehouse.json.ExactJson``, built from
``jvm/exact-json`` by ``make install`` into the ``spark`` class path, so every session of the
project loads it) reads each value as :mod:`cdc_lakehouse.decode.json_text` does in Python:
``name(value binary)`` parses the UTF-8 bytes of one JSON object once (Jackson, Spark's own
copy) and returns a struct of the declared top-level fields followed by ``decode_error`` and
``decode_error_detail`` (strings).

Field types of the schema (Spark DDL, e.g. ``"type string, isDdl boolean, es bigint,
data array<map<string,string>>"``; keys match field names exactly, case included):

- ``string``: a string value unescaped; a number as its exact text (``1.50``, ``1e3``, ``-0``,
  ``-0E+0``, ``18446744073709551615``); ``true`` / ``false``; an object or array as the
  compact JSON text :func:`~cdc_lakehouse.decode.json_text.value_text` gives, byte for byte.
- ``boolean``: ``true`` / ``false``. ``bigint``: a JSON integer of 64 bits (a string of
  digits or ``1.0`` is refused).
- ``map<string,string>``: an object, values rendered as ``string`` fields, in message order.
- ``array<string>``: an array, elements rendered as ``string`` fields.
- ``array<map<string,string>>``: an array of objects (a null element is a NULL map).
- ``struct<...>``: an object whose fields are read by these same rules, nested to any depth
  (e.g. DataWorks' ``payload struct<op: string, timestamp: struct<eventTime: string>>``).
- ``array<struct<...>>``: an array of such objects (a null element is a NULL struct).

JSON null and an absent key read as NULL. Keys outside the schema are skipped but still checked
(syntax, duplicate keys, depth). A field error names the field's path (``payload.op``,
``schema.dataColumn[2]``).

Errors: nothing raises for a bad message; its row has every field NULL, ``decode_error`` a
reason code of :data:`cdc_lakehouse.decode.shared.STRUCTURAL_REASONS` and
``decode_error_detail`` what is wrong where: ``empty_value`` (NULL or zero bytes),
``invalid_utf8`` (strict: overlong forms and encoded surrogates too; detail as Python's),
``invalid_json`` (syntax, truncated text, trailing data, NaN / Infinity, a byte order mark,
nesting deeper than :data:`~cdc_lakehouse.decode.json_text.MAX_JSON_DEPTH` levels, a string
escaping a lone surrogate), ``duplicate_key`` (in any object), ``not_an_object``,
``invalid_field_type`` (a value its declared type cannot hold, e.g. ``"x"`` for a boolean)
and ``invalid_field_value`` (a ``bigint`` beyond 64 bits). A syntax error anywhere wins over a
field error. ``decoder_error`` means the function itself failed (a bug).

Maps keep the message's order (``map_keys``, ``map_entries``); ``collect()`` loses it (PySpark
turns a map into a dict through a Java ``HashMap``).

Select the struct once and expand it in an outer query (``SELECT d.* FROM (SELECT
name(value) AS d FROM ...)``): ``name(value).*`` in one SELECT calls the function once per
field.
"""

from __future__ import annotations

from py4j.java_gateway import JavaPackage
from pyspark.sql import SparkSession

from cdc_lakehouse.runtime.jars import JarsMissingError

JVM_CLASS = "cdc.lakehouse.json.ExactJson"
"""The Java class of the function (jvm/exact-json)."""


def register(spark: SparkSession, name: str, schema_ddl: str) -> None:
    """Register the exact JSON function ``name`` for ``spark``'s SQL (module doc).

    Args:
        spark: a classic (py4j) session of the project, whose ``spark.jars`` holds the
            exact-json jar (:func:`cdc_lakehouse.runtime.spark_session.get_spark`).
        name: the SQL function name.
        schema_ddl: the fields to extract, Spark DDL (``"a string, b struct<c: bigint>"``).

    Raises:
        pyspark.errors.IllegalArgumentException: ``schema_ddl`` declares a type the function
            cannot read, repeats a field or declares ``decode_error`` /
            ``decode_error_detail`` (the message names the field).
        pyspark.errors.ParseException: ``schema_ddl`` is not Spark DDL.
        JarsMissingError: the session's class path has no exact-json jar (run ``make
            install``).
    """
    function_class = spark._jvm.cdc.lakehouse.json.ExactJson  # type: ignore[union-attr]
    if isinstance(function_class, JavaPackage):  # py4j's answer for a class it cannot find
        raise JarsMissingError(
            f"The session's class path has no {JVM_CLASS} (jvm/exact-json): run make install "
            "(it builds the jar into the spark/ jar folder), then start a new session."
        )
    function_class.register(spark._jsparkSession, name, schema_ddl)
