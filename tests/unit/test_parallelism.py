"""spread_over_cores: a one-split bronze batch is decoded by every core, and no row is lost."""

from __future__ import annotations

from cdc_lakehouse.runtime.parallelism import spread_over_cores


def test_one_partition_is_spread_over_the_cores_without_losing_rows(spark):
    cores = spark.sparkContext.defaultParallelism
    one_split = spark.range(1000).coalesce(1)

    spread = spread_over_cores(one_split)

    assert spread.rdd.getNumPartitions() == cores
    assert sorted(r.id for r in spread.collect()) == list(range(1000))
    busy = spread.rdd.glom().map(len).collect()
    assert sum(1 for rows in busy if rows) == min(cores, 1000)


def test_a_frame_with_enough_partitions_is_not_shuffled(spark):
    cores = spark.sparkContext.defaultParallelism
    frame = spark.range(0, 1000, numPartitions=cores + 1)

    assert spread_over_cores(frame) is frame
