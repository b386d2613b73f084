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


def _user_error_types() -> tuple[type[BaseException], ...]:
    """The named user errors of every layer; imported here so a missing extra only drops its own classes."""
    from agents.oracle import OracleUnavailableError
    from gui_envs.errors import ResetNeededError
    from gui_envs.grid.errors import GridConfigError
    from gui_envs.offline.readers import OfflineDatasetError
    from gui_envs.tasks.base import UnknownTaskError

    found: list[type[BaseException]] = [
        ModelPathError, OracleUnavailableError, OfflineDatasetError, UnknownTaskError, GridConfigError,
        ResetNeededError,
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


__all__ = ["ModelPathError", "check_model_path", "user_errors"]
