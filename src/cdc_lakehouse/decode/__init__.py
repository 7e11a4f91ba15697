"""Arrow-batched decoders of CDC message formats, one module per format family.

Each decoder is a function ``Iterator[pyarrow.RecordBatch] -> Iterator[pyarrow.RecordBatch]``
for ``DataFrame.mapInArrow``, plus the Spark DDL schema of its output. Decoders do what Spark
SQL cannot do exactly (JSON numbers keep their exact digits; images keep the difference
between NULL and "not provided"); the op vocabulary, ordering keys and routing to silver are
SQL in the dbt models.
"""
