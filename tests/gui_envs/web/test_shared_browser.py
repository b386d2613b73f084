"""GuiWeb-v0 on a SharedBrowser: both sides of its prepared-reset pair are contexts of the shared Chromium, closing
one env closes only its own contexts, and a killed shared browser is relaunched by the next reset."""

from __future__ import annotations

import os
import signal

import pytest

from gui_envs.android.env import PhoneEnvBase
from gui_envs.browser.session import BrowserCrashedError
from gui_envs.browser.shared import SharedBrowser
from gui_envs.schema.actions import Action
from gui_envs.web.env import GuiWebEnv, WebEnvBase

TASK = {"task": "shop.open_wishlist", "seed": 0}


def test_both_screen_bases_offer_human_rendering() -> None:
    assert "human" in WebEnvBase.metadata["render_modes"]
    assert "human" in PhoneEnvBase.metadata["render_modes"]


def test_guiweb_pair_lives_on_the_shared_browser() -> None:
    shared = SharedBrowser()
    a = GuiWebEnv(sites=("shop",), shared_browser=shared)
    b = GuiWebEnv(sites=("shop",), shared_browser=shared)

    def contexts() -> int:
        return shared.session().call(lambda h: len(h.browser.contexts))

    try:
        a.reset(options=TASK)
        b.reset(options=TASK)
        pid = shared.browser_pid
        assert pid is not None and a.browser_pid == b.browser_pid == pid
        # The host session's own context, then each env's two: the episode's and the one prepared meanwhile.
        assert contexts() == 1 + 2 + 2
        a.reset()  # the prepared episode, swapped in on the shared browser
        assert a.task is not None and a.browser_pid == pid
        a.close()
        assert contexts() == 1 + 2
        _, reward, terminated, _, _ = b.step(b.oracle_action())
        assert terminated and reward == 1.0

        b.reset(options=TASK)  # an episode to crash in: the one above has ended
        os.kill(pid, signal.SIGKILL)
        with pytest.raises(BrowserCrashedError, match="reset"):
            for _ in range(3):  # the disconnect is noticed by the first call after the kill
                b.step(Action.scroll("down"))
        b.reset(options=TASK)  # a new context on a relaunched shared browser
        assert b.browser_pid == shared.browser_pid and b.browser_pid not in (None, pid)
        _, reward, terminated, _, _ = b.step(b.oracle_action())
        assert terminated and reward == 1.0
    finally:
        a.close()
        b.close()
        shared.close()
