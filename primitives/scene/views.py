"""Scene methods for views that barely overlap: ``add_view`` and ``link_views`` (north and compass words:
``north.py``).

A mixin of ``Scene`` (``memory.py``): it reads and writes the scene's ``cameras`` and ``instances``.
Conventions (design world, metres, +Z up): a view's heading is degrees clockwise seen from above from
world +Y. Solved views become cameras at the height of the first view, with the pitch and roll given to
``add_view`` (level by default); named landmarks become bearing-located objects with the covariance of the
joint solve, so ``perspective``/``relation``/``describe``/``bev`` read them. When several floor plans fit
the sightings about as well (``layout_search``), the scene holds the best one with every uncertainty
widened to cover the others, ``scene.layout.plans`` holds them all, and the readouts say so.
Views linked by matched features (``link_views(a, b)`` without landmarks, ``feature_links``) add their
correspondences as unnamed landmarks (in ``scene.layout`` only, not scene objects).
"""

from __future__ import annotations

from dataclasses import replace
from functools import partial
from typing import Any

import numpy as np

from spatialclaw.primitives.geometry.camera import as_intrinsics
from spatialclaw.primitives.runtime.library_failures import guarded
from spatialclaw.primitives.scene.bearings import intrinsics_from_fov, make_bearing
from spatialclaw.primitives.scene.feature_links import FeatureLink, link_by_features
from spatialclaw.primitives.scene.layout_problem import Sighting, ViewSpec
from spatialclaw.primitives.scene.north import NorthKeeping
from spatialclaw.primitives.scene.objects import SceneObject, frame_index
from spatialclaw.primitives.scene.observations import DEFAULT_HFOV_DEG, _estimated_camera
from spatialclaw.primitives.scene.plans import heading_of_pose, resolve_hint, view_pose
from spatialclaw.primitives.scene.readouts import Readout
from spatialclaw.primitives.scene.viewlinks import FEATURE_NAME, LayoutSolution, solve_layout

__all__ = ["FEATURE_PREFIX", "ViewLinking"]

FEATURE_PREFIX = FEATURE_NAME  # names of the landmarks that link_views found by matching features


class ViewLinking(NorthKeeping):
    """The view-linking methods of ``Scene`` (see the module docstring for the conventions)."""

    instances: dict[str, SceneObject]
    cameras: dict[int, np.ndarray]

    def _reset_views(self) -> None:
        self.views: dict[int, ViewSpec] = {}
        self.sightings: list[Sighting] = []
        self.layout: LayoutSolution | None = None
        self.north_deg: float | None = None
        self.north_from: tuple[Any, Any, float] | None = None
        self.view_frames: dict[int, Any] = {}
        self.feature_links: dict[tuple[int, int], FeatureLink] = {}

    def add_view(
        self,
        frame: Any,
        heading_deg: float | None = None,
        K: Any = None,
        hfov_deg: float | None = None,
        image_size: tuple[int, int] | None = None,
        pitch_deg: float | None = None,
        roll_deg: float | None = None,
        tilt: Any = None,
    ) -> Readout:
        """Declare a view (a photo of the room) to place by ``link_views``.

        Args:
            frame: the Frame (or absolute frame index) of the view.
            heading_deg: its heading if known, degrees clockwise from world +Y seen from above; None: solved.
                The first view added anchors the world: its registered camera, else heading 0 at the origin.
            K: (3, 3) intrinsics, pixels; else ``hfov_deg`` (default: a depth model's estimate for this frame,
                else 60, stated as assumed) with the image size (the Frame's, or ``image_size=(w, h)``).
            pitch_deg / roll_deg: the camera's tilt, degrees (pitch > 0 tilts up, -10 = looks 10 degrees
                down; roll > 0 clockwise), or ``tilt=`` a ``CameraTilt`` (``geom.camera_tilt(frame)``): the
                landmarks' bearings are read from the levelled rays. Default level (0, 0): a tilted view
                read as level puts landmarks off the image centre a few degrees off.
        """
        index, assumed = frame_index(frame), ""
        if tilt is not None:
            if pitch_deg is not None or roll_deg is not None:
                raise ValueError("pass tilt=<CameraTilt> or pitch_deg=/roll_deg=, not both")
            if not hasattr(tilt, "pitch_deg"):
                raise ValueError(f"tilt must be a CameraTilt (geom.camera_tilt(frame)), got {tilt!r}")
            pitch_deg, roll_deg = float(tilt.pitch_deg), float(getattr(tilt, "roll_deg", 0.0))
        for name, value in (("pitch_deg", pitch_deg), ("roll_deg", roll_deg)):
            if value is not None and not (np.isfinite(value) and abs(value) < 90):
                raise ValueError(f"{name} must be degrees between -90 and 90, got {value!r}")
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
        tilted = (float(pitch_deg or 0.0), float(roll_deg or 0.0))
        self.views[index] = ViewSpec(index, as_intrinsics(K), heading_deg, position, assumed, *tilted)
        level = "level" if tilted == (0.0, 0.0) else f"pitch {tilted[0]:+.1f}°, roll {tilted[1]:+.1f}°"
        return Readout(
            f"view {index} added ({'anchor' if len(self.views) == 1 else 'to be placed'}; {assumed or 'K given'}; "
            f"{level})"
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
                with ``dist_a, dist_b`` metres from each camera (a depth map's value; None when unknown; sigma
                ``distance_sigma``, default 10% + 0.25 m: a depth map reads a thing's near surface, not its
                centre). At least 2 landmarks per new view (3 or more when only bearings are known). A
                landmark named again in a view (linking it to another view) replaces its earlier pixel there.
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
        Returns a text: each view's heading (± sigma; compass after ``set_north``), position, the fit. Every
        floor plan that fits about as well is searched for (many starts): when plans that differ materially
        fit, the text says AMBIGUOUS, names what differs and what would resolve it (distances, another
        landmark), and every ± and P (here and in perspective/relation/compass) covers all of them.
        ``scene.layout`` holds the numbers (``.plans``: each plan); cameras and named landmarks are in the scene.
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
                    sd = None if d is None else (distance_sigma or 0.1 * float(d) + 0.25)
                    pixel = (float(px[0]), float(px[1]))
                    self._sight(Sighting(v, str(name), pixel, d, sd, pixel_sigma_px))
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
        lines += [head, *self._view_lines(solution, anchor)]
        if solution.ambiguous:
            lines.append(_ambiguity(solution))
        lines += [f"Note: {note}." for note in solution.notes]
        return Readout("\n".join(lines))

    def _view_lines(self, solution: LayoutSolution, anchor: int) -> list[str]:
        """One line per view: heading (± sigma, or why none), position, compass facing, other plans' headings."""
        lines = []
        for v, h in solution.headings_deg.items():
            x, y = solution.positions[v]
            if v == anchor:
                spread = " (the anchor: it defines the world)"
            elif self.views[v].heading_deg is not None:
                spread = " (given)"
            else:
                spread = f" ± {max(solution.heading_sigmas_deg[v], 0.1):.1f}°"
            x, y = round(x, 2) + 0.0, round(y, 2) + 0.0  # + 0.0: no "-0.00"
            line = f"- view {v}: heading {round(h) + 0:.0f}°{spread} at ({x:.2f}, {y:.2f}) m"
            if self.north_deg is not None:
                line += f", facing {self.compass(v).direction}"
            if v in solution.ambiguous_views:
                others = [f"{q.headings_deg[v]:.0f}° (weight {q.weight:.2f})" for q in solution.plans[1:]]
                line += f"; other plans: {', '.join(others)}"
            lines.append(line)
        return lines

    def _sight(self, sighting: Sighting) -> None:
        """Store a sighting once per (view, landmark): a landmark named again in a view (linking that view to
        another one) replaces its earlier pixel, and keeps its earlier distance when the new one has none."""
        key = (sighting.view, sighting.landmark)
        old = next((s for s in self.sightings if (s.view, s.landmark) == key), None)
        if old is not None and sighting.distance_m is None:
            sighting = replace(sighting, distance_m=old.distance_m, distance_sigma_m=old.distance_sigma_m)
        self.sightings = [s for s in self.sightings if (s.view, s.landmark) != key] + [sighting]

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
        link = guarded(
            partial(
                link_by_features, images[0], images[1], self.views[a].K, self.views[b].K, max_matches, name_a=str(a)
            ),
            lambda reason: FeatureLink(
                np.zeros((0, 2)), np.zeros((0, 2)), 0, 0, problem=f"the matching failed: {reason}"
            ),
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
            self.cameras[v] = view_pose(h, (*solution.positions[v], z), self.views[v].tilt)
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


def _ambiguity(solution: LayoutSolution) -> str:
    """The paragraph that names the floor plans which fit about as well and what would tell them apart."""
    plans = solution.plans
    weights = ", ".join(f"{q.weight:.2f}" for q in plans)
    rms = ", ".join(f"{q.rms_deg:.1f}°" for q in plans)
    parts = []
    if solution.ambiguous_views:
        parts.append(f"the headings of views {', '.join(str(v) for v in solution.ambiguous_views)}")
    if solution.ambiguous_landmarks:
        verb = "is" if len(solution.ambiguous_landmarks) == 1 else "are"
        parts.append(f"where the {', the '.join(solution.ambiguous_landmarks)} {verb}")
    return (
        f"AMBIGUOUS: {len(plans)} floor plans fit these sightings about as well (weights {weights}; bearing fit "
        f"RMS {rms}) and disagree on {' and '.join(parts)}. The headings above are the best plan's; their ± and "
        f"every readout's ± and P (perspective, relation, compass, describe) cover all plans (scene.layout.plans "
        f"holds each). {resolve_hint(solution)}"
    )
