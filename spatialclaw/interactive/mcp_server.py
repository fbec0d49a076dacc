"""``spatialclaw mcp``: the session operations over the Model Context Protocol (stdio transport).

Any MCP client (a terminal coding assistant, an IDE agent, a custom harness) can start a spatial
session, run cells in its persistent kernel and see the cells' images as MCP image content::

    session_start(question, frames=[...] | video=..., choices=[...])  -> session id, prompt path, prompt text
    session_exec(session, code)     -> the observation text, then one image block per image the cell produced
    session_answer(session, value)  -> whether the answer was accepted
    session_status(session)         -> state, steps, answer
    session_close(session)          -> shuts the kernel down; the trajectory stays

Sessions are the same as ``spatialclaw session`` ones (same directories, same daemons, same
trajectories), so a session started over MCP can be inspected from the shell and vice versa. When
the server exits (its client closed stdin), it closes the sessions it started unless it was run
with ``--keep-sessions``.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio

from spatialclaw.agent.question import make_task
from spatialclaw.input_paths import check_inputs, specs_from_groups
from spatialclaw.interactive.mcp_paths import ClientPaths
from spatialclaw.interactive.session import start_session
from spatialclaw.interactive.session_client import Session, StepOutcome
from spatialclaw.interactive.session_dir import SessionError

__all__ = ["build_server", "serve_stdio"]

INSTRUCTIONS = (
    "spatialclaw gives you a persistent Python kernel preloaded with the frames of a scene and spatial "
    "primitives (depth, reconstruction, detection, segmentation, geometry, scene memory). Start with "
    "session_start; read the prompt it returns (the kernel's manual and the question); then call "
    "session_exec with one Python cell at a time. Variables persist between cells; show(image) sends images "
    "back to you. When you are sure, call answer(value) in a cell or session_answer, then session_close."
)


def _outcome_content(outcome: StepOutcome) -> list[Any]:
    import base64

    from mcp.types import ImageContent, TextContent

    text = outcome.text
    if outcome.answered:
        text += f"\n[the episode is over: answer {outcome.answer!r} recorded; call session_close]"
    blocks: list[Any] = [TextContent(type="text", text=f"step {outcome.step} ({outcome.status})\n{text}")]
    for path in outcome.images:
        data = base64.b64encode(Path(path).read_bytes()).decode("ascii")
        blocks.append(ImageContent(type="image", data=data, mime_type="image/png"))
    return blocks


@contextmanager
def _as_tool_errors() -> Iterator[None]:
    """Expected failures (no such session, bad input, a closed session) reach the client with their
    message as a tool error; anything else is a server bug and stays a generic error."""
    from mcp.server.mcpserver.exceptions import ToolError

    try:
        yield
    except (SessionError, ValueError, FileNotFoundError) as exc:
        raise ToolError(str(exc)) from exc


class _Sessions:
    """The sessions one server process started, so that it can close them when it exits."""

    def __init__(self, root: Path | None) -> None:
        self.root = root
        self.started: dict[str, Session] = {}
        self._lock = threading.Lock()

    def open(self, session_id: str) -> Session:
        with self._lock:
            if session_id in self.started:
                return self.started[session_id]
        return Session.open(session_id, self.root)

    def add(self, session: Session) -> None:
        with self._lock:
            self.started[session.id] = session

    def forget(self, session: Session) -> None:
        with self._lock:
            self.started.pop(session.id, None)

    def close_all(self, wait_s: float = 1.5) -> None:
        """Ask every daemon we started to close; each finishes closing on its own if we are killed first."""
        threads = [
            threading.Thread(target=_quiet_close_request, args=(s,), daemon=True) for s in list(self.started.values())
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(wait_s)


def _quiet_close_request(session: Session) -> None:
    try:
        session.request({"op": "close"}, timeout=30.0)
    except SessionError:
        pass


def _input_specs(
    paths: ClientPaths,
    frames: list[str] | None,
    video: str | None,
    fps: float | None,
    count: int | None,
    inputs: list[dict[str, Any]] | None,
) -> list[Any]:
    """The session's inputs from ``frames``/``video`` (one input) or ``inputs`` (several, in order); every
    file and number is checked by ``paths`` (:class:`~spatialclaw.interactive.mcp_paths.ClientPaths`)."""
    if inputs:
        if frames or video:
            raise ValueError("give either inputs (several) or frames/video (one input), not both")
        if not isinstance(inputs, list):
            raise ValueError("inputs must be a list of {'frames': [paths]} or {'video': path}")
        groups = []
        for number, item in enumerate(inputs, start=1):
            if not isinstance(item, dict) or bool(item.get("frames")) == bool(item.get("video")):
                raise ValueError(f"inputs[{number - 1}] must be {{'frames': [paths]}} or {{'video': path}}")
            unknown = set(item) - {"frames", "video", "fps", "count", "indices", "times"}
            if unknown:
                raise ValueError(
                    f"inputs[{number - 1}] has unknown key(s) {sorted(unknown)}; use frames, video, fps, count, indices, times"
                )
            kind = "video" if item.get("video") else "images"
            where = f"inputs[{number - 1}]"
            named = [item["video"]] if kind == "video" else item["frames"]
            specs = specs_from_groups(
                [
                    {
                        "kind": kind,
                        "paths": paths.check_inputs(kind, named, f"{where}.{'video' if kind == 'video' else 'frames'}"),
                        "indices": paths.check_numbers(item.get("indices"), f"{where}.indices", integer=True),
                        "times": paths.check_numbers(item.get("times"), f"{where}.times", integer=False),
                    }
                ],
                fps=item.get("fps"),
                count=item.get("count"),
            )
            groups.extend(specs)
        return groups
    if bool(frames) == bool(video):
        raise ValueError("give either frames (a list of image paths) or video (one path), not both or neither")
    kind = "video" if video else "images"
    named = [video] if video else list(frames or [])
    checked = paths.check_inputs(kind, named, kind if kind == "video" else "frames")
    return specs_from_groups([{"kind": kind, "paths": checked, "indices": None}], fps=fps, count=count)


def build_server(
    root: str | Path | None = None,
    sandbox: str = "auto",
    replay_roots: Sequence[str | Path] = (),
    input_roots: Sequence[str | Path] = (),
    allowed_models: Sequence[str] = (),
) -> tuple[Any, _Sessions]:
    """The MCP server with the five session tools, and the registry of sessions it starts.

    ``sandbox`` is the isolation of every session's kernel; the server's operator chooses it, a client
    cannot (nor can a client name an API key: see :func:`spatialclaw.interactive.session.start_session`).
    Paths a client names are confined by :class:`~spatialclaw.interactive.mcp_paths.ClientPaths`:
    ``replay:``/``hf:`` folders to ``root``'s sessions and ``replay_roots``, inputs to image and video
    files (inside ``input_roots`` when any are given), ``vlm_model`` to the patterns of ``allowed_models``
    (default :data:`~spatialclaw.interactive.mcp_paths.DEFAULT_CLIENT_MODELS`)."""
    from mcp.server.mcpserver import MCPServer

    from spatialclaw import __version__

    sessions = _Sessions(Path(root) if root is not None else None)
    paths = ClientPaths(
        sessions.root, [Path(p) for p in replay_roots], [Path(p) for p in input_roots], list(allowed_models)
    )
    server = MCPServer(name="spatialclaw", instructions=INSTRUCTIONS, version=__version__, log_level="WARNING")

    @server.tool(name="session_start", structured_output=False)
    async def session_start(
        question: str,
        frames: list[str] | None = None,
        video: str | None = None,
        fps: float | None = None,
        count: int | None = None,
        choices: list[str] | None = None,
        answer_type: str | None = None,
        inputs: list[dict[str, Any]] | None = None,
        max_steps: int = 30,
        cell_timeout_s: float = 120.0,
        vlm_model: str | None = None,
    ) -> str:
        """Start a session: a kernel loaded with the given frames (image files, folders of images or glob
        patterns, in order) or one video.

        video: sample ``fps`` frames per second of video time or ``count`` frames evenly (default all).
        inputs: several videos and/or image sets instead of frames/video, in order, each
        ``{"frames": [...]}`` or ``{"video": PATH, "fps": F | "count": N}``, optionally with ``"indices"``
        (source frame numbers) and, for key-frame images, ``"times"`` (seconds in their video); the first
        becomes ``frames`` in the kernel, all of them ``videos``.
        question: as written; lettered options in it (``A. ...``, ``(B) ...``) are read as the choices,
        and the answer type is inferred unless answer_type is given.
        choices: multiple-choice option texts; answer with the letter (A, B, ...).
        max_steps: the number of cells you may run before you must answer.
        vlm_model: a model spec (e.g. openai:gpt-4.1) for the kernel's vlm.ask/vlm.locate side questions;
        only the specs the operator allowed (default: openai:, anthropic:, hf: hub ids, replay: of a session
        of this server or a folder its operator allowed, scripted:look-and-answer).
        Input files must be readable images or videos (and inside the operator's input folders, when set);
        they are opened before the kernel starts, so a corrupt or empty file is an error naming it.
        Returns the session id, the prompt file and the prompt (the kernel's manual and the question).
        """
        with _as_tool_errors():
            specs = _input_specs(paths, frames, video, fps, count, inputs)
            # as `spatialclaw session start`: a corrupt or empty file is refused naming it, before a kernel starts
            await anyio.to_thread.run_sync(lambda: check_inputs(specs))
            task = make_task(question, inputs=specs, choices=choices, answer_type=answer_type)
            checked_model = paths.check_model(vlm_model)
            session = await anyio.to_thread.run_sync(
                lambda: start_session(
                    task,
                    root=sessions.root,
                    max_steps=max_steps,
                    cell_timeout_s=cell_timeout_s,
                    vlm_model=checked_model,
                    sandbox=sandbox,
                )
            )
        sessions.add(session)
        from spatialclaw.interactive.preview import write_input_previews

        preview = await anyio.to_thread.run_sync(lambda: write_input_previews(task, session.directory))
        prompt = session.prompt_path.read_text(encoding="utf-8")
        return (
            f"session: {session.id}\nprompt file: {session.prompt_path}\n"
            f"preview (contact sheet of the inputs): {preview['contact_sheet']}\n\n{prompt}"
        )

    @server.tool(name="session_exec", structured_output=False)
    async def session_exec(
        session: str, code: str, timeout_s: float | None = None, reasoning: str | None = None
    ) -> list[Any]:
        """Run one Python cell in the session's kernel. Optionally pass ``reasoning``: your words about
        this cell (why you run it), recorded with the cell in the session's trajectory.

        Returns the observation text (stdout, the result, errors with the failing line, variables that
        changed) followed by every image the cell showed, as PNG image content. Variables persist.
        """
        with _as_tool_errors():
            handle = sessions.open(session)
            outcome = await anyio.to_thread.run_sync(
                lambda: handle.execute(code, timeout=timeout_s, reasoning=reasoning)
            )
        return _outcome_content(outcome)

    @server.tool(name="session_answer", structured_output=False)
    async def session_answer(session: str, value: str, reasoning: str | None = None) -> list[Any]:
        """Submit the final answer: the option letter for multiple choice, a number (metres unless the
        question says otherwise) or a short text. An answer that does not fit the question is rejected
        with the reason, and the session stays open. ``reasoning``: your words for the answer, recorded."""
        with _as_tool_errors():
            handle = sessions.open(session)
            outcome = await anyio.to_thread.run_sync(lambda: handle.answer(value, reasoning=reasoning))
        return _outcome_content(outcome)

    @server.tool(name="session_status", structured_output=False)
    async def session_status(session: str) -> dict[str, Any]:
        """The session's state (running, busy, answered, closed, dead), number of steps and answer."""
        with _as_tool_errors():
            handle = sessions.open(session)
            return await anyio.to_thread.run_sync(handle.status)

    @server.tool(name="session_close", structured_output=False)
    async def session_close(session: str) -> dict[str, Any]:
        """Shut the session's kernel down. Its trajectory (episode.jsonl and images) stays on disk."""
        with _as_tool_errors():
            handle = sessions.open(session)
            result = await anyio.to_thread.run_sync(handle.close)
        sessions.forget(handle)
        return result

    return server, sessions


def serve_stdio(
    root: str | Path | None = None,
    keep_sessions: bool = False,
    sandbox: str = "auto",
    replay_roots: Sequence[str | Path] = (),
    input_roots: Sequence[str | Path] = (),
    allowed_models: Sequence[str] = (),
) -> None:
    """Serve over stdin/stdout until the client closes the connection."""
    server, sessions = build_server(
        root, sandbox=sandbox, replay_roots=replay_roots, input_roots=input_roots, allowed_models=allowed_models
    )
    try:
        anyio.run(server.run_stdio_async)
    finally:
        if not keep_sessions:
            sessions.close_all()
