"""cdc_lakehouse: the CDC lakehouse's Python package, by role.

Imported by the ingest job (``ingest/``, ``python -m ingest``), by the dbt Python models
(``python_models/``) and by the tests.

- Domain, what the project exists for: :mod:`cdc_lakehouse.formats` (one plug-in package per
  format: its manifest entry, decoder, simulator encoders, ordering rule; the topic registry
  :mod:`~cdc_lakehouse.formats.registry`), :mod:`cdc_lakehouse.decode` (the shared decoding
  loop, the exact JSON function's Python side, the dbt Python models' factory),
  :mod:`cdc_lakehouse.ddl` (captured DDL to Spark SQL) and :mod:`cdc_lakehouse.codegen` (typed
  gold models). Gold's rules are SQL, in ``macros/``.
- :mod:`cdc_lakehouse.runtime`: where it runs: settings (every ``CDC_*`` variable), the Spark
  session, its JVM libraries, a local cluster, the shared metastore.
- :mod:`cdc_lakehouse.tools`: the benchmark, the change simulator, the Kafka broker, the live
  demo, the docs site, the demo's summary, maintenance and upgrades.
"""

__version__ = "0.1.0"
