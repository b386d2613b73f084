"""Proximity reward wrappers: SSL sweet-spot tiers and the baselines SSL is compared with (seed 000).

Each wrapper replaces the env's reward with one reward family, reading what the env puts in ``info`` and in
its privileged channel (:mod:`gui_envs.schema.privileged`: target boxes, solutions, progress, which the agent never
sees); the formulas live in :mod:`rewards` and are only called here. Pick one by name with
:func:`gui_envs.reward_wrappers.with_reward`, or wrap directly:

>>> import gymnasium as gym
>>> import gui_envs
>>> env = SweetSpotReward(gym.make("Maze-v0", size=3, layout_seed=0))
>>> _ = env.reset(seed=0)
>>> _, reward, *_, info = env.step(env.unwrapped.oracle_action())
>>> reward, info["binary_reward"], info["sweet_spot"]  # R = C + 0.2 * S_hat with S_hat = 1 (every block right)
(1.2, 1.0, 1.0)

## What each step is graded on

The wrapper recognises three kinds of env from their privileged facts (``privileged_of(env)``):

* **GUI planning** (a multi-step task env, one holding a :class:`~gui_envs.tasks.env.TaskPool`: the web sites and the
  phone, when the wrapper plans, see ``planning``): every step is graded against the oracle's next move on the screen the agent
  saw (its type, text and arguments, and the privileged ``"target_bbox"`` for pointer actions), and the episode is
  graded once, at its last step, with the paper's planning reward (:func:`rewards.ssl.gui_ssl_reward`, SSL
  section 3.3 "Extension to GUI Planning", App. B.3 Table 5 and App. B.4 "GUI Planning"); see
  :class:`SweetSpotReward`.
* **GUI** (the privileged facts after reset or after the previous step hold ``"target_bbox"``): the step is graded as one
  grounding step against that box, ``(x1, y1, x2, y2)`` in screenshot pixels. The box is the target of the
  *next* action, so the wrapper remembers it from reset / the previous step. The action's location is what is
  graded: its ``point`` (pixels), or the centre of its ``element_id``'s bbox in ``obs["elements"]``; a Box
  ``(x, y)`` pixel action counts as a click. Actions without a location (``stop``, ``press``, ...), and
  malformed actions, score as misses. The contract carries no target action type, so the type is not graded.
  A step whose remembered box is ``None`` (the oracle's next action targets nothing) is **not graded**: the
  env's reward passes through and the log keys are ``None``.
* **Grid answer** (``"submission_grid"`` in the step info: Maze answer mode, Sudoku, ARC): the submitted grid
  against the privileged ``"solution_grid"``. A missing (unparseable) submission scores 0. ARC tasks with ``n`` test inputs
  weight each answer by ``1 / n``, as the env does.
* **Maze navigate** (``"progress"`` in the privileged facts): graded once per trajectory at the episode's last step
  (terminated or truncated); every earlier step earns 0. See :class:`SweetSpotReward` for the choices.

Any other step is not graded (env reward passes through).

## Info keys (every step)

* ``"binary_reward"``: ``C`` in {0, 1}, the SSL App. B.4 verifier: click inside the box (GUI), the env's
  ``"success"`` (grids, navigate). The same value under every wrapper, so runs can be compared on it.
* ``"proximity"``: the raw SSL proximity in [0, 1]: the Gaussian field ``phi(p; B)`` (GUI), the blockwise
  score (grids), the trajectory's shortest-path progress so far (navigate).
* ``"sweet_spot"``: its tier ``S_hat`` in [0, 1] with this wrapper's ``zones`` / ``zone_value`` (grids: the
  blockwise score, whose block values are already tiered, App. B.2).
* ``"env_reward"``: the env's own reward; ``"reward_mode"``: ``"plan"``, ``"gui"``, ``"grid"``, ``"navigate"`` or
  ``None`` (not graded); ``"reward_error"`` when the env's target box is malformed (the step is not graded).
* Planning steps: ``"binary_reward"``, ``"proximity"`` and ``"sweet_spot"`` are the step's ``C(a_t)``, ``h(s_t, a_t)``
  and its tier, and at the episode's last step the trajectory's ``C(tau)``, ``S(tau)`` and ``S_hat(tau)``;
  ``"plan_steps"`` counts the graded steps so far.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Literal, SupportsFloat

import gymnasium as gym
import numpy as np
from numpy.typing import ArrayLike

from gui_envs.grid.arc import ArcEnv
from gui_envs.grid.maze import MazeEnv
from gui_envs.grid.sudoku import SudokuEnv
from gui_envs.schema.actions import Action, coerce_action
from gui_envs.schema.privileged import privileged_of
from gui_envs.tasks.env import TaskPool
from rewards.baselines import cell_match_fraction, gaussian_point_reward, gui_r1_reward
from rewards.geometry import InvalidBoxError, as_box, box_center
from rewards.ssl import (
    ZoneValue,
    arc_blockwise_score,
    blockwise_score,
    discretise,
    gui_ssl_reward,
    ssl_reward,
    step_correct,
    step_proximity,
    sudoku_blockwise_score,
    zone_boundaries,
)
from rewards.steps import GROUNDING_TYPES, StepPrediction, StepTarget

Point = tuple[float, float]
RewardMode = Literal["plan", "gui", "grid", "navigate"]
TrajectoryProximity = Literal["final", "mean"]
#: A grid is scored the way SSL App. B.2 scores its task; other grid envs get the resampling form, which
#: equals the plain blockwise score whenever the shapes already agree.
GRID_SCORES: dict[type, Callable[[ArrayLike, ArrayLike], float]] = {
    MazeEnv: blockwise_score,
    SudokuEnv: sudoku_blockwise_score,
    ArcEnv: arc_blockwise_score,
}
#: Every graded step of a one-step grounding env is a grounding step against this target (see the module docstring).
_GROUNDING = "click"
#: Action arguments a planning step must repeat exactly (besides its type, its text and, for pointer actions, its
#: place): what to scroll, which key, app, page or ending. A scroll's ``amount`` and a stop's ``answer`` are not
#: compared (the env judges the answer: ``C``'s goal condition).
PLAN_ARGS: tuple[str, ...] = ("direction", "key", "app", "target", "url", "status")


class RewardConfigError(ValueError):
    """A reward wrapper was configured with a value it cannot use; the message says what to pass."""


class UnknownRewardError(RewardConfigError):
    """:func:`~gui_envs.reward_wrappers.with_reward` got a name it does not know; the message lists the known names."""


@dataclass(frozen=True)
class StepEvidence:
    """What one env step tells a reward wrapper (units: pixels for points and boxes).

    Attributes:
        mode: which kind of step this is; ``None`` when it is not graded.
        correct: binary verifier ``C`` in {0, 1}.
        proximity: SSL proximity in [0, 1] (see the module docstring).
        sweet_spot: its tier ``S_hat`` in [0, 1].
        done: the episode ended at this step.
        env_reward: the env's own reward.
        weight: the env's weight of this answer (``1 / n`` for an ARC task with ``n`` test inputs, else 1).
        point: GUI: where the action pointed, ``(x, y)`` pixels, or ``None``.
        prediction: GUI: the action as a grounding prediction; ``None`` when it is malformed.
        box: GUI: the remembered target box ``(x1, y1, x2, y2)`` pixels.
        submission: grids: the submitted grid, ``None`` when unparseable.
        solution: grids: the reference grid.
        plan_targets: planning, at the episode's last step: the oracle's move of every graded step.
        plan_preds: planning, at the episode's last step: the agent's action of every graded step (``None``:
            malformed).
        goal_reached: planning: the env's ``"success"`` (App. B.4 condition 4).
    """

    mode: RewardMode | None
    correct: float = 0.0
    proximity: float = 0.0
    sweet_spot: float = 0.0
    done: bool = False
    env_reward: float = 0.0
    weight: float = 1.0
    point: Point | None = None
    prediction: StepPrediction | None = None
    box: tuple[float, float, float, float] | None = None
    submission: Any = None
    solution: Any = None
    plan_targets: tuple[StepTarget, ...] = ()
    plan_preds: tuple[StepPrediction | None, ...] = ()
    goal_reached: bool = False


class ProximityRewardWrapper(gym.Wrapper[Any, Any, Any, Any], gym.utils.RecordConstructorArgs):
    """Base class: gathers a :class:`StepEvidence` each step; subclasses turn it into a reward (:meth:`shape`).

    Args:
        env: a guigym env (or any env that follows the info contract in the module docstring).
        zones: number of sweet-spot zones ``K`` (App. B.1; the paper uses 2-8, default 4).
        zone_value: ``"lower"`` (zone ``k`` is worth ``tau_k``, as printed in section 3.3) or ``"upper"``
            (worth ``tau_{k-1}``); see :func:`rewards.ssl.discretise`.
        edge_sigmas: GUI: the box half-size in Gaussian standard deviations; default ``zones - 1`` (see
            :func:`rewards.ssl.gaussian_field`).
        trajectory: navigate: how step progress becomes the trajectory proximity ``S``: ``"final"``
            (progress at the last step, default) or ``"mean"`` (Eq. 3, the mean over the steps).
        planning: on a multi-step task env (one with a :class:`~gui_envs.tasks.env.TaskPool`), grade steps as planning steps
            (type, text, arguments, place; the module docstring) instead of as clicks on the oracle's next box;
            ``None`` takes the class's :attr:`PLANNING`. Other envs ignore it.
    """

    #: Whether the wrapper grades a multi-step task env's episodes as planning trajectories by default.
    PLANNING: ClassVar[bool] = False

    def __init__(
        self,
        env: gym.Env[Any, Any],
        *,
        zones: int = 4,
        zone_value: ZoneValue = "lower",
        edge_sigmas: float | None = None,
        trajectory: TrajectoryProximity = "final",
        planning: bool | None = None,
    ) -> None:
        # Recorded so that gym.make(env.spec) can rebuild the wrapped env (check_env's determinism check).
        gym.utils.RecordConstructorArgs.__init__(
            self,
            zones=zones,
            zone_value=zone_value,
            edge_sigmas=edge_sigmas,
            trajectory=trajectory,
            planning=planning,
        )
        super().__init__(env)
        try:
            zone_boundaries(zones)
        except ValueError as exc:
            raise RewardConfigError(f"zones={zones!r}: {exc}") from None
        if zone_value not in ("lower", "upper"):
            raise RewardConfigError(f"zone_value={zone_value!r} is unknown; use 'lower' or 'upper'")
        if edge_sigmas is not None and not edge_sigmas > 0:
            raise RewardConfigError(f"edge_sigmas={edge_sigmas!r} must be positive, or None for zones - 1")
        if trajectory not in ("final", "mean"):
            raise RewardConfigError(f"trajectory={trajectory!r} is unknown; use 'final' or 'mean'")
        self.zones, self.zone_value, self.edge_sigmas = int(zones), zone_value, edge_sigmas
        self.trajectory = trajectory
        self._grid_score = next(
            (f for cls, f in GRID_SCORES.items() if isinstance(env.unwrapped, cls)), arc_blockwise_score
        )
        self._last_obs: Any = None
        self._last_priv: Mapping[str, Any] = {}
        self._progress: list[float] = []
        wanted = type(self).PLANNING if planning is None else bool(planning)
        # A multi-step task env draws its episodes from the task pool it holds (GuiWebEnv, GuiAndroidEnv).
        self.planning = wanted and isinstance(getattr(env.unwrapped, "pool", None), TaskPool)
        # Planning: the oracle's move on the screen the agent sees now (None: this step is not graded), and the
        # graded steps of the episode so far.
        self._plan_next: StepTarget | None = None
        self._plan_targets: list[StepTarget] = []
        self._plan_preds: list[StepPrediction | None] = []

    # ----- the one method subclasses write ------------------------------------------------------------
    def shape(self, ev: StepEvidence) -> float:
        """The reward of a graded step."""
        raise NotImplementedError

    # ----- gymnasium API ------------------------------------------------------------------------------
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict]:
        obs, info = self.env.reset(seed=seed, options=options)
        self._last_obs, self._last_priv, self._progress = obs, privileged_of(self.env), []
        self._plan_targets, self._plan_preds = [], []
        if self.planning:
            self._plan_next = self._oracle_target(self._last_priv)
        return obs, info

    def step(self, action: Any) -> tuple[Any, SupportsFloat, bool, bool, dict[str, Any]]:
        obs, env_reward, terminated, truncated, info = self.env.step(action)
        info = dict(info)
        priv = privileged_of(self.env)
        try:
            ev = self._evidence(action, info, priv, float(env_reward), bool(terminated or truncated))
        except InvalidBoxError as exc:  # the env's box is malformed: an env bug, never the agent's
            ev, info["reward_error"] = StepEvidence(None, env_reward=float(env_reward)), str(exc)
        if ev.mode is not None:
            reward = float(self.shape(ev))
        else:  # not graded: the env's reward, except mid-plan, where only the trajectory's last step pays
            reward = 0.0 if self.planning and not (terminated or truncated) else ev.env_reward
        graded = ev.mode is not None
        info.update(
            env_reward=ev.env_reward,
            reward_mode=ev.mode,
            binary_reward=ev.correct if graded else None,
            proximity=ev.proximity if graded else None,
            sweet_spot=ev.sweet_spot if graded else None,
        )
        self._last_obs, self._last_priv = obs, priv
        if self.planning:
            info["plan_steps"] = len(self._plan_targets)
            # The next step is graded against the oracle's move on the screen this step left.
            self._plan_next = None if terminated or truncated else self._oracle_target(priv)
        return obs, reward, terminated, truncated, info

    # ----- evidence -----------------------------------------------------------------------------------
    def _tier(self, score: float) -> float:
        return float(discretise(score, self.zones, self.zone_value))

    def _evidence(
        self,
        action: Any,
        info: Mapping[str, Any],
        priv: Mapping[str, Any],
        env_reward: float,
        done: bool,
    ) -> StepEvidence:
        """``info`` and ``priv``: the public info and the privileged facts after this step."""
        if self.planning:
            return self._plan_evidence(action, info, env_reward, done)
        if "target_bbox" in self._last_priv:
            raw_box = self._last_priv["target_bbox"]
            if raw_box is None:
                return StepEvidence(None, env_reward=env_reward)
            return self._gui_evidence(action, raw_box, env_reward, done)
        if "progress" in priv:
            return self._navigate_evidence({**info, "progress": priv["progress"]}, env_reward, done)
        if "submission_grid" in info and priv.get("solution_grid") is not None:
            return self._grid_evidence({**info, "solution_grid": priv["solution_grid"]}, env_reward, done)
        return StepEvidence(None, env_reward=env_reward)

    def _gui_evidence(self, action: Any, raw_box: Any, env_reward: float, done: bool) -> StepEvidence:
        # SSL section 3.3 / App. B.1 (phi) and App. B.4 "GUI Grounding" (C = click inside B).
        x1, y1, x2, y2 = (float(v) for v in as_box(raw_box))
        box = (x1, y1, x2, y2)
        act = as_action(action)
        point = action_point(act, self._last_obs) if act is not None else None
        if point is not None:
            pred: StepPrediction | None = StepPrediction(_GROUNDING, point=point)
        else:
            pred = StepPrediction(act.type, text=act.text) if act is not None else None
        target = StepTarget(_GROUNDING, box=box)
        phi = step_proximity(target, pred, n_zones=self.zones, edge_sigmas=self.edge_sigmas)
        return StepEvidence(
            "gui",
            correct=float(step_correct(target, pred)),
            proximity=phi,
            sweet_spot=self._tier(phi),
            done=done,
            env_reward=env_reward,
            point=point,
            prediction=pred,
            box=box,
        )

    def _oracle_target(self, priv: Mapping[str, Any]) -> StepTarget | None:
        """The oracle's next move on the current screen as a step target, or ``None`` when it cannot grade: the
        oracle's plan broke (it gives up with ``oracle_error``), or a pointer move has no target box."""
        move = self.env.unwrapped.oracle_action()  # type: ignore[attr-defined]  (a task env's; cached per state)
        if move.type == "stop" and move.status == "failure" and priv.get("oracle_error"):
            return None
        box = None
        if move.type in GROUNDING_TYPES:
            try:
                box = tuple(float(v) for v in as_box(priv.get("target_bbox")))
            except (InvalidBoxError, TypeError, ValueError):
                return None
        text = (move.text or "") if move.type == "type" else None
        return StepTarget(move.type, box=box, text=text, args=_plan_args(move))  # type: ignore[arg-type]

    def _plan_evidence(
        self, action: Any, info: Mapping[str, Any], env_reward: float, done: bool
    ) -> StepEvidence:
        # SSL App. B.3 Table 5 "GUI Planning" (h) and App. B.4 "GUI Planning" (C), per step; the trajectory's
        # C(tau), S(tau) (Eq. 3) and S_hat at the last step, from rewards.ssl.gui_ssl_reward.
        target = self._plan_next
        if target is not None:
            self._plan_targets.append(target)
            self._plan_preds.append(plan_prediction(action, self._last_obs))
        goal = bool(info.get("success", False))
        if done:
            if not self._plan_targets:  # no step could be graded: only the goal counts
                return StepEvidence(
                    "plan", correct=float(goal), done=True, env_reward=env_reward, goal_reached=goal
                )
            targets, preds = tuple(self._plan_targets), tuple(self._plan_preds)
            kw = {"n_zones": self.zones, "edge_sigmas": self.edge_sigmas}
            correct = goal and all(step_correct(t, p) for t, p in zip(targets, preds, strict=True))
            s = float(np.mean([step_proximity(t, p, **kw) for t, p in zip(targets, preds, strict=True)]))  # type: ignore[arg-type]
            return StepEvidence(
                "plan",
                correct=float(correct),
                proximity=s,
                sweet_spot=self._tier(s),
                done=True,
                env_reward=env_reward,
                plan_targets=targets,
                plan_preds=preds,
                goal_reached=goal,
            )
        if target is None:
            return StepEvidence(None, env_reward=env_reward)
        pred = self._plan_preds[-1]
        h = step_proximity(target, pred, n_zones=self.zones, edge_sigmas=self.edge_sigmas)
        return StepEvidence(
            "plan", correct=float(step_correct(target, pred)), proximity=h, sweet_spot=self._tier(h),
            env_reward=env_reward, goal_reached=goal,
        )  # fmt: skip

    def _grid_evidence(self, info: Mapping[str, Any], env_reward: float, done: bool) -> StepEvidence:
        # SSL section 3.3 "Blockwise Sweet-Spot Construction", App. B.2; C from the env's App. B.4 verifier.
        submission, solution = info["submission_grid"], info["solution_grid"]
        score = 0.0
        if submission is not None:
            try:
                score = float(self._grid_score(submission, solution))
            except ValueError:  # a grid of the wrong shape (Sudoku) is as wrong as no grid
                score = 0.0
        num_test = self._last_obs.get("num_test") if isinstance(self._last_obs, Mapping) else None
        return StepEvidence(
            "grid",
            correct=float(bool(info.get("success", False))),
            proximity=score,
            sweet_spot=score,
            done=done,
            env_reward=env_reward,
            weight=1.0 / int(num_test) if num_test else 1.0,
            submission=submission,
            solution=solution,
        )

    def _navigate_evidence(self, info: Mapping[str, Any], env_reward: float, done: bool) -> StepEvidence:
        # Proximity = progress along the shortest path (issue 3, section 6); S(tau) per ``trajectory``.
        self._progress.append(float(info["progress"]))
        s = self._progress[-1] if self.trajectory == "final" else float(np.mean(self._progress))
        return StepEvidence(
            "navigate",
            correct=float(bool(info.get("success", False))),
            proximity=s,
            sweet_spot=self._tier(s),
            done=done,
            env_reward=env_reward,
        )


class SweetSpotReward(ProximityRewardWrapper):
    """SSL reward ``R_SSL = C + alpha * S_hat`` (seed 000, section 3.2 Eq. 1; alpha = 0.2 as in section 4.1).

    Unitless; ``C`` in {0, 1} and ``S_hat`` in [0, 1], so ``R`` is in ``[0, 1 + alpha]`` (times the ARC
    answer weight ``1 / n``).

    * GUI planning, multi-step episodes on the web sites and the phone (seed 000, section 3.3 "Extension to GUI
      Planning"; App. B.3 Table 5; App. B.4 "GUI Planning"), the paper's planning reward
      :func:`rewards.ssl.gui_ssl_reward`, not a click score per step. Each step's reference is the oracle's next move
      on the screen the agent saw. Its step proximity ``h`` is ``phi(p; B)`` for a pointer action (click, long
      press, drag: the right type, the point in the target box ``B``), and the binary ``C(a_t)`` for any other (the
      right type, and for ``type`` exactly the right text, whitespace-normalised; scroll direction, key, app,
      navigation target and stop status must match too); a wrong action type scores 0. ``C(tau)`` is 1 when every
      step is correct (App. B.4 conditions 1-3) and the env judges the task done (condition 4); ``S(tau)`` is the
      mean of ``h`` (Eq. 3), tiered into ``S_hat``. ``R(tau) = C(tau) + alpha * S_hat(tau)`` is paid once, at the
      episode's last step (terminated or truncated; earlier steps earn 0), so give the env a ``max_steps`` no
      larger than a trainer's episode cap. Chosen here: a step the oracle cannot grade (its plan broke, or its
      pointer move names no box) is left out of ``C`` and ``S``; an episode with no graded step earns ``C = 1`` for
      the goal only. The env's oracle advances only when the agent takes its very move (:mod:`gui_envs.tasks.oracle`),
      so after a right-but-different action (another point in the same box) the next reference may be the same
      plan step again. ``planning=False`` restores the click score below.
    * GUI grounding (one-step envs: ``ClickBox``, ``ClickGrid``, the grounding envs, offline datasets; and task envs
      with ``planning=False``): ``C = 1[p in B]``, ``S_hat`` the zone of ``phi(p; B)`` (App. B.1). A click at the
      box centre earns ``1 + alpha * tau_1 = 1 + 0.2 * exp(-1/2)`` with ``zone_value="lower"``, ``1 + alpha`` with
      ``"upper"``; a click outside the box earns 0 (``phi = 0`` outside, correctness first).
    * Grids: ``C`` the env's verifier, ``S_hat`` the blockwise score (App. B.2; Sudoku by subgrid, ARC after
      nearest-neighbour resampling to the reference's size).
    * Maze navigate, chosen here (the paper trains no step-wise maze agent):

      - **when**: once per trajectory, at its last step (terminated or truncated), as the paper's
        trajectory-level ``R(tau) = C(tau) + alpha * S_hat(tau)``; earlier steps earn 0. A per-step form
        would turn the tiers into a dense progress reward, which section 3.3 ("Sweet-Spot Shaping vs. Dense
        Rewards") sets SSL apart from.
      - **C**: binary success (1 on reaching the goal), the paper's ``C(tau)``, not MiniGrid's
        ``1 - 0.9 * steps / max_steps`` that the env pays; so SSL and :class:`BinaryReward` differ only by
        ``alpha * S_hat`` (the RL discount already favours short paths).
      - **S**: with ``trajectory="final"`` the shortest-path progress at the last step (the final state
        judged against the goal, as an answer is judged against the solution; Markov in the last state),
        with ``"mean"`` Eq. 3's mean over the steps. ``S_hat`` tiers ``S`` with ``tau_k = exp(-k^2 / 2)``
        like a GUI score: with K = 4 and ``"lower"``, progress above 0.61 earns ``alpha * 0.61``, above 0.14
        earns ``alpha * 0.14``, above 0.011 ``alpha * 0.011``.

    Args:
        env: the env to wrap.
        alpha: weight of the sweet-spot term (> 0; the paper sweeps 0.1-0.5).
        zones: ``K``; zone_value, edge_sigmas, trajectory, planning: see :class:`ProximityRewardWrapper`.
    """

    PLANNING = True

    def __init__(
        self,
        env: gym.Env[Any, Any],
        alpha: float = 0.2,
        zones: int = 4,
        zone_value: ZoneValue = "lower",
        *,
        edge_sigmas: float | None = None,
        trajectory: TrajectoryProximity = "final",
        planning: bool | None = None,
    ) -> None:
        if not (isinstance(alpha, int | float) and alpha > 0):
            raise RewardConfigError(f"alpha={alpha!r} must be a positive number (the paper uses 0.1-0.5)")
        super().__init__(
            env,
            zones=zones,
            zone_value=zone_value,
            edge_sigmas=edge_sigmas,
            trajectory=trajectory,
            planning=planning,
        )
        self.alpha = float(alpha)
        gym.utils.RecordConstructorArgs.__init__(
            self,
            alpha=alpha,
            zones=zones,
            zone_value=zone_value,
            edge_sigmas=edge_sigmas,
            trajectory=trajectory,
            planning=planning,
        )

    def shape(self, ev: StepEvidence) -> float:
        if ev.mode in ("navigate", "plan") and not ev.done:
            return 0.0
        if ev.mode == "plan" and ev.plan_targets:
            return gui_ssl_reward(
                ev.plan_targets, ev.plan_preds, alpha=self.alpha, n_zones=self.zones, edge_sigmas=self.edge_sigmas,
                zone_value=self.zone_value, goal_reached=ev.goal_reached,
            )  # fmt: skip
        return ev.weight * float(ssl_reward(ev.correct, ev.sweet_spot, self.alpha))


class BinaryReward(ProximityRewardWrapper):
    """SSL's "RL-binary" baseline (seed 000, section 4.1): the verifier ``C`` and nothing else, so the reward is
    ``info["binary_reward"]`` on every graded step (0 for a miss).

    * GUI: 1 when the located action is inside the box (SSL App. B.4), else 0.
    * GUI planning (multi-step task envs): the trajectory's ``C(tau)`` of :class:`SweetSpotReward` at the episode's
      last step (every step right and the task done), 0 before; so the two differ by ``alpha * S_hat`` only.
    * Grids: ``C`` (the env's verifier), times the ARC answer weight.
    * Maze navigate: ``C``, i.e. 1.0 on the step that reaches the goal and 0 otherwise.

    Unitless, in [0, 1]. Keyword arguments (zones, ...) only set the logged ``"sweet_spot"`` tier.
    """

    PLANNING = True

    def shape(self, ev: StepEvidence) -> float:
        if ev.mode == "plan" and not ev.done:
            return 0.0
        return ev.weight * ev.correct


class BinaryFormatReward(BinaryReward):
    """GUI-R1's reward, ``0.8 * accuracy + 0.2 * format`` (seed 001, App. A.3 / F.2;
    :func:`rewards.baselines.gui_r1_reward`), under a name that says it pays a format term.

    * GUI: accuracy is the located action inside the box (no ground-truth point is given, so the 140 px radius
      does not apply); a well-formed action without a location, or a miss, earns the format term 0.2; a
      malformed action 0. So a miss pays 0.2 while ``info["binary_reward"]`` is 0: a blind policy's return is
      mostly the format term (issue 36: 0.20-0.22 a step at a 0.025 hit rate on the ``-Box-v0`` ids).
    * Every other mode: as :class:`BinaryReward` (``C``).

    Unitless, in [0, 1].
    """

    def shape(self, ev: StepEvidence) -> float:
        if ev.mode == "gui":
            assert ev.box is not None  # every GUI evidence carries its box
            return gui_r1_reward(ev.prediction, StepTarget(_GROUNDING, box=ev.box))
        return super().shape(ev)


class ContinuousReward(ProximityRewardWrapper):
    """SSL's "RL-continuous" baseline (seed 000, section 4.1 and section 4.2 "Complex Reasoning").

    * GUI: GUI-G2-style Gaussian point reward ``exp(-d^2 / 2)`` with ``sigma = sigma_frac * (a, b)``, not cut
      at the box edge (:func:`rewards.baselines.gaussian_point_reward`); 0 for an action without a location.
    * Grids: the cell-level match fraction (:func:`rewards.baselines.cell_match_fraction`), times the ARC
      answer weight; 0 for a missing grid.
    * Maze navigate: the untiered trajectory proximity ``S`` (progress, 1 at the goal) at the last step.
    * Task envs grade each step as a click on the oracle's next box (above), unless ``planning=True``: then the
      untiered planning ``S(tau)`` at the episode's last step.

    Unitless, in [0, 1].

    Args:
        env: the env to wrap.
        sigma_frac: GUI: standard deviation per axis as a fraction of the box half-size.
        **kwargs: zones, zone_value, edge_sigmas, trajectory (see :class:`ProximityRewardWrapper`).
    """

    def __init__(self, env: gym.Env[Any, Any], sigma_frac: float = 1.0, **kwargs: Any) -> None:
        if not (isinstance(sigma_frac, int | float) and sigma_frac > 0):
            raise RewardConfigError(f"sigma_frac={sigma_frac!r} must be a positive number")
        super().__init__(env, **kwargs)
        self.sigma_frac = float(sigma_frac)
        gym.utils.RecordConstructorArgs.__init__(self, sigma_frac=sigma_frac, **kwargs)

    def shape(self, ev: StepEvidence) -> float:
        if ev.mode == "gui":
            if ev.point is None:
                return 0.0
            return float(gaussian_point_reward(ev.point, ev.box, self.sigma_frac))
        if ev.mode == "grid":
            if ev.submission is None:
                return 0.0
            return ev.weight * cell_match_fraction(ev.submission, ev.solution)
        return ev.proximity if ev.done else 0.0


# ----- actions ---------------------------------------------------------------------------------------------


def as_action(action: Any) -> Action | None:
    """The :class:`~gui_envs.schema.actions.Action` that ``action`` stands for, or ``None`` when it is malformed.

    Accepts an Action, a dict (Action JSON), JSON text (plain or GUI-R1, via
    :func:`~gui_envs.schema.actions.coerce_action`) and a Box point ``(x, y)`` in pixels (a click). Never raises.

    >>> as_action(np.array([12.0, 40.0]))
    Action(type='click', point=(12.0, 40.0), element_id=None, text=None, direction=None, amount=None, end_point=None, key=None, app=None, target=None, url=None, duration=None, answer=None, status=None)
    >>> as_action("not an action") is None
    True
    """
    return coerce_action(action, allow_point=True)[0]


def _plan_args(action: Action) -> dict[str, Any]:
    return {name: getattr(action, name) for name in PLAN_ARGS if getattr(action, name) is not None}


def plan_prediction(action: Any, observation: Any) -> StepPrediction | None:
    """``action`` as a planning step's prediction (``None`` when it is malformed): its type, its place in pixels
    (:func:`action_point`: the point, else the centre of its element in ``observation``), its drag end, its text and
    its :data:`PLAN_ARGS`.

    >>> plan_prediction('{"type": "type", "text": "milk"}', None)
    StepPrediction(action_type='type', point=None, end_point=None, text='milk', args={})
    """
    act = as_action(action)
    if act is None:
        return None
    return StepPrediction(
        act.type,
        point=action_point(act, observation),
        end_point=act.end_point,
        text=act.text,
        args=_plan_args(act),
    )


def action_point(action: Action, observation: Any) -> Point | None:
    """Where ``action`` points, in pixels: its ``point``, else the centre of its element's bbox, else ``None``.

    The element is looked up in ``observation["elements"]`` (a JSON list, or a list of dicts, each with
    ``"id"`` and ``"bbox"`` in pixels).
    """
    if action.point is not None:
        return action.point
    if action.element_id is None or not isinstance(observation, Mapping):
        return None
    elements = observation.get("elements")
    if isinstance(elements, str):
        try:
            elements = json.loads(elements)
        except json.JSONDecodeError:
            return None
    if not isinstance(elements, list):
        return None
    for element in elements:
        if isinstance(element, Mapping) and str(element.get("id")) == action.element_id:
            try:
                cx, cy = box_center(element.get("bbox"))
            except (InvalidBoxError, TypeError, ValueError):
                return None
            return (float(cx), float(cy))
    return None


__all__ = [
    "BinaryFormatReward",
    "BinaryReward",
    "ContinuousReward",
    "ProximityRewardWrapper",
    "RewardConfigError",
    "StepEvidence",
    "SweetSpotReward",
    "UnknownRewardError",
    "PLAN_ARGS",
    "action_point",
    "as_action",
    "plan_prediction",
]
