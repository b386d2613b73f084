"""One clear line and a hint instead of a traceback, for the mistakes a newcomer makes on the command line.

Commands run their body inside :func:`user_errors`: the user-error classes below are printed as
``error: <message>`` (each message already says how to fix it) and the command exits with status 1. Anything
else is a bug and keeps its traceback.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import typer
from rich.console import Console


class ModelPathError(FileNotFoundError):
    """``--agent hf:PATH`` names a folder that does not exist (guigym never downloads from a model hub)."""


def check_model_path(path: str) -> Path:
    """``path`` as a :class:`Path`, or :class:`ModelPathError` with a hint when there is nothing there."""
    folder = Path(path).expanduser()
    if not folder.exists():
        raise ModelPathError(
            f"model path {path!r} does not exist. Pass a local folder saved with save_pretrained (a `guigym "
            "train` run writes one to its output_dir); guigym does not download from a model hub"
        )
    return folder


def check_config_model(model: str) -> None:
    """Raise :class:`ModelPathError` when a trainer config's ``model`` is a local path with nothing there.

    A hub id (``Qwen/Qwen2.5-VL-3B-Instruct``) passes: a GPU machine may download it. ``model`` counts as a
    local path when it starts with ``.``, ``/`` or ``~``, or when its first component is a folder here
    (``runs/tiny-llama`` next to an existing ``runs/``), since no hub organisation shares a name with one of
    the user's own folders by accident often enough to be worth a minute of download retries.
    """
    path = Path(model).expanduser()
    first = Path(model).parts[0] if Path(model).parts else ""
    looks_local = model.startswith((".", "/", "~")) or (len(Path(model).parts) > 1 and Path(first).is_dir())
    if looks_local and not path.exists():
        raise ModelPathError(
            f"model {model!r} does not exist. Build the tiny test model there with `guigym tiny-model {model}` "
            "(--hidden-size as the config's header says) or point `model` at a folder saved with save_pretrained"
        )


def _user_error_types() -> tuple[type[BaseException], ...]:
    """The named user errors of every layer; imported here so a missing extra only drops its own classes."""
    from agents.oracle import OracleUnavailableError
    from gui_envs.grid.errors import GridConfigError
    from gui_envs.offline.readers import OfflineDatasetError
    from gui_envs.schema.errors import EnvClosedError, ResetNeededError, ResetOptionsError
    from gui_envs.tasks.base import UnknownTaskError

    found: list[type[BaseException]] = [
        ModelPathError, OracleUnavailableError, OfflineDatasetError, UnknownTaskError, GridConfigError,
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
    from guigym.bench import UnknownBenchmarkError

    found.append(UnknownBenchmarkError)
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
        return None
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
    takes = f"; it takes {', '.join(accepted)}" if accepted else ""
    return f"{env_id} has no argument {name!r} (-k {name}=...){takes}"


__all__ = ["ModelPathError", "check_config_model", "check_model_path", "user_errors"]
