"""Scene methods for views that barely overlap and for north: ``add_view``, ``link_views``, ``set_north``, ``compass``.

A mixin of ``Scene`` (``memory.py``): it reads and writes the scene's ``cameras`` and ``instances``.
Conventions (design world, metres, +Z up): a view's heading is degrees clockwise seen from above from
world +Y; compass bearings are degrees clockwise from north (0 = N, 90 = E). Solved views become level
cameras (pitch and roll 0) at the height of the first view; named landmarks become bearing-located
objects with the covariance of the joint solve, so ``perspective``/``relation``/``describe``/``bev`` read them.
Views linked by matched features (``link_views(a, b)`` without landmarks, ``feature_links``) add their
correspondences as unnamed landmarks (in ``scene.layout`` only, not scene objects).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from spatialclaw.primitives.geometry import geom
from spatialclaw.primitives.geometry.camera import as_intrinsics
from spatialclaw.primitives.scene.bearings import intrinsics_from_fov, make_bearing
from spatialclaw.primitives.scene.compass import (
    CompassReading,
    compass_bearing,
    compass_reading,
    compass_word,
    parse_direction,
)
from spatialclaw.primitives.scene.feature_links import FeatureLink, link_by_features
from spatialclaw.primitives.scene.objects import SceneObject, frame_index
from spatialclaw.primitives.scene.observations import DEFAULT_HFOV_DEG, _estimated_camera
from spatialclaw.primitives.scene.perspective import Perspective
from spatialclaw.primitives.scene.places import place
from spatialclaw.primitives.scene.readouts import Readout, Relation
from spatialclaw.primitives.scene.viewlinks import LayoutSolution, Sighting, ViewSpec, solve_layout

__all__ = ["FEATURE_PREFIX", "ViewLinking", "heading_of_pose", "level_pose"]

FEATURE_PREFIX = "matched feature "  # names of the landmarks that link_views found by matching features


def heading_of_pose(pose: np.ndarray) -> float:
    """Heading (degrees clockwise from world +Y, seen from above) of a camera-to-world pose's forward on the ground."""
    forward = geom.observer_axes(pose)[1]
    return float(np.degrees(np.arctan2(forward[0], forward[1])))


def level_pose(heading_deg: float, position: Any) -> np.ndarray:
    """(4, 4) camera-to-world pose of a level camera at ``position`` (x, y, z metres) facing ``heading_deg``."""
    h = np.radians(heading_deg)
    forward, right = np.array([np.sin(h), np.cos(h), 0.0]), np.array([np.cos(h), -np.sin(h), 0.0])
    pose = np.eye(4)
    pose[:3, :3] = np.stack([right, [0.0, 0.0, -1.0], forward], axis=1)
    pose[:3, 3] = position
    return pose


class ViewLinking:
    """The view-linking and compass methods of ``Scene`` (see the module docstring for the conventions)."""

    instances: dict[str, SceneObject]
    cameras: dict[int, np.ndarray]

    def _reset_views(self) -> None:
        self.views: dict[int, ViewSpec] = {}
        self.sightings: list[Sighting] = []
        self.layout: LayoutSolution | None = None
        self.north_deg: float | None = None
        self.view_frames: dict[int, Any] = {}
        self.feature_links: dict[tuple[int, int], FeatureLink] = {}

    def add_view(
        self,
        frame: Any,
        heading_deg: float | None = None,
        K: Any = None,
        hfov_deg: float | None = None,
        image_size: tuple[int, int] | None = None,
    ) -> Readout:
        """Declare a view (a photo of the room) to place by ``link_views``.

        Args:
            frame: the Frame (or absolute frame index) of the view.
            heading_deg: its heading if known, degrees clockwise from world +Y seen from above; None: solved.
                The first view added anchors the world: its registered camera, else heading 0 at the origin.
            K: (3, 3) intrinsics, pixels; else ``hfov_deg`` (default: a depth model's estimate for this frame,
                else 60, stated as assumed) with the image size (the Frame's, or ``image_size=(w, h)``).
        """
        index, assumed = frame_index(frame), ""
        if not isinstance(frame, (int, np.integer)):
            self.view_frames[index] = frame  # its pixels, for link_views by matched features
        if K is None and hfov_deg is None:
            notes: list[str] = []
            K = _estimated_camera(index, image_size, frame, notes)
            assumed = "; ".join(notes)
        if K is None:
            size = image_size or ((frame.width, frame.height) if hasattr(frame, "width") else None)
            if size is None:
                raise ValueError("add_view needs K=(3, 3), or the image size: pass the Frame or image_size=(w, h)")
            if hfov_deg is None:
                hfov_deg, assumed = DEFAULT_HFOV_DEG, f"{DEFAULT_HFOV_DEG:g} deg horizontal field of view"
            K = intrinsics_from_fov(int(size[0]), int(size[1]), float(hfov_deg))
        position = None
        if not self.views and index in self.cameras:
            heading_deg = heading_of_pose(self.cameras[index]) if heading_deg is None else heading_deg
            position = (float(self.cameras[index][0, 3]), float(self.cameras[index][1, 3]))
        self.views[index] = ViewSpec(index, as_intrinsics(K), heading_deg, position, assumed)
        return Readout(
            f"view {index} added ({'anchor' if len(self.views) == 1 else 'to be placed'}; {assumed or 'K given'})"
        )

    def link_views(
        self,
        view_a: Any,
        view_b: Any,
        landmarks: list[tuple[Any, ...]] | str | None = None,
        distance: float | None = None,
        distance_sigma: float | None = None,
        pixel_sigma_px: float = 2.0,
        max_matches: int = 12,
    ) -> Readout:
        """Link two views by what both show and re-solve the floor plan (headings, positions, landmarks).

        Args:
            view_a, view_b: Frames or absolute frame indices (``add_view`` first).
            landmarks: ``(name, (x_a, y_a), (x_b, y_b))`` pixels of the same thing in both views, optionally
                with ``dist_a, dist_b`` metres from each camera (a depth map's value; None when unknown). At
                least 2 landmarks per new view (3 or more when only bearings are known).
                None or "auto": found by matching features between the two frames (pass the Frames here or
                to ``add_view``): up to ``max_matches`` matches spread over the view that agree with one
                camera motion, with their distances from both cameras triangulated (relative, scaled to a
                median of ``distance``) when the cameras stand apart. The readout says how many matches
                were used and the turn they give (± its uncertainty), and warns when they are few, sit in
                one small region or pin the turn poorly; views that share nothing give "No reliable
                matches" and no heading: then name landmarks.
            distance: a stated guess of the landmarks' distance from the cameras, metres, used when no
                landmark has a distance (it sets the scale only; headings come from the bearings);
                distance_sigma: its sigma (default 50% of it). Default guess 3 m, stated in the result.
        Returns a text: each view's heading (± sigma; compass after ``set_north``), position, the fit.
        ``scene.layout`` holds the numbers; cameras and named landmarks are in the scene.
        """
        a, b = frame_index(view_a), frame_index(view_b)
        for v in (a, b):
            if v not in self.views:
                raise ValueError(f"view {v} was not added: call scene.add_view(frames[...]) first")
        guess = 3.0 if distance is None else float(distance)
        if landmarks is None or isinstance(landmarks, str):
            if landmarks not in (None, "auto"):
                raise ValueError(
                    f"landmarks must be a list of (name, (x_a, y_a), (x_b, y_b)) or 'auto', got {landmarks!r}"
                )
            found = self._matched_landmarks(view_a, view_b, a, b, guess, distance is not None, max_matches)
            if isinstance(found, Readout):
                return found
            lines = found
        else:
            lines = []
            for item in landmarks:
                name, pa, pb, *dist = item
                da, db = (list(dist) + [None, None])[:2]
                for v, px, d in ((a, pa, da), (b, pb, db)):
                    sd = None if d is None else (distance_sigma or 0.1 * float(d))
                    self.sightings.append(Sighting(v, str(name), tuple(map(float, px)), d, sd, pixel_sigma_px))  # type: ignore[arg-type]
        named = [s for s in self.sightings if not s.landmark.startswith(FEATURE_PREFIX)]
        scaled = any(s.distance_m is not None for s in named)  # matched features' distances are up to scale
        anchor = next(iter(self.views))
        try:
            turns = [
                (a_, b_, float(k.yaw_deg or 0.0), float(k.yaw_sigma_deg or 0.0))
                for (a_, b_), k in self.feature_links.items()
            ]
            solution = solve_layout(
                self.views, self.sightings, anchor, guess, distance_sigma or 0.5 * guess, ranged=scaled, turns=turns
            )
        except ValueError as error:
            return Readout("\n".join([*lines, f"Not solved yet: {error}"]))
        self.layout = solution = self._with_link_sigmas(solution, anchor)
        self._place_solution(solution)
        head = f"Floor plan from {len(self.views)} views, bearing fit RMS {solution.rms_deg:.1f}°"
        if not scaled:
            head += f" (distances: assumed {guess:g} m, so positions are up to scale)"
        lines.append(head)
        for v, h in solution.headings_deg.items():
            x, y = solution.positions[v]
            line = f"- view {v}: heading {h:.0f}° ± {solution.heading_sigmas_deg[v]:.1f}° at ({x:.2f}, {y:.2f}) m"
            if self.north_deg is not None:
                line += f", facing {self.compass(v).direction}"
            lines.append(line)
        return Readout("\n".join(lines))

    def _matched_landmarks(
        self, view_a: Any, view_b: Any, a: int, b: int, guess: float, given: bool, max_matches: int
    ) -> list[str] | Readout:
        """Sightings of features matched between views a and b (``feature_links``), and the readout's lines
        about them; or the "No reliable matches" readout (nothing added)."""
        from spatialclaw.primitives.perception.inputs import frame_array

        images = []
        for item, v in ((view_a, a), (view_b, b)):
            frame = self.view_frames.get(v) if isinstance(item, (int, np.integer)) else item
            if frame is None:
                raise ValueError(
                    f"link_views without landmarks matches the frames' pixels, but view {v} was given as an index "
                    f"only: pass the Frames, scene.link_views(frames[i], frames[j]), or add_view(frames[i])"
                )
            images.append(frame_array(frame))
            K, (height, width) = self.views[v].K, images[-1].shape[:2]
            if not (0 < K[0, 2] < width and 0 < K[1, 2] < height):
                raise ValueError(
                    f"view {v}'s intrinsics (principal point {K[0, 2]:.0f}, {K[1, 2]:.0f} px) do not fit its "
                    f"{width}x{height} px frame: add_view it again with K for this frame size"
                )
        link = link_by_features(
            images[0], images[1], self.views[a].K, self.views[b].K, max_points=max_matches, name_a=str(a)
        )
        if link.problem is not None:
            return Readout(
                f"No reliable matches between views {a} and {b}: {link.problem}, so no heading (they probably "
                f"show different things). Name landmarks seen in both: scene.link_views({a}, {b}, "
                f"landmarks=[('door', (x_a, y_a), (x_b, y_b)), ...]) (2 or more; 3 with bearings only)."
            )
        prefix = f"{FEATURE_PREFIX}{a}-{b}."
        self.sightings = [s for s in self.sightings if not s.landmark.startswith(prefix)]  # linked again
        self.feature_links[(a, b)] = link
        for i, (pixel_a, pixel_b) in enumerate(zip(link.pixels_a, link.pixels_b, strict=True)):
            for v, pixel, k in ((a, pixel_a, 0), (b, pixel_b, 1)):
                d, sd = guess, 0.5 * guess  # a camera that only turned: both at one place, distance assumed
                if link.moved and link.distances_a is not None and link.distances_b is not None:
                    d = guess * float((link.distances_a, link.distances_b)[k][i])
                    sd = d * float(link.distance_sigmas[i]) if link.distance_sigmas is not None else 0.1 * d
                self.sightings.append(Sighting(v, f"{prefix}{i}", (float(pixel[0]), float(pixel[1])), d, sd, 1.0))
        text = (
            f"Linked views {a} and {b} by {len(link.pixels_a)} matched features ({link.matches} mutual matches, "
            f"{link.agreeing} agree with one camera motion, over {100 * link.cover:.0f} % of view {a}); by the matches "
            f"alone view {b} is turned {link.yaw_deg:+.1f}° ± {link.yaw_sigma_deg:.1f}° from view {a} (> 0: right)"
        )
        if link.moved:
            text += (
                f"; the cameras stand apart: feature distances triangulated, scaled to a median of {guess:g} m "
                f"({'given' if given else 'assumed'})"
            )
        else:
            text += f"; the camera only turned (no parallax): feature distances assumed ({guess:g} m)"
        warnings = [
            f"WARNING: {w}; check with named landmarks: scene.link_views({a}, {b}, landmarks=[...])"
            for w in link.warnings
        ]
        return [text, *warnings]

    def _with_link_sigmas(self, solution: LayoutSolution, anchor: int) -> LayoutSolution:
        """The solution with each feature-linked view's heading sigma at least the turn uncertainty of the
        matched-feature links that connect it to the anchor (root sum of squares along the chain): the
        features' triangulated distances carry the same turn again, so the fit alone would count it twice."""
        chain, changed = {anchor: 0.0}, True
        while changed:
            changed = False
            for (a, b), link in self.feature_links.items():
                for p, q in ((a, b), (b, a)):
                    if p in chain and q not in chain:
                        chain[q], changed = float(np.hypot(chain[p], link.yaw_sigma_deg or 0.0)), True
        sigmas = {v: max(s, chain.get(v, 0.0)) for v, s in solution.heading_sigmas_deg.items()}
        return replace(solution, heading_sigmas_deg=sigmas)

    def _place_solution(self, solution: LayoutSolution) -> None:
        anchor = next(iter(self.views))
        z = float(self.cameras[anchor][2, 3]) if anchor in self.cameras else 0.0
        for v, h in solution.headings_deg.items():
            self.cameras[v] = level_pose(h, (*solution.positions[v], z))
        for name, position in solution.landmarks.items():
            if name.startswith(FEATURE_PREFIX):
                continue  # matched features stay in scene.layout; they are not things to ask about
            seen = [s for s in self.sightings if s.landmark == name]
            bearings = tuple(
                make_bearing(
                    s.pixel,
                    s.view,
                    self.views[s.view].K,
                    self.cameras[s.view],
                    s.pixel_sigma_px,
                    s.distance_m,
                    s.distance_sigma_m,
                    self.views[s.view].assumed,
                )
                for s in seen
            )
            self.instances[name] = SceneObject(
                name=name,
                label=name,
                points=(position + [0.0, 0.0, z])[None],
                frames=tuple(sorted({s.view for s in seen})),
                covariance=solution.landmark_covariances[name],
                bearings=bearings,
                located=f"linked views: {len(seen)} sightings in views {sorted({s.view for s in seen})}",
            )

    def set_north(
        self, direction: str | float = "north", view: Any = None, facing: Any = None, standing_at: Any = None
    ) -> Readout:
        """Say where north is; afterwards readouts (perspective, relation, describe, compass) add compass words.

        Either ``view=k``: camera k looks ``direction`` ("facing the camera is north": someone facing the
        camera looks north, so the camera looks south: ``set_north(view=k, direction="south")``); or ``facing=X``: the direction from ``standing_at`` (default: the first view or
        camera) toward X (object name, camera index or world point) is ``direction``. Note an object that
        *faces* north (its front points north) is looked at facing south: ``set_north(facing="fireplace",
        direction="south")``. direction: "north", "NE", "south-west", ... or compass degrees."""
        bearing = parse_direction(direction)
        if (view is None) == (facing is None):
            raise ValueError("pass exactly one of view=<frame index> or facing=<object, camera or point>")
        if view is not None:
            k = frame_index(view)
            if k not in self.cameras:
                raise ValueError(f"no camera for frame {k}; registered: {sorted(self.cameras)}")
            heading = heading_of_pose(self.cameras[k])
        else:
            origin = standing_at if standing_at is not None else next(iter(self.views), min(self.cameras, default=None))
            if origin is None:
                raise ValueError("pass standing_at=<object, camera index or point> (no view or camera registered)")
            start = place(self.instances, self.cameras, origin, "standing_at")[1]
            end = place(self.instances, self.cameras, facing, "facing")[1]
            heading = float(np.degrees(np.arctan2(*(end - start)[:2])))
        self.north_deg = float((heading - bearing) % 360.0)
        return Readout(f"North set: world heading {self.north_deg:.0f}° (clockwise from +Y) is north.")

    def compass(self, subject: Any, reference: Any = None, seed: int = 0) -> CompassReading:
        """Compass direction of ``subject`` from ``reference`` (names, camera frame indices or world points),
        or with ``reference=None`` and a camera index, the way that camera faces. Needs ``set_north``."""
        if self.north_deg is None:
            raise ValueError('north is not set: call scene.set_north(view=k, direction="north") or facing=...')
        if reference is None:
            if not isinstance(subject, (int, np.integer)):
                raise ValueError("give reference= (what the subject's direction is read from), or a camera index")
            k = int(subject)
            sigma = self.layout.heading_sigmas_deg.get(k, 0.0) if self.layout is not None else 0.0
            h = np.radians(heading_of_pose(self.cameras[k]))
            return compass_reading(
                f"camera {k}", "", np.array([np.sin(h), np.cos(h)]), np.zeros((2, 2)), self.north_deg, sigma, seed
            )
        who, at, cov_a, _ = place(self.instances, self.cameras, subject, "subject")
        of, base, cov_b, _ = place(self.instances, self.cameras, reference, "reference")
        return compass_reading(who, of, (at - base)[:2], (cov_a + cov_b)[:2, :2], self.north_deg, 0.0, seed)

    def _compass_perspective(self, p: Perspective, target: Any, standing_at: Any, facing: Any) -> Perspective:
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
        if self.north_deg is None:
            return r
        c = self.compass(r.a, r.b)
        return replace(
            r,
            compass_note=f"Compass: the {r.a} is {c.direction} ({c.bearing_deg:.0f}° ± {c.sigma_deg:.0f}°) of the {r.b}.",
        )

    def _compass_lines(self) -> str:
        if self.north_deg is None:
            return ""
        lines = [f"\nNorth: world heading {self.north_deg:.0f}° (clockwise from +Y)."]
        lines += [f"- {self.compass(k).text}" for k in sorted(self.cameras)]
        return "\n".join(lines)
