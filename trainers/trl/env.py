"""guigym envs as TRL environments: one instance per rollout slot, GUI actions as tools.

TRL's ``GRPOTrainer(environment_factory=...)`` builds one environment object per rollout slot, calls its
``reset(**row)`` with the dataset row before each rollout (the returned text is appended to the row's last user
message) and exposes its public methods as tools the model calls through the chat template's tool-call syntax;
each tool's return value goes back to the model as a tool message, and the model writes again, until it answers
without a tool call (TRL ``GRPOConfig.max_tool_calling_iterations`` caps the turns).

:class:`GuiGymEnvironment` plays one guigym env that way:

* ``reset(env_id, seed, task=None, **_)``: ``env.reset(seed=seed)`` (and ``options={"task": task}`` for a task
  env); returns the first observation as text (instruction, URL, the first ``max_elements`` page elements), or,
  with ``screenshot: true``, as content blocks: the screenshot as an image, then that text (for VLMs).
* **tools** (``action_mode="tools"``): one method per action type of :class:`gui_envs.schema.actions.Action` chosen in
  the config (``click(x, y, element_id)``, ``type(text, element_id)``, ``scroll(direction, element_id)``,
  ``press(key)``, ``navigate(target, url)``, ``stop(answer)``, ...). A call is one ``env.step``; it returns the
  next observation as text, with the action's error if it was a no-op and the verdict when the episode ends.
  Points are screenshot pixels, as everywhere in guigym.
* **text** (``action_mode="text"``): no tools; the completion is one answer in ``output_format`` (``cell``,
  ``box``, ``act``, ``gui_r1``, ``text``), parsed by guigym's own parser and played as one step by :meth:`_settle` (the reward
  functions call it), the setting of guigym's own GRPO trainer.

Every step's reward is recorded per reward family (:class:`Episode`): the env's own, SSL's (the env wrapped in
:class:`gui_envs.reward_wrappers.SweetSpotReward`, whose ``info`` also carries the binary verifier ``C``) and the
strategy graph's (:class:`gui_envs.reward_wrappers.graph.StrategyGraphReward`); :mod:`trainers.trl.rewards` reads them,
and a reward function of one's own reads them through :func:`episodes_of`.

The factory (:class:`EnvironmentFactory`) keeps every environment it built: ``factory.close()`` closes their envs
and the shared browser. (The environments themselves have no public ``close``: TRL would list it as a tool.)
"""

from __future__ import annotations

import json
import types
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, SupportsFloat

import gymnasium as gym
import numpy as np

import gui_envs  # noqa: F401  (registers the env ids)
from gui_envs.reward_wrappers import with_reward
from gui_envs.reward_wrappers.graph import StrategyGraphReward
from gui_envs.schema.actions import Action, InvalidActionError
from gui_envs.schema.privileged import privileged_of
from trainers.trl.config import GuiGymTRLConfig

#: What ``reset`` and the tools return: text, or content blocks (an image block, then a text block).
Observation = str | list[dict[str, Any]]

DEFAULT_SYSTEM_PROMPT = (
    "You operate a graphical user interface through the tools. Call one tool per turn; points are screenshot "
    "pixels, or name an element by its id. The task and the screen follow.\n\n"
)


@dataclass
class Episode:
    """What one rollout's episode did, read by the reward functions and by SCA.

    Attributes:
        steps: env steps taken.
        returns: summed step rewards per family: ``env`` (the env's own), ``ssl`` (SSL wrapper), ``graph``.
        last_info: the last step's ``info`` (``success``, ``binary_reward``, ``graph_progress``, ...).
        done: the episode terminated or was truncated.
        first_point: the first action's point in screenshot pixels (SCA's graded click), or ``None``.
        box: the privileged target box ``(x0, y0, x1, y1)`` in pixels at reset (SCA's Prox branch), or ``None``.
    """

    steps: int = 0
    returns: dict[str, float] = field(default_factory=dict)
    last_info: dict[str, Any] = field(default_factory=dict)
    done: bool = False
    first_point: tuple[float, float] | None = None
    box: tuple[float, float, float, float] | None = None

    @property
    def success(self) -> bool:
        """The env's verdict on the episode so far (``info["success"]`` of the last step)."""
        return bool(self.last_info.get("success", False))


class _Tap(gym.Wrapper[Any, Any, Any, Any]):
    """Passes everything through and adds each step's reward to ``episode().returns[name]``."""

    def __init__(self, env: gym.Env[Any, Any], name: str, episode: Callable[[], Episode]) -> None:
        super().__init__(env)
        self.name, self._episode = name, episode

    def step(self, action: Any) -> tuple[Any, SupportsFloat, bool, bool, dict[str, Any]]:
        obs, reward, terminated, truncated, info = self.env.step(action)
        returns = self._episode().returns
        returns[self.name] = returns.get(self.name, 0.0) + float(reward)
        return obs, reward, terminated, truncated, info


def _accepts_shared_browser(env_id: str) -> bool:
    """Whether ``env_id``'s class runs on a browser (a :class:`gui_envs.tasks.env.ScreenEnv` with Chromium)."""
    from gymnasium.envs.registration import load_env_creator

    from gui_envs.tasks.env import ScreenEnv

    creator = load_env_creator(gym.spec(env_id).entry_point)
    return isinstance(creator, type) and issubclass(creator, ScreenEnv)


def observation_text(obs: Any, max_elements: int) -> str:
    """An observation as text: instruction, URL and the first ``max_elements`` elements (id, role, text,
    value), one a line; keys absent from ``obs`` are left out.

    >>> observation_text({"instruction": "Open the cart", "url": "http://shop.guigym.test/",
    ...     "elements": '[{"id": "3", "role": "a", "text": "Cart", "value": ""}]'}, 5)
    'Task: Open the cart\\nURL: http://shop.guigym.test/\\nElements:\\n[3] a "Cart"'
    """
    if not isinstance(obs, dict):
        return str(obs)
    lines = []
    if isinstance(obs.get("instruction"), str):
        lines.append(f"Task: {obs['instruction']}")
    if isinstance(obs.get("url"), str):
        lines.append(f"URL: {obs['url']}")
    elements = obs.get("elements")
    if isinstance(elements, str):
        elements = json.loads(elements)
    if elements:
        lines.append("Elements:")
        for el in elements[:max_elements]:
            value = f" value={el['value']!r}" if el.get("value") else ""
            lines.append(
                f"[{el.get('id')}] {el.get('role', '')} {json.dumps(str(el.get('text', ''))[:60])}{value}"
            )
        if len(elements) > max_elements:
            lines.append(f"... {len(elements) - max_elements} more (scroll to see them)")
    return "\n".join(lines)


class GuiGymEnvironment:
    """One guigym env for one TRL rollout slot (see the module docstring). Build through
    :func:`make_environment_factory`, which adds the config's tools as methods."""

    def __init__(self, config: GuiGymTRLConfig, shared_browser: Any = None) -> None:
        self._config = config
        self._shared_browser = shared_browser
        self._envs: dict[str, gym.Env[Any, Any]] = {}
        self._env: gym.Env[Any, Any] | None = None
        self._obs: Any = None
        self._format: Any = None
        self.episode = Episode()

    # ----- TRL's contract ---------------------------------------------------------------------------------
    def reset(
        self, env_id: str | None = None, seed: int | None = None, task: str | None = None, **_: Any
    ) -> Observation:
        """Start the row's episode: ``env.reset(seed=seed)`` on ``env_id`` (default the config's), with
        ``task`` as the task template of a task env. Returns the first observation as text, or as an image and a
        text block with ``screenshot: true``."""
        cfg = self._config
        env = self._make(env_id or cfg.env_id)
        task = task or cfg.task
        self.episode = Episode()
        self._obs, _ = env.reset(
            seed=None if seed is None else int(seed), options={"task": task} if task else None
        )
        box = privileged_of(env).get("target_bbox")
        if box is not None:
            self.episode.box = tuple(float(v) for v in box)  # type: ignore[assignment]
        self._env = env
        if cfg.action_mode == "text":
            from agents.prompts.formats import PromptContext
            from agents.prompts.observation import instruction_of

            ctx = PromptContext(observation=self._obs, instruction=instruction_of(self._obs))
            content = self._format.messages(ctx)[-1]["content"]
            return content if isinstance(content, str) else str(content)
        return self._observation(observation_text(self._obs, cfg.max_elements))

    def _observation(self, text: str) -> Observation:
        """``text`` alone, or with ``screenshot: true`` the current screenshot as an image block before it (text
        alone when the env's observation has no screenshot)."""
        shot = self._obs.get("screenshot") if isinstance(self._obs, dict) else None
        if not self._config.screenshot or shot is None:
            return text
        from PIL import Image

        # A copy: the env may reuse its screenshot buffer on the next step, while TRL keeps this image for the
        # loss's forward pass after the episode.
        image = Image.fromarray(np.array(shot, dtype=np.uint8))
        return [{"type": "image", "image": image}, {"type": "text", "text": text}]

    # ----- stepping ---------------------------------------------------------------------------------------
    def _step(self, action: Action | str) -> Observation:
        """One env step; returns the next observation (with the error or the verdict) as :meth:`reset` does."""
        if self._env is None:
            return "error: no episode (reset first)"
        if self.episode.done:
            return "The episode is over; answer without a tool call."
        ep = self.episode
        if ep.steps == 0 and isinstance(action, Action) and action.point is not None:
            ep.first_point = (float(action.point[0]), float(action.point[1]))
        self._obs, _, terminated, truncated, info = self._env.step(action)
        ep.steps += 1
        ep.last_info = dict(info)
        ep.done = bool(terminated or truncated)
        text = observation_text(self._obs, self._config.max_elements)
        if info.get("action_error"):
            text = f"action error: {info['action_error']}\n{text}"
        if ep.done:
            text += f"\nEpisode over: {'success' if ep.success else 'failure'}."
        return self._observation(text)

    def _tool(self, kind: str, **fields: Any) -> Observation:
        """A tool call as an :class:`Action` of type ``kind`` (``None`` fields dropped), then one step; a call
        whose arguments do not make an action is played as the env's malformed-action no-op."""
        kept = {k: v for k, v in fields.items() if v is not None}
        x, y = kept.pop("x", None), kept.pop("y", None)
        if x is not None or y is not None:
            kept["point"] = (x, y)
        try:
            action: Action | str = Action(kind, **kept)
        except (InvalidActionError, TypeError):
            # The env's own check then turns it into a no-op with a penalty and says why (info["action_error"]).
            action = json.dumps({"type": kind, **{k: str(v) for k, v in kept.items()}})
        return self._step(action)

    def _settle(self, completion: Any) -> Episode:
        """``text`` mode: play the completion's answer as the episode's one step, once (later calls return the
        same episode). ``tools`` mode: nothing to do. Returns the episode."""
        if self._config.action_mode != "text" or self.episode.steps or self._env is None:
            return self.episode
        text = completion_text(completion)
        action, _ = self._format.parse(text, self._obs)
        self._step(action if action is not None else text)
        return self.episode

    # ----- construction -----------------------------------------------------------------------------------
    def _make(self, env_id: str) -> gym.Env[Any, Any]:
        if env_id in self._envs:
            return self._envs[env_id]
        cfg = self._config
        kwargs = dict(cfg.env_kwargs)
        if self._shared_browser is not None and _accepts_shared_browser(env_id):
            kwargs.setdefault("shared_browser", self._shared_browser)
            needs_pixels = cfg.action_mode == "text" or "ssl" in cfg.rewards or cfg.screenshot
            kwargs.setdefault("screenshots", needs_pixels)
        env: gym.Env[Any, Any] = _Tap(gym.make(env_id, **kwargs), "env", lambda: self.episode)
        if {"ssl", "binary"} & set(cfg.rewards):
            env = _Tap(with_reward(env, "ssl", **cfg.ssl_kwargs), "ssl", lambda: self.episode)
        if "graph" in cfg.rewards:
            env = _Tap(
                StrategyGraphReward(env, graphs=cfg.graphs, mode="increment"), "graph", lambda: self.episode
            )
        if cfg.action_mode == "text":
            from agents.lm_agent import resolve_format
            from trainers.policy_setup import resolve_output_format

            fmt = resolve_output_format(cfg.output_format, cfg.env_kwargs)
            # ``cell`` and ``box`` come back as format objects; ``gui_r1`` and ``text`` as names, which the
            # agents' own resolver turns into theirs (reset reads the format's messages, not a name's).
            self._format = resolve_format(fmt) if isinstance(fmt, str) else fmt
        self._envs[env_id] = env
        return env

    def _close(self) -> None:
        for env in self._envs.values():
            env.close()
        self._envs.clear()


def completion_text(completion: Any) -> str:
    """The text of a TRL completion: a string, or the assistant messages' contents joined."""
    if isinstance(completion, str):
        return completion
    return "\n".join(str(m.get("content") or "") for m in completion if m.get("role") == "assistant")


class _Tools:
    """The tool methods, one per action type; :func:`make_environment_factory` copies the chosen ones onto a
    subclass of :class:`GuiGymEnvironment` (TRL lists a class's public methods as its tools). Docstrings are
    the tool schemas the model reads (transformers' ``get_json_schema``)."""

    def click(
        self, x: float | None = None, y: float | None = None, element_id: str | None = None
    ) -> Observation:
        """Click a point or an element.

        Args:
            x: horizontal position in screenshot pixels.
            y: vertical position in screenshot pixels.
            element_id: id of the element to click, instead of a point.
        """
        return self._tool("click", x=x, y=y, element_id=element_id)  # type: ignore[attr-defined]

    def double_click(
        self, x: float | None = None, y: float | None = None, element_id: str | None = None
    ) -> Observation:
        """Double-click a point or an element.

        Args:
            x: horizontal position in screenshot pixels.
            y: vertical position in screenshot pixels.
            element_id: id of the element, instead of a point.
        """
        return self._tool("double_click", x=x, y=y, element_id=element_id)  # type: ignore[attr-defined]

    def right_click(
        self, x: float | None = None, y: float | None = None, element_id: str | None = None
    ) -> Observation:
        """Right-click a point or an element.

        Args:
            x: horizontal position in screenshot pixels.
            y: vertical position in screenshot pixels.
            element_id: id of the element, instead of a point.
        """
        return self._tool("right_click", x=x, y=y, element_id=element_id)  # type: ignore[attr-defined]

    def long_press(
        self, x: float | None = None, y: float | None = None, element_id: str | None = None
    ) -> Observation:
        """Press and hold a point or an element.

        Args:
            x: horizontal position in screenshot pixels.
            y: vertical position in screenshot pixels.
            element_id: id of the element, instead of a point.
        """
        return self._tool("long_press", x=x, y=y, element_id=element_id)  # type: ignore[attr-defined]

    def hover(
        self, x: float | None = None, y: float | None = None, element_id: str | None = None
    ) -> Observation:
        """Move the pointer over a point or an element.

        Args:
            x: horizontal position in screenshot pixels.
            y: vertical position in screenshot pixels.
            element_id: id of the element, instead of a point.
        """
        return self._tool("hover", x=x, y=y, element_id=element_id)  # type: ignore[attr-defined]

    def type(self, text: str, element_id: str | None = None) -> Observation:  # noqa: A003  (the action's name)
        """Type text into the focused field or into an element.

        Args:
            text: the text to type.
            element_id: id of the field to type into; default the focused one.
        """
        return self._tool("type", text=text, element_id=element_id)  # type: ignore[attr-defined]

    def scroll(self, direction: str, element_id: str | None = None) -> Observation:
        """Scroll the page or an element by one page.

        Args:
            direction: up, down, left or right.
            element_id: id of the element to scroll; default the page.
        """
        return self._tool("scroll", direction=direction, element_id=element_id)  # type: ignore[attr-defined]

    def swipe(self, x: float, y: float, direction: str) -> Observation:
        """Swipe from a point.

        Args:
            x: start, horizontal, in screenshot pixels.
            y: start, vertical, in screenshot pixels.
            direction: up, down, left or right.
        """
        return self._tool("swipe", x=x, y=y, direction=direction)  # type: ignore[attr-defined]

    def press(self, key: str) -> Observation:
        """Press a key.

        Args:
            key: the key name, such as enter, tab or ctrl+a.
        """
        return self._tool("press", key=key)  # type: ignore[attr-defined]

    def open_app(self, app: str) -> Observation:
        """Open an app on the phone.

        Args:
            app: the app's name.
        """
        return self._tool("open_app", app=app)  # type: ignore[attr-defined]

    def navigate(self, target: str, url: str | None = None) -> Observation:
        """Go back, forward, home, or to a URL.

        Args:
            target: back, forward, home or url.
            url: the address, when target is url.
        """
        return self._tool("navigate", target=target, url=url)  # type: ignore[attr-defined]

    def wait(self, duration: float | None = None) -> Observation:
        """Wait for the screen to change.

        Args:
            duration: seconds to wait.
        """
        return self._tool("wait", duration=duration)  # type: ignore[attr-defined]

    def stop(self, answer: str | None = None) -> Observation:
        """End the task, with the answer if the task asks a question.

        Args:
            answer: the answer to the task's question, if any.
        """
        return self._tool("stop", answer=answer)  # type: ignore[attr-defined]


def _tool_method(method: Callable[..., Any], returns: str) -> Callable[..., Any]:
    """A copy of a :class:`_Tools` method whose return annotation is ``returns``. The tool schema the model reads
    carries the return type: ``str`` keeps text-only prompts as they were; ``Observation`` says images come back."""
    copy = types.FunctionType(method.__code__, method.__globals__, method.__name__, method.__defaults__,
                              method.__closure__)  # fmt: skip
    copy.__doc__, copy.__qualname__ = method.__doc__, method.__qualname__
    copy.__kwdefaults__ = method.__kwdefaults__
    copy.__annotations__ = {**method.__annotations__, "return": returns}
    return copy


class EnvironmentFactory:
    """TRL's ``environment_factory``: each call builds one :class:`GuiGymEnvironment` carrying the config's tools
    (none in ``text`` mode). It keeps what it built, so :meth:`close` closes every env (and the shared Chromium)
    once training is over; the envs of one factory share one Chromium when ``config.shared_browser``.

    >>> factory = EnvironmentFactory(GuiGymTRLConfig(env_id="ClickGrid-v0", tools=["click"]))
    >>> env = factory()
    >>> env.reset(seed=0)
    'Task: click cell h'
    >>> factory.close()
    """

    def __init__(self, config: GuiGymTRLConfig) -> None:
        self.config = config
        tools = config.tools if config.action_mode == "tools" else []
        returns = "Observation" if config.screenshot else "str"
        methods = {name: _tool_method(_Tools.__dict__[name], returns) for name in tools}
        self._cls = type("GuiGymEnvironment", (GuiGymEnvironment,), methods)
        self._shared: Any = None
        if config.shared_browser:
            from gui_envs.browser.shared import SharedBrowser

            # Launched on first use: nothing starts for envs without a browser.
            self._shared = SharedBrowser()
        self.environments: list[GuiGymEnvironment] = []
        """Every environment built so far, in order."""

    def __call__(self) -> GuiGymEnvironment:
        env = self._cls(self.config, shared_browser=self._shared)
        self.environments.append(env)
        return env

    def close(self) -> None:
        """Close every built environment's envs, then the shared browser. Idempotent; the environments can still
        ``reset`` afterwards (their envs are rebuilt, on a relaunched browser)."""
        for env in self.environments:
            env._close()
        if self._shared is not None:
            self._shared.close()

    def __enter__(self) -> EnvironmentFactory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def make_environment_factory(config: GuiGymTRLConfig) -> EnvironmentFactory:
    """The :class:`EnvironmentFactory` of ``config`` (TRL's ``environment_factory``)."""
    return EnvironmentFactory(config)


def episodes_of(environments: list[Any], completions: list[Any] | None = None) -> list[Episode]:
    """Each rollout's :class:`Episode`, for a reward function of one's own (TRL passes ``environments`` and
    ``completions`` to every reward function).

    ``tools`` mode: the episode the tool calls played. ``text`` mode: pass ``completions``; each one's answer is
    played as the episode's one step first (once: every reward function of a batch sees the same episode).

    Example, a reward that pays a success and charges 0.1 per extra step::

        def quick_success(completions, environments, **_):
            return [float(ep.success) - 0.1 * max(0, ep.steps - 1)
                    for ep in episodes_of(environments, completions)]
    """
    if completions is None:
        return [env.episode for env in environments]
    return [env._settle(c) for env, c in zip(environments, completions, strict=True)]
