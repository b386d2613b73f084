"""Offline GUI datasets as environments (``GuiOffline-v0``): readers, fixtures and Type/GR/SR scoring."""

from gui_envs.offline.env import GuiOfflineEnv
from gui_envs.offline.fixtures import write_fixture
from gui_envs.offline.readers import READERS, OfflineDatasetError, OfflineEpisode, OfflineStep, read_dataset
from gui_envs.offline.scoring import POINT_THRESHOLD, TEXT_F1_THRESHOLD, StepScore, score_step

__all__ = [
    "POINT_THRESHOLD",
    "READERS",
    "TEXT_F1_THRESHOLD",
    "GuiOfflineEnv",
    "OfflineDatasetError",
    "OfflineEpisode",
    "OfflineStep",
    "StepScore",
    "read_dataset",
    "score_step",
    "write_fixture",
]
