"""The one task core of the web and phone families: the task template and its three judges, the answer judge,
the oracle, and the env base that runs a task over a page or a device."""

from gui_envs.tasks.base import (
    AnswerTask,
    CanBeInfeasible,
    Do,
    InfeasibleTask,
    OracleError,
    PlanStep,
    ResetNeededError,
    StateTask,
    Task,
    UnknownTaskError,
    check_task,
)
from gui_envs.tasks.judging import answers_match
from gui_envs.tasks.oracle import Oracle, OracleMove

__all__ = [
    "AnswerTask",
    "CanBeInfeasible",
    "Do",
    "InfeasibleTask",
    "Oracle",
    "OracleError",
    "OracleMove",
    "PlanStep",
    "ResetNeededError",
    "StateTask",
    "Task",
    "UnknownTaskError",
    "answers_match",
    "check_task",
]
