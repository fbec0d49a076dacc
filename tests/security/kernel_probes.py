"""Attack cells that report what they reached: each prints one ``PROBE <json>`` line, read back here."""

from __future__ import annotations

import json

from spatialclaw.kernel.kernel import Kernel


def probe(kernel: Kernel, code: str, timeout: float = 60.0) -> dict:
    """Run ``code`` (which prints one ``PROBE <json>`` line) and return the JSON."""
    result = kernel.execute(code, timeout=timeout)
    assert result.status == "ok", (result.status, result.error, result.stdout)
    line = next(text for text in result.stdout.splitlines() if text.startswith("PROBE "))
    return json.loads(line[len("PROBE ") :])
