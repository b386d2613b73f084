"""Reward math for guigym: pure functions over numpy arrays (numpy and scipy only).

This is the bottom layer: it never imports ``gui_envs``, ``agents`` or ``trainers``. Coordinates are
screenshot pixels unless a docstring says otherwise.

Modules:
    geometry: boxes, containment, normalised offsets and distances.
    text: tokenisation, token F1, token-set F1.
    steps: ``StepTarget`` / ``StepPrediction`` records the step rewards read.
    advantage: GRPO group-relative advantage.
    ssl: Sweet Spot Learning tiers (Gaussian-field zones, blockwise grids, ``C + alpha * S_hat``).
    sca: Spatial Credit Assignment group credit (Residual, Prox), with ``sca_config``, ``sca_prox`` and the
        vectorised ``theil_sen`` fits.
    ipl: MobileIPL leaf values, value back-propagation, alpha/beta/gamma trees, T-DPO pairs.
    baselines: GUI-R1 binary reward, GUI-G2-style Gaussian point reward, cell match fraction.
"""

from rewards.advantage import group_advantage
from rewards.baselines import cell_match_fraction, gaussian_point_reward, gui_r1_reward
from rewards.ipl import TreeNode, backpropagate, classify_tree, leaf_value, preference_pairs
from rewards.sca import SCAConfig, SCAResult, spatial_credit, spatial_credit_batch
from rewards.ssl import (
    arc_blockwise_score,
    blockwise_score,
    discretise,
    gaussian_field,
    gui_ssl_reward,
    ssl_reward,
    sudoku_blockwise_score,
)
from rewards.steps import StepPrediction, StepTarget

__all__ = [
    "SCAConfig",
    "SCAResult",
    "StepPrediction",
    "StepTarget",
    "TreeNode",
    "arc_blockwise_score",
    "backpropagate",
    "blockwise_score",
    "cell_match_fraction",
    "classify_tree",
    "discretise",
    "gaussian_field",
    "gaussian_point_reward",
    "group_advantage",
    "gui_r1_reward",
    "gui_ssl_reward",
    "leaf_value",
    "preference_pairs",
    "spatial_credit",
    "spatial_credit_batch",
    "ssl_reward",
    "sudoku_blockwise_score",
]
