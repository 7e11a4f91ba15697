"""``python -m cdc_lakehouse.bench``: see :mod:`cdc_lakehouse.bench.cli`."""

import sys

from cdc_lakehouse.bench.cli import main

sys.exit(main())
