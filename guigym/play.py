"""``guigym play ENV_ID``: play an environment yourself.

Where a display exists, browser-based envs open a headed Chromium (``render_mode="human"``), so you see the
page the env acts on; either way a terminal loop shows the instruction, the element list and the path of the
latest screenshot (a PNG under ``--shots``), and reads one action per line:

* ``click 12`` / ``click 640 360``: click element 12, or the pixel (x, y);
* ``type 7 hello world``: type into element 7; ``press Enter``; ``scroll down``; ``back``;
* ``stop`` or ``stop the answer``: end the episode (with an answer);
* ``0``-``3`` and other integers: a ``Discrete`` action (``Maze-v0`` navigate: 0 up, 1 right, 2 down, 3 left);
* anything else (Action JSON, GUI-R1 JSON, a Sudoku grid) goes to ``env.step`` as it is;
* ``r``: new episode; ``q``: quit.

Every line read comes from ``input_stream``, so a test (or a script) drives it through stdin.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TextIO

import gymnasium as gym
import numpy as np

from gui_envs.schema.privileged import public_info

HELP = (
    "actions: click ID | click X Y | type ID TEXT | press KEY | scroll up|down | back | stop [ANSWER] | "
    "an integer | Action JSON; r = new episode, q = quit"
)


def parse_line(line: str, space: gym.Space[Any]) -> Any:
    """The env action a typed line stands for (see the module docstring); text the env parses itself is
    returned unchanged.

    >>> from gymnasium import spaces
    >>> parse_line("click 640 360", spaces.Text(10))
    '{"type": "click", "point": [640.0, 360.0]}'
    >>> parse_line("type 7 hello world", spaces.Text(10))
    '{"type": "type", "element_id": "7", "text": "hello world"}'
    >>> parse_line("2", spaces.Discrete(4))
    2
    """
    text = line.strip()
    if isinstance(space, gym.spaces.Discrete):
        try:
            return int(text)
        except ValueError:
            return text
    try:
        words = shlex.split(text)
    except ValueError:
        words = text.split()
    if not words or text.startswith(("{", "[")):
        return text
    verb, args = words[0].lower(), words[1:]
    action: dict[str, Any] | None = None
    if verb in ("click", "tap", "double_click", "long_press", "right_click", "hover") and args:
        if len(args) == 2 and all(_is_number(a) for a in args):
            action = {"type": verb, "point": [float(args[0]), float(args[1])]}
        elif len(args) == 1:
            action = {"type": "click" if verb == "tap" else verb, "element_id": args[0]}
    elif verb == "type" and len(args) >= 2:
        action = {"type": "type", "element_id": args[0], "text": " ".join(args[1:])}
    elif verb == "press" and len(args) == 1:
        action = {"type": "press", "key": args[0]}
    elif verb == "scroll" and len(args) == 1:
        action = {"type": "scroll", "direction": args[0]}
    elif verb in ("back", "forward", "home"):
        action = {"type": "navigate", "target": verb}
    elif verb == "stop":
        action = {"type": "stop", "answer": " ".join(args)} if args else {"type": "stop"}
    if isinstance(space, gym.spaces.Box) and action is not None and "point" in action:
        return np.asarray(action["point"], dtype=space.dtype)
    return json.dumps(action) if action is not None else text


def _is_number(word: str) -> bool:
    try:
        float(word)
    except ValueError:
        return False
    return True


def _screen(obs: Any, env: gym.Env[Any, Any]) -> np.ndarray | None:
    if isinstance(obs, dict) and isinstance(obs.get("screenshot"), np.ndarray):
        return obs["screenshot"]
    if isinstance(obs, np.ndarray) and obs.ndim == 3 and obs.shape[-1] == 3:
        return obs
    frame = env.render() if env.render_mode == "rgb_array" else None
    return frame if isinstance(frame, np.ndarray) else None


def _show(obs: Any, info: dict[str, Any], env: gym.Env[Any, Any], shots: Path, index: int, out: TextIO) -> None:
    """Print what a person needs to act: instruction, elements (id, role, text), the screenshot's path."""
    instruction = (obs.get("instruction") if isinstance(obs, dict) else None) or info.get("instruction")
    if instruction:
        print(f"instruction: {instruction}", file=out)
    if isinstance(obs, dict) and obs.get("url"):
        print(f"at: {obs['url']}", file=out)
    elements = obs.get("elements") if isinstance(obs, dict) else None
    if isinstance(elements, str):
        try:
            elements = json.loads(elements)
        except json.JSONDecodeError:
            elements = None
    for el in elements or []:
        if isinstance(el, dict):
            mark = "*" if el.get("clickable") else " "
            text = str(el.get("text", ""))[:70]
            print(f"  {mark}[{el.get('id')}] {el.get('role', '')}: {text}  bbox={el.get('bbox')}", file=out)
    if isinstance(obs, dict) and isinstance(obs.get("text"), str):
        print(obs["text"], file=out)
    image = _screen(obs, env)
    if image is not None:
        from PIL import Image

        shots.mkdir(parents=True, exist_ok=True)
        path = shots / f"screen_{index:04d}.png"
        Image.fromarray(np.asarray(image, dtype=np.uint8)).save(path)
        print(f"screenshot: {path}", file=out)


def play(
    env_id: str,
    env_kwargs: dict[str, Any],
    input_stream: TextIO,
    out: TextIO,
    shots: Path,
    seed: int | None = None,
    task: str | None = None,
) -> list[float]:
    """Play ``env_id`` from typed lines until ``q`` or the input ends; returns each finished episode's return.

    Args:
        env_id: a registered id.
        env_kwargs: constructor arguments (``render_mode="human"`` is added for browser envs by the CLI).
        input_stream: where action lines come from (stdin, or a test's text).
        out: where the screen description goes.
        shots: folder the latest screenshots are written to (PNG).
        seed: seed of the first episode (episode i uses ``seed + i``).
        task: a task name for envs that take ``options={"task": ...}``.
    """
    options = {"task": task} if task else None
    returns: list[float] = []
    lines: Iterator[str] = iter(input_stream.readline, "")
    with gym.make(env_id, **env_kwargs) as env:
        episode = 0
        obs, info = env.reset(seed=None if seed is None else seed + episode, options=options)
        total, shown = 0.0, 0
        _show(obs, public_info(info), env, shots, shown, out)
        print(HELP, file=out)
        for line in lines:
            command = line.strip()
            if not command:
                continue
            if command == "q":
                break
            if command != "r":
                obs, reward, terminated, truncated, info = env.step(parse_line(command, env.action_space))
                info = public_info(info)
                total += float(reward)
                shown += 1
                error = info.get("action_error")
                print(f"reward {float(reward):+.3f}" + (f"  (action error: {error})" if error else ""), file=out)
                if not (terminated or truncated):
                    _show(obs, info, env, shots, shown, out)
                    continue
                verdict = info.get("success")
                print(f"episode over: return {total:+.3f}, success {verdict}", file=out)
                returns.append(total)
            episode += 1
            obs, info = env.reset(seed=None if seed is None else seed + episode, options=options)
            # A finishing step saved no screen, so the new episode's first screen takes its number.
            total, shown = 0.0, shown + (1 if command == "r" else 0)
            _show(obs, public_info(info), env, shots, shown, out)
    return returns


__all__ = ["HELP", "parse_line", "play"]
