"""Without a reachable hub, every hub access (tokenizers, benchmark datasets) answers in seconds with one
clear line, and a missing ``datasets`` package is reported as a missing extra, not as a network problem."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import textwrap
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]

# Times the hub access only (imports excluded), then prints one JSON line.
_TIMED = """
import json, time
{imports}
started = time.monotonic()
try:
    {call}
    error = None
except Exception as exc:
    error = f"{{type(exc).__name__}}: {{exc}}"
print(json.dumps({{"error": error, "seconds": time.monotonic() - started}}))
"""

# Makes ``import datasets`` fail as it does where the package is not installed.
_HIDE_DATASETS = """
import sys
class _Hide:
    def find_spec(self, name, path=None, target=None):
        if name == "datasets" or name.startswith("datasets."):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None
sys.meta_path.insert(0, _Hide())
"""


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _run(tmp_path: Path, imports: str, call: str, prelude: str = "") -> dict[str, object]:
    """Run ``call`` in a fresh interpreter whose hub endpoint refuses connections, with a cold cache and
    offline mode not set; a process still retrying after 120 s fails the test."""
    env = {k: v for k, v in os.environ.items() if k not in {"HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"}}
    env |= {"HF_ENDPOINT": f"http://127.0.0.1:{_closed_port()}", "HF_HOME": str(tmp_path / "hf")}
    script = prelude + textwrap.dedent(_TIMED).format(imports=imports, call=call)
    done = subprocess.run(
        [sys.executable, "-c", script], env=env, cwd=REPO_ROOT, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    result["stderr"] = done.stderr
    return result


def test_a_hub_tokenizer_fails_fast_when_the_hub_is_unreachable(tmp_path: Path) -> None:
    result = _run(
        tmp_path,
        # transformers' own import (about 10 s on a busy machine) is not the hub access being timed
        "from transformers import AutoProcessor, AutoTokenizer\nfrom spatialclaw.export.length import TokenCounter",
        'TokenCounter("HuggingFaceTB/SmolVLM-256M-Instruct")',
    )
    error = str(result["error"])
    assert error.startswith(
        "ValueError: --tokenizer 'HuggingFaceTB/SmolVLM-256M-Instruct' could not be loaded: not a local folder"
    )
    assert "cannot be reached" in error and "spatialclaw tiny-models DIR" in error
    assert float(str(result["seconds"])) < 10, result
    assert "Retrying" not in str(result["stderr"])


def test_a_hub_benchmark_fails_fast_when_the_hub_is_unreachable(tmp_path: Path) -> None:
    result = _run(
        tmp_path,
        "from spatialclaw.benchmarks.registry import find_spec\nfrom spatialclaw.benchmarks.spec import load_records",
        'next(iter(load_records(find_spec("vsi-bench"))))',
    )
    error = str(result["error"])
    assert error.startswith("DatasetUnavailable: could not load vsi-bench from the Hugging Face hub")
    assert "cannot be reached" in error and "HF_HUB_OFFLINE=1" in error and "--source DIR" in error
    assert float(str(result["seconds"])) < 10, result
    assert "Retrying" not in str(result["stderr"])


def test_a_missing_datasets_package_names_the_data_extra(tmp_path: Path) -> None:
    records = tmp_path / "records.jsonl"
    records.write_text('{"question": "q", "answer": "a"}\n')
    for source in ("None", repr(str(records))):
        result = _run(
            tmp_path,
            "from spatialclaw.benchmarks.registry import find_spec\n"
            "from spatialclaw.benchmarks.spec import load_records",
            f'next(iter(load_records(find_spec("vsi-bench"), source={source})))',
            prelude=_HIDE_DATASETS,
        )
        error = str(result["error"])
        assert "pip install 'spatialclaw[data]'" in error, error
        assert "network" not in error and "hub" not in error, error
