"""`package_dir`: the directory `importlib.resources.files` names for an installed-as-files package."""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

import pytest

from ascendctl_engine.package_data import package_dir


@pytest.mark.parametrize("package", ["ascendctl.facts", "ascendctl_engine", "ascendctl_engine.adapters"])
def test_the_package_directory_is_what_importlib_resources_names(package: str) -> None:
    found = package_dir(package)
    assert found == Path(str(files(package)))
    assert (found / "__init__.py").is_file()


def test_a_package_without_one_directory_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "loose_namespace").mkdir()  # no __init__.py: a namespace package
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(LookupError, match="not a regular package"):
        package_dir("loose_namespace")
