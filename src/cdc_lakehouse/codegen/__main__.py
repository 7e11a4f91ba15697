"""``python -m cdc_lakehouse.codegen``: see :mod:`cdc_lakehouse.codegen.cli`."""

import sys

from cdc_lakehouse.codegen.cli import main

sys.exit(main())
