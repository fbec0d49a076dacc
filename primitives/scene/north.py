"""Scene methods for north and compass words: ``set_north``, ``compass``, ``wall_facing``, and the compass and
floor-plan notes of ``perspective``/``relation``/``describe`` (a mixin of ``Scene``, through ``ViewLinking``).

Conventions (design world, metres, +Z up): headings are degrees clockwise seen from above from world +Y;
compass bearings are degrees clockwise from north (0 = N, 90 = E). North is kept as it was given (a view's
facing, or the direction between two things), so that when several floor plans fit the views
(``scene.layout.plans``) each plan reads north from its own cameras and objects, and every readout is asked
of every plan and mixed by the plans' weights: its ± and probabilities then cover them all, and its note
names the ambiguity when the plans disagree.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from spatialclaw.primitives.scene.compass import (
    CompassReading,
    compass_bearing,
    compass_reading,
    compass_word,
    mix_readings,
    parse_direction,
)
from spatialclaw.primitives.scene.layout_problem import ViewSpec
from spatialclaw.primitives.scene.objects import SceneObject, frame_index
from spatialclaw.primitives.scene.perspective import Perspective, mix_perspectives
from spatialclaw.primitives.scene.places import perspective_across_tilts, perspective_of, place
from spatialclaw.primitives.scene.plans import PlanWorld, heading_of_pose, plan_worlds, resolve_hint
from spatialclaw.primitives.scene.readouts import Readout, Relation
from spatialclaw.primitives.scene.tilts import answer_across_tilts, tilt_worlds, unknown_floor_distances
from spatialclaw.primitives.scene.viewlinks import LayoutSolution

__all__ = ["NorthKeeping"]

WALL_SAMPLES = 2000  # pixel-noise samples for a wall's direction


class NorthKeeping:
    """The compass methods of ``Scene`` (see the module docstring for the conventions)."""

    instances: dict[str, SceneObject]
    cameras: dict[int, np.ndarray]
    views: dict[int, ViewSpec]
    layout: LayoutSolution | None
    north_deg: float | None
    north_from: tuple[Any, Any, float] | None  # (view, None, bearing) or (standing_at, facing, bearing)

    # ---- worlds: the scene, or every floor plan that fits ----------------------------------------------
    def _worlds(self, names: tuple[Any, ...]) -> list[PlanWorld]:
        worlds = plan_worlds(self.layout, self.views, self.instances, self.cameras, names)
        return worlds or [PlanWorld(1.0, self.instances, self.cameras)]

    def _sigmas(self, k: int) -> dict[int, float]:
        """Heading sigmas of the layout's plan ``k`` (all plans mixed for the only one)."""
        if self.layout is None:
            return {}
        plans = self.layout.plans
        return (plans[k] if len(plans) > 1 else self.layout).heading_sigmas_deg

    def _north_in(self, world: PlanWorld) -> float:
        """North (world heading, degrees) in ``world``, read as it was given."""
        assert self.north_from is not None
        first, facing, bearing = self.north_from
        if facing is None:
            return float((heading_of_pose(world.cameras[first]) - bearing) % 360.0)
        start = place(world.instances, world.cameras, first, "standing_at")[1]
        end = place(world.instances, world.cameras, facing, "facing")[1]
        return float((np.degrees(np.arctan2(*(end - start)[:2])) - bearing) % 360.0)

    def set_north(
        self, direction: str | float = "north", view: Any = None, facing: Any = None, standing_at: Any = None
    ) -> Readout:
        """Say where north is; afterwards readouts (perspective, relation, describe, compass) add compass words.

        Either ``view=k``: camera k looks ``direction`` ("facing the camera is north": someone facing the
        camera looks north, so the camera looks south: ``set_north(view=k, direction="south")``); or
        ``facing=X``: the direction from ``standing_at`` (default: the first view or camera) toward X (object
        name, camera index or world point) is ``direction``. Note an object that *faces* north (its front
        points north) is looked at facing south: ``set_north(facing="fireplace", direction="south")``.
        direction: "north", "NE", "south-west", ... or compass degrees."""
        bearing = parse_direction(direction)
        if (view is None) == (facing is None):
            raise ValueError("pass exactly one of view=<frame index> or facing=<object, camera or point>")
        if view is not None:
            k = frame_index(view)
            if k not in self.cameras:
                raise ValueError(f"no camera for frame {k}; registered: {sorted(self.cameras)}")
            self.north_from = (k, None, bearing)
        else:
            origin = standing_at if standing_at is not None else next(iter(self.views), min(self.cameras, default=None))
            if origin is None:
                raise ValueError("pass standing_at=<object, camera index or point> (no view or camera registered)")
            self.north_from = (origin, facing, bearing)
        self.north_deg = self._north_in(PlanWorld(1.0, self.instances, self.cameras))
        return Readout(f"North set: world heading {self.north_deg:.0f}° (clockwise from +Y) is north.")

    def compass(self, subject: Any, reference: Any = None, seed: int = 0) -> CompassReading:
        """Compass direction of ``subject`` from ``reference`` (names, camera frame indices or world points),
        or with ``reference=None`` and a camera index, the way that camera faces. Needs ``set_north``.
        When several floor plans fit the linked views, the ± and P cover them all and the text says so."""
        if self.north_deg is None:
            raise ValueError('north is not set: call scene.set_north(view=k, direction="north") or facing=...')
        if reference is None and not isinstance(subject, (int, np.integer)):
            raise ValueError("give reference= (what the subject's direction is read from), or a camera index")
        extra = self.north_from[:2] if self.north_from is not None else ()
        worlds = self._worlds((subject, reference, *extra))
        readings = []
        for k, world in enumerate(worlds):
            north = self._north_in(world)
            if reference is None:
                h = np.radians(heading_of_pose(world.cameras[int(subject)]))
                sigma = self._sigmas(k).get(int(subject), 0.0)
                reading = compass_reading(
                    f"camera {int(subject)}", "", np.array([np.sin(h), np.cos(h)]), np.zeros((2, 2)), north, sigma, seed
                )
            else:
                who, at, cov_a, _ = place(world.instances, world.cameras, subject, "subject")
                of, base, cov_b, _ = place(world.instances, world.cameras, reference, "reference")
                reading = compass_reading(who, of, (at - base)[:2], (cov_a + cov_b)[:2, :2], north, 0.0, seed)
            readings.append(reading)
        if len(readings) == 1:
            return self._compass_across_tilts(readings[0], subject, reference, extra)
        assert self.layout is not None
        return mix_readings(readings, [w.weight for w in worlds], resolve_hint(self.layout))

    def _compass_across_tilts(
        self, reading: CompassReading, subject: Any, reference: Any, extra: tuple[Any, ...]
    ) -> CompassReading:
        """``reading`` with a note on objects on the floor of one photo: its word at every plausible camera
        pitch (and north with it, when north was set from such objects), and floor distances unknown."""
        unknown = unknown_floor_distances(self.instances, (subject, reference))
        worlds = tilt_worlds(self.instances, (subject, reference, *extra)) if reference is not None else None
        notes = [reading.note, f"Distance unknown: {unknown}." if unknown else ""]
        if worlds is not None:

            def word(i: int) -> str:
                moved = worlds.instances_at(i, self.instances)
                at = place(moved, self.cameras, subject, "subject")[1] - place(moved, self.cameras, reference, "")[1]
                north = self._north_in(PlanWorld(1.0, moved, self.cameras))
                return compass_word(compass_bearing(float(np.degrees(np.arctan2(at[0], at[1]))), north))

            rival = any(label == "the rival" for _, label in worlds.sweep.candidates)
            notes.append(answer_across_tilts(worlds, word, always=rival or bool(unknown)))
        return replace(reading, note=" ".join(n for n in notes if n))

    def wall_facing(
        self, view: Any, base: Any = None, against: Any = None, pixel_sigma_px: float = 2.0, seed: int = 0
    ) -> CompassReading:
        """Which compass direction a wall faces outward (looking out through it; a window in it "faces" that
        way, and the wall is on that side of the room). Needs ``set_north`` and a placed view.

        Args:
            view: the Frame or frame index of a placed view (``link_views``) that shows the wall.
            base: two pixels ((x1, y1), (x2, y2)) along one horizontal line of the wall in that view: where it
                meets the floor (both below the horizon) or the ceiling (both above), a metre or more apart.
                The wall's direction on the ground follows from the view's heading and pitch alone, with no
                distance or camera height. Outward = away from the camera.
            against: instead of ``base``, a placed object in or against the wall (a window, a door, a
                fireplace): outward = from ``view``'s camera toward it (the wall assumed square to that
                line; the text says so). Prefer ``base`` when the wall's base is visible.
            pixel_sigma_px: uncertainty of each base pixel, pixels.
        The result's ``direction`` is the outward compass word; its text also names the inside face."""
        if self.north_deg is None:
            raise ValueError('north is not set: call scene.set_north(view=k, direction="north") or facing=...')
        k = frame_index(view)
        if k not in self.views or k not in self.cameras:
            raise ValueError(f"view {k} is not placed; placed views: {sorted(set(self.views) & set(self.cameras))}")
        if (base is None) == (against is None):
            raise ValueError("pass base=((x1, y1), (x2, y2)) (pixels along the wall's base) or against=<object name>")
        extra = self.north_from[:2] if self.north_from is not None else ()
        worlds = self._worlds((against, *extra))
        readings = []
        for i, world in enumerate(worlds):
            north, pose = self._north_in(world), world.cameras[k]
            if base is not None:
                normal, sigma = _wall_normal(base, self.views[k].K, pose, pixel_sigma_px, seed)
                subject = f"the wall along view {k}'s pixels {_pixels(base)}"
                sigma = float(np.hypot(sigma, self._sigmas(i).get(k, 0.0)))
                reading = compass_reading(subject, "", normal, np.zeros((2, 2)), north, sigma, seed)
            else:
                _, at, cov, _ = place(world.instances, world.cameras, against, "against")
                offset = (at - pose[:3, 3])[:2]
                reading = compass_reading(f"the wall of the {against}", "", offset, cov[:2, :2], north, 0.0, seed)
                reading = replace(reading, distance_m=None)
            readings.append(reading)
        reading = readings[0] if len(readings) == 1 else mix_readings(readings, [w.weight for w in worlds], "")
        inside = compass_word((reading.bearing_deg + 180.0) % 360.0)
        note = f"Outward (looking out through it); its inside face faces {inside}."
        if against is not None:
            note += f" Assumed square to the line from camera {k} to the {against}; base= pixels measure the wall."
        return replace(reading, note=f"{note} {reading.note}".strip())

    # ---- notes of the other readouts ---------------------------------------------------------------------
    def _compass_perspective(self, p: Perspective, target: Any, standing_at: Any, facing: Any) -> Perspective:
        worlds = self._worlds((target, standing_at, facing))
        if len(worlds) > 1:
            assert self.layout is not None
            readings = [perspective_of(w.instances, w.cameras, target, standing_at, facing, 0) for w in worlds]
            p = mix_perspectives(readings, [w.weight for w in worlds], resolve_hint(self.layout))
        else:  # objects on the floor of one photo: the answer at every camera pitch the image allows
            p = perspective_across_tilts(p, self.instances, self.cameras, target, standing_at, facing)
        if self.north_deg is None:
            return p
        where = place(self.instances, self.cameras, standing_at, "standing_at")
        ahead = where[3] if facing is None else place(self.instances, self.cameras, facing, "facing")[1] - where[1]
        assert ahead is not None  # perspective_of already refused a point viewer without a facing
        facing_word = compass_bearing(float(np.degrees(np.arctan2(ahead[0], ahead[1]))), self.north_deg)
        c = self.compass(target, standing_at)
        note = f"Facing {compass_word(facing_word)} ({facing_word:.0f}°); {p.target} lies {c.direction} "
        return replace(p, compass_note=note + f"({c.bearing_deg:.0f}° ± {c.sigma_deg:.0f}°) of the viewer.")

    def _compass_relation(self, r: Relation) -> Relation:
        note = ""
        if self.layout is not None and self.layout.ambiguous and {r.a, r.b} & set(self.layout.landmarks):
            note = (
                f"AMBIGUOUS: {len(self.layout.plans)} floor plans fit the linked views about as well; the ± above "
                f"cover them all. {resolve_hint(self.layout)}"
            )
        if self.north_deg is not None:
            c = self.compass(r.a, r.b)
            word = (
                f"Compass: the {r.a} is {c.direction} ({c.bearing_deg:.0f}° ± {c.sigma_deg:.0f}°, "
                f"P = {c.p_direction:.2f}) of the {r.b}."
            )
            note = f"{word} {note}".strip()
        return replace(r, compass_note=note) if note else r

    def _compass_lines(self) -> str:
        if self.north_deg is None:
            return ""
        lines = [f"\nNorth: world heading {self.north_deg:.0f}° (clockwise from +Y)."]
        lines += [f"- {self.compass(k).text}" for k in sorted(self.cameras)]
        return "\n".join(lines)


def _pixels(base: Any) -> str:
    (x1, y1), (x2, y2) = np.asarray(base, dtype=float).reshape(2, 2)
    return f"({x1:.0f}, {y1:.0f})-({x2:.0f}, {y2:.0f})"


def _wall_normal(
    base: Any, K: np.ndarray, pose: np.ndarray, pixel_sigma_px: float, seed: int
) -> tuple[np.ndarray, float]:
    """(outward unit normal (2,) on the ground, its sigma in degrees from the pixels' noise) of the wall
    through two pixels on one of its horizontal lines, seen by a camera with intrinsics K and pose."""
    try:
        pixels = np.asarray(base, dtype=float).reshape(2, 2)
    except ValueError:
        raise ValueError(f"base must be two pixels ((x1, y1), (x2, y2)) along the wall, got {base!r}") from None
    rng = np.random.default_rng(seed)
    drawn = pixels[None] + rng.normal(0.0, pixel_sigma_px, (WALL_SAMPLES, 2, 2))
    drawn = np.concatenate([pixels[None], drawn])
    rays = np.linalg.solve(K, np.concatenate([drawn, np.ones((len(drawn), 2, 1))], axis=2).transpose(0, 2, 1))
    world = np.einsum("ij,sjk->sik", pose[:3, :3], rays).transpose(0, 2, 1)  # (S, 2, 3)
    up = world[0, :, 2]
    if np.any(np.abs(up) < 1e-3) or np.sign(up[0]) != np.sign(up[1]):
        raise ValueError(
            f"the base pixels {_pixels(base)} must both lie below the horizon (the wall's foot) or both above it "
            f"(its top) in view; these straddle it or lie on it"
        )
    points = world[..., :2] / np.abs(world[..., 2:3])  # on a horizontal plane one unit from the camera's height
    along = points[:, 1] - points[:, 0]
    normal = np.stack([along[:, 1], -along[:, 0]], axis=1)
    middle = points.mean(axis=1)
    normal *= np.sign(np.sum(normal * middle, axis=1))[:, None]  # outward: away from the camera
    angles = np.degrees(np.arctan2(normal[:, 0], normal[:, 1]))
    spread = (angles[1:] - angles[0] + 180.0) % 360.0 - 180.0
    return normal[0] / np.linalg.norm(normal[0]), float(np.std(spread))
