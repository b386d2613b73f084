"""``GroupEnv``: a PettingZoo ``ParallelEnv`` whose agents are the N members of one group.

GRPO and SCA compare N responses to the same state (seed 000, App. B.5; seed 001, section 3). Here the N
responses are N agents, each acting on its own copy of the same guigym env reset to the same ``(task, seed)``,
so any multi-agent code that drives PettingZoo can sample groups and read group credit.
"""

from __future__ import annotations

import concurrent.futures
import copy
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import gymnasium as gym
import numpy as np
from pettingzoo import ParallelEnv

from gui_envs.reward_wrappers import action_point, as_action, with_reward
from gui_envs.schema.lifecycle import guarded_close, guarded_reset, guarded_step
from gui_envs.schema.privileged import privileged_of, public_info
from gui_envs.schema.upcoming import Upcoming, announce
from rewards.advantage import group_advantage
from rewards.sca import SCAConfig, spatial_credit

#: Group credit estimators (``credit=``): name -> what computes it.
CREDITS: tuple[str, ...] = ("grpo", "sca")


class GroupConfigError(ValueError):
    """A ``GroupEnv`` argument is out of range; the message names the argument and the allowed values."""


def _accepts_shared_browser(env_id: str, env_kwargs: dict[str, Any]) -> bool:
    """Whether the id's env runs on :class:`~gui_envs.browser.shared.SharedBrowser` contexts (the web envs and
    the simulated phone); looked up from the registration, so nothing is built to find out."""
    spec = gym.spec(env_id)
    entry = spec.entry_point
    if entry == "gui_envs.tasks.sb3_grounding:make_box_ground":  # the -Box-v0 ids pass their arguments to the base id
        return _accepts_shared_browser(str(spec.kwargs["base_id"]), env_kwargs)
    if not isinstance(entry, str) or not entry.startswith(("gui_envs.web.", "gui_envs.android.")):
        return False
    from gymnasium.envs.registration import load_env_creator

    cls = load_env_creator(entry)
    if entry.startswith("gui_envs.web."):
        from gui_envs.web.env import WebEnvBase

        return isinstance(cls, type) and issubclass(cls, WebEnvBase)
    from gui_envs.android.env import PhoneEnvBase

    backend = {**spec.kwargs, **env_kwargs}.get("backend", "simulated")
    return isinstance(cls, type) and issubclass(cls, PhoneEnvBase) and backend == "simulated"


class GroupEnv(ParallelEnv[str, Any, Any]):
    """N agents on N identical copies of one guigym env: one group of rollouts as a PettingZoo game.

    **Agents**: ``agent_0 ... agent_{N-1}``. ``observation_space(agent)`` / ``action_space(agent)`` are the
    wrapped env's spaces (the same object on every call).

    **Reset**: every copy is reset with the same seed and options, so all agents start from the same state
    (``reset(seed=s)`` uses ``s``; ``reset()`` draws a group seed from the group's own generator). Pass
    ``options={"task": name}`` to fix a task on the envs that take one; a key the copies do not take is dropped with a
    warning (PettingZoo's API test resets with ``{"options": 1}``).

    **Step**: ``step({agent: action})`` steps each live agent's copy (a dict without an action for every live
    agent raises :class:`GroupConfigError`, before any copy steps). An agent that ends its episode (terminated or
    truncated) leaves ``agents``; the others carry on. Once every agent has finished, the group's episode has
    ended: like every guigym env (:mod:`gui_envs.schema.lifecycle`), ``step`` before ``reset``, after the last agent
    finished or after a step that raised raises :class:`~gui_envs.schema.errors.ResetNeededError`; ``step`` and ``reset``
    after ``close`` raise :class:`~gui_envs.schema.errors.EnvClosedError`; calls from several threads run one at a time. Rewards are each copy's own env reward
    (or the ``reward=`` wrapper's).
    ``infos[agent]`` is the copy's public info (:func:`gui_envs.schema.privileged.public_info`: never a target box or
    an answer) plus ``clicks``: the agent's click points so far, ``[[x, y], ...]`` screenshot pixels.

    **Group credit**: when the last agent finishes, the group's returns are turned into credit by the chosen
    estimator and each agent finishing at that step gets ``infos[agent]["group_credit"]`` (a float) and
    ``infos[agent]["group"]`` (``{"estimator", "returns", "credits", "clicks", "branch"}`` over all agents).
    In one-step envs (grounding) every agent finishes at that step; in multi-step envs agents that finished
    earlier read the same record from :attr:`group_result`.

    * ``"grpo"``: ``(R_i - mean R) / (std R + eps)`` over the N returns (seed 000, App. B.5;
      :func:`rewards.advantage.group_advantage`).
    * ``"sca"``: SCA's spatial credit (seed 001, section 4.1; :func:`rewards.sca.spatial_credit`) over each
      agent's last click, routed by binary success (``info["success"]`` when the env reports it, else a
      positive return). The target box it needs when every click misses is read from the privileged channel
      of the copy (:func:`gui_envs.schema.privileged.privileged_of`) at reset and never shown to agents. Agents
      without a click count as invalid responses (App. D.1 fallbacks).

    **Browsers**: web envs and simulated phones share one Chromium, one browser context per copy
    (``share_browser=True``), so a group of 8 starts one browser, not 8 (``python benchmarks/group_speed.py``).
    A killed browser fails this group's calls alone (each group has its own); the next ``reset`` relaunches it.

    **One start per group** (``share_starts=True``, the browser envs that prepare their resets): the first copy
    builds, loads and observes the group's start; every other copy builds its own state and loads its own page (the
    agents' actions stay apart) but takes a copy of that observation instead of taking it again, and a grounding
    copy that never acts on its page does not load it either. :meth:`announce` tells the group its next seeds, so
    the first copy prepares them while the agents act (:mod:`gui_envs.schema.upcoming`).

    **Members step together** (``step_together=True``, copies on a shared browser): ``step`` steps every live
    copy at once, one thread each (and a reset, once the first copy has its start, resets the others at once), and the shared browser overlaps their calls where they wait for it (each copy's
    own calls keep their order: :class:`~gui_envs.browser.session.BrowserSession`'s ``lanes``). Each copy's
    episode is the one it plays stepped alone; a copy's error is raised after the others have stepped (the
    first copy's, in agent order), and the group then needs a ``reset`` as before.

    Args:
        env_id: any registered guigym id.
        n_agents: group size N (at least 2, for group statistics to exist).
        credit: ``"grpo"`` or ``"sca"``.
        env_kwargs: constructor arguments of every copy.
        share_browser: run the copies of a web or simulated-phone env as contexts of one shared Chromium.
        sca_config: SCA settings (default :class:`rewards.sca.SCAConfig()`).
        render_mode: ``None`` or ``"rgb_array"`` (the copies' frames side by side).
        reward: wrap each copy with :func:`gui_envs.reward_wrappers.with_reward` (``"binary"``, ``"ssl"``,
            ``"continuous"``...); ``None`` keeps the env's own reward.
        reward_kwargs: the reward wrapper's arguments.
        share_starts: build each group start once and hand copies to the other members (see above).
        step_together: step the copies on a shared browser at once (see above); ``False`` steps them one after
            another.
    """

    metadata = {"name": "guigym_group_v0", "render_modes": ["rgb_array"], "is_parallelizable": True}

    def __init__(
        self,
        env_id: str,
        n_agents: int = 8,
        credit: str = "grpo",
        env_kwargs: dict[str, Any] | None = None,
        share_browser: bool = True,
        sca_config: SCAConfig | None = None,
        render_mode: str | None = None,
        reward: str | None = None,
        reward_kwargs: dict[str, Any] | None = None,
        share_starts: bool = True,
        step_together: bool = True,
    ) -> None:
        if n_agents < 2:
            raise GroupConfigError(f"n_agents must be at least 2 (a group), got {n_agents}")
        if credit not in CREDITS:
            raise GroupConfigError(f"credit must be one of {', '.join(CREDITS)}, got {credit!r}")
        if render_mode not in (None, "rgb_array"):
            raise GroupConfigError(f"render_mode must be None or 'rgb_array', got {render_mode!r}")
        self.env_id, self.credit, self.render_mode = env_id, credit, render_mode
        self.sca_config = sca_config
        kwargs = dict(env_kwargs or {})
        if render_mode is not None:
            kwargs.setdefault("render_mode", render_mode)
        self.shared_browser = None
        if share_browser and _accepts_shared_browser(env_id, kwargs):
            from gui_envs.browser.shared import SharedBrowser

            self.shared_browser = SharedBrowser(headless=kwargs.get("headless", True))
            kwargs["shared_browser"] = self.shared_browser
        self.possible_agents = [f"agent_{i}" for i in range(n_agents)]
        self.agents: list[str] = []
        self.envs: dict[str, gym.Env[Any, Any]] = {}
        # One thread per copy, started on the first step: only copies on a shared browser gain from stepping at once.
        self._stepper: concurrent.futures.ThreadPoolExecutor | None = None
        self.step_together = bool(step_together and self.shared_browser is not None)
        try:
            for agent in self.possible_agents:
                copy = gym.make(env_id, **kwargs)
                self.envs[agent] = with_reward(copy, reward, **(reward_kwargs or {})) if reward else copy
        except BaseException:
            self.close()
            raise
        # One prepared start per group: the first copy builds, loads and observes it; the others take its
        # observation (prefetch.ResetPreparer.share_starts), and prepare nothing of their own.
        self._followers = []
        if share_starts:
            self._followers = [e.unwrapped for e in list(self.envs.values())[1:] if hasattr(e.unwrapped, "share_starts")]
        for follower in self._followers:
            follower.prepare_ahead = False
        self.observation_spaces = {a: e.observation_space for a, e in self.envs.items()}
        self.action_spaces = {a: e.action_space for a, e in self.envs.items()}
        self.group_result: dict[str, Any] | None = None
        self._rng = np.random.default_rng()
        self._returns: dict[str, float] = {}
        self._success: dict[str, bool | None] = {}
        self._clicks: dict[str, list[list[float]]] = {}
        self._last_obs: dict[str, Any] = {}
        self._target_box: list[float] | None = None

    def observation_space(self, agent: str) -> gym.Space[Any]:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> gym.Space[Any]:
        return self.action_spaces[agent]

    # Only checked to be a mapping here: the copies check the keys they take (see reset).
    reset_options = None

    @guarded_reset
    def reset(
        self, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        group_seed = seed if seed is not None else int(self._rng.integers(2**31 - 1))
        options = self._copy_options(options)
        self.agents = list(self.possible_agents)
        self.group_result = None
        obs, infos = {}, {}
        for agent, (first_obs, info) in self.reset_members(group_seed, options).items():
            obs[agent], infos[agent] = first_obs, {**public_info(info), "clicks": []}
        self._returns = dict.fromkeys(self.agents, 0.0)
        self._success = dict.fromkeys(self.agents, None)
        self._clicks = {a: [] for a in self.agents}
        self._last_obs = dict(obs)
        # Identical copies: one target box for the group, read where only the referee reads it.
        box = privileged_of(self.envs[self.possible_agents[0]]).get("target_bbox")
        self._target_box = [float(v) for v in box] if box is not None else None
        return obs, infos

    def announce(self, resets: Iterable[int | Upcoming | None]) -> None:
        """Tell the group its next resets, in order (see :mod:`gui_envs.schema.upcoming`): each member is announced the
        resets it will get, so members that prepare their starts (the browser envs) prepare them while the agents
        act. A ``None`` seed is the group seed the group's generator will draw then."""
        rng = copy.deepcopy(self._rng)
        plan = []
        for item in resets:
            upcoming = Upcoming.of(item)
            if upcoming.seed is not None:  # reset(seed=s) reseeds the group's generator (see reset)
                rng = np.random.default_rng(upcoming.seed)
                group_seed = upcoming.seed
            else:
                group_seed = int(rng.integers(2**31 - 1))
            plan.append(Upcoming(group_seed, self._copy_options(upcoming.options)))
        # The members that take their starts from the first one need not prepare them.
        for env in self.envs.values():
            if env.unwrapped not in self._followers:
                announce(env, plan)

    def reset_members(
        self, seed: int, options: dict[str, Any] | None = None, agents: Sequence[str] | None = None
    ) -> dict[str, tuple[Any, dict[str, Any]]]:
        """Reset the members ``agents`` (default all; the first member first) to ``seed`` and ``options``, sharing the
        first member's start (see the class docstring), and return each one's ``(obs, info)`` as its env gives them.
        For a caller that drives the members itself (``trainers.rollout.GroupWorkers``); ``reset`` uses it too."""
        leader = self.envs[self.possible_agents[0]].unwrapped
        chosen = list(agents if agents is not None else self.possible_agents)

        def reset(agent: str) -> tuple[Any, dict[str, Any]]:
            member = self.envs[agent]
            if member.unwrapped in self._followers:
                member.unwrapped.share_starts(leader)
            return member.reset(seed=seed, options=options)

        out = {}
        if self.possible_agents[0] in chosen:  # the start the others copy
            out[self.possible_agents[0]] = reset(self.possible_agents[0])
        rest = [a for a in chosen if a not in out]
        if self.step_together and len(rest) > 1:  # then the others at once (see step_members)
            futures = {agent: self._pool().submit(reset, agent) for agent in rest}
            concurrent.futures.wait(futures.values())
            out.update({agent: future.result() for agent, future in futures.items()})
        else:
            out.update({agent: reset(agent) for agent in rest})
        return {agent: out[agent] for agent in chosen}

    def _pool(self) -> concurrent.futures.ThreadPoolExecutor:
        """The threads the members step in (one per member), started on first use."""
        if self._stepper is None:
            self._stepper = concurrent.futures.ThreadPoolExecutor(len(self.possible_agents), "guigym-group")
        return self._stepper

    def step_members(self, actions: Mapping[str, Any]) -> dict[str, tuple[Any, Any, bool, bool, dict[str, Any]]]:
        """Step each member in ``actions`` (agent -> action) and return each one's ``(obs, reward, terminated,
        truncated, info)`` as its env gives them: all at once when :attr:`step_together` (see the class docstring),
        else one after another. A member's error is raised once every member has stepped (the first in ``actions``'
        order). For a caller that drives the members itself (``trainers.rollout.GroupWorkers``); ``step`` uses it."""
        if not self.step_together or len(actions) < 2:
            return {agent: self.envs[agent].step(action) for agent, action in actions.items()}
        futures = {agent: self._pool().submit(self.envs[agent].step, action) for agent, action in actions.items()}
        concurrent.futures.wait(futures.values())
        return {agent: future.result() for agent, future in futures.items()}

    def _copy_options(self, options: Mapping[str, Any] | None) -> dict[str, Any] | None:
        """The options the copies take. PettingZoo's API test resets with ``{"options": 1}`` to check the signature,
        so a key no copy takes is dropped with a warning instead of raising as it does on the copies themselves."""
        if options is None:
            return None
        taken = getattr(type(self.envs[self.possible_agents[0]].unwrapped), "reset_options", None)
        if taken is None:
            return dict(options)
        dropped = [k for k in options if k not in taken]
        if dropped:
            gym.logger.warn(f"{self.env_id} takes no reset options {dropped}; the group drops them (it takes {list(taken)})")
        return {k: v for k, v in options.items() if k in taken}

    @guarded_step(episode_over=lambda group, _: "every agent finished" if not group.agents else "")
    def step(
        self, actions: dict[str, Any]
    ) -> tuple[
        dict[str, Any], dict[str, float], dict[str, bool], dict[str, bool], dict[str, dict[str, Any]]
    ]:
        missing = [a for a in self.agents if a not in actions] if isinstance(actions, Mapping) else self.agents
        if missing:
            raise GroupConfigError(
                f"step() takes a dict with one action per live agent ({self.agents}); none for {missing}"
            )
        obs, rewards, terms, truncs, infos = {}, {}, {}, {}, {}
        for agent in self.agents:
            point = self._click_point(actions[agent], self._last_obs.get(agent))
            if point is not None:
                self._clicks[agent].append(point)
        results = self.step_members({agent: actions[agent] for agent in self.agents})
        for agent in self.agents:
            obs[agent], reward, terms[agent], truncs[agent], info = results[agent]
            rewards[agent] = float(reward)
            self._returns[agent] += rewards[agent]
            if "success" in info:
                self._success[agent] = bool(info["success"])
            infos[agent] = {**public_info(info), "clicks": [list(p) for p in self._clicks[agent]]}
        self._last_obs.update(obs)
        self.agents = [a for a in self.agents if not (terms[a] or truncs[a])]
        if not self.agents:
            self.group_result = self._group_credit()
            for agent in infos:
                infos[agent]["group_credit"] = self.group_result["credits"][agent]
                infos[agent]["group"] = self.group_result
        return obs, rewards, terms, truncs, infos

    @staticmethod
    def _click_point(action: Any, observation: Any) -> list[float] | None:
        """Where the action clicks, screenshot pixels: the Box point, or the Action's point / element centre."""
        if isinstance(action, (int, np.integer)):
            return None  # a Discrete move (Maze navigate), not a click
        parsed = as_action(action)
        if parsed is None:
            return None
        point = action_point(parsed, observation)
        return [float(point[0]), float(point[1])] if point is not None else None

    def _group_credit(self) -> dict[str, Any]:
        """Credit over the whole group, once every agent has finished (see the class docstring)."""
        agents = self.possible_agents
        returns = np.array([self._returns[a] for a in agents])
        branch = "grpo"
        if self.credit == "grpo":
            credits = group_advantage(returns)  # seed 000, App. B.5
        else:
            # seed 001, section 4.1: route on binary success, credit the last click of each response. The env's
            # verdict, not the return: a shaped reward (ssl) pays near misses too.
            verdicts = [self._success[a] for a in agents]
            success = np.array(
                [v if v is not None else self._returns[a] > 0 for a, v in zip(agents, verdicts, strict=True)],
                dtype=float,
            )
            coords = np.array([self._clicks[a][-1] if self._clicks[a] else [np.nan, np.nan] for a in agents])
            result = spatial_credit(coords, success, returns, self._target_box, config=self.sca_config)
            credits, branch = result.credits, result.branch
        return {
            "estimator": self.credit,
            "branch": branch,
            "returns": {a: float(r) for a, r in zip(agents, returns, strict=True)},
            "credits": {a: float(c) for a, c in zip(agents, credits, strict=True)},
            "clicks": {a: [list(p) for p in self._clicks[a]] for a in agents},
        }

    def render(self) -> np.ndarray | None:
        """The copies' frames side by side, ``(H, N * W, 3)`` uint8, when ``render_mode="rgb_array"``."""
        if self.render_mode != "rgb_array":
            return None
        frames = [self.envs[a].render() for a in self.possible_agents]
        if any(f is None for f in frames):
            return None
        return np.concatenate([np.asarray(f) for f in frames], axis=1)

    @guarded_close
    def close(self) -> None:
        stepper = getattr(self, "_stepper", None)  # absent when the constructor failed early
        if stepper is not None:
            stepper.shutdown(wait=True)
        for env in self.envs.values():
            env.close()
        if self.shared_browser is not None:
            self.shared_browser.close()


def parallel_env(env_id: str, n_agents: int = 8, credit: str = "grpo", **kwargs: Any) -> GroupEnv:
    """A :class:`GroupEnv` (PettingZoo's ``parallel_env`` constructor convention); arguments as the class's."""
    return GroupEnv(env_id, n_agents=n_agents, credit=credit, **kwargs)


def env(env_id: str, n_agents: int = 8, credit: str = "grpo", **kwargs: Any) -> Any:
    """The group as a PettingZoo AEC env (agents act in turn), via ``pettingzoo.utils.parallel_to_aec``."""
    from pettingzoo.utils import parallel_to_aec

    return parallel_to_aec(parallel_env(env_id, n_agents, credit, **kwargs))


raw_env: Callable[..., GroupEnv] = parallel_env

__all__ = ["CREDITS", "GroupConfigError", "GroupEnv", "env", "parallel_env", "raw_env"]
