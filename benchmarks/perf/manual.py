"""The tool manual's size in the system prompt, core against full, and how fast an unavailable tool fails.

Run: ``.venv/bin/python benchmarks/perf/manual.py``.

Sizes: the API section and the whole system prompt for each ``api_detail`` (``core``, ``brief``,
``full``), in characters and in tokens of a real ``transformers`` tokenizer. No tokenizer can be
downloaded here, so the script builds one: a byte-level BPE (``tokenizers``, 8,000 merges' vocabulary)
trained on the project's prose (``docs/*.md`` and ``README.md``, not on the manual it measures),
loaded as a ``transformers.PreTrainedTokenizerFast``. Give ``--tokenizer DIR`` to count with a model's
own tokenizer instead. ``core_ratio`` is core/full (tokens).

Speed: in one real kernel whose learned tools have no weights (an empty Hugging Face cache, offline),
the time of a call to ``depth`` (which must fail at once with the reason) against a trivial cell in the
same kernel (the baseline), and the time the kernel side takes to check every learned tool.

Prints a table, then one JSON line.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def build_tokenizer(folder: Path) -> object:
    """A byte-level BPE trained on the project's docs, saved and loaded through ``transformers``."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    texts = [p.read_text(encoding="utf-8") for p in sorted((REPO / "docs").glob("*.md"))]
    texts.append((REPO / "README.md").read_text(encoding="utf-8"))
    tokenizer = Tokenizer(models.BPE(unk_token=None))
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=8000, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False
    )
    tokenizer.train_from_iterator(texts, trainer)
    folder.mkdir(parents=True, exist_ok=True)
    PreTrainedTokenizerFast(tokenizer_object=tokenizer).save_pretrained(folder)  # type: ignore[no-untyped-call]
    return PreTrainedTokenizerFast.from_pretrained(folder)


def sizes(tokenizer: object) -> dict[str, dict[str, int]]:
    from spatialclaw.agent import kernel_docs, prompting
    from spatialclaw.primitives.perception.availability import tool_status

    tools = {name: status.to_dict() for name, status in tool_status().items()}
    out = {}
    for detail in kernel_docs.API_DETAILS:
        api = kernel_docs.api_section(detail, tools)
        system = prompting.system_prompt(30, detail, tools)
        out[detail] = {
            "api_chars": len(api),
            "api_tokens": len(tokenizer(api)["input_ids"]),  # type: ignore[operator]
            "system_chars": len(system),
            "system_tokens": len(tokenizer(system)["input_ids"]),  # type: ignore[operator]
        }
    return out


def unavailable_call(repeats: int) -> dict[str, float]:
    from spatialclaw import Kernel

    with tempfile.TemporaryDirectory() as empty:
        os.environ.update({"HF_HOME": empty, "HF_HUB_CACHE": str(Path(empty) / "hub"), "HF_HUB_OFFLINE": "1"})
        for name in ("SPATIALCLAW_DEPTH_MODEL", "SPATIALCLAW_MODELS", "SPATIALCLAW_PERCEPTION"):
            os.environ.pop(name, None)
        with Kernel() as kernel:
            check = kernel.execute(
                "import time as _t; _s = _t.perf_counter()\n"
                "from spatialclaw.primitives.perception.availability import tool_status; tool_status()\n"
                "print(_t.perf_counter() - _s)"
            )
            baseline, failing = [], []
            for _ in range(repeats):
                started = time.perf_counter()
                kernel.execute("x = 1")
                baseline.append(time.perf_counter() - started)
                started = time.perf_counter()
                result = kernel.execute("depth(frames[0] if frames else None)")
                failing.append(time.perf_counter() - started)
                assert result.error is not None and result.error.type == "ToolUnavailableError", result.to_text()
    return {
        "tool_check_s": float(check.stdout.strip() or "nan"),
        "unavailable_call_s": statistics.median(failing),
        "baseline_cell_s": statistics.median(baseline),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokenizer", type=Path, help="a folder with a transformers tokenizer to count with")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    tokenizer: object
    if args.tokenizer:
        from transformers import AutoTokenizer

        tokenizer, tokenizer_name = AutoTokenizer.from_pretrained(args.tokenizer), str(args.tokenizer)
    else:
        with tempfile.TemporaryDirectory() as folder:
            tokenizer, tokenizer_name = build_tokenizer(Path(folder)), "byte-level BPE 8k trained on docs/ (built here)"
    measured = sizes(tokenizer)
    speed = unavailable_call(args.repeats)
    print(f"tokenizer: {tokenizer_name}")
    print(f"{'detail':<8}{'api chars':>12}{'api tokens':>12}{'system chars':>14}{'system tokens':>15}")
    for detail, row in measured.items():
        print(
            f"{detail:<8}{row['api_chars']:>12}{row['api_tokens']:>12}{row['system_chars']:>14}{row['system_tokens']:>15}"
        )
    print(f"kernel-side check of every learned tool: {speed['tool_check_s'] * 1000:.0f} ms")
    print(
        f"call of an unavailable tool: {speed['unavailable_call_s'] * 1000:.1f} ms "
        f"(a trivial cell: {speed['baseline_cell_s'] * 1000:.1f} ms)"
    )
    core, full = measured["core"], measured["full"]
    figures = {
        "tokenizer": tokenizer_name,
        **{f"{detail}_{key}": value for detail, row in measured.items() for key, value in row.items()},
        "core_ratio_tokens": round(core["api_tokens"] / full["api_tokens"], 3),
        "core_ratio_chars": round(core["api_chars"] / full["api_chars"], 3),
        "tool_check_ms": round(speed["tool_check_s"] * 1000, 1),
        "unavailable_call_ms": round(speed["unavailable_call_s"] * 1000, 2),
        "baseline_cell_ms": round(speed["baseline_cell_s"] * 1000, 2),
        "unavailable_call_ratio": round(speed["unavailable_call_s"] / speed["baseline_cell_s"], 2),
    }
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
