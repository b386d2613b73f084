"""One clear line and a hint instead of a traceback, for the mistakes a newcomer makes on the command line.

Commands run their body inside :func:`user_errors`: the user-error classes below are printed as
``error: <message>`` (each message already says how to fix it) and the command exits with status 1. Anything
else is a bug and keeps its traceback.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import typer
from rich.console import Console

from agents.hub import HubUnavailableError, ModelPathError, check_saved_model, resolve_model
from gui_envs.schema.errors import did_you_mean


def check_model_path(path: str) -> str:
    """``--agent hf:NAME``'s model as ``from_pretrained`` will load it (:func:`agents.hub.resolve_model`): a local
    folder that holds a saved model (:func:`agents.hub.check_saved_model`), a hub id the hub serves, or its cached
    snapshot; a named user error otherwise."""
    resolved = resolve_model(path)
    check_saved_model(resolved)
    return resolved


def check_config_model(model: str) -> None:
    """Raise a named user error when a trainer config's ``model`` cannot load (:func:`agents.hub.resolve_model`):
    a missing local path, or a hub id while the hub is unreachable and the id is not cached."""
    resolve_model(model)


def _user_error_types() -> tuple[type[BaseException], ...]:
    """The named user errors of every layer; imported here so a missing extra only drops its own classes."""
    from agents.oracle import OracleUnavailableError
    from gui_envs.grid.errors import GridConfigError
    from gui_envs.offline.readers import OfflineDatasetError
    from gui_envs.schema.errors import EnvClosedError, ResetNeededError, ResetOptionsError
    from gui_envs.tasks.base import UnknownTaskError

    found: list[type[BaseException]] = [
        ModelPathError, HubUnavailableError, OracleUnavailableError, OfflineDatasetError, UnknownTaskError, GridConfigError,
        ResetNeededError, EnvClosedError, ResetOptionsError,
    ]
    try:
        from gui_envs.android.backend import DeviceError
        from gui_envs.browser.chromium import ChromiumNotFoundError

        found += [DeviceError, ChromiumNotFoundError]
    except ImportError:
        pass
    try:
        from guigym.report import ReportError

        found.append(ReportError)
    except ImportError:
        pass
    try:
        from agents.api_agent import (
            APIError,  # a server that is down: the message says which URL and to start it
        )

        found.append(APIError)
    except ImportError:
        pass
    from guigym.bench import BenchmarkFolderError, UnknownBenchmarkError
    from guigym.tasks_list import NoTasksError

    found += [UnknownBenchmarkError, BenchmarkFolderError, NoTasksError]
    return tuple(found)


@contextmanager
def user_errors(console: Console | None = None) -> Iterator[None]:
    """Turn a known user error into ``error: ...`` on stderr and exit status 1."""
    try:
        yield
    except _user_error_types() as exc:
        message = exc.args[0] if isinstance(exc, KeyError) and exc.args else str(exc)
        (console or Console(stderr=True)).print(f"[bold red]error:[/] {message}", highlight=False, soft_wrap=True)
        raise typer.Exit(1) from None
    except TypeError as exc:
        message = unknown_env_argument(exc)
        if message is None:
            raise
        (console or Console(stderr=True)).print(f"[bold red]error:[/] {message}", highlight=False, soft_wrap=True)
        raise typer.Exit(1) from None


def unknown_env_argument(exc: TypeError) -> str | None:
    """One line for gymnasium's "unexpected keyword argument ... raised from the environment creator for ID" (a
    mistyped ``-k KEY=VALUE``), naming the argument and the ones the env takes; ``None`` for any other TypeError."""
    import inspect
    import re

    import gymnasium as gym

    found = re.search(r"unexpected keyword argument '([^']+)' was raised from the environment creator for (\S+)", str(exc))
    if found is None:
        # A value of the wrong type (``-k rows=abc``): gymnasium appends the env id and the kwargs to the env's error.
        wrapped = re.search(r"^(.*) was raised from the environment creator for (\S+) with kwargs \((.*)\)$", str(exc), re.S)
        if wrapped is None:
            return None
        cause, env_id, kwargs = wrapped.groups()
        return f"{env_id} cannot be made with {kwargs} (a -k value of the wrong type?): {cause}"
    name, env_id = found.groups()
    accepted: list[str] = []
    try:
        entry = gym.spec(env_id).entry_point
        creator = gym.envs.registration.load_env_creator(entry) if isinstance(entry, str) else entry
        for cls in getattr(creator, "__mro__", (creator,)):
            init = getattr(cls, "__init__", None)
            if init is None or init is object.__init__:
                continue
            for p in inspect.signature(init).parameters.values():
                if p.name != "self" and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) and p.name not in accepted:
                    accepted.append(p.name)
    except Exception:  # noqa: BLE001 - the hint is a courtesy; the error line stands without it
        pass
    takes = f"; it takes {', '.join(accepted)}." if accepted else "."
    return f"{env_id} has no argument {name!r} (-k {name}=...){takes}{did_you_mean(name, accepted)}"


__all__ = ["HubUnavailableError", "ModelPathError", "check_config_model", "check_model_path", "user_errors"]
