"""``python -m ingest``: the ingest job's entry point (code in :mod:`cdc_lakehouse.ingest`)."""
