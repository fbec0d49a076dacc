"""Which host paths and models an MCP client may name: its inputs (frames, videos) and its ``vlm_model``.

An MCP client is an agent that a model's output may steer, so every path it names is checked here before
the session daemon opens it (:class:`ClientPaths`), against what the server's operator allowed:

* inputs are regular image or video files (by the real file's suffix, after following links), and with
  ``spatialclaw mcp --input-root DIR`` they must lie inside one of those folders;
* ``vlm_model`` must match one of the operator's model patterns (``spatialclaw mcp --allow-models SPEC``;
  default :data:`DEFAULT_CLIENT_MODELS`): a spec that reads a host file (``scripted:replies=FILE``) or sends
  the kernel's requests to a URL the client picks (``openai-compat:M@URL``, a loopback service) passes only
  when the operator named it;
* ``replay:DIR`` must be a session directory under the sessions root (a trajectory the server's own
  daemons wrote) or lie inside a ``--replay-root DIR``;
* ``hf:`` names a hub id, or a local model folder inside a ``--replay-root DIR``;
* frame ``indices``/``times`` are lists of numbers, never a sidecar file to read.

Checked paths are passed on resolved (no link left to swap between the check and the daemon's use).
"""

from __future__ import annotations

import fnmatch
import os
import re
import stat
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from spatialclaw.input_paths import IMAGE_SUFFIXES, expand_paths
from spatialclaw.interactive.session_dir import SESSION_FILE, SESSION_ID, resolve_root
from spatialclaw.task import VIDEO_SUFFIXES

__all__ = ["DEFAULT_CLIENT_MODELS", "ClientPaths"]

DEFAULT_CLIENT_MODELS = ("openai:*", "anthropic:*", "hf:*", "replay:*", "scripted:look-and-answer")
"""The ``vlm_model`` patterns a client may name when the operator gives no ``--allow-models``: the hosted
providers, hub ids and confined folders (``hf:``, ``replay:``, checked below) and the keyless policy; never a
spec that reads a file (``scripted:replies=FILE``) or an endpoint of the client's choosing (``openai-compat:``)."""

_HUB_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*(/[A-Za-z0-9][A-Za-z0-9_.-]*)?")


def _inside(path: Path, roots: Sequence[Path]) -> bool:
    return any(path == root or path.is_relative_to(root) for root in roots)


@dataclass
class ClientPaths:
    """The operator's choices for one MCP server: its sessions ``root``, the folders whose trajectories and
    model folders clients may name (``replay_roots``), when any, the only folders inputs may come from
    (``input_roots``), and the ``vlm_model`` specs clients may name (``allowed_models``, shell-style
    patterns matched against the whole spec; empty: :data:`DEFAULT_CLIENT_MODELS`)."""

    root: Path | None = None
    replay_roots: list[Path] = field(default_factory=list)
    input_roots: list[Path] = field(default_factory=list)
    allowed_models: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.sessions = resolve_root(self.root)
        self.replay_roots = [Path(p).expanduser().resolve() for p in self.replay_roots]
        self.input_roots = [Path(p).expanduser().resolve() for p in self.input_roots]
        self.allowed_models = list(self.allowed_models) or list(DEFAULT_CLIENT_MODELS)

    # ----- inputs ----------------------------------------------------------------------------

    def check_inputs(self, kind: str, paths: list[str], where: str) -> list[str]:
        """The files of one input (``kind`` ``images`` or ``video``) as a client named them, expanded
        (folders, globs); each must be a regular file of the kind's suffixes inside the input roots."""
        if not isinstance(paths, list) or not all(isinstance(p, str) for p in paths):
            raise ValueError(f"{where} must be a list of file paths")
        suffixes = VIDEO_SUFFIXES if kind == "video" else IMAGE_SUFFIXES
        files = expand_paths(list(paths))
        for name in files:
            real = Path(name).resolve()
            try:
                regular = stat.S_ISREG(os.stat(real).st_mode)
            except OSError:
                raise FileNotFoundError(f"{where}: {name} does not exist") from None
            if not regular or real.suffix.lower() not in suffixes:
                raise ValueError(
                    f"{where}: {name} is not {'a video' if kind == 'video' else 'an image'} file "
                    f"({', '.join(sorted(suffixes))}); an MCP client may name image and video files only"
                )
            if self.input_roots and not _inside(real, self.input_roots):
                raise ValueError(
                    f"{where}: {name} is outside the folders this server reads inputs from "
                    f"({', '.join(map(str, self.input_roots))}; `spatialclaw mcp --input-root DIR`)"
                )
        return [str(Path(name).resolve()) for name in files]

    @staticmethod
    def check_numbers(value: Any, where: str, integer: bool) -> list[Any] | None:
        """``indices``/``times`` as a list of numbers (never a sidecar file name), or None."""
        if value is None:
            return None
        kinds: tuple[type, ...] = (int,) if integer else (int, float)
        if not isinstance(value, list) or not all(isinstance(v, kinds) and not isinstance(v, bool) for v in value):
            raise ValueError(
                f"{where} must be a list of {'frame numbers' if integer else 'seconds'}; "
                "an MCP client cannot name a sidecar file"
            )
        return list(value)

    # ----- vlm_model -------------------------------------------------------------------------

    def check_model(self, spec: str | None) -> str | None:
        """``spec`` with its path resolved, when the client may name it; else a ValueError saying why."""
        if spec is None:
            return None
        if not isinstance(spec, str):
            raise ValueError(f"vlm_model must be a model spec (text), got {type(spec).__name__}")
        from spatialclaw.models import parse_spec

        backend, model, _ = parse_spec(spec)
        if not any(fnmatch.fnmatchcase(spec, pattern) for pattern in self.allowed_models):
            raise ValueError(
                f"vlm_model {spec!r} is not a model this server's operator allowed clients to name "
                f"({', '.join(self.allowed_models)}; `spatialclaw mcp --allow-models SPEC`): a spec that reads a "
                "host file or sends requests to a URL of the client's choosing needs the operator's consent"
            )
        if backend == "replay":
            return f"replay:{self._replay_dir(model)}"
        if backend == "hf":
            local = Path(model).expanduser()
            if not model.startswith((".", "~", "/")) and _HUB_ID.fullmatch(model) and not local.exists():
                return spec  # a hub id: loaded from the cache or the hub, never from a path
            real = local.resolve()
            if not self.replay_roots or not _inside(real, self.replay_roots):
                raise ValueError(
                    f"vlm_model {spec!r}: a local model folder must lie inside a folder the server's operator "
                    f"allowed ({self._allowed()}); name a hub id instead"
                )
            return f"hf:{real}"
        return spec

    def _replay_dir(self, model: str) -> Path:
        real = Path(model).expanduser().resolve()
        in_root = _inside(real, self.replay_roots)
        is_session = (
            real.parent == self.sessions
            and SESSION_ID.fullmatch(real.name) is not None
            and ".." not in real.name
            and _regular(real / SESSION_FILE)
        )
        if not (in_root or is_session):
            raise ValueError(
                f"vlm_model 'replay:{model}': an MCP client may replay only a session of this server "
                f"({self.sessions}/ID) or a trajectory inside a folder the server's operator allowed "
                f"({self._allowed()})"
            )
        if not _regular(real / "episode.jsonl"):
            raise ValueError(f"vlm_model 'replay:{model}': {real} holds no trajectory (episode.jsonl)")
        return real

    def _allowed(self) -> str:
        if not self.replay_roots:
            return "none given: start the server with `spatialclaw mcp --replay-root DIR`"
        return ", ".join(map(str, self.replay_roots)) + "; `spatialclaw mcp --replay-root DIR`"


def _regular(path: Path) -> bool:
    """A regular file, not a link to one."""
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False
