"""Phone task templates. Importing this package registers every template in :data:`TASKS`."""

from __future__ import annotations

from gui_envs.android.tasks import (  # noqa: F401
    clock,
    contacts,
    expenses,
    launcher,
    multi_app,
    notes,
    recipes,
    settings,
)
from gui_envs.android.tasks.base import TASKS, AndroidTask, OracleError, PhoneState

__all__ = ["TASKS", "AndroidTask", "OracleError", "PhoneState"]
