"""Change simulator: seeded logical change histories (``history``), a plain-Python oracle of
their expected current state and history (``oracle``), encoders that render a history in each
registry format (``encoders``), and delivery with partitions, duplicates, reordering across
batches and malformed records (``delivery``). ``python -m cdc_lakehouse.tools.simulate --help``."""
