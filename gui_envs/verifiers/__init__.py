"""CORE's verifiers (seed 002): the label-function API, the sandbox that runs untrusted label functions, and the
strategy graph (:mod:`gui_envs.verifiers.graph`, imported on demand).

* :mod:`gui_envs.verifiers.api`: the validators label functions call, over a read-only
  :class:`~gui_envs.verifiers.api.TrajectoryView` of a recorded episode; the matching rule.
* :mod:`gui_envs.verifiers.facts`: per-site and per-app state facts the envs record in their privileged channel.
* :mod:`gui_envs.verifiers.sandbox`: :func:`run_label_function`, parse-first whitelist plus a limited worker.
* :mod:`gui_envs.verifiers.synth`: label functions from an oracle demonstration; the sets checked in under
  ``data/``.
"""

from gui_envs.verifiers.api import API, StepView, TrajectoryView, matches, normalise, view_of
from gui_envs.verifiers.sandbox import (
    Crashed,
    Rejected,
    TimedOut,
    Verdict,
    VerdictError,
    check_source,
    run_label_function,
    run_label_functions,
)

__all__ = [
    "API",
    "Crashed",
    "Rejected",
    "StepView",
    "TimedOut",
    "TrajectoryView",
    "Verdict",
    "VerdictError",
    "check_source",
    "matches",
    "normalise",
    "run_label_function",
    "run_label_functions",
    "view_of",
]
