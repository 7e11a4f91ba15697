"""Runtime: where the project runs. Its settings (:mod:`.settings`, every ``CDC_*`` variable),
the Spark session and its JVM libraries (:mod:`.spark_session`, :mod:`.jars`,
:mod:`.jvm_class_archive`), a standalone Spark cluster (:mod:`.spark_master`, :mod:`.cluster`),
the Thrift and Connect servers (:mod:`.spark_server`), the shared Hive metastore
(:mod:`.metastore_server`, :mod:`.metastore_lock`), interrupted-write clean-up
(:mod:`.interrupted_writes`), spreading work over the cores (:mod:`.parallelism`) and the
command lines' argument types (:mod:`.cli_types`).
"""
