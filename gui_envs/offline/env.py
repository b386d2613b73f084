"""GuiOffline-v0: a recorded GUI dataset (ScreenSpot, AndroidControl, AITZ, GUI-Odyssey, GUI-R1) as an env."""

from __future__ import annotations

import numbers
import tempfile
from pathlib import Path
from types import MappingProxyType
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from gui_envs.offline.conventions import convention_for
from gui_envs.offline.fixtures import write_fixture
from gui_envs.offline.gui_r1 import gui_r1_prediction
from gui_envs.offline.readers import OfflineEpisode, read_dataset
from gui_envs.offline.scoring import score_step
from gui_envs.schema.action_space import ActionSpace
from gui_envs.schema.actions import (
    MAX_OUTPUT_CHARS,
    Action,
    InvalidActionError,
    actions_from_json,
    coerce_action,
)
from gui_envs.schema.errors import ResetNeededError
from gui_envs.schema.json_scan import answer_body, first_json
from gui_envs.schema.lifecycle import (
    GuardedClose,
    ResetOption,
    check_render_mode,
    guarded_reset,
    guarded_step,
)


class ScreenshotSpace(gym.Space[np.ndarray]):
    """(H, W, 3) uint8 images of any size up to ``max_size`` = (width, height): recorded screens vary."""

    def __init__(self, max_size: tuple[int, int] = (8192, 8192), seed: int | None = None) -> None:
        super().__init__(None, np.uint8, seed)
        self.max_size = max_size

    def contains(self, x: Any) -> bool:
        return (
            isinstance(x, np.ndarray)
            and x.dtype == np.uint8
            and x.ndim == 3
            and x.shape[2] == 3
            and 0 < x.shape[1] <= self.max_size[0]
            and 0 < x.shape[0] <= self.max_size[1]
        )

    def sample(self, mask: Any = None, probability: Any = None) -> np.ndarray:
        h, w = int(self.np_random.integers(1, 64)), int(self.np_random.integers(1, 64))
        return self.np_random.integers(0, 256, (h, w, 3), dtype=np.uint8)


class AnyText(gym.Space[str]):
    """Any string of at most ``max_length`` characters (recorded instructions use every Unicode character)."""

    def __init__(self, max_length: int, seed: int | None = None) -> None:
        super().__init__(None, None, seed)
        self.max_length = max_length

    def contains(self, x: Any) -> bool:
        return isinstance(x, str) and len(x) <= self.max_length

    def sample(self, mask: Any = None, probability: Any = None) -> str:
        return "".join(self.np_random.choice(list("abc xyz"), size=int(self.np_random.integers(0, 8))))


class GuiOfflineEnv(GuardedClose, gym.Env[dict[str, Any], Any]):
    """Replays a recorded GUI dataset: each step shows the recorded screen; the agent's action is scored.

    ## Observation

    ``Dict``: ``screenshot`` (H, W, 3) uint8, the recorded screen (size varies per record); ``instruction``
    (str, the episode goal; with ``step_level`` the step's low-level instruction where recorded);
    ``step_instruction`` (str: with ``step_level``, the step's low-level instruction where recorded; else always
    "", since "type fresh milk" hands a high-level agent the step's answer);
    ``history`` (str, the recorded actions so far); ``elements`` (always empty: recorded datasets carry no
    element list here); ``platform`` (str).

    ## Action

    An :class:`~gui_envs.schema.actions.Action` in screenshot pixels, its dict form, or model output text as
    :func:`read_prediction` reads it (``gui_r1`` in GUI-R1's own vocabulary first). The space is an :class:`~gui_envs.schema.action_space.ActionSpace` whose viewport follows
    the current record's screen size (pixels), so random clicks land on the screen shown. Unparseable input scores 0 and sets ``info["action_error"]``.

    ## Reward

    1.0 when the step succeeds (SR: type and arguments right), else 0. Type, GR and SR follow the dataset's own
    evaluation code: its action names, click tolerance, text-match rule and scroll words
    (:mod:`gui_envs.offline.conventions`; ``docs/offline_datasets.md``). On ``gui_r1`` a GUI-R1 answer whose
    action only GUI-R1 names (``select``, ``enter``, ``drag``, ``call_user``, ...) is read with GUI-R1's
    vocabulary.

    ## Episode end

    The next step always follows the **recorded** trajectory, whatever the agent did. Terminates after the
    last recorded step. ``info["success"]`` at the end: every step succeeded; ``info["score"]``: SR mean.

    ## Info

    ``type_match``, ``grounding`` (None when GR does not apply), ``step_success``, ``prediction`` (the parsed
    action), ``screen_size`` (width, height), ``platform``, ``category``, ``episode_id``, ``step_index``,
    ``num_steps``.

    ## Privileged

    :meth:`privileged` (see :mod:`gui_envs.schema.privileged`; never in ``info``): ``target_action`` (the recorded
    action of the current step, a dict) and ``target_bbox`` (its element's box, pixels, or None). How far a
    click landed from the target is feedback an agent could carry into its next attempt at the episode, so it
    is computed by the evaluator from these (:func:`agents.evaluate.evaluate`), not put in ``info``.

    ## Arguments

    - ``dataset``: a reader name (``screenspot``, ``screenspot_pro``, ``androidcontrol``, ``aitz``,
      ``gui_odyssey``, ``gui_r1``).
    - ``path``: the dataset folder; default the bundled fixture (written to a temp folder).
    - ``step_level``: use the recorded step instruction as the instruction (AndroidControl-Low).
    - ``on_error``: ``"raise"`` (default) refuses a dataset with a record that does not fit its schema, naming
      file, record and field; ``"skip"`` leaves such records out (``read_report`` lists them).

    ``reset(seed=i)`` plays episode ``i % len(episodes)``; ``options={"episode": i}`` does the same. After the
    last recorded step the episode has ended: ``step`` raises :class:`~gui_envs.schema.errors.ResetNeededError` until the
    next ``reset`` (:mod:`gui_envs.schema.lifecycle`).

    ## Version history

    - v0: initial version; readers take each dataset's published layout and score with its own conventions.
    """

    metadata = {"render_modes": ["rgb_array"], "render_fps": 1}

    def __init__(
        self,
        dataset: str = "screenspot",
        path: str | None = None,
        step_level: bool = False,
        render_mode: str | None = None,
        on_error: str = "raise",
    ) -> None:
        root = (
            Path(path)
            if path is not None
            else write_fixture(dataset, Path(tempfile.gettempdir()) / "guigym-offline-fixtures")
        )
        self.dataset = dataset
        episodes = read_dataset(dataset, root, on_error=on_error)
        self.read_report = episodes.report
        self.episodes: list[OfflineEpisode] = list(episodes)
        self.convention = convention_for(dataset)
        self.step_level = step_level
        check_render_mode(type(self), render_mode)
        self.render_mode = render_mode
        self.observation_space = spaces.Dict(
            {
                "screenshot": ScreenshotSpace(),
                "instruction": AnyText(4096),
                "step_instruction": AnyText(4096),
                "history": AnyText(1 << 20),
                "elements": spaces.Sequence(AnyText(1)),
                "platform": AnyText(256),
            }
        )
        self.action_space = ActionSpace(_image_size(self.episodes[0].steps[0].image))
        self._episode: OfflineEpisode | None = None
        self._index = 0
        self._history: list[str] = []
        self._shot: np.ndarray | None = None
        self._successes: list[bool] = []

    reset_options = MappingProxyType({"episode": ResetOption((numbers.Integral,), "an episode index (int)")})

    @guarded_reset
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        super().reset(seed=seed)
        number = (options or {}).get(
            "episode", seed if seed is not None else int(self.np_random.integers(len(self.episodes)))
        )
        self._episode = self.episodes[int(number) % len(self.episodes)]
        self._index, self._history, self._successes = 0, [], []
        return self._observation(), self._info()

    @guarded_step
    def step(self, action: Any) -> tuple[dict[str, Any], float, bool, bool, dict[str, Any]]:
        if self._episode is None:
            raise ResetNeededError("call reset() before step()")
        step = self._episode.steps[self._index]
        size = (int(self._shot.shape[1]), int(self._shot.shape[0]))  # type: ignore[union-attr]
        # A GUI-R1 answer is read with GUI-R1's own vocabulary first: the generic reader knows no "select" or
        # "call_user", and takes the "no input text" of a "complete" for an answer.
        r1 = gui_r1_prediction(action, size) if self.dataset == "gui_r1" else None
        pred, error = (r1, None) if r1 is not None else read_prediction(action)
        result = score_step(pred, step.action, step.bbox, size, self.convention, step.boxes)
        info = self._info()
        info.update(
            type_match=result.type_match,
            grounding=result.grounding,
            step_success=result.success,
            action_error=error,
            prediction=pred.to_dict() if pred is not None else None,
        )
        self._successes.append(result.success)
        self._history.append(step.action.to_json())
        self._index += 1
        terminated = self._index >= len(self._episode.steps)
        if terminated:
            info["success"] = all(self._successes)
            info["score"] = float(np.mean(self._successes))
            obs = {**self._last_obs, "screenshot": self._last_obs["screenshot"].copy()}
        else:
            obs = self._observation()
        return obs, float(result.success), terminated, False, info

    def oracle_action(self) -> Action:
        """The recorded action of the current step."""
        if self._episode is None:
            raise ResetNeededError("call reset() before oracle_action()")
        return self._episode.steps[min(self._index, len(self._episode.steps) - 1)].action

    def privileged(self) -> dict[str, Any]:
        """The recorded target of the current step and the last step's click offset (module docstring)."""
        if self._episode is None:
            raise ResetNeededError("call reset() before privileged()")
        step = self._episode.steps[min(self._index, len(self._episode.steps) - 1)]
        return {
            "target_action": step.action.to_dict(),
            "target_bbox": list(step.bbox) if step.bbox is not None else None,
        }

    def render(self) -> np.ndarray | None:
        return self._shot if self.render_mode == "rgb_array" else None

    def _observation(self) -> dict[str, Any]:
        from PIL import Image

        assert self._episode is not None
        step = self._episode.steps[self._index]
        with Image.open(step.image) as img:
            self._shot = np.asarray(img.convert("RGB"), dtype=np.uint8)
        self.action_space.viewport = (self._shot.shape[1], self._shot.shape[0])
        # The low-level instruction ("type fresh milk") spells out the step's action: it is the task itself in
        # step-level mode (AndroidControl-Low) and would be the answer in high-level mode, so it is shown only there.
        step_instruction = (step.step_instruction or "") if self.step_level else ""
        instruction = step_instruction or self._episode.instruction
        history = step.history if step.history is not None else "; ".join(self._history)
        self._last_obs = {
            "screenshot": self._shot,
            "instruction": instruction,
            "step_instruction": step_instruction,
            "history": history,
            "elements": (),
            "platform": self._episode.platform,
        }
        return self._last_obs

    def _info(self) -> dict[str, Any]:
        assert self._episode is not None
        return {
            "task": self.dataset,
            "instruction": self._episode.instruction,
            "episode_id": self._episode.id,
            "step_index": self._index,
            "num_steps": len(self._episode.steps),
            "platform": self._episode.platform,
            "category": self._episode.category,
            "screen_size": None
            if self._shot is None
            else (int(self._shot.shape[1]), int(self._shot.shape[0])),
        }


def _image_size(path: Any) -> tuple[int, int]:
    """``(width, height)`` of an image file, pixels (reads the header only)."""
    from PIL import Image

    with Image.open(path) as img:
        return img.size


def read_prediction(output: Any) -> tuple[Action | None, str | None]:
    """A model's prediction as the offline datasets' own scorers read it: model output text (the JSON in its
    ``<answer>`` tag, or the first JSON anywhere, as :func:`agents.parsing.parse_action_text` finds it) or
    whatever :func:`~gui_envs.schema.actions.coerce_action` takes. Never raises; ``(None, why)`` when there is no action.

    Unlike the online envs, an offline env is a scorer of predictions made elsewhere (``--agent replay:``), so it
    reads the raw output text the dataset's evaluation reads.
    """
    if not isinstance(output, str) or len(output) > MAX_OUTPUT_CHARS:
        return coerce_action(output)
    try:
        payload, failure = first_json(answer_body(output))
        if failure is not None:
            return None, f"malformed action ({failure[0]}): {failure[1]}"
        return actions_from_json(payload)[0], None
    except (InvalidActionError, TypeError) as exc:
        return None, f"malformed action: {exc}"
