"""Blind baselines on the grounding envs: does ``GuiWebGround-v0`` / ``GuiAndroidGround-v0`` measure grounding?

For each env and each instruction style (``describe="structure"``, the default, and ``describe="text"``, which
quotes the target's visible text) this runs, on the same seeded episodes:

- string match: click the centre of the element whose text best matches the instruction
  (:func:`string_match_point`);
- random click: a uniform point in the screenshot;
- random element: the centre of a uniformly drawn clickable element of the observation;
- oracle: the centre of the target (a sanity check: 1.0).

and prints the success rate of each (a hit is a click inside the target's box, as the env's reward). A
grounding benchmark is informative when string matching falls well below 1 with the default instructions.

Each policy maps ``(instruction, elements)`` to a click point in screenshot pixels; the tests' oracle
helpers reuse the string matcher.

Usage::

    python benchmarks/ground_baselines.py [--seeds 50] [--quick]
"""

from __future__ import annotations

import argparse
import difflib
import re
import sys
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
from rich.console import Console
from rich.table import Table
from tqdm import tqdm

# run as a script, the repository root is not on the path (the tests import this file as a module)
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import gui_envs  # noqa: E402,F401
from gui_envs.browser.observation import parse_elements  # noqa: E402
from gui_envs.schema.privileged import privileged_of  # noqa: E402

POLICIES = ("string match", "random click", "random element", "oracle")

# ----- the blind policies ---------------------------------------------------------------------------------

_WORD = re.compile(r"[a-z0-9$.,'&-]+")


def _words(text: str) -> set[str]:
    return {w.strip(".,") for w in _WORD.findall(text.lower())} - {""}


def _centre(el: dict[str, Any]) -> tuple[float, float]:
    x0, y0, x1, y1 = el["bbox"]
    return ((x0 + x1) / 2, (y0 + y1) / 2)


def string_match_point(instruction: str, elements: list[dict[str, Any]]) -> tuple[float, float] | None:
    """The centre (pixels) of the element whose text best matches the instruction, or ``None`` if none has text.

    A quoted phrase in the instruction that equals an element's text wins outright; otherwise the score is the
    share of the element's words that occur in the instruction, ties broken by ``difflib``'s similarity ratio.

    >>> els = [{"text": "Cart", "bbox": [0, 0, 10, 10]}, {"text": "Orders", "bbox": [20, 0, 40, 10]}]
    >>> string_match_point('click the link "Orders"', els)
    (30.0, 5.0)
    """
    texts = [el for el in elements if el.get("text", "").strip()]
    if not texts:
        return None
    quoted = {q.strip().lower() for q in re.findall(r'"([^"]+)"', instruction)}
    for el in texts:
        if el["text"].strip().lower() in quoted:
            return _centre(el)
    said = _words(instruction)
    lowered = instruction.lower()

    def score(el: dict[str, Any]) -> tuple[float, float]:
        words = _words(el["text"])
        overlap = len(words & said) / len(words) if words else 0.0
        return overlap, difflib.SequenceMatcher(None, el["text"].lower(), lowered).ratio()

    return _centre(max(texts, key=score))


def random_point(rng: np.random.Generator, size: tuple[int, int]) -> tuple[float, float]:
    """A uniform point in a ``size`` = ``(width, height)`` screenshot, in pixels."""
    return (float(rng.uniform(0, size[0])), float(rng.uniform(0, size[1])))


def random_element_point(rng: np.random.Generator, elements: list[dict[str, Any]]) -> tuple[float, float] | None:
    """The centre (pixels) of a uniformly drawn clickable element, or ``None`` when there is none."""
    clickable = [el for el in elements if el.get("clickable")]
    if not clickable:
        return None
    return _centre(clickable[int(rng.integers(len(clickable)))])


# ----- the benchmark ----------------------------------------------------------------------------------------


def target_box(env: gym.Env[Any, Any], info: dict[str, Any]) -> list[float]:
    """The target's ``[x0, y0, x1, y1]`` (pixels), from the privileged channel (never the agent's info)."""
    return list(privileged_of(env)["target_bbox"])


def inside(point: tuple[float, float] | None, box: list[float]) -> bool:
    """Whether the pixel ``point`` lies in ``box`` (edges included, as the envs' reward)."""
    return point is not None and box[0] <= point[0] <= box[2] and box[1] <= point[1] <= box[3]


def score(env_id: str, describe: str, seeds: list[int]) -> dict[str, float]:
    """Success rate of each baseline over the episodes ``reset(seed=s)`` of ``env_id``."""
    env = gym.make(env_id, describe=describe)
    hits = {name: 0 for name in POLICIES}
    rng = np.random.default_rng(0)
    try:
        for seed in tqdm(seeds, desc=f"{env_id} {describe}", leave=False):
            obs, info = env.reset(seed=seed)
            elements = parse_elements(obs["elements"])
            height, width = obs["screenshot"].shape[:2]
            box = target_box(env, info)
            oracle = env.unwrapped.oracle_action().point
            points = {
                "string match": string_match_point(obs["instruction"], elements),
                "random click": random_point(rng, (width, height)),
                "random element": random_element_point(rng, elements),
                "oracle": oracle,
            }
            for name, point in points.items():
                hits[name] += inside(point, box)
    finally:
        env.close()
    return {name: hits[name] / len(seeds) for name in POLICIES}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=50, help="episodes (reset seeds 0..n-1) per env and style")
    parser.add_argument("--quick", action="store_true", help="10 seeds instead of --seeds")
    args = parser.parse_args()
    seeds = list(range(10 if args.quick else args.seeds))
    table = Table(title=f"Grounding baselines: success rate over {len(seeds)} seeded episodes")
    for col in ("env", "instructions", *POLICIES):
        table.add_column(col, justify="left" if col in ("env", "instructions") else "right")
    for env_id in ("GuiWebGround-v0", "GuiAndroidGround-v0"):
        for describe in ("structure", "text"):
            rates = score(env_id, describe, seeds)
            label = "structure (default)" if describe == "structure" else "text (exact label)"
            table.add_row(env_id, label, *(f"{rates[name]:.2f}" for name in POLICIES))
    Console(width=120).print(table)


if __name__ == "__main__":
    main()
