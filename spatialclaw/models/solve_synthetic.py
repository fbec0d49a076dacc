"""``scripted:solve-synthetic``: a keyless policy that measures the ``synthetic`` benchmark's scenes with the
kernel's tools and answers from what they print.

It reads the question the way a model would (which boxes, which category) and writes real cells:

- step 1 defines ``box_on_floor(frame, colour)`` (the box's ``find_color`` mask seen by the camera turned
  level, its bottom edges intersected with the floor, its height from its vertical edges, its footprint by
  ``geom.oriented_box``) and prints the measurement as ``result: VALUE``; direction questions go through
  ``scene.perspective``, counts are ``find_color`` regions, camera motion is how the boxes' footprints
  shift between the frames;
- step 2 answers ``answer(VALUE)`` with the value the kernel printed (never with anything it did not print).

The camera it assumes is the one the synthetic benchmark documents for every scene (fx = fy = 500 px at
640x480, 1.5 m above the floor, pitched 15 degrees down: ``spatialclaw.benchmarks.synthetic``); the cells
state it. Questions it does not recognise, and interfaces without cells (``tool-calls``, ``no-tools``), get
a :class:`~spatialclaw.models.base.ModelError` saying so. On ``--limit 20`` it answers more than half of the
tasks right; occluded boxes are where it fails.
"""

from __future__ import annotations

import re
from typing import Any

from spatialclaw.chat import Message, ModelReply, TextPart
from spatialclaw.models.base import Model, ModelError

__all__ = ["SolveSynthetic", "measurement_cell"]

_COLOUR = r"(red|green|blue|yellow|purple|orange|cyan)"

#: The kernel code every measuring cell starts with (the benchmark's documented camera, then the measurement).
HELPERS = '''import numpy as np

# the synthetic benchmark's documented camera: fx = fy = 500 px, principal point (320, 240), 1.5 m above the
# floor, pitched 15 degrees down
CAMERA = {"K": [[500.0, 0.0, 320.0], [0.0, 500.0, 240.0], [0.0, 0.0, 1.0]], "height_m": 1.5, "pitch_deg": -15.0}


def level_pixels(xs, ys, camera=CAMERA):
    """Pixels as the same camera turned level (pitch 0) sees them: vertical edges become image columns."""
    K = np.asarray(camera["K"])
    t = np.radians(-camera["pitch_deg"])
    rot = np.array([[1, 0, 0], [0, np.cos(t), np.sin(t)], [0, -np.sin(t), np.cos(t)]])
    rays = rot @ np.linalg.inv(K) @ np.stack([xs, ys, np.ones(len(xs))])
    return K[0, 0] * rays[0] / rays[2] + K[0, 2], K[1, 1] * rays[1] / rays[2] + K[1, 2]


def box_on_floor(frame, colour, camera=CAMERA):
    """The box of ``colour`` on the floor, from its find_color mask: footprint centre (x right, y ahead of
    the camera) and size, metres, by geom.oriented_box over its bottom edges (on the floor) and top edges
    (at the height its vertical edges give); columns another box hides are left out."""
    blobs = find_color(frame, colour)
    if not blobs:
        return None
    H, W = blobs[0].mask.shape
    inside = [b for b in blobs if b.box[0] > 0 and b.box[1] > 0 and b.box[2] < W and b.box[3] < H]
    blob = (inside or blobs)[0]
    rgb = np.asarray(frame, dtype=int)
    other = (rgb.max(axis=2) - rgb.min(axis=2) > 50) & ~blob.mask  # another coloured box
    ys, xs = np.nonzero(blob.mask)
    below, above = other[np.minimum(ys + 2, H - 1), xs], other[np.maximum(ys - 2, 0), xs]
    K = np.asarray(camera["K"])
    f, cx, cy, hc = K[0, 0], K[0, 2], K[1, 2], camera["height_m"]
    u, v_top = level_pixels(xs + 0.5, ys.astype(float), camera)
    v_bottom = level_pixels(xs + 0.5, ys + 1.0, camera)[1]
    cols = np.round(u).astype(int)
    order = np.unique(cols)
    low, high, low_ok, high_ok = (np.zeros(len(order)) for _ in range(4))
    for k, c in enumerate(order):
        at = np.nonzero(cols == c)[0]
        i, j = at[np.argmax(v_bottom[at])], at[np.argmin(v_top[at])]
        low[k], high[k], low_ok[k], high_ok[k] = v_bottom[i], v_top[j], not below[i], not above[j]
    low_ok, high_ok = low_ok > 0, high_ok > 0
    n = len(order)
    ends = [i for i in (0, 1, n - 2, n - 1) if 0 <= i < n and low_ok[i] and high_ok[i]]
    h = float(np.median([hc * (1 - (high[i] - cy) / (low[i] - cy)) for i in ends])) if ends else float("nan")
    floor_y = f * hc / (low - cy)
    top_y = f * (hc - h) / np.maximum(high - cy, 1e-6)
    floor = np.stack([(order - cx) * floor_y / f, floor_y, np.zeros(n)], axis=1)
    top = np.stack([(order - cx) * top_y / f, top_y, np.full(n, h)], axis=1)
    inner = np.zeros(n, bool)
    inner[2:-2] = True  # the outermost columns are partly covered pixels
    points = np.concatenate([floor[inner & low_ok], top[inner & high_ok & (high - cy > 1)]])
    box = geom.oriented_box(points) if len(points) >= 3 else None
    x0, y0, x1, y1 = blob.box
    return {
        "centre": None if box is None else [round(float(c), 3) for c in box.center[:2]],
        "height_m": round(h, 3),
        "whole": not (x0 <= 0 or y0 <= 0 or x1 >= W or y1 >= H or (~low_ok).any() or (~high_ok).any()),
    }
'''


def measurement_cell(question: str) -> str | None:
    """The cell that measures what ``question`` asks and prints ``result: VALUE``; None for a question
    that is not one of the synthetic benchmark's."""
    if match := re.search(rf"distance between the centres of the {_COLOUR} box and the {_COLOUR} box", question):
        a, b = match.groups()
        body = f"""boxes = {{c: box_on_floor(frames[0], c) for c in ({a!r}, {b!r})}}
print(boxes)
(xa, ya), (xb, yb) = boxes[{a!r}]["centre"], boxes[{b!r}]["centre"]
dz = (boxes[{a!r}]["height_m"] - boxes[{b!r}]["height_m"]) / 2
print(f"result: {{np.sqrt((xa - xb) ** 2 + (ya - yb) ** 2 + dz ** 2):.2f}}")"""
    elif match := re.search(rf"How tall is the {_COLOUR} box", question):
        body = f"""box = box_on_floor(frames[0], {match.group(1)!r})
print(box)
print(f"result: {{100 * box['height_m']:.0f}}")"""
    elif match := re.search(
        rf"standing at the {_COLOUR} box and facing the {_COLOUR} box\. Where is the {_COLOUR} box", question
    ):
        at, facing, target = match.groups()
        body = f"""where = {{c: box_on_floor(frames[0], c)["centre"] for c in ({at!r}, {facing!r}, {target!r})}}
print(where)
view = scene.perspective(where[{target!r}], standing_at=where[{at!r}], facing=where[{facing!r}])
print(view.text)
print("result:", ("front" if view.depth == "in front" else "back") + "-" + view.side)"""
    elif match := re.search(rf"How many {_COLOUR} boxes", question):
        body = f"""regions = find_color(frames[0], {match.group(1)!r}, min_area=150)
boxes = [r for r in regions if r.box[1] > 0]  # a region touching the top edge is the sky
print(boxes)
print(f"result: {{len(boxes)}}")"""
    elif re.search(r"two frames were taken by the same camera", question):
        body = """shifts = []
for c in ("red", "green", "blue", "yellow", "purple", "orange", "cyan"):
    before, after = box_on_floor(frames[0], c), box_on_floor(frames[1], c)
    if before and after and before["centre"] and after["centre"]:
        shift = np.subtract(before["centre"], after["centre"])  # the boxes stay; the camera moved
        shifts.append((before["whole"] and after["whole"], c, shift))
        print(c, "camera moved by", shift.round(3), "" if shifts[-1][0] else "(box cut off or hidden)")
kept = [s for whole, _, s in shifts if whole] or [s for _, _, s in shifts]
move = np.median(kept, axis=0)
right, ahead = move
print(f"camera moved {np.hypot(right, ahead):.2f} m: {right:+.2f} m to the right, {ahead:+.2f} m ahead")"""
        if "How far" in question:
            body += '\nprint(f"result: {np.hypot(right, ahead):.2f}")'
        else:
            body += """
way = ("right" if right > 0 else "left") if abs(right) > abs(ahead) else ("forward" if ahead > 0 else "backward")
print("result:", way)"""
    else:
        return None
    return HELPERS + "\n\n" + body


def _text(message: Message) -> str:
    return "\n".join(p.text for p in message.content if isinstance(p, TextPart))


def _value(printed: str, prompt: str) -> str | float:
    """The answer for the printed ``result``: the letter of the prompt's option it names, else the number
    it is, else the text."""
    for letter, option in re.findall(r"^\(?([A-Z])[.)]\s*(.+?)\s*$", prompt, flags=re.MULTILINE):
        if option.strip().lower() == printed.strip().lower():
            return str(letter)
    try:
        return float(printed)
    except ValueError:
        return printed


class SolveSynthetic(Model):
    """The ``scripted:solve-synthetic`` policy (see the module docstring); stateless, so one instance may
    serve concurrent episodes."""

    def __init__(self) -> None:
        self.name = "solve-synthetic"
        self.spec = "scripted:solve-synthetic"

    def chat(self, messages: list[Message], *, purpose: str = "step", **params: Any) -> ModelReply:
        users = [m for m in messages if m.role == "user"]
        if params.get("tools") or not users or messages[0].role != "system":
            raise ModelError(f"{self.spec} writes cells: run it with --interface code (the default) or single-pass")
        prompt = _text(users[0])
        printed = re.findall(r"^result:\s*(.+?)\s*$", "\n".join(_text(m) for m in users[1:]), flags=re.MULTILINE)
        if purpose == "plan":
            return self._reply("Plan: measure the boxes with find_color and the floor geometry, then answer.")
        if printed:
            value = _value(printed[-1], prompt)
            if purpose != "step":
                return self._reply(f"The measurement printed {printed[-1]}.\nANSWER: {value}")
            return self._reply(f"The kernel measured {printed[-1]}.\n```python\nanswer({value!r})\n```")
        cell = measurement_cell(prompt)
        if cell is None:
            raise ModelError(f"{self.spec} answers the synthetic benchmark's questions only; this is not one")
        if purpose != "step":
            raise ModelError(f"{self.spec} measured nothing to answer from")
        return self._reply(f"I measure the boxes with the kernel's tools.\n```python\n{cell}\n```")

    def _reply(self, text: str) -> ModelReply:
        return ModelReply(text=text, cost_usd=0.0, raw={"scripted": self.spec})
