"""Credentials never reach a kernel by another name (issue 30, B14).

The environment filter was on names only: a password in an allowed variable's URL (``HF_ENDPOINT``,
``SPATIALCLAW_MODEL``), or in a ``SPATIALCLAW_*`` variable named ``*_DSN``, ``*_PASS`` or ``*PASSPHRASE*``,
reached the cell's ``os.environ``. A URL's user information is now dropped from every value that passes,
and those names never pass.
"""

from __future__ import annotations

import pytest

from spatialclaw import Kernel

PLANTED = {
    "HF_ENDPOINT": "https://alice:hf_PLANTED_basic@hf-mirror.corp.example",
    "SPATIALCLAW_MODEL": "openai-compat:qwen@http://bob:PLANTED-tok@vllm.corp:8000/v1",
    "SPATIALCLAW_DB_DSN": "postgresql://u:PLANTED-dsn@db/x",
    "SPATIALCLAW_SMTP_PASS": "PLANTED-smtp",
    "SPATIALCLAW_SSH_KEY_PASSPHRASE": "PLANTED-passphrase",
    "spatialclaw_dsn_lower": "PLANTED-lower",
}


def test_a_password_in_an_allowed_value_or_an_unusual_name_never_reaches_the_cell(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name, value in PLANTED.items():
        monkeypatch.setenv(name, value)
    with Kernel(memory_limit_mb=1024) as kernel:
        result = kernel.execute("import os\nfor k, v in sorted(os.environ.items()):\n    print(k, '=', v)", timeout=60)
    assert result.ok, result.to_text()
    assert "PLANTED" not in result.stdout, [line for line in result.stdout.splitlines() if "PLANTED" in line]
    # the URLs themselves still reach the kernel, without their user part
    assert "HF_ENDPOINT = https://hf-mirror.corp.example\n" in result.stdout
    assert "SPATIALCLAW_MODEL = openai-compat:qwen@http://vllm.corp:8000/v1\n" in result.stdout
    assert "SPATIALCLAW_DB_DSN" not in result.stdout and "SPATIALCLAW_SMTP_PASS" not in result.stdout
