"""Scene readouts across the camera tilt of one photo (part of ``scene``).

Objects located on the floor of one photo (``add_bearing(on_floor=True)``, one bearing each, one camera)
move together when that camera's pitch changes, and their directions from each other need no metric
scale: the camera's height only scales the layout. So a readout that uses them (``perspective``,
``relation``, ``compass``) is also read at every plausible pitch (``geom``'s pitch sweep: the image's
estimate and any rival pitch it also supports, each +- 2.5 sigma, weighted by that evidence, keeping only
the pitches that leave every one of those objects on the floor), and its text says whether the answer
holds across them or depends on the tilt ("the answer depends on the camera tilt: front-left at -1 deg,
back-left at +7 deg"), with each answer's share of the pitch evidence.

Pitch in degrees (> 0 tilts up); positions metres in the scene's world (+Z up); headings degrees clockwise
from +Y seen from above.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from spatialclaw.primitives.geometry import geom
from spatialclaw.primitives.geometry.floor_tilt import PitchSweep, floor_sweep, pitch_sweep
from spatialclaw.primitives.scene.objects import SceneObject

__all__ = [
    "MINOR_SHARE",
    "TiltWorlds",
    "answer_across_tilts",
    "common_nominal",
    "floor_of",
    "relation_across_tilts",
    "tilt_worlds",
    "unknown_floor_distances",
]

MINOR_SHARE = 0.05
"""An answer held over less of the pitch evidence than this is not named as a rival answer."""


def floor_of(instance: SceneObject) -> Any:
    """The ``FloorPoint`` an object was located from (its single ``on_floor`` bearing), or None."""
    bearings = instance.bearings
    return bearings[0].floor if len(bearings) == 1 and bearings[0].floor is not None else None


@dataclass(frozen=True)
class TiltWorlds:
    """The floor objects ``names`` of one photo at every pitch of ``sweep`` (``positions[:, k]`` is
    ``names[k]``'s world position at each pitch, metres)."""

    sweep: PitchSweep
    names: tuple[str, ...]

    def instances_at(self, i: int, instances: dict[str, SceneObject]) -> dict[str, SceneObject]:
        """The scene's objects with the floor objects moved to where pitch ``i`` of the sweep puts them."""
        moved = dict(instances)
        for k, name in enumerate(self.names):
            moved[name] = replace(instances[name], points=self.sweep.positions[i, k][None], covariance=np.zeros((3, 3)))
        return moved

    def __len__(self) -> int:
        return len(self.sweep.pitches_deg)


def tilt_worlds(instances: dict[str, SceneObject], names: Sequence[Any]) -> TiltWorlds | None:
    """The ``TiltWorlds`` of the floor objects among ``names`` (other names, camera indices and points stay
    where they are); None when none of them was located on a floor, they come from different photos or
    assumptions, or the camera's pitch is known exactly."""
    wanted = tuple(dict.fromkeys(n for n in names if isinstance(n, str) and n in instances))
    floors = [(n, floor_of(instances[n])) for n in wanted]
    floors = [(n, f) for n, f in floors if f is not None]
    if not floors or not all(floors[0][1].camera.same_as(f.camera) for _, f in floors[1:]):
        return None
    sweep = pitch_sweep([f for _, f in floors])
    return None if sweep is None else TiltWorlds(sweep, tuple(n for n, _ in floors))


def common_nominal(floors: Sequence[Any]) -> np.ndarray | None:
    """(N, 3) positions of floor points of one photo at ONE pitch when their own nominal pitches differ
    (some were placed at the rival pitch): the image's estimate when it keeps all of them on the floor, else
    the rival, else the sweep's heaviest pitch; None when they already agree or no pitch fits."""
    if len({round(float(f.pitch_deg), 6) for f in floors}) < 2:
        return None
    sweep = pitch_sweep(floors)
    if sweep is None:
        return None
    fitting = [p for p, _ in sweep.candidates if np.isfinite(floor_sweep(floors, [p])).all()]
    pitch = fitting[0] if fitting else float(sweep.pitches_deg[int(np.argmax(sweep.weights))])
    return np.asarray(floor_sweep(floors, [pitch])[0])


def _shares(words: list[str], weights: np.ndarray) -> dict[str, float]:
    out: dict[str, float] = {}
    for word, w in zip(words, weights, strict=True):
        out[word] = out.get(word, 0.0) + float(w)
    return dict(sorted(out.items(), key=lambda item: -item[1]))


def _where(word: str, words: list[str], sweep: PitchSweep) -> str:
    """ "front-left at -1 deg (-13.5 to +4.0)": a candidate pitch giving that word, else the heaviest one."""
    at = [i for i, w in enumerate(words) if w == word]
    pitches = sweep.pitches_deg[at]
    named = [p for p, _ in sweep.candidates if pitches.min() - 1e-6 <= p <= pitches.max() + 1e-6]
    named = [p for p in named if words[int(np.argmin(np.abs(sweep.pitches_deg - p)))] == word]
    pitch = named[0] if named else float(pitches[int(np.argmax(sweep.weights[at]))])
    return f"{word} at {pitch:+.1f} deg ({pitches.min():+.1f} to {pitches.max():+.1f})"


def _ruled_out(sweep: PitchSweep) -> str:
    """ "; at the rival pitch +11.0 deg the image also fits, a floor point would be in the sky" (or at the
    estimate) for each candidate pitch ruled out; "" when none is."""
    what = {"the rival": "the rival pitch {:+.1f} deg the image also fits", "the estimate": "the estimate {:+.1f} deg"}
    out = [what[label].format(p) for p, label in sweep.candidates if label in sweep.ruled_out]
    return "".join(f"; at {w}, a floor point would be in the sky" for w in out)


def answer_across_tilts(
    worlds: TiltWorlds,
    word_at: Callable[[int], str],
    coarse_at: Callable[[int], str] | None = None,
    always: bool = False,
) -> str:
    """The note on an answer read at every pitch of ``worlds`` (``word_at(i)``: the answer's word at pitch
    i; ``coarse_at(i)``: its coarser answer, e.g. "left and in front", or None). An answer that holds over
    less than ``MINOR_SHARE`` of the pitch evidence does not count. When the (coarse) answer changes:
    "AMBIGUOUS: the answer depends on the camera tilt: ..." naming where each holds and its share of the
    pitch evidence; when only the finer word changes, that, and the coarse answer that holds; "" when one
    answer holds, unless ``always`` (then "front-left at every plausible camera pitch (...)")."""
    sweep = worlds.sweep
    n = len(worlds)
    words = [word_at(i) for i in range(n)]
    coarse = [coarse_at(i) for i in range(n)] if coarse_at is not None else words
    span = f"every plausible camera pitch ({sweep.span}, weighted by the image's tilt evidence{_ruled_out(sweep)})"

    def major(these: list[str]) -> tuple[list[str], str, str]:
        shares = _shares(these, sweep.weights)
        kept = [w for w, share in shares.items() if share >= MINOR_SHARE]
        listed = ", ".join(_where(w, these, sweep) for w in kept)
        return kept, listed, ", ".join(f"P({w}) = {shares[w]:.2f}" for w in kept)

    fine, fine_listed, fine_odds = major(words)
    broad, broad_listed, broad_odds = major(coarse)
    if len(broad) > 1:
        finer = f" In eight-way words: {fine_listed}." if coarse_at is not None else ""
        return f"AMBIGUOUS: the answer depends on the camera tilt: {broad_listed}; over the plausible pitches {broad_odds}.{finer}"
    if len(fine) > 1:
        return (
            f"Its exact direction depends on the camera tilt ({fine_listed}; over the plausible pitches "
            f"{fine_odds}); {broad[0]} at {span}."
        )
    if not always:
        return ""
    return f"{fine[0]}{f' ({broad[0]})' if coarse_at is not None else ''} at {span}."


def relation_across_tilts(relation: Any, instances: dict[str, SceneObject], pose: np.ndarray) -> Any:
    """A ``Relation`` of two objects with its ``tilt_note`` (its left/right and front/behind words at every
    plausible pitch of their photo, seen from ``pose``) and a ``distance_note`` naming floor points whose
    distance is unknown."""
    a, b = relation.a, relation.b
    unknown = unknown_floor_distances(instances, (a, b))
    relation = replace(relation, distance_note="; ".join(n for n in (relation.distance_note, unknown) if n))
    worlds = tilt_worlds(instances, (a, b))
    if worlds is None:
        return relation

    def words(i: int) -> str:
        moved = worlds.instances_at(i, instances)
        at = [moved[n].center if relation.position == "box" else moved[n].centroid for n in (a, b)]
        right, forward, _ = geom.observer_axes(pose) @ (at[0] - at[1])
        return f"{'right of' if right > 0 else 'left of'} and {'behind' if forward > 0 else 'in front of'}"

    rival = any(label == "the rival" for _, label in worlds.sweep.candidates)
    return replace(relation, tilt_note=answer_across_tilts(worlds, words, always=rival or bool(relation.distance_note)))


def unknown_floor_distances(instances: dict[str, SceneObject], names: Sequence[Any]) -> str:
    """ "the floor distance of the red (8.6 ± 13.6 m from the camera) is unknown" for the named objects
    located on the floor whose distance is unknown (its sigma exceeds it); "" when none is."""
    out = []
    for name in dict.fromkeys(n for n in names if isinstance(n, str) and n in instances):
        floor = floor_of(instances[name])
        if floor is not None and not floor.distance_known:
            out.append(f"the {name} ({floor.distance_m:.1f} ± {floor.distance_sigma_m:.1f} m from the camera)")
    if not out:
        return ""
    listed = out[0] if len(out) == 1 else ", ".join(out[:-1]) + " and " + out[-1]
    return f"the floor distance{'s' if len(out) > 1 else ''} of {listed} {'are' if len(out) > 1 else 'is'} unknown"
