"""Offline GUI datasets as environments (``GuiOffline-v0``): readers, fixtures and Type/GR/SR scoring."""

from gui_envs.offline.conventions import CONVENTIONS, Convention, convention_for
from gui_envs.offline.env import GuiOfflineEnv
from gui_envs.offline.fixtures import write_fixture
from gui_envs.offline.readers import READERS, read_dataset
from gui_envs.offline.records import (
    OfflineDatasetError,
    OfflineEpisode,
    OfflineRecordError,
    OfflineStep,
    ReadReport,
)
from gui_envs.offline.scoring import POINT_THRESHOLD, TEXT_F1_THRESHOLD, StepScore, score_step

__all__ = [
    "CONVENTIONS",
    "POINT_THRESHOLD",
    "READERS",
    "TEXT_F1_THRESHOLD",
    "Convention",
    "GuiOfflineEnv",
    "OfflineDatasetError",
    "OfflineEpisode",
    "OfflineRecordError",
    "OfflineStep",
    "ReadReport",
    "StepScore",
    "convention_for",
    "read_dataset",
    "score_step",
    "write_fixture",
]
