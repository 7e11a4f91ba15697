"""``python -m ingest --dump PATH``: see :mod:`cdc_lakehouse.ingest.cli`."""

import sys

from cdc_lakehouse.ingest.cli import main

if __name__ == "__main__":
    sys.exit(main())
