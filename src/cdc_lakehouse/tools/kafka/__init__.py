"""Kafka helpers shared by the ingest job, the tests and the demos.

Modules: :mod:`.client` (confluent-kafka settings, reachability, topic metadata and
watermarks, for the checks before Spark starts and the lag report), :mod:`.broker` (a local
Apache Kafka broker, KRaft, from the Maven jars, for tests and demos), :mod:`.produce`
(``python -m cdc_lakehouse.tools.kafka.produce``: a topic dump -> Kafka).
"""
