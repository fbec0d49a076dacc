"""A missing optional dependency is one line naming the extra to install, from one table that matches
``pyproject.toml``."""

from __future__ import annotations

import logging
import re
import sys
from pathlib import Path

import pytest
import tomllib

from spatialclaw.cli import LogFormatter, main
from spatialclaw.extras import EXTRAS, install_hint
from tests.bench_runs import one_task_bench_args
from tests.paths import REPO_ROOT

PYPROJECT = REPO_ROOT / "pyproject.toml"


def test_the_extras_table_matches_pyproject() -> None:
    extras = tomllib.loads(PYPROJECT.read_text())["project"]["optional-dependencies"]
    declared = {
        (re.split(r"[<>=!~\[ ;]", requirement, maxsplit=1)[0], extra)
        for extra, requirements in extras.items()
        if extra != "dev"
        for requirement in requirements
    }
    assert set(EXTRAS.values()) == declared


def test_an_import_error_of_an_optional_package_names_its_extra() -> None:
    missing = ModuleNotFoundError("No module named 'ray'", name="ray")
    try:
        try:
            raise missing
        except ImportError:
            raise RuntimeError("--executor ray needs Ray") from None  # replaced, still found through its context
    except RuntimeError as wrapped:
        assert install_hint(wrapped) == install_hint(missing)
    assert "pip install 'spatialclaw[ray]'" in install_hint(missing)
    assert install_hint(ModuleNotFoundError("No module named 'numpy'", name="numpy")) is None  # a required package
    assert install_hint(ValueError("bad")) is None


def test_bench_on_ray_without_ray_says_which_extra(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` now fails as if it were not installed
    code = main(
        one_task_bench_args(
            "openai-compat:m@http://127.0.0.1:9/v1", tmp_path / "run", "--executor", "ray", "--no-progress"
        )
    )
    err = capsys.readouterr().err.strip()
    assert code == 2
    assert (
        err
        == "spatialclaw bench: this needs the optional package 'ray', which is not installed: pip install 'spatialclaw[ray]'"
    )


def test_a_logged_missing_dependency_is_one_line() -> None:
    try:
        raise ModuleNotFoundError("No module named 'torch'", name="torch")
    except ImportError:
        record = logging.LogRecord("x", logging.ERROR, __file__, 1, "episode t1 failed", None, sys.exc_info())
    line = LogFormatter(debug=False).format(record)
    assert line == (
        "episode t1 failed: this needs the optional package 'torch', which is not installed: "
        "pip install 'spatialclaw[perception]'"
    )
