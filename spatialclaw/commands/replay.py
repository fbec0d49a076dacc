"""``spatialclaw replay``: re-execute recorded cells in a fresh kernel and report what still matches."""

from __future__ import annotations

import argparse
import sys


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "replay",
        help="re-execute an episode's cells in a fresh kernel and compare outputs cell by cell",
        description="Re-run every recorded cell of the episode(s) in a fresh kernel and report, per cell, "
        "whether stdout, the error type, the number of images and the answer match. Exit code 0 when "
        "every cell matches, 1 otherwise.",
    )
    parser.add_argument("path", metavar="EPISODE_OR_RUN", help="an episode directory (or a run directory)")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds per cell (default 120)")
    from spatialclaw.commands.run import add_sandbox_option

    add_sandbox_option(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from spatialclaw.runner.replay import replay_episode
    from spatialclaw.trajectories.episodes import find_episode_dirs

    try:
        directories = find_episode_dirs([args.path])
    except FileNotFoundError as error:
        print(f"spatialclaw replay: {error}", file=sys.stderr)
        return 2
    all_ok = True
    for directory in directories:
        try:
            report = replay_episode(directory, timeout_s=args.timeout, sandbox=args.sandbox)
        except (FileNotFoundError, ValueError) as error:
            print(f"spatialclaw replay: {error}", file=sys.stderr)
            all_ok = False
            continue
        print(report.table())
        all_ok = all_ok and report.ok
    return 0 if all_ok else 1
