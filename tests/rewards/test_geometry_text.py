"""Shared helpers: boxes, distances, token F1."""

import math

import numpy as np
import pytest

from rewards.geometry import (
    InvalidBoxError,
    as_box,
    mahalanobis_sq,
    normalised_distance,
    normalised_offsets,
    point_in_box,
)
from rewards.text import token_f1, token_set_f1, tokenize


def test_point_in_box_edges_count_and_nan_is_outside():
    box = (10, 20, 30, 40)
    pts = [[10, 20], [30, 40], [9.999, 25], [20, np.nan]]
    assert point_in_box(pts, box).tolist() == [True, True, False, False]


def test_point_in_box_broadcasts_over_boxes():
    boxes = np.array([[0, 0, 1, 1], [5, 5, 6, 6]], dtype=float)
    pts = np.array([[[0.5, 0.5], [5.5, 5.5]], [[0.5, 0.5], [5.5, 5.5]]])  # (G=2, N=2, 2)
    assert point_in_box(pts, boxes[:, None, :]).tolist() == [[True, False], [False, True]]


def test_bad_boxes_raise_named_error():
    with pytest.raises(InvalidBoxError, match="x2 < x1"):
        as_box((10, 0, 0, 10))
    with pytest.raises(InvalidBoxError):
        as_box((0, 0, 1))


def test_offsets_and_mahalanobis_by_hand():
    # box (0, 0, 200, 100): centre (100, 50), half-sizes a = 100, b = 50.
    # point (150, 75): offsets (50/100, 25/50) = (0.5, 0.5); with the edge at 2 sigma: (1, 1), d^2 = 2.
    assert normalised_offsets((150, 75), (0, 0, 200, 100)).tolist() == [0.5, 0.5]
    assert float(mahalanobis_sq((150, 75), (0, 0, 200, 100), edge_sigmas=2.0)) == 2.0


def test_flat_box_offsets():
    # zero-height box: a point on its line has y-offset 0, off the line infinity.
    assert normalised_offsets((5, 3), (0, 3, 10, 3)).tolist() == [0.0, 0.0]
    assert math.isinf(normalised_offsets((5, 4), (0, 3, 10, 3))[1])


def test_normalised_distance_modes():
    # axes: (60/200, 80/100) -> (0.3, 0.8), norm sqrt(0.09 + 0.64) = sqrt(0.73) = 0.8544
    assert float(normalised_distance((60, 80), (0, 0), (200, 100))) == pytest.approx(math.sqrt(0.73))
    # diagonal: 100 px / sqrt(200^2 + 100^2) = 100 / 223.607 = 0.4472
    assert float(normalised_distance((60, 80), (0, 0), (200, 100), "diagonal")) == pytest.approx(0.4472136)
    # clipped at 1; NaN counts as far
    assert float(normalised_distance((300, 300), (0, 0), (100, 100))) == 1.0
    assert float(normalised_distance((np.nan, 0), (0, 0), (100, 100))) == 1.0


def test_token_f1_by_hand():
    assert tokenize("Hello, World!") == ["hello", "world"]
    # pred {new, york, city}, ref {new, york}: P = 2/3, R = 1, F1 = 2 * (2/3) / (5/3) = 0.8
    assert token_set_f1("new york city", "New York") == pytest.approx(0.8)
    # multiset: pred [a, a, b], ref [a, b, c]: overlap 2, P = R = 2/3, F1 = 2/3
    assert token_f1("a a b", "a b c") == pytest.approx(2 / 3)
    # set: {a, b} vs {a, b, c}: P = 1, R = 2/3, F1 = 0.8
    assert token_set_f1("a a b", "a b c") == pytest.approx(0.8)
    assert token_f1("", "") == 1.0
    assert token_f1("x", "") == 0.0
