"""The ingest job: Kafka records (a topic dump for now) -> ``bronze.kafka_records``, exactly once.

Modules: :mod:`~ingest.cli` (``python -m ingest``), :mod:`.job` (plan and run),
:mod:`.dump_source` (the ``cdc_dump`` Spark streaming source), :mod:`.offsets` (Kafka offsets
as source offsets, read limits), :mod:`.bronze` (table DDL, checkpoint guard, batch writer).
"""
