"""``spatialclaw mcp``: serve step-by-step spatial sessions over the Model Context Protocol (stdio)."""

from __future__ import annotations

import argparse
from pathlib import Path


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "mcp",
        help="serve spatial sessions to an MCP client over stdio (tools: session_start/exec/answer/status/close)",
        description=(
            "Serve the session operations over the Model Context Protocol on stdin/stdout. "
            "Configure your MCP client to run `spatialclaw mcp`; see docs/mcp.md."
        ),
    )
    parser.add_argument(
        "--root",
        type=Path,
        default=None,
        help="sessions folder (default: $SPATIALCLAW_SESSIONS or ~/.spatialclaw/sessions)",
    )
    parser.add_argument(
        "--keep-sessions", action="store_true", help="leave the sessions this server started running when it exits"
    )
    parser.add_argument(
        "--sandbox",
        choices=["auto", "required", "off"],
        default="auto",
        help="kernel isolation of every session this server starts (clients cannot change it)",
    )
    parser.add_argument(
        "--replay-root",
        type=Path,
        action="append",
        default=[],
        metavar="DIR",
        help="a folder whose trajectories (vlm_model replay:DIR) and model folders (hf:DIR) clients may name, "
        "besides this server's own sessions (repeatable; default: none)",
    )
    parser.add_argument(
        "--input-root",
        type=Path,
        action="append",
        default=[],
        metavar="DIR",
        help="clients' frames and videos must lie inside this folder (repeatable; default: any image or video file)",
    )
    parser.add_argument(
        "--allow-models",
        action="append",
        default=[],
        metavar="SPEC",
        help="a vlm_model spec (shell pattern) clients may name, e.g. 'openai-compat:*@http://localhost:8000/v1' "
        "(repeatable; given, these are the only ones; default: openai:*, anthropic:*, hf:*, replay:*, "
        "scripted:look-and-answer; never a file-reading or client-chosen-URL spec unless named here)",
    )
    parser.set_defaults(handler=_serve)


def _serve(args: argparse.Namespace) -> int:
    from spatialclaw.interactive.mcp_server import serve_stdio

    serve_stdio(
        root=args.root,
        keep_sessions=args.keep_sessions,
        sandbox=args.sandbox,
        replay_roots=args.replay_root,
        input_roots=args.input_root,
        allowed_models=args.allow_models,
    )
    return 0
