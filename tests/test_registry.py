"""Every registered guigym id constructs, passes gymnasium's env checker, and repeats under a seed."""

from __future__ import annotations

import os

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import gui_envs

# The MiniWoB suite registers one id per task; checking one of them (in tests/gui_envs/web) covers the code.
# The -Box-v0 ids are the grounding envs (checked here) under gymnasium wrappers; SB3's checker and a PPO run
# cover them in tests/examples (about 100 s of browser launches saved).
IDS = [i for i in gui_envs.guigym_env_ids() if "MiniWoB" not in i and not i.endswith("-Box-v0")]
MINIWOB_IDS = [i for i in gui_envs.guigym_env_ids() if i.startswith("GuiWeb-MiniWoB-")]
#: MiniWoB ids that CI checks: jQuery UI tabs (whose raster drifted on a reused page), typing, a date picker, a
#: natural-language task (its utterance comes as ``{utterance, fields}``) and a time-driven page (stock-market's
#: prices tick: it runs on the virtual clock). ``GUIGYM_ALL_MINIWOB=1`` checks all 125 (about 15 minutes on 2 cores).
MINIWOB_SAMPLE = [
    f"GuiWeb-MiniWoB-{t}-v0"
    for t in ("click-tab-2", "enter-text", "choose-date", "email-inbox-nl-turk", "stock-market")
]


@pytest.mark.parametrize("env_id", IDS)
def test_check_env(env_id: str) -> None:
    env = gym.make(env_id)
    try:
        check_env(env.unwrapped, skip_render_check=False)
    finally:
        env.close()


@pytest.mark.parametrize("env_id", IDS)
def test_seeded_reset_repeats(env_id: str) -> None:
    # One env, reset twice: the second reset must not depend on what the first one left behind.
    with gym.make(env_id) as env:
        obs_a, _ = env.reset(seed=123)
        env.reset(seed=7)
        obs_b, _ = env.reset(seed=123)
        _assert_equal(obs_a, obs_b)


@pytest.mark.slow
@pytest.mark.parametrize(
    "env_id", MINIWOB_IDS if os.environ.get("GUIGYM_ALL_MINIWOB") == "1" else MINIWOB_SAMPLE
)
def test_miniwob_check_env_and_element_ids_restart_at_each_reset(env_id: str) -> None:
    env = gym.make(env_id)
    try:
        check_env(env.unwrapped, skip_render_check=False)
        # The task page is reused across episodes: its element ids must restart with each one, as on a fresh load.
        obs_a, _ = env.reset(seed=123)
        env.reset(seed=7)
        obs_b, _ = env.reset(seed=123)
        _assert_equal(obs_a["elements"], obs_b["elements"])
        _assert_equal(obs_a, obs_b)
        assert isinstance(obs_a["instruction"], str) and not obs_a["instruction"].startswith("{")
    finally:
        env.close()


def test_every_id_has_a_description() -> None:
    for env_id in gui_envs.guigym_env_ids():
        assert env_id in gym.registry
        assert gui_envs.ENV_DESCRIPTIONS[env_id].strip()


def _assert_equal(a: object, b: object) -> None:
    if isinstance(a, dict):
        assert isinstance(b, dict) and a.keys() == b.keys()
        for key in a:
            _assert_equal(a[key], b[key])
    elif isinstance(a, tuple | list):
        assert isinstance(b, tuple | list) and len(a) == len(b)
        for x, y in zip(a, b, strict=True):
            _assert_equal(x, y)
    elif isinstance(a, np.ndarray):
        np.testing.assert_array_equal(a, b)
    else:
        assert a == b


@pytest.mark.parametrize("env_id", [*IDS, MINIWOB_SAMPLE[0]])
def test_an_unknown_render_mode_is_refused_and_every_id_declares_render_fps(env_id: str) -> None:
    import warnings

    spec = gym.spec(env_id)
    env_type = (
        gym.envs.registration.load_env_creator(spec.entry_point)
        if isinstance(spec.entry_point, str)
        else None
    )
    metadata = getattr(env_type, "metadata", None) or {}
    assert metadata.get("render_fps", 0) > 0 and metadata.get("render_modes"), (env_id, metadata)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # gymnasium warns before the env refuses
        with pytest.raises(ValueError, match="render_mode"):
            gym.make(env_id, render_mode="bogus")
