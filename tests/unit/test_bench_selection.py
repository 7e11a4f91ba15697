"""The bench's per-format dbt selections build what silver reads.

The format bench runs ``dbt run --select`` of one format's staging (and, once, of every other
format's) before silver. Silver unions the ``models/intermediate`` models too (split-update
pairing, Shareplex key learning), so each must be in one of those selections, or silver fails
with TABLE_OR_VIEW_NOT_FOUND on a fresh lake. dbt resolves the selectors here (``dbt ls``, no
Spark).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from cdc_lakehouse.tools.bench.pipeline import (
    GOLD_SELECTION,
    SILVER_SELECTION,
    Pipeline,
    staging_selection,
)

PROJECT = Path(__file__).resolve().parents[2]


def _selected_models(
    tmp_path: Path, selectors: tuple[str, ...], extra: tuple[str, ...] = ()
) -> set[str]:
    from dbt.cli.main import dbtRunner

    os.environ.setdefault("DBT_SEND_ANONYMOUS_USAGE_STATS", "false")
    result = dbtRunner().invoke(
        [
            "ls",
            "--quiet",
            "--resource-type",
            "model",
            "--output",
            "name",
            "--select",
            *selectors,
            *extra,
            "--project-dir",
            str(PROJECT),
            "--profiles-dir",
            str(PROJECT),
            "--target-path",
            str(tmp_path / "target"),
            "--log-path",
            str(tmp_path / "logs"),
        ]
    )
    assert result.success, result.exception
    return set(result.result)


@pytest.mark.parametrize("format_", ["dataworks_json", "dts_canal_json", "dts_shareplex_json"])
def test_a_format_and_the_other_formats_select_every_intermediate_model(
    tmp_path: Path, format_: str
) -> None:
    # a format's intermediate models are int_<folder>__...; silver's and gold's own
    # (int_schema_versions_by_batch, int_row_versions) read silver and wait for its stage
    folder = PROJECT / "models" / "intermediate"
    intermediates = {path.stem for path in folder.glob("int_*__*.sql")}
    assert intermediates, "models/intermediate has no format's models"
    layers = {path.stem for path in folder.glob("*.sql")} - intermediates
    assert layers == {"int_schema_versions_by_batch", "int_row_versions"}
    own = _selected_models(tmp_path, staging_selection(format_))
    others = _selected_models(tmp_path, staging_selection(format_, other_formats=True))
    assert intermediates <= own | others
    assert not (own | others) & layers
    # each intermediate is built once: with its own format, not with the others too
    assert not (own & others & intermediates)
    # silver's and gold's intermediate models are in their stages' selections
    silver = _selected_models(tmp_path, SILVER_SELECTION)
    gold = _selected_models(tmp_path, GOLD_SELECTION)
    assert "int_schema_versions_by_batch" in silver and "change_events" in silver
    assert "int_row_versions" in gold and "current_rows" in gold


def test_a_deployment_of_one_format_builds_its_staging_folder_alone(tmp_path: Path) -> None:
    """``--deployment its-format``: the bench's dbt commands carry var cdc_formats, and dbt
    then builds that format's staging models and none of another format's."""
    pipeline = Pipeline(None, PROJECT, tmp_path, ("dts_canal_json",))
    deployed = _selected_models(tmp_path, ("path:models",), pipeline._deployment_vars(("build",)))
    shipped = _selected_models(tmp_path, ("path:models",))
    assert "stg_dts_canal__events" in deployed
    assert "stg_qlik__events" in shipped and "stg_qlik__events" not in deployed
    assert "current_rows" in deployed
    # a command with vars of its own keeps them
    assert pipeline._deployment_vars(("build", "--vars", "{x: 1}")) == ()
