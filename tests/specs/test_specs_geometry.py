"""Specifications of the distance and angle readouts: which point comes from which set, and boundaries."""

from __future__ import annotations

import json

import numpy as np
import pytest

from spatialclaw.primitives.geometry.relate import angle_between, closest_points, distance


@pytest.mark.parametrize("larger", ["a", "b"])
def test_closest_points_returns_the_point_of_a_first_whichever_set_is_larger(larger: str) -> None:
    many = np.array([[0.0, 0.0, 0.0], [5.0, 0.0, 0.0], [9.0, 9.0, 9.0]])
    one = np.array([[5.0, 3.0, 4.0]])
    a, b = (many, one) if larger == "a" else (one, many)
    in_a, in_b, gap = closest_points(a, b)
    assert any(np.array_equal(in_a, p) for p in a) and any(np.array_equal(in_b, p) for p in b)
    assert gap == pytest.approx(5.0)
    assert np.linalg.norm(in_a - in_b) == pytest.approx(gap)


def test_closest_points_picks_the_nearest_pair_not_the_first() -> None:
    a = np.array([[10.0, 0.0, 0.0], [0.0, 0.0, 1.0], [20.0, 0.0, 0.0]])
    b = np.array([[0.0, 0.0, 0.0], [30.0, 0.0, 0.0]])
    in_a, in_b, gap = closest_points(a, b)
    assert in_a.tolist() == [0.0, 0.0, 1.0] and in_b.tolist() == [0.0, 0.0, 0.0] and gap == 1.0


def test_distance_is_centre_to_centre_by_default_and_surface_gap_when_asked() -> None:
    a = np.array([[0.0, 0.0, 0.0], [2.0, 0.0, 0.0]])  # centre (1, 0, 0)
    b = np.array([[3.0, 0.0, 0.0], [7.0, 0.0, 0.0]])  # centre (5, 0, 0)
    assert distance(a, b) == pytest.approx(4.0)
    assert distance(a, b, kind="closest") == pytest.approx(1.0)
    assert distance([0.0, 0.0, 0.0], [0.0, 3.0, 4.0]) == pytest.approx(5.0)
    with pytest.raises(ValueError, match="kind"):
        distance(a, b, kind="farthest")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("u", "v", "degrees"),
    [
        ((1, 0, 0), (1, 0, 0), 0.0),
        ((1, 0, 0), (0, 2, 0), 90.0),
        ((1, 0, 0), (-3, 0, 0), 180.0),
        ((1, 1, 0), (1, 0, 0), 45.0),
    ],
)
def test_angle_between_is_in_degrees_from_0_to_180_whatever_the_lengths(
    u: tuple[float, ...], v: tuple[float, ...], degrees: float
) -> None:
    assert angle_between(u, v) == pytest.approx(degrees)


def test_angle_between_refuses_zero_vectors_and_different_lengths() -> None:
    with pytest.raises(ValueError, match="zero-length"):
        angle_between((0, 0, 0), (1, 0, 0))
    with pytest.raises(ValueError, match="zero-length"):
        angle_between((1, 0, 0), (0, 0, 0))
    with pytest.raises(ValueError, match="same shape"):
        angle_between((1, 0, 0), (1, 0))


@pytest.mark.parametrize(("u", "v", "degrees"), [((2, 0, 0), (1, 1, 0), 45.0), ((0, 3, 0), (0, 2, 2), 45.0)])
def test_angle_between_divides_by_the_product_of_both_lengths(
    u: tuple[float, ...], v: tuple[float, ...], degrees: float
) -> None:
    assert angle_between(u, v) == pytest.approx(degrees)
    assert angle_between(v, u) == pytest.approx(degrees)


def test_a_vector_with_itself_is_0_degrees_and_with_its_opposite_180_despite_rounding() -> None:
    u = np.array([4.0, 8.0, 5.0])  # u @ u / |u|^2 rounds to 1.0000000000000002
    assert angle_between(u, u) == 0.0
    assert angle_between(u, -u) == 180.0


def test_angle_between_refuses_vectors_of_different_lengths_in_either_order() -> None:
    with pytest.raises(ValueError, match=r"same shape, got \(2,\) and \(3,\)"):
        angle_between((1, 0), (1, 0, 0))


@pytest.mark.parametrize("kind", ["Centroid", "average", "", "CLOSEST"])
def test_distance_refuses_any_other_kind(kind: str) -> None:
    with pytest.raises(ValueError, match="kind must be"):
        distance([0.0, 0.0, 0.0], [1.0, 0.0, 0.0], kind=kind)  # type: ignore[arg-type]


def test_distance_kind_read_from_a_file_is_the_same_kind() -> None:
    a = np.array([[0.0, 0.0, 0.0], [2.0, 0.0, 0.0]])
    b = np.array([[3.0, 0.0, 0.0], [7.0, 0.0, 0.0]])
    kinds = json.loads('["centroid", "closest"]')  # equal strings, but not the literals' objects
    assert distance(a, b, kind=kinds[0]) == pytest.approx(4.0)
    assert distance(a, b, kind=kinds[1]) == pytest.approx(1.0)
