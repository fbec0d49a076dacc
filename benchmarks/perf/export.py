"""Export speed: 1,000 synthetic episodes of 10 steps in every format, against raw JSONL throughput; and
the length of an exported row with each system prompt choice (``--system full|core|none``).

Run: ``.venv/bin/python benchmarks/perf/export.py [--episodes N] [--steps S] [--tokenizer PATH_OR_REPO]``. Writes the episodes
with :func:`spatialclaw.trajectories.synthetic.write_synthetic_episode` (2 frames and one 64x48 image per
step; each model call carries the full request history, as the agent logs it), then times:

- ``baseline``: the least any exporter must do: read every ``episode.jsonl``, parse every line, read
  every image file, and write each episode's events and images (base64) as one JSON line. Measured
  before and after the exports; the mean is the denominator;
- each format through :func:`spatialclaw.export.export_episodes` (loading, building the conversation,
  writing, and for ``trl`` the ``datasets`` save, for ``ipynb`` ``nbformat.validate`` per notebook).

Row lengths: ``--length-rows`` (20) of the episodes are rewritten as the agent logged them before the
core manual was its default (the full manual as system prompt) and exported as OpenAI rows with each
``--system`` choice; characters per row, and tokens per row (chat template applied, image tokens
included) with ``--tokenizer``, else with the tiny offline Idefics3 processor of ``spatialclaw.testing.tiny_models``
(a byte-level BPE: about one token per character, an upper bound; real BPE tokenizers give roughly a
quarter of that for English and code).

Prints two tables, then one JSON line: ``episodes``, ``steps``, ``baseline_eps`` and per format
``<format>_eps`` (episodes per second) and ``<format>_ratio`` (format / baseline; 1 = as fast as a
raw read-and-copy, below 1 = slower), and per system choice ``row_<choice>_chars`` / ``row_<choice>_tokens``
(medians) with ``tokenizer``.
"""

from __future__ import annotations

import argparse
import base64
import json
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from spatialclaw import jsonl
from spatialclaw.export import FORMATS, export_episodes
from spatialclaw.trajectories.episode_log import iter_episode_dirs
from spatialclaw.trajectories.synthetic import write_synthetic_episode

OUTPUTS = {"openai": "sft.jsonl", "trl": "trl", "sharegpt": "sharegpt", "verl": "rl.parquet", "ipynb": "notebooks"}


def baseline_copy(root: Path, out: Path) -> int:
    """Read, parse and rewrite every episode with its images as one JSON line; returns episodes."""
    count = 0
    with open(out, "w", encoding="utf-8") as file:
        for directory in iter_episode_dirs(root):
            events = jsonl.read(directory / "episode.jsonl").records
            images = {
                p.stem: base64.b64encode(p.read_bytes()).decode("ascii")
                for p in sorted((directory / "images").iterdir())
            }
            file.write(jsonl.dumps_line({"events": events, "images": images}))
            count += 1
    return count


def use_full_manual(directory: Path, max_steps: int) -> None:
    """Rewrite an episode's logged requests to start with the agent's full manual, as older runs logged them."""
    from spatialclaw.agent.prompting import system_prompt

    full = system_prompt(max_steps, api_detail="full")
    log = directory / "episode.jsonl"
    events = jsonl.read(log).records
    for event in events:
        if event["type"] == "header":
            event["config"]["max_steps"] = max_steps
        if event["type"] == "model_call":
            event["request"]["messages"][0]["content"] = [{"type": "text", "text": full}]
    jsonl.write_atomic(log, events)


def row_lengths(
    root: Path, out_dir: Path, rows: int, steps: int, tokenizer: str
) -> dict[str, tuple[list[int], list[int]]]:
    """Characters and tokens per exported row for each ``--system`` choice."""
    for seed in range(rows):
        directory = root / f"row{seed:03d}"
        write_synthetic_episode(directory, steps=steps, seed=seed, format_error_steps=(3,), error_steps=(5,))
        use_full_manual(directory, max_steps=30)
    lengths = {}
    for choice in ("full", "core", "none"):
        report = export_episodes("openai", [root], out_dir / f"rows-{choice}.jsonl", system=choice, tokenizer=tokenizer)
        lengths[choice] = (report.lengths.chars, report.lengths.tokens)
    return lengths


def default_tokenizer(directory: Path) -> str:
    from spatialclaw.testing.tiny_models import build_tiny_vlm

    return str(build_tiny_vlm(directory))


R = TypeVar("R")


def timed(function: Callable[..., R], *args: Any) -> tuple[float, R]:
    started = time.perf_counter()
    value = function(*args)
    return time.perf_counter() - started, value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=1000)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--length-rows", type=int, default=20, help="episodes measured for the row-length table")
    parser.add_argument("--tokenizer", help="processor/tokenizer for token counts (default: the tiny offline Idefics3)")
    args = parser.parse_args()
    try:
        import datasets

        datasets.disable_progress_bars()
    except ImportError:
        pass

    with tempfile.TemporaryDirectory(prefix="spatialclaw-export-bench-") as tmp:
        root = Path(tmp) / "run"
        started = time.perf_counter()
        for seed in range(args.episodes):
            write_synthetic_episode(
                root / f"ep{seed:05d}", steps=args.steps, seed=seed, format_error_steps=(3,), error_steps=(5,)
            )
        write_s = time.perf_counter() - started
        size_mb = sum(p.stat().st_size for p in root.rglob("*") if p.is_file()) / 2**20

        baseline_s = [timed(baseline_copy, root, Path(tmp) / "baseline-1.jsonl")[0]]
        results: dict[str, float] = {}
        for fmt in FORMATS:
            seconds, report = timed(export_episodes, fmt, [root], Path(tmp) / OUTPUTS[fmt])
            if report.exported != args.episodes:
                raise SystemExit(f"{fmt}: exported {report.exported} of {args.episodes}: {report.summary()}")
            results[fmt] = seconds
        baseline_s.append(timed(baseline_copy, root, Path(tmp) / "baseline-2.jsonl")[0])
        tokenizer = args.tokenizer or default_tokenizer(Path(tmp) / "tiny-vlm")
        lengths = row_lengths(Path(tmp) / "rows", Path(tmp), args.length_rows, args.steps, tokenizer)

    baseline_eps = args.episodes / (sum(baseline_s) / len(baseline_s))
    print(f"{args.episodes} episodes x {args.steps} steps ({size_mb:.1f} MiB on disk, written in {write_s:.1f} s)")
    print(f"{'format':<10} {'seconds':>8} {'episodes/s':>11} {'vs baseline':>12}")
    print(
        f"{'baseline':<10} {sum(baseline_s) / len(baseline_s):>8.2f} {baseline_eps:>11.1f} {1.0:>12.2f}"
        f"   (runs: {', '.join(f'{s:.2f}' for s in baseline_s)} s)"
    )
    figures: dict[str, float | int | str] = {
        "episodes": args.episodes,
        "steps": args.steps,
        "baseline_eps": round(baseline_eps, 1),
    }
    for fmt, seconds in results.items():
        eps = args.episodes / seconds
        print(f"{fmt:<10} {seconds:>8.2f} {eps:>11.1f} {eps / baseline_eps:>12.2f}")
        figures[f"{fmt}_eps"] = round(eps, 1)
        figures[f"{fmt}_ratio"] = round(eps / baseline_eps, 3)
    print(
        f"\nrow length, {args.length_rows} rows of {args.steps} steps (medians; tokens: {args.tokenizer or 'tiny byte-level Idefics3'})"
    )
    print(f"{'--system':<10} {'chars':>8} {'tokens':>8} {'tokens max':>11}")
    for choice, (chars, tokens) in lengths.items():
        print(f"{choice:<10} {int(statistics.median(chars)):>8} {int(statistics.median(tokens)):>8} {max(tokens):>11}")
        figures[f"row_{choice}_chars"] = int(statistics.median(chars))
        figures[f"row_{choice}_tokens"] = int(statistics.median(tokens))
    figures["tokenizer"] = args.tokenizer or "tiny-byte-level-idefics3"
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
