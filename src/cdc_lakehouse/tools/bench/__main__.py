"""``python -m cdc_lakehouse.tools.bench``: see :mod:`cdc_lakehouse.tools.bench.cli`."""

import sys

from cdc_lakehouse.tools.bench.cli import main

sys.exit(main())
