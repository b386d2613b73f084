"""Rebuild the checked-in label-function sets (``gui_envs/verifiers/data/<family>.json``) from oracle demos.

``python -m agents.label_sets web|phone`` plays every bundled template's oracle plan on task seed
:data:`~gui_envs.verifiers.synth.DATA_SEED` and writes the label functions that
:func:`~gui_envs.verifiers.synth.synthesise` derives from it (seed 002, sec. 3.1). It lives here, a layer above
the envs, because it runs the oracle agent; :func:`~gui_envs.verifiers.synth.load_sets` reads the result.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import gymnasium as gym

from agents.oracle import record_oracle
from gui_envs.verifiers import synth


def build_sets(
    env: gym.Env[Any, Any], tasks: Sequence[str], seed: int = synth.DATA_SEED
) -> dict[str, dict[str, Any]]:
    """``{task: {"seed", "functions"}}`` for ``tasks``, each from one oracle demonstration in ``env``."""
    return {
        task: {"seed": seed, "functions": synth.synthesise(record_oracle(env, task, seed))} for task in tasks
    }


def main(argv: Sequence[str] | None = None) -> Path:
    """Rebuild the set of family ``argv[0]`` (``web`` or ``phone``); returns the file written."""
    import gui_envs  # noqa: F401  (registers the env ids)

    family = (sys.argv[1:] if argv is None else list(argv))[0]
    if family not in ("web", "phone"):
        raise SystemExit(f"usage: python -m agents.label_sets web|phone (got {family!r})")
    env = gym.make("GuiWeb-v0" if family == "web" else "GuiAndroid-v0", screenshots=False).unwrapped
    try:
        sets = build_sets(env, list(env.task_names))
    finally:
        env.close()
    out = Path(synth.__file__).with_name("data") / f"{family}.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(sets, indent=1, sort_keys=True) + "\n")
    print(f"{len(sets)} templates -> {out}")
    return out


if __name__ == "__main__":
    main()
