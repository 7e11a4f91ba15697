"""``make bench``: throughput per stage and incremental cost growth of the pipeline, side by
side with hand-written baselines on the same bytes (``python -m cdc_lakehouse.tools.bench``)."""
