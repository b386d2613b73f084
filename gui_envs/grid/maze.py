"""Maze-v0: find the path through a perfect maze, answered in one step or walked move by move."""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any, Literal

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from numpy.typing import NDArray

from gui_envs.grid.errors import GridConfigError
from gui_envs.grid.maze_gen import (
    AGENT,
    CODE_CHARS,
    GOAL,
    MOVES,
    WALL,
    MazeLayout,
    grid_side,
    make_layout,
    mark_path,
)
from gui_envs.grid.parsing import parse_maze_answer, path_to_text
from gui_envs.grid.render import MAZE_PALETTE, grid_to_rgb, text_space
from gui_envs.grid.solution_checks import Verdict, verify_maze_path
from gui_envs.schema.errors import ResetNeededError, did_you_mean, safe_repr
from gui_envs.schema.lifecycle import GuardedClose, guarded_reset, guarded_step

MazeObs = dict[str, Any] | NDArray[np.uint8]
MazeAction = str | int | np.integer | NDArray[Any] | Sequence[Sequence[int]]

MIN_SIZE, MAX_SIZE = 2, 64
_MOVE_NAMES = ("right", "down", "left", "up")


class MazeEnv(GuardedClose, gym.Env[MazeObs, MazeAction]):
    """A perfect maze on a symbolic grid; reach the goal from the start.

    Each reset carves a new ``size`` x ``size``-cell maze from the env's seeded generator (or reuses one
    fixed maze when ``layout_seed`` is set) and places a start and a goal on cells. The maze lives on a
    square symbolic grid of side ``H = W = 2 * size + 1`` (cells at odd coordinates, walls between them,
    a wall ring outside); all coordinates are ``(row, col)`` grid squares, row 0 at the top. Grid codes:
    0 floor, 1 wall, 2 start, 3 goal, 4 path (in solution and submission grids).

    ## Modes

    ``mode="answer"`` (default, for language models): the episode is one step. The agent submits a whole
    path; it is judged by the SSL App. B.4 maze verifier (starts at the start, ends at the goal, never
    enters a wall, consecutive squares one move apart; revisits allowed).

    ``mode="navigate"`` (for RL): the agent moves one square per step, MiniGrid style.

    ## Action space

    - answer: ``Text(max_length=max(8192, 16 * H * W))`` over letters, digits, punctuation, space and
      newline. Understood answers: a coordinate list ``"[(1, 1), (1, 2), ...]"``, a move string ``"RRDD"``
      (U/D/L/R, one square each, from the start), or the text maze with path squares drawn as ``*``.
      ``step`` also takes a (k, 2) int array or list of coordinates, or an (H, W) grid with path squares
      equal to 4 (or True in a bool mask).
    - navigate: ``Discrete(4)``: 0 right (col + 1), 1 down (row + 1), 2 left (col - 1), 3 up (row - 1),
      MiniGrid's direction order. A move into a wall leaves the agent in place.

    ## Observation space

    - answer: ``Dict`` with ``"grid"`` ``Box(0, 3, (H, W), uint8)`` (codes above), ``"start"`` and ``"goal"``
      ``Box(0, H - 1, (2,), int64)`` as (row, col), and ``"text"``, the text rendering (a ``Text`` space;
      also :meth:`render_text`).
    - navigate: ``Box(0, 255, (H, W, 3), uint8)``, one image-like channel each for walls, the agent and the
      goal (255 where present, else 0), so SB3's ``MlpPolicy`` takes it unchanged (``CnnPolicy``'s default
      NatureCNN needs H, W >= 36, i.e. ``size >= 18``).

    ## Rewards

    - answer: 1.0 when the verifier accepts the path, else 0.0 (an unparseable answer also scores 0.0).
    - navigate: ``1 - 0.9 * step_count / max_steps`` on reaching the goal, as MiniGrid; 0.0 otherwise.
      Invalid actions (not an int in 0..3) are no-ops with reward 0.0 and ``info["action_error"]``.

    ## Episode end

    - answer: terminates after the one step.
    - navigate: terminates on reaching the goal; truncates after ``max_steps`` steps, by default
      ``4 * (2 * size**2 - 1)``, four times the number of floor squares.

    ## Info

    Always: ``"start"`` and ``"goal"``. Navigate mode adds ``"agent_pos"``; each step also ``"success"``
    (goal reached), and ``"action_error"`` for an invalid action. An answer step adds ``"submission_grid"``
    (the submitted path drawn like the solution grid, or None when unparseable), ``"parse_error"`` (str or
    None), ``"success"`` (bool) and ``"reason"`` (why the verifier rejected, "" on success). The solution and
    the distance to the goal are privileged: :meth:`privileged`, never ``info``.

    ## Arguments

    - ``size``: cells per side, 2..64 (default 10: a 21x21 grid; ``size=15`` gives 31x31, close to the
      SSL paper's 30x30 symbolic mazes).
    - ``mode``: ``"answer"`` or ``"navigate"``.
    - ``layout_seed``: when set, every reset reuses the maze, start and goal generated from this seed.
    - ``max_steps``: navigate-mode step limit (default above).
    - ``render_mode``: ``"rgb_array"`` (``cell_px`` pixels per square) or ``"ansi"`` (the text rendering).

    ## Version history

    - v0: initial version.
    """

    metadata = {"render_modes": ["rgb_array", "ansi"], "render_fps": 8}

    def __init__(
        self,
        size: int = 10,
        mode: Literal["answer", "navigate"] = "answer",
        layout_seed: int | None = None,
        max_steps: int | None = None,
        render_mode: str | None = None,
        cell_px: int = 8,
    ) -> None:
        if not isinstance(size, int | np.integer) or not MIN_SIZE <= size <= MAX_SIZE:
            raise GridConfigError(f"size={size!r} must be an int in {MIN_SIZE}..{MAX_SIZE} (cells per side)")
        if mode not in ("answer", "navigate"):
            hint = did_you_mean(mode, ("answer", "navigate"))
            raise GridConfigError(f"mode={mode!r} is unknown; use 'answer' or 'navigate'.{hint}")
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise GridConfigError(
                f"render_mode={render_mode!r} is unknown; use one of {self.metadata['render_modes']}"
            )
        if not isinstance(cell_px, int) or cell_px < 1:
            raise GridConfigError(f"cell_px={cell_px!r} must be a positive int (pixels per grid square)")
        if max_steps is not None and max_steps < 1:
            raise GridConfigError(f"max_steps={max_steps} must be a positive number of steps, or None")
        self.size = int(size)
        self.mode = mode
        self.render_mode = render_mode
        self.cell_px = cell_px
        side = grid_side(self.size)
        self.side = side
        self.max_steps = max_steps if max_steps is not None else 4 * (2 * self.size**2 - 1)
        if mode == "answer":
            self.observation_space = spaces.Dict(
                {
                    "grid": spaces.Box(0, GOAL, (side, side), np.uint8),
                    "start": spaces.Box(0, side - 1, (2,), np.int64),
                    "goal": spaces.Box(0, side - 1, (2,), np.int64),
                    "text": text_space(1024 + side * (side + 1)),
                }
            )
            self.action_space = text_space(max(8192, 16 * side * side))
        else:
            self.observation_space = spaces.Box(0, 255, (side, side, 3), np.uint8)
            self.action_space = spaces.Discrete(4)
        self._fixed_layout = (
            make_layout(np.random.default_rng(layout_seed), self.size) if layout_seed is not None else None
        )
        self._layout: MazeLayout | None = None
        # Flat-index tables for the navigate hot path: an offset per action and walkability/distance per
        # square as Python lists, so a step is a few list look-ups and two in-place writes, no allocation.
        self._offsets = [dr * side + dc for dr, dc in MOVES]
        self._walkable: list[bool] = []
        self._dist: list[int] = []
        self._obs = np.zeros((side, side, 3), dtype=np.uint8)
        self._obs_flat = self._obs.reshape(-1)
        self._pos = 0
        self._start_dist = 1
        self._steps = 0
        self._submission: NDArray[np.uint8] | None = None

    # ------------------------------------------------------------------------------------------ reset

    @guarded_reset
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[MazeObs, dict[str, Any]]:
        super().reset(seed=seed)
        layout = (
            self._fixed_layout if self._fixed_layout is not None else make_layout(self.np_random, self.size)
        )
        if layout is not self._layout:
            self._use_layout(layout)
        side = self.side
        self._pos = layout.start[0] * side + layout.start[1]
        self._start_dist = max(1, int(layout.dist_to_goal[layout.start]))
        self._steps = 0
        self._submission = None
        self._obs[:, :, 1] = 0
        self._obs_flat[self._pos * 3 + 1] = 255
        return self._observation(), self._info()

    def _use_layout(self, layout: MazeLayout) -> None:
        self._layout = layout
        self._walkable = (layout.grid != WALL).ravel().tolist()
        self._dist = layout.dist_to_goal.ravel().tolist()
        self._obs[:] = 0
        self._obs[:, :, 0] = np.where(layout.grid == WALL, 255, 0)
        self._obs[layout.goal[0], layout.goal[1], 2] = 255

    # ------------------------------------------------------------------------------------------- step

    @guarded_step
    def step(self, action: MazeAction) -> tuple[MazeObs, float, bool, bool, dict[str, Any]]:
        if self.mode == "answer":
            return self._step_answer(action)
        # Navigate mode, written for speed: this is the inner loop of RL training.
        self._steps += 1
        steps = self._steps
        try:
            move = operator.index(action)  # int or numpy integer; floats and arrays are rejected
        except Exception:  # noqa: BLE001 - TypeError, or whatever a hostile __index__ raises: a bad move either way
            move = -1
        pos = self._pos
        if 0 <= move < 4:
            nxt = pos + self._offsets[move]
            if self._walkable[nxt]:  # the wall ring keeps nxt inside the grid
                self._obs_flat[pos * 3 + 1] = 0
                self._obs_flat[nxt * 3 + 1] = 255
                self._pos = nxt
        terminated = self._dist[self._pos] == 0
        reward = 1.0 - 0.9 * steps / self.max_steps if terminated else 0.0
        truncated = not terminated and steps >= self.max_steps
        info = self._info()
        info["success"] = terminated
        if not 0 <= move < 4:
            info["action_error"] = f"action {safe_repr(action)} is not an int in 0..3 (0 right, 1 down, 2 left, 3 up)"
        return self._obs.copy(), reward, terminated, truncated, info

    def _step_answer(self, action: MazeAction) -> tuple[MazeObs, float, bool, bool, dict[str, Any]]:
        layout = self._require_layout()
        parsed = parse_maze_answer(action, layout.grid, layout.start, layout.goal)
        if parsed.ok and parsed.value is not None:
            verdict = verify_maze_path(layout.grid, parsed.value, layout.start, layout.goal)
            self._submission = mark_path(layout.grid, parsed.value)
        else:
            verdict = Verdict(False, f"unparseable answer: {parsed.error}")
            self._submission = None
        info = self._info()
        info["submission_grid"] = None if self._submission is None else self._submission.copy()
        info["parse_error"] = parsed.error
        info["success"] = verdict.ok
        info["reason"] = verdict.reason
        return self._observation(), float(verdict.ok), True, False, info

    # -------------------------------------------------------------------------------- observations

    def _require_layout(self) -> MazeLayout:
        if self._layout is None:
            raise ResetNeededError("call reset() before step(), render() or oracle_action()")
        return self._layout

    def _observation(self) -> MazeObs:
        if self.mode == "navigate":
            return self._obs.copy()
        layout = self._require_layout()
        return {
            "grid": layout.grid.copy(),
            "start": np.array(layout.start, dtype=np.int64),
            "goal": np.array(layout.goal, dtype=np.int64),
            "text": self.render_text(),
        }

    def _info(self) -> dict[str, Any]:
        layout = self._require_layout()
        info: dict[str, Any] = {"start": layout.start, "goal": layout.goal}
        if self.mode == "navigate":
            info["agent_pos"] = divmod(self._pos, self.side)
        return info

    def privileged(self) -> dict[str, Any]:
        """The reference solution and, in navigate mode, the distance left (see :mod:`gui_envs.schema.privileged`).

        ``solution_path`` (tuple of (row, col), start -> goal), ``solution_grid`` ((H, W) uint8, the path's
        squares set to 4); navigate adds ``distance_to_goal`` (moves along the maze) and ``progress``
        (``1 - distance_to_goal / initial distance``, clipped to [0, 1]).
        """
        layout = self._require_layout()
        # The layout's arrays are read-only, so they are shared, not copied: this runs every step under SSL.
        out: dict[str, Any] = {"solution_path": layout.solution_path, "solution_grid": layout.solution_grid}
        if self.mode == "navigate":
            dist = self._dist[self._pos]
            out["distance_to_goal"] = dist
            out["progress"] = max(0.0, 1.0 - dist / self._start_dist)
        return out

    def render_text(self) -> str:
        """The maze as text for language models: instructions, legend, then one line per grid row."""
        layout = self._require_layout()
        side, (sr, sc), (gr, gc) = self.side, layout.start, layout.goal
        rows = [[CODE_CHARS[v] for v in row] for row in layout.grid.tolist()]
        lines = [
            f"Maze on a {side}x{side} grid; rows and columns are numbered from 0 at the top left.",
            f"Legend: '#' wall, '.' floor, 'S' start at (row {sr}, col {sc}), 'G' goal at (row {gr}, col {gc}).",
        ]
        if self.mode == "navigate":
            ar, ac = divmod(self._pos, side)
            rows[ar][ac] = "A"
            lines.append(f"'A' is you, at (row {ar}, col {ac}). Actions: 0 right, 1 down, 2 left, 3 up.")
        else:
            lines.append(
                "Find a path from S to G that moves one square up, down, left or right at a time and never "
                "enters a wall."
            )
            lines.append(
                f"Answer with the list of (row, col) squares from S to G, e.g. [({sr}, {sc}), ..., ({gr}, {gc})]."
            )
        lines.append("")
        lines.extend("".join(row) for row in rows)
        return "\n".join(lines)

    def render(self) -> NDArray[np.uint8] | str | None:
        """``rgb_array``: (H * cell_px, W * cell_px, 3) uint8 image of the maze, with the submitted path
        (answer mode) or the agent (navigate mode) drawn in. ``ansi``: :meth:`render_text`."""
        if self.render_mode is None:
            gym.logger.warn("render() called without a render_mode; pass render_mode='rgb_array' or 'ansi'")
            return None
        if self.render_mode == "ansi":
            return self.render_text()
        layout = self._require_layout()
        grid = np.array(self._submission if self._submission is not None else layout.grid)
        if self.mode == "navigate":
            grid[divmod(self._pos, self.side)] = AGENT
        return grid_to_rgb(grid, MAZE_PALETTE, self.cell_px)

    # ------------------------------------------------------------------------------------------ oracle

    def oracle_action(self) -> str | int:
        """An action that solves the current state.

        Answer mode: the shortest path as coordinate text. Navigate mode: the move (0..3) that takes the
        agent one square closer to the goal (0 once at the goal).
        """
        layout = self._require_layout()
        if self.mode == "answer":
            return path_to_text(list(layout.solution_path))
        pos, dist = self._pos, self._dist
        for move, offset in enumerate(self._offsets):
            nxt = pos + offset
            if self._walkable[nxt] and dist[nxt] == dist[pos] - 1:
                return move
        return 0
