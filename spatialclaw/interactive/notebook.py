"""The IPython extension: the spatial namespace in your own notebook, and the agent working in it.

    %load_ext spatialclaw
    %spatial_load frames/*.jpg                 # or a folder, or a video: %spatial_load clip.mp4 --fps 2
    show(frames[0])                            # inline PNG; depth(), geom, scene, ... are all there

    %%spatialclaw --model openai:gpt-4.1
    How far is the chair from the table, in metres?

``%spatial_load`` (or :func:`spatial_load` from Python) binds the kernel namespace of DESIGN.md
(``frames``, ``videos``, ``meta``, ``show``, ``answer``, ``depth``, ``reconstruct``, ``detect``,
``segment``, ``track``, ``geom``, ``scene``, ``zoom``, ``draw``, ``find_color``, ``vlm``, ``np``,
``scipy``, ``plt``, ``Image``) into the notebook's own namespace.

``%%spatialclaw`` runs the agent on the loaded frames with the cell's text as the question. Its cells
run *in this notebook's namespace* (through :class:`spatialclaw.interactive.shell_executor.ShellExecutor`, not a
separate kernel), so every variable the agent made is available afterwards, and the agent sees your
variables too. Each step is rendered as it happens: the model's reasoning, the code, then its output
and images. The episode is logged as a trajectory (``--out``, default ``spatialclaw_runs/<time>``) and
the :class:`spatialclaw.agent.result.EpisodeResult` is left in ``spatialclaw_result``.
"""

from __future__ import annotations

import os
import re
import shlex
import sys
import time
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol, TypeVar, cast

from spatialclaw.agent.question import make_task
from spatialclaw.input_paths import frame_spec
from spatialclaw.task import FrameSpec, Task

__all__ = ["NotebookRenderer", "load_ipython_extension", "loaded_inputs", "run_agent_in_shell", "spatial_load"]

MODEL_ENV = "SPATIALCLAW_MODEL"

_loaded: weakref.WeakKeyDictionary[Any, list[FrameSpec]] = weakref.WeakKeyDictionary()
_vlm_servers: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()

_Method = TypeVar("_Method", bound=Callable[..., Any])


class _Decorator(Protocol):
    """What IPython's magic decorators do, which its annotations leave untyped or loose: return the method."""

    def __call__(self, method: _Method, /) -> _Method: ...


def _ipython_display() -> tuple[Callable[..., Any], Callable[..., Any], Callable[..., Any]]:
    """IPython's ``display``, ``Markdown`` and ``Code`` (unannotated in IPython), as typed callables."""
    from IPython.display import Code, Markdown, display

    return display, Markdown, Code


def _shell(shell: Any = None) -> Any:
    if shell is not None:
        return shell
    from IPython import get_ipython

    current = get_ipython()
    if current is None:
        raise RuntimeError(
            "spatial_load needs a running IPython (a notebook or the ipython shell); pass shell= otherwise"
        )
    return current


def spatial_load(
    *paths: str | Path,
    fps: float | None = None,
    count: int | None = None,
    question: str | None = None,
    choices: list[str] | None = None,
    answer_type: str | None = None,
    vlm_model: str | None = None,
    shell: Any = None,
) -> Any:
    """Load frames and the whole spatial namespace into the notebook; returns ``frames``.

    ``paths``: image files, folders of images or glob patterns (frames in that order), or one video,
    sampled at ``fps`` frames per second of video time or ``count`` frames evenly (default: every
    frame). ``question``/``choices``/``answer_type`` fill ``meta`` and configure ``answer``; the
    question is read as written (:func:`spatialclaw.agent.question.parse_question`: lettered options in it
    become the choices, the answer type is inferred unless given).
    ``vlm_model`` (a model spec such as ``openai:gpt-4.1``) is what ``vlm.ask``/``vlm.locate``
    consult; without it they raise an error saying so. Rebinds only the namespace names; other
    variables are untouched.
    """
    from spatialclaw.primitives.runtime.namespace import build_namespace

    if not paths:
        raise ValueError("give image files, a folder, a glob pattern or a video, e.g. spatial_load('frames/*.jpg')")
    shell = _shell(shell)
    spec = frame_spec(list(paths), fps, count)
    if question and question.strip():
        task = make_task(question, inputs=[spec], choices=choices, answer_type=answer_type)
        meta = task.kernel_meta()
    else:
        task = Task(question="", inputs=[spec], choices=choices)
        if answer_type:
            task.answer_type = answer_type  # type: ignore[assignment]
        meta = task.kernel_meta()
        meta["question"] = None
    namespace = build_namespace(spec.to_dict(), meta, _start_vlm(shell, vlm_model))
    shell.user_ns.update(namespace)
    _loaded[shell] = [spec]
    return namespace["frames"]


def _start_vlm(shell: Any, spec: str | None) -> dict[str, Any] | None:
    """Serve ``vlm.*`` calls of this notebook from model ``spec`` (replacing an earlier server);
    returns the side-channel configuration for the namespace, or None without a model."""
    previous = _vlm_servers.pop(shell, None)
    if previous is not None:
        server, model = previous
        server.stop()
        model.close()
    if not spec:
        return None
    from spatialclaw.agent.vlm_server import VLMServer
    from spatialclaw.models import load_model

    model = load_model(spec)
    server = VLMServer().start()
    _vlm_servers[shell] = (server, model)
    return server.open_channel(lambda messages, purpose: model.chat(messages, purpose=purpose))


def loaded_inputs(shell: Any) -> list[FrameSpec]:
    """The inputs of the last ``spatial_load`` in ``shell`` (empty when nothing was loaded)."""
    return list(_loaded.get(shell, []))


class NotebookRenderer:
    """Renders an agent episode in the notebook as it runs: a heading per step that is filled with
    the model's reasoning once the step is complete, the code before it runs, then its outputs."""

    def __init__(self) -> None:
        self._headings: dict[int, Any] = {}

    def cell_start(self, step: int, code: str) -> None:
        display, Markdown, Code = _ipython_display()
        self._headings[step] = display(Markdown(f"**Step {step}**"), display_id=True)
        display(Code(code, language="python"))

    def cell_end(self, step: int, result: Any, outputs: list[Any]) -> None:
        text = result.stdout
        if result.result_text:
            text += ("" if not text or text.endswith("\n") else "\n") + result.result_text + "\n"
        if text:
            sys.stdout.write(text)
            sys.stdout.flush()
        if result.stderr:
            sys.stderr.write(result.stderr)
        for output in outputs:
            if "text/plain" in output.data and "image/png" not in output.data and len(output.data) == 1:
                continue  # already part of stdout above
            output.display()
        if result.error is not None:
            sys.stderr.write(result.error.to_text() + "\n")
            sys.stderr.flush()

    def step(self, event: Any) -> None:
        from spatialclaw.agent.extraction import extract_cell

        display, Markdown, _ = _ipython_display()
        visible = extract_cell(event.reply).visible or ""
        thought = re.sub(r"```.*?(?:```|$)", "", visible, flags=re.DOTALL).strip()  # the code is shown on its own
        if event.kind == "cell":
            heading = self._headings.get(event.step)
            body = Markdown(f"**Step {event.step}**" + (f" — {thought}" if thought else ""))
            if heading is not None:
                heading.update(body)
            else:
                display(body)
        elif event.kind == "plan":
            display(Markdown(f"**Plan**\n\n{thought or event.reply}"))
        elif event.kind == "format_error":
            display(Markdown(f"**Step {event.step}** (no code in the reply)\n\n{event.reply}\n\n> {event.message}"))
        elif event.kind == "fallback":
            display(Markdown(f"**Limit reached: direct answer**\n\n{event.reply}\n\n> {event.message}"))

    def summary(self, result: Any) -> None:
        display, Markdown, _ = _ipython_display()
        if result.status == "answered":
            head = f"**Answer: {result.answer!r}** after {result.steps} step(s)"
        elif result.limit is not None:
            answer = (
                f"; answer from the direct question: {result.answer!r}" if result.answer is not None else "; no answer"
            )
            head = f"**Stopped**: {result.limit.describe()}{answer}"
        else:
            head = f"**No answer** ({result.status}{': ' + result.error if result.error else ''})"
        cost = f", ${result.cost_usd:.4f}" if result.cost_usd is not None else ""
        display(Markdown(f"{head} — {result.duration_s:.1f} s{cost}; trajectory: `{result.trajectory_dir}`"))


def _magics_class() -> type:
    from IPython.core import magic as markers
    from IPython.core import magic_arguments as arguments
    from IPython.core.magic import Magics, magics_class

    magic_arguments = cast(Callable[[], _Decorator], arguments.magic_arguments)
    argument = cast(Callable[..., _Decorator], arguments.argument)
    line_magic, cell_magic = cast(_Decorator, markers.line_magic), cast(_Decorator, markers.cell_magic)

    def parse(magic: Any, line: str) -> Any:
        """Shell-style quoting (``--question 'How far?'``), unlike IPython's default splitter."""
        return magic.parser.parse_args(shlex.split(line))

    @magics_class
    class SpatialMagics(Magics):
        @magic_arguments()
        @argument("paths", nargs="+", help="image files, folders or glob patterns, or one video")
        @argument("--fps", type=float, default=None, help="video: frames per second of video time")
        @argument("--count", type=int, default=None, help="video: number of frames sampled evenly")
        @argument("--question", default=None, help="fills meta.question")
        @argument("--choices", nargs="+", default=None, help="option texts; answer() then takes letters")
        @argument("--answer-type", default=None, choices=["multiple_choice", "number", "text", "yes_no"])
        @argument("--vlm-model", default=None, help="model spec that vlm.ask / vlm.locate consult")
        @line_magic
        def spatial_load(self, line: str) -> None:
            """Load frames and the spatial namespace into this notebook: %spatial_load PATHS... [--fps F]"""
            args = parse(self.spatial_load, line)
            frames = spatial_load(
                *args.paths,
                fps=args.fps,
                count=args.count,
                question=args.question,
                choices=args.choices,
                answer_type=args.answer_type,
                vlm_model=args.vlm_model,
                shell=self.shell,
            )
            size = f" ({frames[0].width}x{frames[0].height})" if len(frames) else ""
            indices = f", indices {frames[0].index}..{frames[len(frames) - 1].index}" if len(frames) else ""
            print(
                f"loaded {len(frames)} frame(s){size}{indices} into `frames`; also bound: videos, meta, show, answer, "
                "depth, reconstruct, detect, segment, track, geom, scene, zoom, draw, find_color, vlm, np, scipy, plt, Image"
            )

        @magic_arguments()
        @argument("--model", default=None, help=f"model spec, e.g. openai:gpt-4.1 (default: ${MODEL_ENV})")
        @argument("--max-steps", type=int, default=None, help="step budget (default: the agent's)")
        @argument("--cell-timeout", type=float, default=None, help="seconds per cell")
        @argument("--choices", nargs="+", default=None, help="multiple-choice option texts")
        @argument("--answer-type", default=None, choices=["multiple_choice", "number", "text", "yes_no"])
        @argument("--out", default=None, help="trajectory directory (default: spatialclaw_runs/<time>)")
        @cell_magic
        def spatialclaw(self, line: str, cell: str) -> None:
            """Ask the agent the cell's question about the loaded frames, rendering its steps live."""
            args = parse(self.spatialclaw, line)
            run_agent_in_shell(
                self.shell,
                cell,
                model=args.model,
                max_steps=args.max_steps,
                cell_timeout_s=args.cell_timeout,
                choices=args.choices,
                answer_type=args.answer_type,
                out_dir=args.out,
            )

    return SpatialMagics


def run_agent_in_shell(
    shell: Any,
    question: str,
    model: str | None = None,
    *,
    max_steps: int | None = None,
    cell_timeout_s: float | None = None,
    choices: list[str] | None = None,
    answer_type: str | None = None,
    out_dir: str | Path | None = None,
) -> Any:
    """Run the agent on the frames loaded in ``shell`` with its cells executed in ``shell`` itself.

    Returns the :class:`~spatialclaw.agent.result.EpisodeResult` (also stored as ``spatialclaw_result``).
    """
    from spatialclaw.agent.config import AgentConfig
    from spatialclaw.agent.loop import Agent
    from spatialclaw.interactive.shell_executor import ShellExecutor

    question = question.strip()
    if not question:
        raise ValueError("write the question in the cell body under %%spatialclaw")
    model = model or os.environ.get(MODEL_ENV)
    if not model:
        raise ValueError(f"give a model: %%spatialclaw --model openai:gpt-4.1 (or set ${MODEL_ENV})")
    inputs = loaded_inputs(shell)
    if not inputs:
        raise ValueError("no frames loaded: run %spatial_load PATHS... (or spatial_load(...)) first")
    task = make_task(question, inputs=inputs, choices=choices, answer_type=answer_type, task_id="notebook")
    config = AgentConfig()
    if max_steps is not None:
        config.max_steps = max_steps
    if cell_timeout_s is not None:
        config.cell_timeout_s = cell_timeout_s
    target = (
        Path(out_dir) if out_dir else Path("spatialclaw_runs") / (time.strftime("%Y%m%d-%H%M%S") + f"-{os.getpid()}")
    )
    renderer = NotebookRenderer()
    executor = ShellExecutor(shell, on_cell_start=renderer.cell_start, on_cell_end=renderer.cell_end)
    own_vlm = shell.user_ns.get("vlm")
    try:
        with Agent(model, config) as agent:
            result = agent.run(task, target, kernel=executor, on_step=renderer.step)
    finally:
        if own_vlm is not None:
            shell.user_ns["vlm"] = own_vlm  # the agent's side channel closes with the episode
    renderer.summary(result)
    shell.user_ns["spatialclaw_result"] = result
    return result


def load_ipython_extension(ipython: Any) -> None:
    """``%load_ext spatialclaw``: register ``%spatial_load`` and ``%%spatialclaw``."""
    ipython.register_magics(_magics_class())
