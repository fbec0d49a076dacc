"""``spatialclaw session``: drive a persistent spatial kernel one cell at a time from any harness.

    spatialclaw session start --frames a.jpg b.jpg --question "..." [--choices X Y Z]   -> id + prompt path
    spatialclaw session exec ID --code cell.py        (or --code - to read the cell from stdin)
    spatialclaw session answer ID B
    spatialclaw session status ID
    spatialclaw session close ID
    spatialclaw session list

With ``--json`` every command prints exactly one JSON object on stdout (errors too: ``{"error": ...}``).
Exit codes: 0 the operation succeeded (a cell that raised is still a successful ``exec``: the error is
the observation); 1 an ``answer`` that does not fit the question; 2 the operation failed (no such session, the
daemon is gone, bad arguments).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from spatialclaw.interactive.session import DEFAULT_VLM_TOKENS

    parser = subparsers.add_parser(
        "session",
        help="drive a persistent spatial kernel step by step (for coding agents and other harnesses)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    actions = parser.add_subparsers(dest="session_command", metavar="ACTION")

    def show_help(args: argparse.Namespace) -> int:
        parser.print_help()
        return 2

    parser.set_defaults(handler=show_help)

    def add(name: str, help_text: str, handler: Callable[[argparse.Namespace], int]) -> argparse.ArgumentParser:
        sub = actions.add_parser(name, help=help_text, description=help_text)
        sub.add_argument("--json", action="store_true", help="print exactly one JSON object")
        sub.add_argument(
            "--root",
            type=Path,
            default=None,
            help="sessions folder (default: $SPATIALCLAW_SESSIONS or ~/.spatialclaw/sessions)",
        )
        sub.set_defaults(handler=lambda args: _guarded(handler, args))
        return sub

    start = add(
        "start", "start a session: a kernel loaded with the frames, and the prompt for whoever drives it", _start
    )
    from spatialclaw.input_paths import add_input_options

    add_input_options(start)
    start.add_argument(
        "--question", required=True, help="the spatial question as written (lettered options in it are read as choices)"
    )
    start.add_argument(
        "--choices",
        nargs="+",
        default=None,
        metavar="OPTION",
        help="multiple-choice option texts (answers are letters A, B, ...)",
    )
    start.add_argument("--answer-type", choices=["multiple_choice", "number", "text", "yes_no"], default=None)
    start.add_argument(
        "--vlm-model",
        default=None,
        metavar="SPEC",
        help="model that the kernel's vlm.ask/vlm.locate consult (e.g. openai:gpt-4.1); credentials stay in the daemon",
    )
    start.add_argument(
        "--vlm-api-key-env",
        default=None,
        metavar="NAME",
        help="environment variable holding the key of an openai-compat --vlm-model (such a URL gets no key otherwise)",
    )
    start.add_argument(
        "--vlm-max-tokens",
        type=int,
        default=DEFAULT_VLM_TOKENS,
        metavar="N",
        help=f"tokens the session's vlm.ask/vlm.locate calls may spend in all (default {DEFAULT_VLM_TOKENS:,}); "
        "a call past it is refused",
    )
    start.add_argument(
        "--vlm-max-cost",
        type=float,
        default=None,
        metavar="USD",
        help="US dollars the session's vlm calls may spend in all (a --vlm-model with a known price)",
    )
    start.add_argument(
        "--sandbox",
        choices=["auto", "required", "off"],
        default="auto",
        help="kernel isolation: auto (the sandbox where this platform has one), required, or off (docs/security.md)",
    )
    start.add_argument(
        "--primitive",
        action="append",
        default=[],
        metavar="NAME=TARGET",
        help="your own function bound as NAME in the kernel and listed in the prompt: path/to/file.py:function "
        "or package.module:function (docs/design.md); repeatable",
    )
    start.add_argument("--id", dest="session_id", default=None, help="session id (default: time stamp + random suffix)")
    start.add_argument(
        "--max-steps",
        type=int,
        default=30,
        help="step budget (cells) stated in the prompt and enforced; answer is always allowed",
    )
    start.add_argument("--cell-timeout", type=float, default=120.0, help="default per-cell limit in seconds")
    start.add_argument(
        "--idle-timeout", type=float, default=6 * 3600.0, help="close the session after this many idle seconds"
    )
    start.add_argument("--memory-limit-mb", type=int, default=None, help="memory limit of the kernel process (MiB)")

    run = add("exec", "run one cell in the session's kernel and print the observation and image paths", _exec)
    run.add_argument("session", help="session id (or a unique prefix)")
    run.add_argument("--code", required=True, metavar="FILE|-", help="a file holding the cell, or - for stdin")
    run.add_argument("--timeout", type=float, default=None, help="seconds for this cell (default: the session's)")
    run.add_argument(
        "--reasoning",
        metavar="TEXT",
        help="the driving model's words for this cell, recorded as its turn "
        "(sessions with them export as fine-tuning rows)",
    )

    answer = add("answer", "submit the final answer (checked against the choices) and end the episode", _answer)
    answer.add_argument("session", help="session id (or a unique prefix)")
    answer.add_argument("value", help="the answer: an option letter, a number, or a short text")
    answer.add_argument(
        "--reasoning", metavar="TEXT", help="the driving model's words for the answer, recorded as its turn"
    )

    status = add("status", "the session's state, steps and answer", _status)
    status.add_argument("session", help="session id (or a unique prefix)")

    close = add("close", "shut the session's kernel and daemon down (the trajectory stays)", _close)
    close.add_argument("session", help="session id (or a unique prefix)")

    add("list", "list sessions with their states", _list)


def _guarded(handler: Callable[[argparse.Namespace], int], args: argparse.Namespace) -> int:
    """Run ``handler``; a :class:`SessionError` becomes a message (or a JSON error object) and exit code 2."""
    from spatialclaw.interactive.session_dir import SessionError

    try:
        return handler(args)
    except (SessionError, FileNotFoundError, ValueError) as exc:
        if args.json:
            print(json.dumps({"error": str(exc)}))
        else:
            print(_terminal_safe(f"error: {exc}"), file=sys.stderr)
        return 2


_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def _terminal_safe(text: str) -> str:
    """``text`` with every control character but newline and tab shown as an escape (``\\x1b``): what a
    cell printed reaches the terminal as text, never as escape sequences (titles, clipboard, cursor moves)."""
    return _CONTROL.sub(
        lambda m: f"\\x{ord(m.group()):02x}" if ord(m.group()) < 256 else f"\\u{ord(m.group()):04x}", text
    )


def _emit(args: argparse.Namespace, data: dict[str, Any], text: str) -> None:
    """One JSON object (``--json``; control characters are escaped by JSON), else ``text`` made terminal-safe."""
    print(json.dumps(data, default=str) if args.json else _terminal_safe(text))


def _start(args: argparse.Namespace) -> int:
    from spatialclaw.agent.question import make_task
    from spatialclaw.input_paths import check_inputs, specs_from_groups
    from spatialclaw.interactive.session import start_session

    specs = specs_from_groups(args.inputs, fps=args.fps, count=args.count)
    check_inputs(specs)  # a corrupt or empty file: exit 2 naming it, before a kernel starts
    task = make_task(args.question, inputs=specs, choices=args.choices, answer_type=args.answer_type)
    session = start_session(
        task,
        root=args.root,
        session_id=args.session_id,
        max_steps=args.max_steps,
        cell_timeout_s=args.cell_timeout,
        idle_timeout_s=args.idle_timeout,
        memory_limit_mb=args.memory_limit_mb,
        vlm_model=args.vlm_model,
        vlm_api_key_env=args.vlm_api_key_env,
        vlm_max_tokens=args.vlm_max_tokens,
        vlm_max_cost_usd=args.vlm_max_cost,
        sandbox=args.sandbox,
        primitives=_primitives(args.primitive),
    )
    from spatialclaw.interactive.preview import write_input_previews
    from spatialclaw.interactive.session_prompt import session_ref

    preview = write_input_previews(task, session.directory)
    data = {
        "session": session.id,
        "prompt": str(session.prompt_path),
        "directory": str(session.directory),
        "preview": preview["contact_sheet"],
        "preview_frames": [f["path"] for f in preview["frames"]],
    }
    _emit(
        args,
        data,
        f"session: {session.id}\nprompt: {session.prompt_path}\npreview: {preview['contact_sheet']} "
        f"({len(preview['frames'])} frame(s); one PNG each in {session.directory / 'preview'})\n"
        f"next: spatialclaw session exec {session_ref(session.id, session.directory)} --code - <<'EOF'\n...\nEOF",
    )
    return 0


def _primitives(options: list[str]) -> dict[str, str]:
    """``--primitive NAME=TARGET`` options by name."""
    found = {}
    for option in options:
        name, sep, target = option.partition("=")
        if not sep or not name or not target:
            raise ValueError(f"--primitive {option!r}: give NAME=path/to/file.py:function or NAME=module:function")
        found[name] = target
    return found


def _read_code(source: str) -> str:
    if source == "-":
        return sys.stdin.read()
    path = Path(source)
    if not path.is_file():
        raise FileNotFoundError(f"cell file {path} does not exist; pass a file or - to read the cell from stdin")
    return path.read_text(encoding="utf-8")


def _outcome_text(outcome: Any) -> str:
    lines = [outcome.text]
    if outcome.images:
        lines.append("images:")
        lines.extend(f"  {path}" for path in outcome.images)
    if outcome.answered:
        lines.append(f"answer: {outcome.answer!r} (the episode is over; close the session)")
    return "\n".join(lines)


def _exec(args: argparse.Namespace) -> int:
    from spatialclaw.interactive.session_client import Session

    code = _read_code(args.code)
    if not code.strip():
        raise ValueError("the cell is empty; give some code")
    outcome = Session.open(args.session, args.root).execute(code, timeout=args.timeout, reasoning=args.reasoning)
    _emit(args, outcome.to_dict(), _outcome_text(outcome))
    return 0


def _answer(args: argparse.Namespace) -> int:
    from spatialclaw.interactive.session_client import Session

    outcome = Session.open(args.session, args.root).answer(args.value, reasoning=args.reasoning)
    _emit(args, outcome.to_dict(), _outcome_text(outcome))
    return 0 if outcome.answered else 1


def _status(args: argparse.Namespace) -> int:
    from spatialclaw.interactive.session_client import Session

    status = Session.open(args.session, args.root).status()
    _emit(args, status, _status_text(status))
    return 0


def _status_text(status: dict[str, Any]) -> str:
    lines = [f"session: {status['session']}", f"state: {status['state']}", f"steps: {status['steps']}"]
    if status.get("answered"):
        lines.append(f"answer: {status.get('answer')!r}")
    lines.append(f"question: {status.get('question')}")
    lines.append(f"directory: {status.get('directory')}")
    return "\n".join(lines)


def _close(args: argparse.Namespace) -> int:
    from spatialclaw.interactive.session_client import Session

    result = Session.open(args.session, args.root).close()
    _emit(
        args,
        result,
        f"session {result['session']} closed after {result['steps']} step(s); trajectory in {result['directory']}",
    )
    return 0


def _one_line(text: str, limit: int = 80) -> str:
    """A question as one line of at most ``limit`` characters (``…`` where it was cut)."""
    line = " ".join(str(text).split())
    return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"


def _list(args: argparse.Namespace) -> int:
    from spatialclaw.interactive.session import list_sessions

    rows = [s.status() for s in list_sessions(args.root)]
    text = "\n".join(
        f"{r['session']}  {r['state']:<10} steps={r['steps']:<3} {_one_line(r.get('question') or '')}" for r in rows
    )
    _emit(args, {"sessions": rows}, text or "no sessions")
    return 0
