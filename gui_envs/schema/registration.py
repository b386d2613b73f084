"""Environment registration: one place that lists every id guigym provides.

Entry points are strings, so ``import gui_envs`` stays cheap: Playwright, torch and friends load only when
an environment that needs them is made.
"""

from __future__ import annotations

import difflib
from typing import Any

import gymnasium as gym

#: One-line description of each registered id, shown by ``guigym envs``.
ENV_DESCRIPTIONS: dict[str, str] = {}


def register_env(env_id: str, entry_point: str, description: str, **kwargs: Any) -> None:
    """Register ``env_id`` with gymnasium and remember its one-line description.

    Re-registering an id (for example after ``importlib.reload``) is a no-op instead of a warning. The envs keep
    their own order (:mod:`gui_envs.schema.lifecycle`), so gymnasium's ``OrderEnforcing`` wrapper is left out: it would
    raise its plain ``ResetNeeded`` before the env's :class:`~gui_envs.schema.errors.ResetNeededError` could.
    Gymnasium's ``PassiveEnvChecker`` is left out too: it marks its one check done before the first ``reset``
    runs, so when that reset raises (an unknown option, a negative seed) it never stores the reset's data and the
    first ``step`` of the next episode fails with ``TypeError: cannot unpack non-iterable NoneType``. Every id
    passes gymnasium's full ``check_env`` in the tests instead (``tests/test_registry.py``).
    """
    ENV_DESCRIPTIONS[env_id] = description
    if env_id in gym.registry:
        return
    kwargs.setdefault("order_enforce", False)
    kwargs.setdefault("disable_env_checker", True)
    gym.register(id=env_id, entry_point=entry_point, **kwargs)


def guigym_env_ids() -> list[str]:
    """The ids registered by guigym, sorted."""
    return sorted(ENV_DESCRIPTIONS)


class UnknownEnvIdError(ValueError):
    """An env id neither guigym nor gymnasium registers; the message names the closest guigym ids."""


def check_env_id(env_id: str) -> str:
    """``env_id`` when guigym or gymnasium registers it (call after ``import gui_envs``, which fills the list).

    Raises:
        UnknownEnvIdError: naming up to three close guigym ids (``guigym run``, a trainer config's ``env_id``), so
            that a typo is one line instead of gymnasium's ``NameNotFound`` traceback.
    """
    known = guigym_env_ids()
    if env_id in known or env_id in gym.registry:
        return env_id
    close = difflib.get_close_matches(env_id, known, n=3, cutoff=0.4)
    hint = f" Did you mean {', '.join(close)}?" if close else " Run `guigym envs` to list them."
    raise UnknownEnvIdError(f"unknown environment id {env_id!r}.{hint}")
