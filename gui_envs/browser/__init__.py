"""Chromium plumbing shared by the web sites, MiniWoB and the simulated phone.

* :mod:`~gui_envs.browser.session`: one Chromium driven from a worker thread, crashes and time-outs mapped to
  :class:`~gui_envs.browser.session.BrowserCrashedError` / :class:`~gui_envs.browser.session.BrowserTimeoutError`;
* :mod:`~gui_envs.browser.routing`: hermetic request routing to in-process handlers;
* :mod:`~gui_envs.browser.site`: requests, responses, the router and seeded SQLite state those handlers run on;
* :mod:`~gui_envs.browser.executor`: the shared action schema executed on a page;
* :mod:`~gui_envs.browser.observation`: the page's element list and screenshot.

Nothing here imports :mod:`gui_envs.web` or :mod:`gui_envs.android`: both build on it.
"""
