"""Perfect-maze generation and shortest-path solving on a symbolic grid.

A maze of ``size`` x ``size`` *cells* lives on a symbolic grid of side ``2 * size + 1``: cell ``(i, j)``
sits at grid coordinate ``(2 * i + 1, 2 * j + 1)``, the grid squares between two neighbouring cells are
passages (floor) or walls, and the outer ring is wall. ``size=15`` gives a 31x31 grid, the closest odd
side to the 30x30 symbolic grid of the SSL paper (App. Fig. 9). All coordinates elsewhere in guigym are
grid coordinates ``(row, col)``, row 0 at the top.

Generation is an iterative randomized depth-first search (the "recursive backtracker" without recursion,
so any size works), driven only by the numpy ``Generator`` it is given. A perfect maze is a spanning tree
of the cells, so every pair of floor squares is joined by exactly one simple path.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

#: Symbolic grid codes, shared by observations, ``info["solution_grid"]`` and ``info["submission_grid"]``.
FLOOR, WALL, START, GOAL, PATH = 0, 1, 2, 3, 4
#: Display-only code for the agent's square in navigate-mode renderings; never in a returned grid.
AGENT = 5

#: Text characters for each code in the text rendering (index = code); "A" marks the agent when shown.
CODE_CHARS: str = ".#SG*"
AGENT_CHAR: str = "A"

#: Unit moves (d_row, d_col) in MiniGrid's direction order: 0 right, 1 down, 2 left, 3 up.
MOVES: tuple[tuple[int, int], ...] = ((0, 1), (1, 0), (0, -1), (-1, 0))

Cell = tuple[int, int]


def grid_side(size: int) -> int:
    """Side of the symbolic grid, in grid squares, for a maze of ``size`` x ``size`` cells.

    >>> grid_side(15)
    31
    """
    return 2 * size + 1


def carve_maze(rng: np.random.Generator, size: int) -> NDArray[np.uint8]:
    """Carve a perfect maze by iterative randomized depth-first search.

    Args:
        rng: Source of all randomness.
        size: Cells per side (>= 1).

    Returns:
        (2 * size + 1, 2 * size + 1) uint8 grid of ``FLOOR`` and ``WALL``.
    """
    side = grid_side(size)
    grid = np.full((side, side), WALL, dtype=np.uint8)
    grid[1::2, 1::2] = FLOOR
    n_cells = size * size
    visited = bytearray(n_cells)
    # One uniform draw per carved passage (exactly n_cells - 1 of them), drawn up front: one call into
    # numpy instead of one per step keeps generation fast and the stream of draws fixed per seed.
    draws = rng.random(n_cells).tolist()
    first = int(rng.integers(n_cells))
    visited[first] = 1
    stack = [first]
    k = 0
    while stack:
        cell = stack[-1]
        r, c = divmod(cell, size)
        options = []
        if r > 0 and not visited[cell - size]:
            options.append(cell - size)
        if c < size - 1 and not visited[cell + 1]:
            options.append(cell + 1)
        if r < size - 1 and not visited[cell + size]:
            options.append(cell + size)
        if c > 0 and not visited[cell - 1]:
            options.append(cell - 1)
        if not options:
            stack.pop()
            continue
        nxt = options[int(draws[k] * len(options))]
        k += 1
        nr, nc = divmod(nxt, size)
        # The passage square between cells (r, c) and (nr, nc) is the midpoint of their grid coordinates.
        grid[r + nr + 1, c + nc + 1] = FLOOR
        visited[nxt] = 1
        stack.append(nxt)
    return grid


def bfs_distances(grid: NDArray[np.integer], source: Cell) -> NDArray[np.int32]:
    """Shortest-path distance, in moves, from ``source`` to every square (4-neighbourhood).

    Args:
        grid: (H, W) symbolic grid; every square that is not ``WALL`` is walkable.
        source: (row, col) to measure from.

    Returns:
        (H, W) int32 distances; -1 on walls and unreachable squares.
    """
    height, width = grid.shape
    walkable = (np.asarray(grid) != WALL).ravel().tolist()
    dist = [-1] * (height * width)
    src = source[0] * width + source[1]
    dist[src] = 0
    frontier = [src]
    steps = (1, width, -1, -width)
    # The outer ring is always wall, so neighbours of a walkable square never leave the grid; the bounds
    # check below only guards grids without a wall ring.
    size = height * width
    while frontier:
        nxt_frontier = []
        for cell in frontier:
            d = dist[cell] + 1
            for step in steps:
                n = cell + step
                if 0 <= n < size and walkable[n] and dist[n] < 0 and abs(n % width - cell % width) <= 1:
                    dist[n] = d
                    nxt_frontier.append(n)
        frontier = nxt_frontier
    return np.asarray(dist, dtype=np.int32).reshape(height, width)


def path_from_distances(dist_to_goal: NDArray[np.int32], start: Cell) -> list[Cell]:
    """Follow strictly decreasing distance-to-goal from ``start``; the result is a shortest path.

    Args:
        dist_to_goal: (H, W) output of :func:`bfs_distances` run from the goal.
        start: (row, col) to start from; must be reachable.

    Returns:
        Squares from ``start`` to the goal, both included.
    """
    height, width = dist_to_goal.shape
    r, c = start
    path = [(r, c)]
    while dist_to_goal[r, c] > 0:
        for dr, dc in MOVES:
            nr, nc = r + dr, c + dc
            if 0 <= nr < height and 0 <= nc < width and dist_to_goal[nr, nc] == dist_to_goal[r, c] - 1:
                r, c = nr, nc
                break
        path.append((r, c))
    return path


def mark_path(grid: NDArray[np.integer], path: list[Cell]) -> NDArray[np.uint8]:
    """Copy ``grid`` and set every in-bounds path square to ``PATH``, except the start and goal markers.

    Args:
        grid: (H, W) symbolic grid with ``START`` and ``GOAL`` markers.
        path: (row, col) squares; out-of-bounds ones are skipped.

    Returns:
        (H, W) uint8 grid in the same codes.
    """
    marked = np.array(grid, dtype=np.uint8)
    height, width = marked.shape
    for r, c in path:
        if 0 <= r < height and 0 <= c < width and marked[r, c] not in (START, GOAL):
            marked[r, c] = PATH
    return marked


@dataclass(frozen=True)
class MazeLayout:
    """One maze with its start, goal and reference solution.

    Attributes:
        grid: (H, W) uint8 symbolic grid: ``FLOOR``, ``WALL``, and the ``START`` and ``GOAL`` markers.
        start: (row, col) of the start square (a cell, so both coordinates are odd).
        goal: (row, col) of the goal square (a cell).
        dist_to_goal: (H, W) int32 shortest-path distance to the goal in moves, -1 on walls.
        solution_path: Shortest path from start to goal, both included (unique in a perfect maze).
        solution_grid: ``grid`` with the solution's intermediate squares set to ``PATH``.
    """

    grid: NDArray[np.uint8]
    start: Cell
    goal: Cell
    dist_to_goal: NDArray[np.int32]
    solution_path: tuple[Cell, ...]
    solution_grid: NDArray[np.uint8]


def make_layout(rng: np.random.Generator, size: int) -> MazeLayout:
    """Carve a maze and place start and goal on cells.

    The start is a uniformly drawn cell. The goal is drawn uniformly among the cells at least as far from
    the start (in moves) as the median cell, so that tasks are never trivially short.

    Args:
        rng: Source of all randomness.
        size: Cells per side (>= 2).

    Returns:
        A layout whose arrays are read-only, so envs can hand them out in ``info`` without copying.
    """
    grid = carve_maze(rng, size)
    cell = int(rng.integers(size * size))
    start = (2 * (cell // size) + 1, 2 * (cell % size) + 1)
    cell_dist = bfs_distances(grid, start)[1::2, 1::2].ravel()
    threshold = max(1, int(np.median(cell_dist)))
    candidates = np.flatnonzero(cell_dist >= threshold)
    cell = int(candidates[rng.integers(len(candidates))])
    goal = (2 * (cell // size) + 1, 2 * (cell % size) + 1)
    grid[start] = START
    grid[goal] = GOAL
    dist_to_goal = bfs_distances(grid, goal)
    path = tuple(path_from_distances(dist_to_goal, start))
    solution_grid = mark_path(grid, list(path))
    for array in (grid, dist_to_goal, solution_grid):
        array.setflags(write=False)
    return MazeLayout(grid, start, goal, dist_to_goal, path, solution_grid)


def path_from_marks(marks: NDArray[np.bool_], start: Cell, goal: Cell) -> list[Cell]:
    """Order the marked squares of a submitted grid into a path from ``start``.

    The walk starts at ``start`` and repeatedly steps to the one marked, unvisited neighbour; it stops at
    the goal or where there is no such neighbour or more than one. Marked squares the walk did not reach
    are appended in row-major order, so a grid is accepted by the verifier exactly when its marks form one
    simple path from start to goal (start and goal count as marked).

    Args:
        marks: (H, W) bool mask of path squares.
        start: (row, col) where the walk begins.
        goal: (row, col) where the walk should end.

    Returns:
        The ordered squares.
    """
    marks = np.array(marks, dtype=bool)
    height, width = marks.shape
    for r, c in (start, goal):
        if 0 <= r < height and 0 <= c < width:
            marks[r, c] = True
    path = [start]
    seen = {start}
    r, c = start
    while (r, c) != goal:
        options = [
            (r + dr, c + dc)
            for dr, dc in MOVES
            if 0 <= r + dr < height and 0 <= c + dc < width and marks[r + dr, c + dc]
        ]
        options = [o for o in options if o not in seen]
        if len(options) != 1:
            break
        r, c = options[0]
        path.append((r, c))
        seen.add((r, c))
    rest = [(r, c) for r, c in map(tuple, np.argwhere(marks).tolist()) if (r, c) not in seen]
    return path + rest
