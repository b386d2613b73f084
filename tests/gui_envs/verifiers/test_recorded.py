"""On recorded oracle episodes (real Chromium): the paper's App. F.1 listings, saved folders verified offline,
and ``StrategyGraphReward`` (check_env; climbs to 1 on the oracle)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import gymnasium as gym
import pytest
from gymnasium.utils.env_checker import check_env

import gui_envs  # noqa: F401
from agents.oracle import record_oracle
from gui_envs.reward_wrappers import with_reward
from gui_envs.verifiers import run_label_function, view_of
from gui_envs.verifiers.api import TrajectoryView
from gui_envs.verifiers.graph import StrategyGraph
from gui_envs.verifiers.synth import synthesise

pytest.importorskip("playwright")

# App. F.1, verbatim but for the literals (bundled content: the shop's "Add to wishlist" is a <button>).
F11 = """from Function_APIs import *
def verify_function(trajectory, stop_page_url):
    # Check if the 'Add to Wish List' link was clicked
    if not validate_click_or_hover_action(trajectory, 'click', 'BUTTON', 'Add to wishlist'):
        return False
    # Check if the item was added to the wishlist
    if not validate_item_in_wishlist(trajectory, 'ITEM'):
        return False
    # Return True if all conditions were satisfied
    return True
# Execute and return result
result = verify_function(trajectory, stop_page_url)
"""
F12 = """from Function_APIs import *
def verify_function(trajectory, stop_page_url):
    if not validate_stop_action(trajectory, 'ANSWER'):
        return False
    return True
# Execute and return result
result = verify_function(trajectory, stop_page_url)
"""
# F.1.3 and F.1.4 need no change at all: the launcher's field and the expense account are bundled as is.
F13 = """from Function_APIs import *
def verify_function(trajectory):
    if not validate_type_action(trajectory, 'Clock', target_text_field='Search apps, web and more'):
        return False
    return True
# Execute and return result
result = verify_function(trajectory)
"""
F14 = """from Function_APIs import *
def verify_function(trajectory):
    if not validate_click_action(trajectory, 'Pro Expense'):
        return False
    return True
# Execute and return result
result = verify_function(trajectory)
"""


def drop_step(view: TrajectoryView, index: int) -> TrajectoryView:
    """The view without step ``index`` (its effect on the state kept): a trajectory missing a key step."""
    steps = [s for s in view.steps if s.index != index]
    return replace(view, steps=tuple(replace(s, index=i) for i, s in enumerate(steps)), locations=view.locations[:index] + view.locations[index + 1 :], states=view.states[:index] + view.states[index + 1 :])


def state_first(view: TrajectoryView) -> TrajectoryView:
    """The final state reached right after the first step, before the other actions: out of order (the item
    was in the wishlist before the 'Add to wishlist' click)."""
    return replace(view, states=(view.states[0],) + (view.states[-1],) * (len(view.states) - 1))


def seed_where(env: gym.Env[Any, Any], task: str, condition: Any) -> int:
    for seed in range(200):
        env.reset(options={"task": task, "seed": seed})
        if condition(env.unwrapped.task):
            return seed
    raise AssertionError(f"no seed of {task} satisfies the condition")


@pytest.fixture(scope="module")
def web_env() -> Any:
    env = gym.make("GuiWeb-Shop-v0", screenshots=False)
    yield env
    env.close()


@pytest.fixture(scope="module")
def phone_env() -> Any:
    env = gym.make("GuiAndroid-v0", screenshots=False)
    yield env
    env.close()


def test_f11_wishlist(web_env: Any, tmp_path: Path) -> None:
    oracle = record_oracle(web_env.unwrapped, "shop.add_to_wishlist", seed=3)
    item = web_env.unwrapped.task.p["name"]
    other = record_oracle(web_env.unwrapped, "shop.add_to_wishlist", seed=4)
    assert oracle.success and other.success and web_env.unwrapped.task.p["name"] != item
    code = F11.replace("ITEM", item)
    folder = oracle.save(tmp_path)  # verified offline, from the saved folder
    assert run_label_function(code, folder).passed is True
    assert run_label_function(code, other).passed is False  # the wrong item
    view = view_of(oracle)
    click = next(s.index for s in view.steps if s.text == "Add to wishlist")
    assert run_label_function(code, drop_step(view, click)).passed is False  # the click is missing
    assert run_label_function(code, state_first(view)).passed is False  # in the wishlist before the click


def test_f12_stop_answer(web_env: Any) -> None:
    oracle = record_oracle(web_env.unwrapped, "shop.calories", seed=3)
    answer = web_env.unwrapped.task.reference_answer
    assert answer.endswith(" calories") and oracle.success
    assert run_label_function(F12.replace("ANSWER", answer), oracle).passed is True
    wrong = F12.replace("ANSWER", str(int(answer.split()[0]) + 10) + " calories")
    assert run_label_function(wrong, oracle).passed is False  # a wrong answer
    view = view_of(oracle)
    assert run_label_function(F12.replace("ANSWER", answer), drop_step(view, len(view.steps) - 1)).passed is False


def test_f13_f14_verbatim_on_the_phone(phone_env: Any) -> None:
    seed = seed_where(phone_env, "launcher.search_and_open", lambda t: "Clock" in t.instruction)
    oracle = record_oracle(phone_env.unwrapped, "launcher.search_and_open", seed=seed)
    assert oracle.success and run_label_function(F13, oracle).passed is True
    view = view_of(oracle)
    typed = next(s.index for s in view.steps if s.action == "type")
    assert run_label_function(F13, drop_step(view, typed)).passed is False
    other = seed_where(phone_env, "launcher.search_and_open", lambda t: "Clock" not in t.instruction)
    assert run_label_function(F13, record_oracle(phone_env.unwrapped, "launcher.search_and_open", seed=other)).passed is False

    seed = seed_where(phone_env, "expenses.open_account", lambda t: t.account == "Pro Expense")
    oracle = record_oracle(phone_env.unwrapped, "expenses.open_account", seed=seed)
    assert oracle.success and run_label_function(F14, oracle).passed is True
    other = seed_where(phone_env, "expenses.open_account", lambda t: t.account != "Pro Expense")
    assert run_label_function(F14, record_oracle(phone_env.unwrapped, "expenses.open_account", seed=other)).passed is False


def test_graph_reward_check_env_and_climbs_to_one(phone_env: Any) -> None:
    oracle = record_oracle(phone_env.unwrapped, "settings.wifi", seed=3)
    graph = StrategyGraph.linear(synthesise(oracle), task="settings.wifi")
    env = with_reward(gym.make("GuiAndroid-v0", tasks=["settings.wifi"], screenshots=False), "graph", graphs=graph)
    try:
        check_env(env, skip_render_check=True)
        env.reset(options={"task": "settings.wifi", "seed": 3})
        rewards = []
        for _ in range(10):
            _, reward, terminated, truncated, info = env.step(env.unwrapped.oracle_action())
            rewards.append(reward)
            if terminated or truncated:
                break
        assert rewards[-1] == 1.0 and info["graph_label"] == "fully"
        assert rewards == sorted(rewards) and rewards[0] < 1.0  # dense: it climbs, it does not jump at the end
    finally:
        env.close()
