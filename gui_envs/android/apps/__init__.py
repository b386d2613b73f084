"""The bundled phone apps."""

from __future__ import annotations

from gui_envs.android.apps.base import PhoneApp
from gui_envs.android.apps.clock import Clock
from gui_envs.android.apps.contacts import Contacts
from gui_envs.android.apps.expenses import Expenses
from gui_envs.android.apps.launcher import Launcher
from gui_envs.android.apps.notes import Notes
from gui_envs.android.apps.recipes import Recipes
from gui_envs.android.apps.settings import Settings

#: App classes in launcher-grid order (the launcher itself is added by :func:`default_apps`).
APP_CLASSES: tuple[type[PhoneApp], ...] = (Clock, Expenses, Recipes, Contacts, Settings, Notes)


def default_apps() -> list[PhoneApp]:
    """Fresh instances of every bundled app, the launcher first."""
    apps = [cls() for cls in APP_CLASSES]
    return [Launcher(apps), *apps]


__all__ = ["APP_CLASSES", "PhoneApp", "default_apps"]
