"""Kafka helpers shared by the ingest job, the tests and the demo.

Modules: :mod:`.client` (consumer settings, reachability, topic metadata, watermarks and the
real end of a partition), :mod:`.broker` (a local Tansu broker for tests and demos),
:mod:`.produce` (``python -m cdc_lakehouse.kafka.produce``: a topic dump -> Kafka).
"""
