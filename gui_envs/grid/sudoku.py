"""Sudoku-v0: complete a generated 9x9 Sudoku with a unique solution, answered in one step."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from numpy.typing import NDArray

from gui_envs.grid.errors import GridConfigError
from gui_envs.grid.parsing import parse_grid_action
from gui_envs.grid.render import digits_to_text, sudoku_board_rgb, text_space
from gui_envs.grid.solution_checks import Verdict, verify_sudoku
from gui_envs.grid.sudoku_gen import MAX_BLANKS, generate_sudoku
from gui_envs.schema.errors import ResetNeededError
from gui_envs.schema.lifecycle import GuardedClose, guarded_reset, guarded_step

SudokuObs = dict[str, Any]
SudokuAction = str | NDArray[Any] | list[list[int]]

_TEXT_MAX = 2048
_ACTION_MAX = 8192


def _unflatten(action: SudokuAction) -> SudokuAction:
    """Reshape an (81,) array-like answer into (9, 9); leave anything else for the parser to judge."""
    if isinstance(action, str):
        return action
    try:
        array = np.asarray(action)
    except Exception:  # noqa: BLE001 - ragged or 5,000-deep lists, hostile objects: the parser reports them
        return action
    return array.reshape(9, 9) if array.shape == (81,) else action


class SudokuEnv(GuardedClose, gym.Env[SudokuObs, SudokuAction]):
    """Fill in a 9x9 Sudoku; one step per episode.

    Each reset generates, from the env's seeded generator, a complete grid and digs ``blanks`` cells out of
    it while keeping the solution unique (see :mod:`gui_envs.grid.sudoku_gen`; about 2 ms at 50 blanks).

    ## Action space

    ``Text(max_length=8192)`` over letters, digits, punctuation, space and newline. The answer is the
    completed grid: 9 lines of 9 digits (separators such as spaces, commas, ``|`` and ``-`` lines are
    ignored; the last block of digit lines in the text counts), 81 digits on one line, or a nested list
    ``[[5, 3, ...], ...]``. ``step`` also takes a (9, 9) or (81,) integer array or nested list.

    ## Observation space

    ``Dict`` with ``"grid"``: ``Box(0, 9, (9, 9), uint8)``, the puzzle with 0 for blanks, and ``"text"``:
    the text rendering (``Text(max_length=2048)``; also :meth:`render_text`), blanks written as ``.``.

    ## Rewards

    1.0 when the answer passes the SSL App. B.4 Sudoku verifier (every cell 1-9; every row, column and
    3x3 box holds 1-9 exactly once) and keeps every given; 0.0 otherwise, including unparseable answers.

    ## Episode end

    Terminates after the one step; never truncates.

    ## Info

    Always: ``"puzzle_grid"`` ((9, 9) uint8). The solution is privileged (:meth:`privileged`). After a step: ``"submission_grid"``
    ((9, 9) int64, or None when the answer is not a 9x9 grid), ``"parse_error"`` (str or None),
    ``"success"`` (bool) and ``"reason"`` (why the verifier rejected; "" on success).

    ## Arguments

    - ``blanks``: number of blank cells, 0..58 (default 50, i.e. 31 givens). More blanks is harder.
    - ``render_mode``: ``"rgb_array"`` (the board, with submitted digits in blue or red when wrong) or
      ``"ansi"`` (the text rendering).

    ## Version history

    - v0: initial version.
    """

    metadata = {"render_modes": ["rgb_array", "ansi"], "render_fps": 4}

    def __init__(self, blanks: int = 50, render_mode: str | None = None) -> None:
        if not isinstance(blanks, int | np.integer) or not 0 <= blanks <= MAX_BLANKS:
            raise GridConfigError(
                f"blanks={blanks!r} must be an int in 0..{MAX_BLANKS} (givens = 81 - blanks)"
            )
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise GridConfigError(
                f"render_mode={render_mode!r} is unknown; use one of {self.metadata['render_modes']}"
            )
        self.blanks = int(blanks)
        self.render_mode = render_mode
        self.observation_space = spaces.Dict(
            {"grid": spaces.Box(0, 9, (9, 9), np.uint8), "text": text_space(_TEXT_MAX)}
        )
        self.action_space = text_space(_ACTION_MAX)
        self._puzzle: NDArray[np.uint8] | None = None
        self._solution: NDArray[np.uint8] | None = None
        self._submission: NDArray[np.int64] | None = None

    @guarded_reset
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[SudokuObs, dict[str, Any]]:
        super().reset(seed=seed)
        self._puzzle, self._solution = generate_sudoku(self.np_random, self.blanks)
        self._submission = None
        return self._observation(), self._info()

    @guarded_step
    def step(self, action: SudokuAction) -> tuple[SudokuObs, float, bool, bool, dict[str, Any]]:
        puzzle, _ = self._require_puzzle()
        parsed = parse_grid_action(_unflatten(action), blank_chars=".")
        grid, error = parsed.value, parsed.error
        if grid is not None and grid.shape == (1, 81):  # 81 digits written on one line
            grid = grid.reshape(9, 9)
        if grid is not None and grid.shape != (9, 9):
            error = f"expected a 9x9 grid, got {grid.shape[0]}x{grid.shape[1]}"
            grid = None
        self._submission = grid
        verdict = (
            verify_sudoku(grid, puzzle)
            if grid is not None
            else Verdict(False, f"unparseable answer: {error}")
        )
        info = self._info()
        info["submission_grid"] = None if grid is None else grid.copy()
        info["parse_error"] = error
        info["success"] = verdict.ok
        info["reason"] = verdict.reason
        return self._observation(), float(verdict.ok), True, False, info

    def _require_puzzle(self) -> tuple[NDArray[np.uint8], NDArray[np.uint8]]:
        if self._puzzle is None or self._solution is None:
            raise ResetNeededError("call reset() before step(), render() or oracle_action()")
        return self._puzzle, self._solution

    def _observation(self) -> SudokuObs:
        puzzle, _ = self._require_puzzle()
        return {"grid": puzzle.copy(), "text": self.render_text()}

    def _info(self) -> dict[str, Any]:
        puzzle, _ = self._require_puzzle()
        return {"puzzle_grid": puzzle.copy()}

    def privileged(self) -> dict[str, Any]:
        """``solution_grid``: the unique solution, (9, 9) uint8 (see :mod:`gui_envs.schema.privileged`)."""
        _, solution = self._require_puzzle()
        return {"solution_grid": solution.copy()}

    def render_text(self) -> str:
        """The puzzle as text for language models: instructions, then 9 lines with ``.`` for blanks."""
        puzzle, _ = self._require_puzzle()
        return "\n".join(
            [
                f"Sudoku: fill the {int((puzzle == 0).sum())} blank cells ('.') with digits 1-9 so that every "
                "row, every column and every 3x3 box holds each digit exactly once. Keep the given digits.",
                "Answer with the completed grid: 9 lines of 9 digits separated by spaces.",
                "",
                digits_to_text(puzzle, blank="."),
            ]
        )

    def render(self) -> NDArray[np.uint8] | str | None:
        """``rgb_array``: (289, 289, 3) uint8 board; ``ansi``: :meth:`render_text`."""
        if self.render_mode is None:
            gym.logger.warn("render() called without a render_mode; pass render_mode='rgb_array' or 'ansi'")
            return None
        if self.render_mode == "ansi":
            return self.render_text()
        puzzle, solution = self._require_puzzle()
        entries = self._submission
        wrong = None if entries is None else entries != solution
        return sudoku_board_rgb(puzzle, entries, wrong)

    def oracle_action(self) -> str:
        """The solution as text: 9 lines of 9 space-separated digits."""
        _, solution = self._require_puzzle()
        return digits_to_text(solution)
