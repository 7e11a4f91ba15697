"""cdc_lakehouse: shared code of the CDC lakehouse.

Imported by the ingest job (``python -m ingest``), by the dbt Python models and by the tests.
Modules, one job each:

- :mod:`cdc_lakehouse.settings`: every ``CDC_*`` environment variable (one table, one typed
  settings object; the only module that reads them).
- :mod:`cdc_lakehouse.spark_session`: the one Spark configuration used by ingest and dbt.
- :mod:`cdc_lakehouse.registry`: the topic registry ``seeds/cdc_topics.csv``.
- :mod:`cdc_lakehouse.dump`: the topic dump format (JSON Lines of Kafka records).
- :mod:`cdc_lakehouse.decode`: Arrow-batched decoders of the CDC message formats.
"""

__version__ = "0.1.0"
