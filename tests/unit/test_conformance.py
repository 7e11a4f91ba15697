"""Every format of the manifest gives the shared tests what they ask of its cases file
(tests/dbt_models/conformance.py): a new format is told, per name, what to supply."""

from __future__ import annotations

import pytest

from cdc_lakehouse import formats
from tests.dbt_models import conformance

REQUIRED = [
    (fmt.name, name)
    for fmt in formats.MANIFEST
    for name in conformance.NAMES
    if conformance.applies(fmt.name, name)
]


@pytest.mark.parametrize(("format_name", "name"), REQUIRED, ids=[f"{f}-{n}" for f, n in REQUIRED])
def test_the_cases_file_gives_the_name_or_opts_out(format_name, name):
    given = conformance.lookup(format_name, name)  # MissingConformanceError names what is missing
    assert given is None or callable(given), (
        f"{format_name}: `{name}` of {conformance.cases_path(format_name)} is neither a "
        "function nor None (an opt-out)"
    )


# a format alone in its staging folder: changing its cases file changes only it
ALONE = next(
    fmt for fmt in formats.MANIFEST if len(formats.in_staging_folder(fmt.staging_folder)) == 1
)


def test_a_missing_name_is_reported_with_the_format_and_the_file(monkeypatch):
    module = conformance.cases_module(ALONE.name)
    monkeypatch.delattr(module, "fault_matrix")
    with pytest.raises(conformance.MissingConformanceError) as error:
        conformance.lookup(ALONE.name, "fault_matrix")
    assert str(error.value).startswith(
        f"{ALONE.name}: tests/dbt_models/formats/{ALONE.staging_folder}/cases.py has no "
        "`fault_matrix`"
    )
    # the shared tests still run for the others, and for it (to fail with that message)
    assert ALONE.name in conformance.formats_for("fault_matrix")
    assert ALONE.name not in conformance.provided("fault_matrix")


def test_an_opt_out_leaves_the_format_out_of_the_check(monkeypatch):
    module = conformance.cases_module(ALONE.name)
    monkeypatch.setattr(module, "fault_matrix", None)
    assert ALONE.name not in conformance.formats_for("fault_matrix")
    assert conformance.opted_out("fault_matrix") == [ALONE.name]
    with pytest.raises(conformance.MissingConformanceError, match="opts out of `fault_matrix`"):
        conformance.provide(ALONE.name, "fault_matrix")
