"""``spatialclaw run``: answer one question about images or a video, streaming each step.

    spatialclaw run --model openai:gpt-4.1 --frames a.jpg b.jpg --question "Which is closer?" \\
        --choices "the chair" "the table" --out runs/q1
    spatialclaw run --model openai-compat:Qwen/Qwen2.5-VL-7B-Instruct@http://localhost:8000/v1 \\
        --video room.mp4 --fps 1 --question "How many chairs are there?" --answer-type number --out runs/q2
    spatialclaw run --model openai:gpt-4.1 --video kitchen.mp4 --video hall.mp4 --count 8 \\
        --question "Which room has the red chair? A. the kitchen B. the hall" --out runs/q3

Inputs repeat in order (``frames`` is the first, ``videos`` all of them); ``--indices``/``--times``/
``--sidecar`` after an input give its source frame numbers and times. The question is read as written:
lettered options in it become the choices, and the answer type is inferred unless given.

Each step prints the model's code, a summary of the output and the paths of the images it produced
(stored in the trajectory under OUT/images/). The last line is ``answer: <value>``. Exit codes: 0 an
answer was given, 1 the episode ended without one, 2 bad arguments or a model that cannot be used.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path
from typing import Any, TextIO

RULE = "─" * 72


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "run",
        help="answer one spatial question about images or a video",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--model",
        required=True,
        help="model spec: openai:M, anthropic:M, openai-compat:M@URL, hf:PATH, replay:DIR, or keyless "
        "scripted:look-and-answer, scripted:solve-synthetic (measures synthetic scenes with the tools), "
        "scripted:replies=FILE",
    )
    from spatialclaw.input_paths import add_input_options

    add_input_options(parser)
    parser.add_argument(
        "--question",
        required=True,
        help="the question as written; lettered options in it (A. ..., (B) ...) are read as choices",
    )
    parser.add_argument(
        "--choices", nargs="+", metavar="OPTION", help="option texts; the answer is then a letter A, B, ..."
    )
    parser.add_argument(
        "--answer-type",
        choices=["multiple_choice", "number", "yes_no", "text"],
        help="default: inferred from the question (options: multiple_choice; 'how many', 'in meters': number; 'Is ...?': yes_no)",
    )
    parser.add_argument(
        "--ground-truth",
        metavar="VALUE",
        help="the correct answer (a letter, a number, yes/no or text): the episode is scored and the "
        "score recorded, so it exports like a benchmark episode; the kernel never sees it",
    )
    add_agent_options(parser)
    parser.add_argument("--out", required=True, type=Path, help="episode directory (must not hold an episode yet)")
    parser.set_defaults(handler=run)


def add_agent_options(parser: argparse.ArgumentParser) -> None:
    """Options shared by ``run`` and ``demo``."""
    parser.add_argument("--max-steps", type=int, default=30, help="step budget (default 30)")
    parser.add_argument("--max-images", type=int, default=20, help="images per model request (default 20)")
    parser.add_argument("--plan", action="store_true", help="make a planning call before the first step")
    parser.add_argument(
        "--api-detail",
        choices=["core", "brief", "full"],
        default="core",
        help="tool manual in the system prompt: core (one line per name; manual(name) in a cell for more), "
        "brief (one paragraph each) or full docstrings",
    )
    parser.add_argument("--max-tokens", type=int, help="completion token limit per model call")
    parser.add_argument(
        "--time-limit", type=float, metavar="SECONDS", help="end the episode after this many seconds (status timeout)"
    )
    parser.add_argument(
        "--token-limit", type=int, metavar="TOKENS", help="end the episode once its model calls used this many tokens"
    )
    parser.add_argument(
        "--cost-limit", type=float, metavar="USD", help="end the episode once its model calls cost this many US dollars"
    )
    parser.add_argument("--quiet", action="store_true", help="print only the final answer line on stdout")
    add_sandbox_option(parser)
    parser.add_argument(
        "--agent-option",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="any AgentConfig field, typed as the field, as `bench` takes it (e.g. preview_images=4, "
        'kernel_options=\'{"primitives": {"brightness": "my_tools.py:brightness"}}\'); repeatable, applied last',
    )


def add_sandbox_option(parser: argparse.ArgumentParser) -> None:
    """``--sandbox`` of ``run``, ``demo``, ``bench`` and ``replay`` (see docs/security.md)."""
    parser.add_argument(
        "--sandbox",
        choices=["auto", "required", "off"],
        default="auto",
        help="kernel sandbox: auto (where the platform has one; default), required (refuse to run without it) or off",
    )


def agent_config(args: argparse.Namespace) -> Any:
    from spatialclaw.agent.config import AgentConfig
    from spatialclaw.agent.limits import Limits
    from spatialclaw.runner.options import parse_agent_options

    params = {"max_tokens": args.max_tokens} if args.max_tokens else {}
    limits = Limits(time_s=args.time_limit, tokens=args.token_limit, cost_usd=args.cost_limit)
    config = AgentConfig(
        max_steps=args.max_steps,
        max_images_per_request=args.max_images,
        plan=args.plan,
        model_params=params,
        limits=limits,
        api_detail=args.api_detail,
        sandbox=args.sandbox,
    )
    options = parse_agent_options(getattr(args, "agent_option", []))
    if "limits" in options:
        options["limits"] = Limits(**options["limits"])
    return dataclasses.replace(config, **options)


def build_task(args: argparse.Namespace) -> Any:
    """The task of the command line: every input group in order (relative paths resolved against the
    working directory), the question parsed as written (:func:`spatialclaw.agent.question.make_task`)."""
    from spatialclaw.agent.question import make_task
    from spatialclaw.input_paths import check_inputs, specs_from_groups

    groups = args.inputs or []
    for group in groups:
        if "error" in group:
            raise ValueError(group["error"])
    missing = [
        p for g in groups for p in g["paths"] if not any(ch in p for ch in "*?[") and not Path(p).expanduser().exists()
    ]
    if missing:
        raise FileNotFoundError(f"input file(s) not found: {', '.join(missing)}")
    if (args.fps is not None or args.count is not None) and not any(g["kind"] == "video" for g in groups):
        raise ValueError("--fps and --count apply to --video only")
    check_input_kinds(args)
    specs = specs_from_groups(groups, fps=args.fps, count=args.count)
    check_inputs(specs)  # a corrupt or empty file: exit 2 naming it, before a kernel starts
    task = make_task(args.question, inputs=specs, choices=args.choices, answer_type=args.answer_type, task_id="cli")
    if getattr(args, "ground_truth", None) is not None:
        task.ground_truth = parse_ground_truth(args.ground_truth, task.answer_type)
    return task


def parse_ground_truth(value: str, answer_type: str) -> Any:
    """``--ground-truth`` as the task's answer type holds it: a float for ``number`` (``ValueError`` saying
    what to give otherwise), the text as given for the other types (letters, yes/no and text are
    normalised by the scorer)."""
    if answer_type != "number":
        return value.strip()
    try:
        return float(value)
    except ValueError:
        raise ValueError(
            f"--ground-truth {value!r} is not a number, but the answer type is number; give e.g. 2.5"
        ) from None


def check_input_kinds(args: argparse.Namespace) -> None:
    """Catch, before an episode starts, inputs of the wrong kind (by file extension) and bad sampling values
    (unreadable content: :func:`spatialclaw.input_paths.check_inputs`)."""
    from spatialclaw.primitives.frames.sources import VIDEO_SUFFIXES, image_suffixes

    if args.fps is not None and not args.fps > 0:
        raise ValueError(f"--fps must be a positive number of frames per second of video time, got {args.fps:g}")
    if args.count is not None and args.count < 1:
        raise ValueError(f"--count must be at least 1 frame, got {args.count}")
    if args.fps is not None and args.count is not None:
        raise ValueError("--fps and --count both choose how a video is sampled; give one of them")
    for group in args.inputs or []:
        for raw in group["paths"]:
            path = Path(raw)
            suffix = path.suffix.lower()
            if group["kind"] == "video" and suffix not in VIDEO_SUFFIXES:
                raise ValueError(
                    f"{path} is not a video (extensions: {', '.join(sorted(VIDEO_SUFFIXES))}); "
                    "give images with --frames or convert it with e.g. `ffmpeg -i INPUT out.mp4`"
                )
            if group["kind"] == "images" and path.is_file():
                if suffix in VIDEO_SUFFIXES:
                    raise ValueError(f"{path} is a video; give it with --video (and --fps or --count)")
                if suffix not in image_suffixes():
                    raise ValueError(
                        f"{path} is not an image file Pillow can read (extension {suffix or '(none)'!r}); convert it to PNG or JPEG"
                    )


def _indent(text: str, prefix: str = "  │ ") -> str:
    return "\n".join(prefix + line for line in text.rstrip("\n").splitlines()) or prefix.rstrip()


def print_step(event: Any, max_steps: int, stream: TextIO) -> None:
    """Print one :class:`~spatialclaw.agent.result.StepEvent` as it happens."""
    if event.kind == "plan":
        print(f"{RULE}\nplan\n{_indent(event.reply)}", file=stream, flush=True)
        return
    if event.kind == "fallback":
        print(
            f"{RULE}\nout of budget: asked for a direct answer\n{_indent(event.reply)}\n  {event.message}",
            file=stream,
            flush=True,
        )
        return
    print(f"{RULE}\nstep {event.step}/{max_steps}", file=stream)
    if event.kind == "format_error":
        print(f"  no code in the reply:\n{_indent(event.reply[-600:])}", file=stream, flush=True)
        return
    result = event.result
    print(f"  code:\n{_indent(event.code or '')}", file=stream)
    summary = result.to_text(1200)
    print(f"  output ({result.status}, {result.duration_s:.2f} s):\n{_indent(summary)}", file=stream)
    for path, image in zip(event.image_paths, result.images, strict=True):
        print(f"  image: {path}  ({image.label or image.origin}, {image.width}x{image.height})", file=stream)
    stream.flush()


def print_summary(result: Any, stream: TextIO, quiet: bool = False) -> None:
    """The closing lines; the last one is ``answer: <value>`` (the only one when ``quiet``)."""
    if quiet:
        print(f"answer: {result.answer}", file=stream, flush=True)
        return
    usage = result.usage
    cost = f"${result.cost_usd:.4f}" if result.cost_usd is not None else "cost unknown"
    print(RULE, file=stream)
    print(
        f"status: {result.status} · {result.steps} step(s) · {usage.prompt_tokens} prompt + {usage.completion_tokens} completion tokens"
        f" · {cost} · {result.duration_s:.1f} s",
        file=stream,
    )
    if result.error:
        print(f"error: {result.error}", file=stream)
    if result.limit is not None:
        print(f"limit: {result.limit.describe()}", file=stream)
    print(f"trajectory: {result.trajectory_dir}", file=stream)
    print(f"answer: {result.answer}", file=stream, flush=True)


def run_episode(model: Any, task: Any, args: argparse.Namespace, out: Path, stream: TextIO | None = None) -> int:
    """Run and stream one episode (to ``stream``, default the current ``sys.stdout``); the exit code says
    whether an answer came back."""
    from spatialclaw.agent.loop import Agent

    stream = stream if stream is not None else sys.stdout

    config = agent_config(args)
    with Agent(model, config) as agent:
        on_step = None if args.quiet else (lambda event: print_step(event, config.max_steps, stream))
        result = agent.run(task, out, on_step=on_step)
    if task.ground_truth is not None:
        record_score(task, result, out, stream, quiet=args.quiet)
    print_summary(result, stream, quiet=args.quiet)
    return 0 if result.answer is not None else 1


def record_score(task: Any, result: Any, out: Path, stream: TextIO, quiet: bool = False) -> None:
    """Score the answer against the task's ground truth on the host, as the benchmark runner does, append
    the ``score`` event to the episode and print ``score: ...`` (unless ``quiet``)."""
    from spatialclaw.runner.episode import score_row
    from spatialclaw.trajectories.episode_log import TrajectoryWriter

    row = score_row(task, result.answer)
    with TrajectoryWriter(out, fsync=False) as writer:
        writer.write(
            "score",
            score=row["score"],
            ground_truth=row["ground_truth"],
            details={"metric": row["metric"], "extracted": row["extracted"]},
        )
    if not quiet:
        print(f"score: {row['score']:g} ({row['metric']}; ground truth {row['ground_truth']!r})", file=stream)


def run(args: argparse.Namespace) -> int:
    from spatialclaw.models import ModelError, load_model
    from spatialclaw.primitives.perception.models import MissingWeightsError

    try:
        task = build_task(args)
        args.out = args.out.expanduser().resolve()  # once, against the working directory
        if (args.out / "episode.jsonl").exists():
            raise FileExistsError(f"{args.out} already holds an episode; give a new --out directory")
        agent_config(args)  # bad limits are bad arguments
        model = load_model(args.model)
    except (FileNotFoundError, FileExistsError, ValueError, ModelError, MissingWeightsError) as error:
        print(f"spatialclaw run: {error}", file=sys.stderr)
        return 2
    return run_episode(model, task, args, args.out)
