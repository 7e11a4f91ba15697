"""The value texts the simulator's encoders share (``cdc_lakehouse.tools.simulate.encoders.
_alibaba_values``, used by the DataWorks, DataHub Tuple, Lindorm and Debezium encoders; each
encoder's own value texts: tests/dbt_models/formats/<staging_folder>/test_encoder.py)."""

from __future__ import annotations

import pytest

from cdc_lakehouse.tools.simulate.encoders._alibaba_values import java_double_text


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (100.0, "100.0"),
        (0.1, "0.1"),
        (0.001, "0.001"),
        (1e-5, "1.0E-5"),
        (123456789.0, "1.23456789E8"),
        (1234567.5, "1234567.5"),
        (-2.5e-300, "-2.5E-300"),
        (0.0, "0.0"),
    ],
)
def test_doubles_are_written_as_java_prints_them(value, text):
    assert java_double_text(value) == text
