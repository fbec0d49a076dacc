"""``spatialclaw tiny-models DIR``: write the tiny random models the training recipe runs on offline."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "tiny-models",
        help="write a tiny random VLM and tool-calling LM (with tokenizers) for trying the training recipe offline",
        description="Write DIR/vlm (a tiny SmolVLM-architecture VLM, for MODEL) and DIR/policy (a tiny "
        "Qwen2-architecture tool-calling LM, for RL_MODEL), randomly initialised, with tokenizers and chat "
        "templates, saved with save_pretrained. They load like hub checkpoints but output random text: "
        "they let docs/trajectories.md's training recipe run on a CPU without the hub. Needs the perception "
        "extra and trl.",
    )
    parser.add_argument("directory", metavar="DIR", type=Path, help="folder to write vlm/ and policy/ into")
    parser.add_argument("--seed", type=int, default=0, help="random seed of the weights (default 0)")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from spatialclaw.testing.tiny_models import write_recipe_models

    directory: Path = args.directory
    for name in ("vlm", "policy"):
        if (directory / name).exists():
            print(f"spatialclaw tiny-models: {directory / name} already exists; choose another DIR", file=sys.stderr)
            return 2
    try:
        import trl  # noqa: F401
    except ImportError:
        print(
            "spatialclaw tiny-models: the chat templates come from TRL, which is not installed: pip install trl",
            file=sys.stderr,
        )
        return 2
    vlm, policy = write_recipe_models(directory, seed=args.seed)
    print(f"wrote {vlm} and {policy}; for the training recipe in docs/trajectories.md:")
    print(f"export MODEL={vlm.resolve()} RL_MODEL={policy.resolve()} HF_HUB_OFFLINE=1")
    return 0
