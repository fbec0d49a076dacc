"""``spatialclaw serve``: create a backend service's own environment and start the service in it (or, with
``--ray``, prepare the environment for the Ray executor, which starts the service as an actor);
``spatialclaw serve replies FILE`` serves recorded replies as an OpenAI-compatible endpoint on 127.0.0.1."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from spatialclaw.services.toolshed import BACKENDS

    parser = subparsers.add_parser(
        "serve",
        help="start a backend's service in its own environment, or serve recorded replies (serve replies FILE)",
        description="Create DIR/venv for the backend (python -m venv, then pip install of its own requirements "
        "and of spatialclaw without dependencies) unless it exists, start the service detached on "
        "DIR/run/service.sock (a 0700 directory) and print the variable that points runs at it. Kernels reach "
        "it through their host's relay; a service that dies is started again on the next request. "
        "`spatialclaw serve replies FILE [--port N] [--model NAME]` instead answers OpenAI Chat Completions "
        "requests on 127.0.0.1 from FILE (the format of scripted:replies=FILE: JSON Lines or one reply per "
        "line), one reply per request in order, and prints the openai-compat:NAME@URL spec to give --model; "
        "no key, no network. It runs until Ctrl-C or SIGTERM.",
    )
    parser.add_argument("name", choices=[*sorted(BACKENDS), REPLIES], help="the backend, or replies")
    parser.add_argument("file", nargs="?", type=Path, metavar="FILE", help="replies: the file of replies")
    parser.add_argument("--env", type=Path, metavar="DIR", help="the service's own directory (a backend needs it)")
    parser.add_argument("--port", type=int, default=0, help="replies: the port on 127.0.0.1 (default: a free one)")
    parser.add_argument(
        "--model",
        help="model id or folder (default: the backend's; 'stand-in': random weights); replies: the model name "
        f"served (default {REPLIES_MODEL})",
    )
    parser.add_argument("--device", default="cpu", help="cpu or cuda (default cpu)")
    parser.add_argument(
        "--stand-in",
        action="store_true",
        help="install only what the random-weight stand-in needs (implies --model stand-in)",
    )
    parser.add_argument("--pip-arg", action="append", default=[], help="extra pip option, repeatable")
    parser.add_argument("--stop", action="store_true", help="stop the service started from DIR and exit")
    parser.add_argument(
        "--ray",
        action="store_true",
        help="prepare DIR for the Ray executor instead of starting the service here: install (or refresh) the "
        "backend's packages, this environment's Ray version and spatialclaw in DIR/venv; then "
        "`spatialclaw bench --executor ray --service NAME=DIR[,gpus=G]` runs the service as a Ray actor",
    )
    parser.set_defaults(handler=run)


REPLIES = "replies"
REPLIES_MODEL = "scripted"


def run(args: argparse.Namespace) -> int:
    from spatialclaw.services.toolshed import BACKENDS, ServiceError, create_env, python_of, start_service, stop_service

    if args.name == REPLIES:
        return _serve_replies(args)
    if args.env is None or args.file is not None:
        print(f"spatialclaw serve {args.name}: give --env DIR (and no FILE)", file=sys.stderr)
        return 2
    if args.stop:
        stop_service(args.env)
        return 0
    if args.ray:
        return _prepare_for_ray(args)
    try:
        if not python_of(args.env).exists():
            print(f"creating {args.env / 'venv'} for {args.name} ...", file=sys.stderr)
            create_env(args.name, args.env, stand_in=args.stand_in, pip_args=tuple(args.pip_arg))
        model = "stand-in" if args.stand_in and not args.model else args.model
        sock = start_service(args.name, args.env, model=model, device=args.device)
    except ServiceError as error:
        print(f"spatialclaw serve: {error}", file=sys.stderr)
        return 1
    print(f"{args.name} serving on {sock}")
    print(f"export {BACKENDS[args.name].socket_env}={sock}")
    return 0


def _prepare_for_ray(args: argparse.Namespace) -> int:
    from spatialclaw.services.toolshed import ServiceError, create_env

    print(f"installing {args.name}, Ray and spatialclaw into {args.env / 'venv'} ...", file=sys.stderr)
    try:
        create_env(args.name, args.env, stand_in=args.stand_in, pip_args=tuple(args.pip_arg), ray=True)
    except ServiceError as error:
        print(f"spatialclaw serve: {error}", file=sys.stderr)
        return 1
    model = ",model=stand-in" if args.stand_in and not args.model else (f",model={args.model}" if args.model else "")
    gpus = "0" if args.stand_in else "1"  # the stand-in is numpy only; the real model wants its GPU
    where = args.env.absolute()
    print(f"{args.name} is ready for the Ray executor in {where}")
    print(f"spatialclaw bench --executor ray --service {args.name}={where},gpus={gpus}{model} ...")
    return 0


def _serve_replies(args: argparse.Namespace) -> int:
    """Serve the replies in ``args.file`` on ``127.0.0.1:args.port`` until Ctrl-C or SIGTERM."""
    import signal
    import threading

    from spatialclaw.models.scripted_policy import replies_from_file
    from spatialclaw.testing.provider_server import Entry, Reply, ScriptedProvider, ToolCallReply, bad_request

    if args.file is None:
        print("spatialclaw serve replies: give the FILE of replies", file=sys.stderr)
        return 2
    replies: list[Entry] = [
        Reply(
            text=reply.text,
            tool_calls=tuple(ToolCallReply(call.name, call.arguments, call.id) for call in reply.tool_calls),
        )
        if not isinstance(reply, str)
        else reply
        for reply in replies_from_file(args.file)
    ]
    model = args.model or REPLIES_MODEL

    def script(request: dict[str, Any], index: int) -> Entry:
        if index < len(replies):
            return replies[index]
        # a client error, so the client stops at once instead of retrying what cannot change
        return bad_request(f"{args.file} holds {len(replies)} replies; request {index + 1} has none")

    stop = threading.Event()
    for stop_signal in (signal.SIGINT, signal.SIGTERM):  # Ctrl-C or a service manager's stop
        signal.signal(stop_signal, lambda *_: stop.set())
    try:
        server = ScriptedProvider(script, model=model, port=args.port).start()
    except OSError as error:
        print(f"spatialclaw serve replies: cannot listen on 127.0.0.1:{args.port} ({error})", file=sys.stderr)
        return 2
    print(f"serving {len(replies)} replies from {args.file} at {server.url}")
    print(f"--model openai-compat:{model}@{server.url}", flush=True)
    stop.wait()
    server.stop()
    print(f"stopped after {server.calls} request(s)", flush=True)
    return 0
