"""dbt-bouncer check of the project's properties file name: one `_<folder>__models.yml` per
folder, named after the folder that holds the model (dbt Labs' structure guide). A dbt Python
model (`python_models/<path>/`) is declared in the properties file of the same folder under
`models/` (`models/<path>/`), beside its SQL neighbours.

dbt-bouncer's own `check_model_property_file_location` expects the path's layer in the name
(`_stg_dataworks__models.yml` for `models/staging/dataworks/`), which is not the guide's
`_<directory>__models.yml`; `dbt-bouncer.yml` loads this file as a custom check
(`custom_checks_dir`).
"""

from pathlib import PurePosixPath
from typing import Any

from dbt_bouncer.check_framework.decorator import check, fail
from dbt_bouncer.utils import clean_path_str, get_clean_model_name


@check
def check_model_properties_file_name(model: Any) -> None:
    """A model is declared in `_<folder>__models.yml` of the folder that holds its file.

    Receives:
        model (ModelNode): The ModelNode object to check.

    Other Parameters:
        description (str | None): Description of what the check does and why it is implemented.
        exclude (str | list[str] | None): Regex pattern(s) to match the model path. Model paths
            that match any pattern will not be checked.
        include (str | list[str] | None): Regex pattern(s) to match the model path. Only model
            paths that match any pattern will be checked.
        severity (Literal["error", "warn"] | None): Severity level of the check.
    """
    name = get_clean_model_name(model.unique_id)
    folder = PurePosixPath(clean_path_str(model.original_file_path)).parent
    if folder.parts and folder.parts[0] == "python_models":
        folder = PurePosixPath("models", *folder.parts[1:])
    expected = folder / f"_{folder.name}__models.yml"
    # dbt writes patch_path as `<project>://<path>`
    declared = clean_path_str(model.patch_path or "").partition("://")[2]
    if not declared:
        fail(f"`{name}` is not declared in a properties file (expected `{expected}`).")
    if PurePosixPath(declared) != expected:
        fail(f"`{name}` is declared in `{declared}`, expected `{expected}`.")
