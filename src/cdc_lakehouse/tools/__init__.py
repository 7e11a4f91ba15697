"""Tools around the pipeline, none of which a build imports: the benchmark (:mod:`.bench`), the
change simulator and its oracle (:mod:`.simulate`), the local Kafka broker and producer
(:mod:`.kafka`), the live demo (:mod:`.live`, :mod:`.dbt_loop`), the docs site and its
generated reference (:mod:`.docs_site`, :mod:`.docs_reference`), the demo's summary
(:mod:`.summary`), lake maintenance and upgrades (:mod:`.maintenance`, :mod:`.upgrade`).
"""
