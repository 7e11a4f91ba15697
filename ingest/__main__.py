"""``python -m ingest --dump PATH``: see :mod:`ingest.cli`."""

import sys

from ingest.cli import main

if __name__ == "__main__":
    sys.exit(main())
