"""The host's perception relay (what a sandboxed kernel reaches instead of Ray) passes only its own
service's ``describe``/``run`` of hosted kinds and the actors' read-only ``stats``. Ray itself is the
boundary here: the relay's client is replaced by a recorder, the socket, framing and gating are real."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from spatialclaw.kernel.channels import PerceptionRelay
from spatialclaw.primitives.perception.remote import _relay_call

SERVICE = "ray://ns-test/perception-0"


class RecordingClient:
    def __init__(self, spec: Any) -> None:
        self.spec = spec
        self.calls: list[tuple[str, tuple[Any, ...]]] = []

    def raw_call(self, method: str, args: Any) -> tuple[dict[str, Any], str]:
        self.calls.append((method, tuple(args)))
        return {"ok": f"{method} done"}, "perception-0"

    def stats(self) -> list[dict[str, Any]]:
        self.calls.append(("stats", ()))
        return [{"calls": {"run:depth": 1}}]


def test_the_relay_gates_methods_kinds_and_services(tmp_path: Path) -> None:
    relay = PerceptionRelay(tmp_path / "perception.sock", SERVICE)
    relay.client = RecordingClient(relay.client.spec)
    try:
        path = str(relay.path)
        assert _relay_call(path, SERVICE, "describe", ("depth", "some-model")) == {"ok": "describe done"}
        assert _relay_call(path, SERVICE, "stats", ()) == {"ok": [{"calls": {"run:depth": 1}}]}
        stop = _relay_call(path, SERVICE, "shutdown", ("depth",))
        shell = _relay_call(path, SERVICE, "run", ("__import__('os')", "x"))
        other = _relay_call(path, "ray://someone-else/perception-0", "run", ("depth", "x"))
    finally:
        relay.close()
    assert stop["error"]["type"] == "ValueError" and "not 'shutdown'" in stop["error"]["message"]
    assert shell["error"]["type"] == "ValueError" and "unknown perception kind" in shell["error"]["message"]
    assert other["error"]["type"] == "PerceptionServiceError" and "relays the service" in other["error"]["message"]
    assert relay.client.calls == [("describe", ("depth", "some-model")), ("stats", ())]
