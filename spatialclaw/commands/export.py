"""``spatialclaw export``: trajectories to fine-tuning / RL data (see docs/trajectories.md)."""

from __future__ import annotations

import argparse
import sys


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "export",
        help="export episodes as OpenAI JSONL, a TRL dataset, ShareGPT, verl parquet or notebooks",
        description="Export recorded episodes. --out is a file for openai (JSONL) and verl (parquet), "
        "a directory for trl (datasets.save_to_disk), sharegpt (data file + dataset_info.json) and ipynb.",
    )
    parser.add_argument("--format", required=True, choices=["openai", "trl", "sharegpt", "verl", "ipynb"])
    parser.add_argument(
        "--in",
        dest="inputs",
        required=True,
        action="append",
        metavar="RUN_OR_EPISODE",
        help="an episode directory or a run directory (repeatable)",
    )
    parser.add_argument("--out", required=True, help="output file or directory (see above)")
    parser.add_argument("--correct-only", action="store_true", help="keep only episodes scored correct")
    parser.add_argument("--min-score", type=float, help="keep only episodes scored at least this (0-1)")
    parser.add_argument("--max-steps", type=int, help="keep only episodes with at most this many steps")
    parser.add_argument("--benchmark", action="append", default=[], help="keep only this benchmark (repeatable)")
    parser.add_argument(
        "--include-incomplete",
        action="store_true",
        help="also export killed or crashed episodes (no end event) and those that ended with an error",
    )
    parser.add_argument(
        "--no-mask-failed", action="store_true", help="openai: weight 1 on every assistant turn, also on failed steps"
    )
    parser.add_argument("--name", default="spatialclaw", help="sharegpt: dataset name in dataset_info.json")
    parser.add_argument(
        "--system",
        default="core",
        metavar="core|full|none|PATH",
        help="each row's system prompt: core (default: the compact tool manual, or the episode's own "
        "prompt when it was already as short), full (the whole manual), none, or a text file",
    )
    parser.add_argument(
        "--tokenizer",
        metavar="PATH_OR_REPO",
        help="measure rows in this model's tokens (processor or tokenizer, image tokens included)",
    )
    parser.add_argument(
        "--max-tokens",
        type=int,
        metavar="N",
        help="with --tokenizer: remove trailing turns whole until a row fits N tokens, or drop it "
        "(set your trainer's max_length to N: it then never cuts a row, nor an image)",
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from spatialclaw.export import export_episodes
    from spatialclaw.trajectories.episodes import EpisodeFilter

    episode_filter = EpisodeFilter(
        correct_only=args.correct_only,
        min_score=args.min_score,
        max_steps=args.max_steps,
        benchmarks=tuple(args.benchmark),
        include_incomplete=args.include_incomplete,
    )
    options = {"name": args.name} if args.format == "sharegpt" else {}
    try:
        report = export_episodes(
            args.format,
            args.inputs,
            args.out,
            episode_filter=episode_filter,
            mask_failed=not args.no_mask_failed,
            system=args.system,
            tokenizer=args.tokenizer,
            max_tokens=args.max_tokens,
            **options,
        )
    except (ValueError, OSError) as error:  # OSError: FileNotFoundError, or an output that is a link
        print(f"spatialclaw export: {error}", file=sys.stderr)
        return 2
    for problem in report.problems:
        print(f"spatialclaw export: {problem}", file=sys.stderr)
    if report.exported == 0:
        print(f"spatialclaw export: {report.why_empty()}", file=sys.stderr)
        return 1
    print(report.summary())
    print(report.lengths.summary())
    return 0
