"""Stand-in of dbt's Jinja ``modules`` for sqlfluff's jinja templater (macros such as
``macros/cdc_freshness.sql`` call ``modules.re``): the standard modules dbt exposes."""

import datetime
import re

__all__ = ["datetime", "re"]
