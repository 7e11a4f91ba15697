"""The dbt targets of profiles.yml (docs/how-to/slim-ci.md "Environments: dev, CI and prod"):
`dbt parse --target prod` puts every model and seed in the plain bronze / silver / gold schemas,
`--target dev` and `--target ci` every one outside them, in schemas named by the engineer
(CDC_DEV_SCHEMA, else the user name) and by the CI run (CDC_CI_RUN_ID); the source stays
production's bronze.kafka_records in every target. `dbt parse` does no warehouse work."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DBT = str(Path(sys.executable).parent / "dbt")
PLAIN = {"bronze", "silver", "gold"}


def parsed_schemas(target: str, tmp_path: Path, **env: str) -> dict[str, set[str]]:
    """resource type -> the schemas of its nodes, from `dbt parse --target TARGET` with ``env``
    (and neither CDC_DEV_SCHEMA nor CDC_CI_RUN_ID unless given); "source" -> the sources'
    schema.table names."""
    out = tmp_path / target
    unset = ("CDC_DEV_SCHEMA", "CDC_CI_RUN_ID")
    environment = {k: v for k, v in os.environ.items() if k not in unset}
    result = subprocess.run(
        [DBT, "parse", "--project-dir", ".", "--profiles-dir", ".", "--target", target,
         "--target-path", str(out), "--log-path", str(out / "logs")],
        cwd=ROOT, env={**environment, **env}, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout[-3000:]
    manifest = json.loads((out / "manifest.json").read_text())
    schemas: dict[str, set[str]] = {}
    for node in manifest["nodes"].values():
        schemas.setdefault(node["resource_type"], set()).add(node["schema"])
    schemas["source"] = {f"{s['schema']}.{s['name']}" for s in manifest["sources"].values()}
    return schemas


@pytest.mark.parametrize(
    ("target", "env", "prefix"),
    [
        ("dev", {"CDC_DEV_SCHEMA": "dev_ana"}, "dev_ana_"),
        ("dev", {"USER": "A.Lice-2"}, "dev_a_lice_2_"),  # made a metastore database name
        ("ci", {"CDC_CI_RUN_ID": "1234"}, "ci_1234_"),
    ],
)
def test_dev_and_ci_put_every_model_in_their_own_schemas(target, env, prefix, tmp_path):
    schemas = parsed_schemas(target, tmp_path, **env)
    assert schemas["model"] == {f"{prefix}silver", f"{prefix}gold"}
    assert schemas["seed"] == {f"{prefix}bronze"}
    assert schemas["source"] == {"bronze.kafka_records"}  # read from production


def test_prod_puts_every_model_in_the_plain_schemas(tmp_path):
    schemas = parsed_schemas("prod", tmp_path, CDC_DEV_SCHEMA="dev_ana", CDC_CI_RUN_ID="1")
    assert schemas["model"] == {"silver", "gold"}
    assert schemas["seed"] == {"bronze"}
    assert schemas["source"] == {"bronze.kafka_records"}
