"""``spatialclaw demo``: the whole loop on a bundled real example, with no API key and no network.

The example is the Middlebury 2014 "motorcycle" stereo pair that ships with scikit-image (rectified,
with known focal length and baseline). The question: how far is the motorcycle from the left camera?

With a model configured (``--model SPEC`` or ``$SPATIALCLAW_MODEL``) that model drives the episode. Without
one, a SCRIPTED REPLAY drives it: pre-written cells, not a model's decisions. The cells still run for real
in the kernel (the ``stereo_depth`` primitive on the real images), print real numbers and answer from them.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

# Calibration of the down-sampled pair, from scikit-image's ``stereo_motorcycle`` documentation.
CALIBRATION = {"focal_px": 994.978, "baseline_m": 0.193001, "doffs_px": 31.086, "cx": 311.193, "cy": 254.877}
QUESTION = (
    "The two frames are a rectified stereo pair (frames[0] left, frames[1] right); the calibration is in "
    "meta['calibration'] (focal_px, baseline_m, doffs_px: depth = focal_px * baseline_m / (disparity + doffs_px)). "
    "How far is the motorcycle from the left camera, in metres (median depth over the motorcycle)?"
)

SCRIPT = [
    """I will look at both frames and the calibration first.
```python
print(len(frames), "frames of", frames[0].size, "pixels")
print("calibration:", meta["calibration"])
show(frames[0], frames[1], label=["left", "right"])
```""",
    """The pair is rectified, so `stereo_depth` (semi-global matching with a left-right consistency check)
turns it into metric depth with the calibration.
```python
cal = meta["calibration"]
stereo = stereo_depth(frames[0], frames[1], focal_px=cal["focal_px"], baseline_m=cal["baseline_m"],
                      doffs=cal["doffs_px"], cx=cal["cx"], cy=cal["cy"])
depth_m = stereo.depth
print(f"consistent pixels: {np.isfinite(depth_m).mean():.0%}")
print(f"depth percentiles 5/50/95: {np.nanpercentile(depth_m, 5):.2f} / {np.nanpercentile(depth_m, 50):.2f} / {np.nanpercentile(depth_m, 95):.2f} m")
fig, ax = plt.subplots(figsize=(6, 4))
im = ax.imshow(depth_m, cmap="turbo", vmin=np.nanpercentile(depth_m, 2), vmax=np.nanpercentile(depth_m, 98))
fig.colorbar(im, label="depth (m)")
ax.set_title("stereo depth of the left frame")
plt.show()
```""",
    """The motorcycle fills the centre of the frame. I take the median depth over a central box and draw
the box to check that it covers the motorcycle.
```python
h, w = depth_m.shape
box = (int(w * 0.25), int(h * 0.3), int(w * 0.75), int(h * 0.8))
region = depth_m[box[1]:box[3], box[0]:box[2]]
motorcycle_m = float(np.nanmedian(region))
print(f"box {box} px: median depth {motorcycle_m:.2f} m, spread (IQR) "
      f"{np.nanpercentile(region, 25):.2f}-{np.nanpercentile(region, 75):.2f} m, {np.isfinite(region).mean():.0%} measured")
show(draw(frames[0], boxes={"measured region": box}), label="measured region")
```""",
    """The box covers the motorcycle and the depths in it are consistent, so I answer with the median.
```python
answer(round(motorcycle_m, 2))
```""",
]


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from spatialclaw.commands.run import add_agent_options

    parser = subparsers.add_parser(
        "demo",
        help="run the full loop on a bundled real example (no API key, no network needed)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--model",
        default=os.environ.get("SPATIALCLAW_MODEL"),
        help="model spec (default: $SPATIALCLAW_MODEL; without one, a scripted replay runs)",
    )
    parser.add_argument("--out", type=Path, help="episode directory (default: a new temporary folder)")
    add_agent_options(parser)
    parser.set_defaults(handler=demo)


def write_example(directory: Path) -> list[Path]:
    """Save the scikit-image stereo pair as PNG files; returns [left, right]."""
    import skimage.data
    from PIL import Image

    directory.mkdir(parents=True, exist_ok=True)
    left, right, _ = skimage.data.stereo_motorcycle()  # type: ignore[no-untyped-call]
    paths = [directory / "motorcycle_left.png", directory / "motorcycle_right.png"]
    for array, path in zip((left, right), paths, strict=True):
        Image.fromarray(array).save(path)
    return paths


def demo_task(directory: Path) -> Any:
    from spatialclaw.task import FrameSpec, Task

    paths = write_example(directory)
    return Task(
        QUESTION,
        inputs=[FrameSpec.images(paths)],
        answer_type="number",
        task_id="demo-motorcycle",
        meta={"calibration": CALIBRATION, "source": "skimage.data.stereo_motorcycle (Middlebury 2014)"},
    )


def demo(args: argparse.Namespace) -> int:
    from spatialclaw.commands.run import run_episode
    from spatialclaw.models import ModelError, load_model
    from spatialclaw.models.scripted import ScriptedModel
    from spatialclaw.primitives.perception.models import MissingWeightsError

    out = args.out or Path(tempfile.mkdtemp(prefix="spatialclaw-demo-")) / "episode"
    if (out / "episode.jsonl").exists():
        print(f"spatialclaw demo: {out} already holds an episode; give a new --out directory", file=sys.stderr)
        return 2
    task = demo_task(out.parent / (out.name + "-inputs"))
    if args.model:
        try:
            model: Any = load_model(args.model)
        except (ValueError, ModelError, MissingWeightsError) as error:
            print(f"spatialclaw demo: {error}", file=sys.stderr)
            return 2
        banner = f"demo with model {args.model}"
    else:
        model = ScriptedModel(SCRIPT, name="demo-script")
        banner = (
            "No model configured (pass --model SPEC or set SPATIALCLAW_MODEL): this is a SCRIPTED REPLAY.\n"
            "The cells below were written in advance, not chosen by a model; they run for real in the kernel\n"
            "on the bundled stereo pair and the answer comes from what they compute."
        )
    print(banner, file=sys.stderr if args.quiet else sys.stdout)  # never hidden: says whether it is scripted
    if not args.quiet:
        print(f"question: {task.question}")
    return run_episode(model, task, args, out)
