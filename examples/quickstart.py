"""The first hour in one script: a kernel cell, an agent episode, a small benchmark, a report and
training rows, all with the keyless ``scripted:look-and-answer`` model, no network and no data beside
the clone (the images come from ``skimage.data``).

Run from the repository root: ``.venv/bin/python examples/quickstart.py [OUT_DIR]`` (default: a new
temporary folder). Swap ``MODEL`` for a real spec (``openai:gpt-4.1``, ``hf:LOCAL_FOLDER``, ...) and the
same steps measure that model.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import skimage.data
from PIL import Image

from spatialclaw import Agent, FrameSpec, Kernel, Task
from spatialclaw.export.runner import export_episodes
from spatialclaw.models import load_model
from spatialclaw.runner import RunConfig, run_benchmark
from spatialclaw.runner.report import write_report

MODEL = "scripted:look-and-answer"


def main(out: Path) -> None:
    # 1. two real photographs (a rectified stereo pair) as the frames
    left, right, _ = skimage.data.stereo_motorcycle()
    paths = [out / "left.png", out / "right.png"]
    for array, path in zip((left, right), paths, strict=True):
        Image.fromarray(array).save(path)

    # 2. the kernel the model writes cells for: frames, primitives, images back as observations
    with Kernel(frames=[str(p) for p in paths], meta={"question": "Is there anything red?"}) as kernel:
        result = kernel.execute("print(len(frames), frames[0].size)\nprint(find_color(frames[0], 'red')[:1])")
        print("kernel:", result.to_text(400).strip())

    # 3. one agent episode: the model looks, runs a tool, answers; the trajectory lands in out/episode
    task = Task("Is there anything red? (yes/no)", inputs=[FrameSpec.images(paths)], answer_type="yes_no")
    with Agent(load_model(MODEL)) as agent:
        episode = agent.run(task, out / "episode")
    print(f"agent: {episode.status}, answer {episode.answer!r} after {episode.steps} step(s)")

    # 4. a small benchmark run (synthetic: rendered scenes with exact answers), its report, SFT rows
    config = RunConfig(benchmark="synthetic", model=MODEL, out=out / "bench", limit=4, workers=1, progress=False)
    run_benchmark(config)
    reports = write_report([config.out], out / "report")
    print("report:", ", ".join(str(path) for path in reports.values()))
    exported = export_episodes("openai", [config.out], out / "sft.jsonl")
    print("export:", exported.summary())
    print(f"everything is under {out}; open it with: spatialclaw view {config.out}")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tempfile.mkdtemp(prefix="spatialclaw-quickstart-")))
