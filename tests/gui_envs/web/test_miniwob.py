"""GuiWeb-MiniWoB-*: served through routing, seeded starts, the page's own reward, the lifted timer."""

from __future__ import annotations

import gymnasium as gym
import pytest
from gymnasium.utils.env_checker import check_env

import gui_envs
from gui_envs.browser.observation import parse_elements
from gui_envs.schema.actions import Action

pytest.importorskip("miniwob")


def test_ids_registered() -> None:
    ids = [i for i in gui_envs.guigym_env_ids() if i.startswith("GuiWeb-MiniWoB-")]
    assert len(ids) >= 120 and "GuiWeb-MiniWoB-click-test-v0" in ids


def test_click_test_and_enter_text() -> None:
    env = gym.make("GuiWeb-MiniWoB-click-test-v0")
    try:
        check_env(env.unwrapped, skip_render_check=True)
        obs, info = env.reset(seed=0)
        assert info["instruction"] == "Click the button." and obs["screenshot"].shape == (400, 500, 3)
        assert info["seed"] == 0 and info["reason"] is None  # not the strings 'undefined' / 'null'
        button = next(e for e in parse_elements(obs["elements"]) if e["text"] == "Click Me!")
        env.unwrapped._session.call(lambda h: h.page.wait_for_timeout(200))  # the old 10 s timer is lifted
        assert env.unwrapped._session.call(lambda h: h.page.evaluate("core.EPISODE_MAX_TIME")) > 10**9
        _, reward, terminated, _, info = env.step(Action.click_element(button["id"]))
        # Exactly 1: the raw reward, not the time-discounted one (wall-clock noise of ~1e-6 that GRPO's group
        # normalisation would turn into advantages).
        assert terminated and reward == 1.0 and info["success"]
        assert info["reason"] is None  # the page ended with reason undefined: None, not 'undefined'
        a = parse_elements(env.reset(seed=5)[0]["elements"])
        b = parse_elements(env.reset(seed=5)[0]["elements"])
        assert [e["bbox"] for e in a] == [e["bbox"] for e in b]  # seeded through Math.seedrandom
    finally:
        env.close()
    with gym.make("GuiWeb-MiniWoB-enter-text-v0") as env:
        obs, info = env.reset(seed=1)
        word = info["instruction"].split('"')[1]
        elements = parse_elements(obs["elements"])
        field = next(e for e in elements if e["role"] == "text")
        submit = next(e for e in elements if e["text"] == "Submit")
        env.step(Action.type_text(word, element_id=field["id"]))
        _, reward, terminated, _, info = env.step(Action.click_element(submit["id"]))
        assert terminated and reward == 1.0
        env.reset(seed=2)
        wrong = parse_elements(env.unwrapped._base_obs("")["elements"])
        submit = next(e for e in wrong if e["text"] == "Submit")
        _, reward, terminated, _, info = env.step(Action.click_element(submit["id"]))
        assert terminated and reward == -1.0 and not info["success"]  # MiniWoB's own verdict


def test_an_element_covered_at_its_centre_is_clicked_where_it_shows() -> None:
    # click-test-2 at this seed draws TWO over the centre of ONE (ONE 62-102 x 112-152, TWO 60-100 x 118-158):
    # the centre of ONE's box belongs to TWO, so a click there scored the right answer as wrong. The strip of
    # ONE above TWO still shows, and a user clicks it.
    with gym.make("GuiWeb-MiniWoB-click-test-2-v0", screenshots=False) as env:
        obs, info = env.reset(seed=10_000_040)
        buttons = {e["text"]: e for e in parse_elements(obs["elements"]) if e["tag"] == "button"}
        one, two = buttons["ONE"]["bbox"], buttons["TWO"]["bbox"]
        centre = ((one[0] + one[2]) / 2, (one[1] + one[3]) / 2)
        assert two[0] <= centre[0] <= two[2] and two[1] <= centre[1] <= two[3]  # the premise: ONE's centre is TWO's
        _, reward, terminated, _, info = env.step(Action.click_element(buttons["ONE"]["id"]))
        assert terminated and reward == 1.0 and info["success"]
        env.reset(seed=10_000_040)
        _, reward, terminated, _, _ = env.step(Action.click(*centre))  # a click at a point still hits what is on top
        assert terminated and reward == -1.0


def _raw_episodes(task: str, seeds: range) -> list[tuple[str, list[float]]]:
    """Utterance and ``#subbtn`` box of each episode of the raw task page, started as ``miniwob`` starts them.

    Mirrors ``miniwob.selenium_instance.SeleniumInstance.reset``: ``core.endEpisode(0)``, then
    ``Math.seedrandom(<repr(seed)>)``, ``core.setDataMode("train")`` and ``core.startEpisodeReal()``, each
    sent as script text, on the page opened from the package's ``html`` folder.
    """
    from playwright.sync_api import sync_playwright

    from gui_envs.browser.chromium import find_chromium
    from gui_envs.web.miniwob import miniwob_html_dir

    out = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=find_chromium(), args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 500, "height": 400})
        page.goto((miniwob_html_dir() / "miniwob" / f"{task}.html").as_uri(), wait_until="load")
        for seed in seeds:
            page.evaluate("core.endEpisode(0)")
            page.evaluate(f"Math.seedrandom({seed!r})")
            page.evaluate('core.setDataMode("train")')
            page.evaluate("core.startEpisodeReal()")
            box = page.evaluate(
                "(() => { const b = document.getElementById('subbtn'); if (!b) return [];"
                " const r = b.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; })()"
            )
            out.append((page.evaluate("core.getUtterance()"), box))
        browser.close()
    return out


def test_reset_seed_is_miniwobs_own_episode() -> None:
    """Regression: episodes were seeded with a string from another generator, not MiniWoB's number."""
    raw = _raw_episodes("click-test", range(10))
    assert len({tuple(b) for _, b in raw}) > 5  # the seed moves the button, so the comparison can fail
    with gym.make("GuiWeb-MiniWoB-click-test-v0") as env:
        ours = []
        for seed in range(10):
            obs, info = env.reset(seed=seed)
            assert info["seed"] == seed
            box = env.unwrapped._session.call(
                lambda h: h.page.evaluate(
                    "() => { const r = document.getElementById('subbtn').getBoundingClientRect();"
                    " return [r.left, r.top, r.right, r.bottom]; }"
                )
            )
            ours.append((obs["instruction"], box))
    assert ours == raw


def test_click_dialog_solvable_from_first_observation() -> None:
    """Regression: at 160 x 210 jQuery UI scrolled the page sideways and the dialog started off-screen."""
    with gym.make("GuiWeb-MiniWoB-click-dialog-v0") as env:
        for seed in range(2):
            obs, info = env.reset(seed=seed)
            elements = parse_elements(obs["elements"])
            close = next(e for e in elements if e["tag"] == "button" and e["text"].lower() == "close")
            x0, y0, x1, y1 = close["bbox"]
            assert 0 <= x0 < x1 <= 500 and 0 <= y0 < y1 <= 400  # on-screen, clicked by its pixels
            _, reward, terminated, _, info = env.step(Action.click((x0 + x1) / 2, (y0 + y1) / 2))
            assert terminated and reward > 0 and info["success"], info


def test_scroll_reset_in_both_axes_and_select_options() -> None:
    with gym.make("GuiWeb-MiniWoB-click-dialog-v0", viewport=(160, 210)) as env:
        for seed in range(2):
            env.reset(seed=seed)
            scroll = env.unwrapped._session.call(lambda h: h.page.evaluate("() => [scrollX, scrollY]"))
            assert scroll == [0, 0]
    with gym.make("GuiWeb-MiniWoB-choose-list-v0") as env:
        obs, _ = env.reset(seed=3)
        select = next(e for e in parse_elements(obs["elements"]) if e["tag"] == "select")
        assert len(select["options"]) > 1 and select["type"] == ""
        assert all(isinstance(o, str) and o for o in select["options"])


def test_reload_page_false_starts_episodes_in_the_loaded_page_with_ids_restarting() -> None:
    env = gym.make("GuiWeb-MiniWoB-click-button-v0", reload_page=False)
    try:
        a = parse_elements(env.reset(seed=3)[0]["elements"])
        env.unwrapped._session.call(lambda h: h.page.evaluate("() => { window.__guigymLoadMark = 1; }"))
        b = parse_elements(env.reset(seed=3)[0]["elements"])
        # The same document (the mark survives: no reload), and ids count from the start again.
        assert env.unwrapped._session.call(lambda h: h.page.evaluate("() => window.__guigymLoadMark")) == 1
        assert [(e["id"], e["text"]) for e in a] == [(e["id"], e["text"]) for e in b]
        assert min(int(e["id"]) for e in b) == 0
    finally:
        env.close()


def _price(obs: dict) -> str:
    return next(e["text"] for e in parse_elements(obs["elements"]) if e["text"].startswith("$"))


def test_a_time_driven_page_runs_on_a_virtual_clock_that_only_steps_advance() -> None:
    # stock-market's price ticks every 100 ms of page time. Under the virtual clock (the default for this task)
    # the page stands still while the agent thinks, and each step advances 1000 ms: one seed and one action
    # sequence give one episode, however long the agent took.
    with gym.make("GuiWeb-MiniWoB-stock-market-v0") as env:
        assert env.unwrapped.virtual_clock
        env.reset(seed=4)
        fast = [_price(env.step({"type": "wait", "duration": 0.1})[0]) for _ in range(3)]
        env.reset(seed=4)
        slow = []
        for _ in range(3):
            env.unwrapped._session.call(lambda h: h.page.wait_for_timeout(700))  # a slow agent, in wall time
            slow.append(_price(env.step({"type": "wait", "duration": 0.1})[0]))
        assert fast == slow and len(set(fast)) > 1  # the same prices, and they do move step to step
        # The page's date is the fixed virtual one, the same in every episode.
        now = env.unwrapped._session.call(lambda h: h.page.evaluate("Date.now()"))
        assert now // 1000 >= 1_704_067_200 and now // 1000 < 1_704_067_200 + 3600
    with gym.make("GuiWeb-MiniWoB-click-test-v0") as env:
        assert not env.unwrapped.virtual_clock  # a page that does not change by itself keeps the real clock


def test_clock_options_are_checked() -> None:
    with pytest.raises(ValueError, match="clock="):
        gym.make("GuiWeb-MiniWoB-click-test-v0", clock="fast")
    with pytest.raises(ValueError, match="step_time_ms"):
        gym.make("GuiWeb-MiniWoB-click-test-v0", step_time_ms=0)


def test_elements_leave_out_what_miniwob_leaves_out():
    """The stats panel ("Last reward:", "Episodes done:") and the query are not task elements: MiniWoB's own DOM
    reader (core.getDOMInfo) skips them, and a text agent's listing must not hold a panel it cannot use."""
    env = gym.make("GuiWeb-MiniWoB-click-test-2-v0", screenshots=False)
    try:
        obs, _ = env.reset(seed=3)
        elements = parse_elements(obs["elements"])
        texts = [e["text"] for e in elements]
        assert sorted(texts) == ["ONE", "TWO"], texts
        assert obs["instruction"] == "Click button ONE."
    finally:
        env.close()


def test_suite_draws_the_task_from_the_seed_and_keeps_each_tasks_page():
    env = gym.make("GuiWeb-MiniWoB-Suite-v0", tasks=["click-test-2", "enter-text"], screenshots=False)
    try:
        _, info = env.reset(seed=4)
        assert info["task"] == "click-test-2" and info["seed"] == 4
        obs, info = env.reset(seed=7)
        assert info["task"] == "enter-text" and obs["instruction"].startswith("Enter ")
        again, _ = env.reset(seed=7)
        assert again["instruction"] == obs["instruction"]
        _, info = env.reset(seed=7, options={"task": "click-test-2"})
        assert info["task"] == "click-test-2"
        with pytest.raises(ValueError, match="not in this suite"):
            env.reset(options={"task": "click-tab"})
        obs, _ = env.reset(seed=9)
        field = next(e for e in parse_elements(obs["elements"]) if e["tag"] == "input")
        _, _, terminated, _, _ = env.step(Action.type_text("abc", element_id=field["id"]))
        assert not terminated
    finally:
        env.close()
    with pytest.raises(ValueError, match="unknown"):
        gym.make("GuiWeb-MiniWoB-Suite-v0", tasks=["no-such-task"])
