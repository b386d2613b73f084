"""Launcher tasks: open apps from the grid or through "Search apps, web and more"."""

from __future__ import annotations

from gui_envs.android.apps import APP_CLASSES
from gui_envs.android.apps.launcher import SEARCH_HINT, Launcher
from gui_envs.android.tasks.base import (
    PlanStep,
    StateTask,
    search,
    tap,
)

LAUNCHER = Launcher.package


class OpenAppFromGrid(StateTask):
    name = "launcher.open_app"
    app = LAUNCHER

    def setup(self) -> str:
        self.target = self.pick(APP_CLASSES)
        return f"Open the {self.target.label} app."

    def done(self) -> bool:
        return self.state.package == self.target.package

    def oracle_plan(self) -> list[PlanStep]:
        return [tap(self.target.label, rid="app_icon")]


class OpenAppBySearch(StateTask):
    """CORE's label function: typed '<App>' into 'Search apps, web and more', then opened it."""

    name = "launcher.search_and_open"
    app = LAUNCHER

    def setup(self) -> str:
        self.target = self.pick(APP_CLASSES)
        return f"Type '{self.target.label}' into '{SEARCH_HINT}' on the home screen, then open the app."

    def done(self) -> bool:
        searched = any(
            self.target.label.lower() in q.lower()
            for (q,) in self.state.rows(LAUNCHER, "SELECT query FROM searches")
        )
        return searched and self.state.package == self.target.package

    def oracle_plan(self) -> list[PlanStep]:
        return [
            *search(self.target.label),
            tap(self.target.label, rid="app_icon"),
        ]
