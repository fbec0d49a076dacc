"""``spatialclaw export``: trajectories to fine-tuning / RL data (see docs/trajectories.md)."""

from __future__ import annotations

import argparse
import sys


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "export",
        help="export episodes as OpenAI JSONL, a TRL dataset, ShareGPT, verl parquet or notebooks",
        description="Export recorded episodes. --out is a file for openai (JSONL) and verl (parquet), "
        "a directory for trl (datasets.save_to_disk), sharegpt (data file + dataset_info.json) and ipynb.",
    )
    parser.add_argument("--format", required=True, choices=["openai", "trl", "sharegpt", "verl", "ipynb"])
    parser.add_argument("--in", dest="inputs", required=True, action="append", metavar="RUN_OR_EPISODE",
                        help="an episode directory or a run directory (repeatable)")
    parser.add_argument("--out", required=True, help="output file or directory (see above)")
    parser.add_argument("--correct-only", action="store_true", help="keep only episodes scored correct")
    parser.add_argument("--min-score", type=float, help="keep only episodes scored at least this (0-1)")
    parser.add_argument("--max-steps", type=int, help="keep only episodes with at most this many steps")
    parser.add_argument("--benchmark", action="append", default=[], help="keep only this benchmark (repeatable)")
    parser.add_argument("--include-incomplete", action="store_true",
                        help="also export killed or crashed episodes (no end event) and those that ended with an error")
    parser.add_argument("--no-mask-failed", action="store_true",
                        help="openai: weight 1 on every assistant turn, also on failed steps")
    parser.add_argument("--name", default="spatialclaw", help="sharegpt: dataset name in dataset_info.json")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from spatialclaw.episodes import EpisodeFilter
    from spatialclaw.export import export_episodes

    episode_filter = EpisodeFilter(
        correct_only=args.correct_only,
        min_score=args.min_score,
        max_steps=args.max_steps,
        benchmarks=tuple(args.benchmark),
        include_incomplete=args.include_incomplete,
    )
    options = {"name": args.name} if args.format == "sharegpt" else {}
    try:
        report = export_episodes(args.format, args.inputs, args.out, episode_filter=episode_filter,
                                 mask_failed=not args.no_mask_failed, **options)
    except (ValueError, FileNotFoundError) as error:
        print(f"spatialclaw export: {error}", file=sys.stderr)
        return 2
    print(report.summary())
    if report.exported == 0:
        print("spatialclaw export: no episode passed the filters; nothing to train on", file=sys.stderr)
        return 1
    return 0
