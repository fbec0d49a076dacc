"""``spatialclaw serve``: create a backend service's own environment and start the service in it (or, with
``--ray``, prepare the environment for the Ray executor, which starts the service as an actor)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from spatialclaw.services.toolshed import BACKENDS

    parser = subparsers.add_parser(
        "serve",
        help="create a backend's own environment (once) and start its service there",
        description="Create DIR/venv for the backend (python -m venv, then pip install of its own requirements "
        "and of spatialclaw without dependencies) unless it exists, start the service detached on "
        "DIR/run/service.sock (a 0700 directory) and print the variable that points runs at it. Kernels reach "
        "it through their host's relay; a service that dies is started again on the next request.",
    )
    parser.add_argument("name", choices=sorted(BACKENDS), help="the backend")
    parser.add_argument("--env", required=True, type=Path, metavar="DIR", help="the service's own directory")
    parser.add_argument("--model", help="model id or folder (default: the backend's; 'stand-in': random weights)")
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


def run(args: argparse.Namespace) -> int:
    from spatialclaw.services.toolshed import BACKENDS, ServiceError, create_env, python_of, start_service, stop_service

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
