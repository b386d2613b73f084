"""No action crashes a GuiWeb step (issue 9, point 4): each reproduction of the issue, then a property test.

Every test checks the same three things: ``step`` returns (no exception), the agent's mistake is an
``action_error`` no-op, and the browser lives (same PID, and the next step works).
"""

from __future__ import annotations

import json
import sqlite3
import time
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gui_envs.browser.observation import parse_elements
from gui_envs.browser.site import Request, Response, Router, Site, SiteState
from gui_envs.schema.actions import Action
from gui_envs.web.env import GuiWebEnv
from gui_envs.web.tasks import SITES, TASKS
from tests.gui_envs.crash_strategies import hostile_actions

HUGE_ID = "1234567890123456789012345"  # 25 digits: past SQLite's 64-bit INTEGER


def _element(obs: dict[str, Any], **want: str) -> dict[str, Any]:
    for el in parse_elements(obs["elements"]):
        if all(el.get(k) == v for k, v in want.items()):
            return el
    raise AssertionError(f"no element {want} in the observation")


def _still_works(env: GuiWebEnv, pid: int | None) -> None:
    """The browser is the same process and a plain action still goes through."""
    assert env.browser_pid == pid
    _, _, _, _, info = env.step(Action.navigate("home"))
    assert info["action_error"] is None


# ----- the site guard, without a browser -------------------------------------------------------------------


class _Buggy(Site):
    host, title = "buggy", "Buggy"
    router = Router()
    schema = "CREATE TABLE t(id INTEGER PRIMARY KEY, n INTEGER);"

    def seed(self, db: sqlite3.Connection, rng: Any) -> None:
        db.execute("INSERT INTO t(n) VALUES (1)")


@_Buggy.router.post("/write/<n>")
def _write(site: Site, db: sqlite3.Connection, req: Request, n: str) -> Response:
    db.execute("UPDATE t SET n = ?", (int(n),))
    return Response(body="ok")


@_Buggy.router.post("/bug")
def _bug(site: Site, db: sqlite3.Connection, req: Request) -> Response:
    db.execute("UPDATE t SET n = 99")
    raise RuntimeError("a handler bug")


def test_site_handle_is_400_for_bad_input_and_500_for_bugs() -> None:
    state = SiteState(_Buggy())
    state.restore(0)
    assert state.handle(Request("POST", "/write/7")).status == 200
    bad = state.handle(Request("POST", f"/write/{HUGE_ID}"))  # OverflowError inside sqlite3
    assert bad.status == 400 and bad.error is None
    assert state.handle(Request("POST", "/write/seven")).status == 400  # ValueError
    bug = state.handle(Request("POST", "/bug"))
    assert bug.status == 500 and bug.error is not None and "RuntimeError: a handler bug" in bug.error
    assert "a handler bug" not in str(bug.body)  # the page names the type; the detail goes to info
    assert state.one("SELECT n FROM t")[0] == 7  # the failing request's write was rolled back


@pytest.mark.parametrize(
    ("host", "method", "path", "form"),
    [
        ("shop", "GET", f"/product/{HUGE_ID}", {}),
        ("shop", "POST", "/cart/add", {"product_id": "1", "qty": HUGE_ID}),
        ("shop", "POST", "/cart/add", {"product_id": HUGE_ID, "qty": "1"}),
        ("forum", "GET", f"/post/{HUGE_ID}", {}),
        ("classifieds", "GET", f"/listing/{HUGE_ID}", {}),
    ],
)
def test_huge_numbers_are_a_400_page(host: str, method: str, path: str, form: dict[str, str]) -> None:
    state = SiteState(SITES[host])
    state.restore(0)
    assert state.handle(Request(method, path, form=form)).status == 400


# ----- reproductions through the env -----------------------------------------------------------------------


def test_huge_product_id_url_is_a_400_page(web_env: GuiWebEnv) -> None:
    web_env.reset(options={"task": "shop.add_to_cart", "seed": 0})
    pid = web_env.browser_pid
    start = time.monotonic()
    _, _, _, _, info = web_env.step(Action.navigate("url", url=f"/product/{HUGE_ID}"))
    assert time.monotonic() - start < web_env.timeout_s
    assert info["action_error"] is None and info["server_errors"] == []
    assert info["url"].endswith(f"/product/{HUGE_ID}")
    _still_works(web_env, pid)


def test_huge_quantity_form_post_is_a_400_page(web_env: GuiWebEnv) -> None:
    # A template that removes no product (shop.add_to_cart takes one off the shelf on every seed): /product/1 exists.
    web_env.reset(options={"task": "shop.add_to_cart_qty", "seed": 0})
    pid = web_env.browser_pid
    obs, *_ = web_env.step(Action.navigate("url", url="/product/1"))
    qty = _element(obs, text="Quantity")
    obs, _, _, _, info = web_env.step(Action.type_text(HUGE_ID, element_id=qty["id"]))
    assert info["action_error"] is None
    start = time.monotonic()
    obs, _, _, _, info = web_env.step(Action.click_element(_element(obs, text="Add to cart")["id"]))
    assert time.monotonic() - start < web_env.timeout_s
    assert info["action_error"] is None and "too large" in obs["elements"]  # the 400 page's message
    assert web_env.states["shop"].query("SELECT * FROM cart WHERE qty > 1000") == []
    _still_works(web_env, pid)


def test_a_handler_bug_is_a_500_page_listed_in_info(web_env: GuiWebEnv, monkeypatch: Any) -> None:
    web_env.reset(options={"task": "shop.add_to_cart", "seed": 0})
    pid = web_env.browser_pid

    def broken(db: sqlite3.Connection, request: Request) -> Response:
        raise RuntimeError(f"bug on {request.path}")

    # Past the site's own guard (Site.handle): the route callback's guard must answer the request.
    monkeypatch.setattr(web_env.states["shop"].site, "serve", broken)
    start = time.monotonic()
    obs, _, _, _, info = web_env.step(Action.navigate("url", url="/product/2"))
    assert time.monotonic() - start < web_env.timeout_s
    assert info["action_error"] is None
    assert any("RuntimeError: bug on /product/2" in line for line in info["server_errors"])
    monkeypatch.undo()
    _, _, _, _, info = web_env.step(Action.navigate("home"))
    assert info["server_errors"] == [] and info["action_error"] is None
    assert web_env.browser_pid == pid


def test_8kb_of_typed_text_fits_the_call_time_out(web_env: GuiWebEnv) -> None:
    obs, _ = web_env.reset(options={"task": "forum.create_post", "seed": 0})
    pid = web_env.browser_pid
    sub = web_env.states["forum"].one("SELECT name FROM subforums ORDER BY name")[0]
    obs, *_ = web_env.step(Action.navigate("url", url=f"/f/{sub}/new"))
    field = _element(obs, text="Body", role="textarea")
    text = ("lorem ipsum " * 700)[:8191] + "\n"  # the trailing newline is an Enter: a new line here
    start = time.monotonic()
    obs, _, _, _, info = web_env.step(Action.type_text(text, element_id=field["id"]))
    elapsed = time.monotonic() - start
    assert info["action_error"] is None and elapsed < web_env.timeout_s / 2, elapsed
    typed = _element(obs, id=field["id"])
    assert typed["value"].startswith("lorem ipsum lorem")
    _still_works(web_env, pid)


@pytest.mark.parametrize(
    ("action", "expect"),
    [
        ({"type": "swipe", "point": [100, 100], "end_point": [1e308, 1e308]}, "end_point"),
        ({"type": "click", "point": [10**400, 5]}, "malformed"),
        ('{"type": "click", "point": [1e400, 5]}', "malformed"),
        ({"type": "navigate", "target": "url", "url": 5}, "url must be a string"),
        ({"type": "stop", "answer": 5}, "answer must be a string"),
        ({"type": "type", "text": 5}, "text must be a string"),
    ],
)
def test_hostile_arguments_are_action_errors(web_env: GuiWebEnv, action: Any, expect: str) -> None:
    web_env.reset(options={"task": "shop.open_wishlist", "seed": 0})
    pid = web_env.browser_pid
    _, reward, terminated, _, info = web_env.step(action)
    assert expect in (info["action_error"] or ""), info["action_error"]
    assert reward < 0 and not terminated
    _still_works(web_env, pid)


def test_a_swipe_past_the_edge_is_clamped(web_env: GuiWebEnv) -> None:
    web_env.reset(options={"task": "shop.open_wishlist", "seed": 0})
    pid = web_env.browser_pid
    _, _, _, _, info = web_env.step(Action(type="swipe", point=(600, 600), end_point=(9e5, -9e5)))
    assert info["action_error"] is None
    _still_works(web_env, pid)


# ----- property test ----------------------------------------------------------------------------------------

# Every template can be drawn; derandomize keeps the drawn set the same on every run.
_WEB_TASKS = sorted(TASKS)


@settings(
    max_examples=20,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(task=st.sampled_from(_WEB_TASKS), actions=st.lists(hostile_actions(1280, 720), min_size=1, max_size=3))
def test_no_action_escapes_step(web_env: GuiWebEnv, task: str, actions: list[Any]) -> None:
    web_env.reset(options={"task": task, "seed": 1})
    pid = web_env.browser_pid
    for action in actions:
        _, reward, terminated, truncated, info = web_env.step(action)
        assert isinstance(reward, float) and "action_error" in info
        if terminated or truncated:
            web_env.reset(options={"task": task, "seed": 1})
    assert web_env.browser_pid == pid
    _, _, _, _, info = web_env.step(Action.navigate("home"))
    assert info["action_error"] is None and info["url"] == web_env.home_url, (actions, info["action_error"])
    json.dumps(info)


@pytest.mark.parametrize("name", ["classifieds.edit_title", "classifieds.edit_price"])
def test_a_deleted_ad_scores_zero_instead_of_raising(name: str) -> None:
    state = SiteState(SITES["classifieds"])
    state.restore(3)
    task = TASKS[name](state, np.random.default_rng([3, 7]))
    state.db.execute("UPDATE listings SET deleted = 1 WHERE id = ?", (task.l["id"],))
    task.visited.append(SITES["classifieds"].origin + "/")
    assert task.is_done() is False and task.evaluate(None) == 0.0
