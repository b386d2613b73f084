"""GRPOConfig: YAML and overrides, and the errors a user meets for bad names and keys."""

from __future__ import annotations

from pathlib import Path

import pytest

from gui_envs.wrappers import UnknownRewardError
from trainers.advantages import UnknownEstimatorError
from trainers.config_io import ConfigError, UnknownConfigKeyError
from trainers.grpo_config import GRPOConfig

ROOT = Path(__file__).resolve().parents[2]


def test_yaml_and_overrides(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text("model: m\nlearning_rate: 1e-6\nreward: ssl\nreward_kwargs: {alpha: 0.3}\n")
    cfg = GRPOConfig.from_yaml(path, ["group_size=5", "estimator=sca", "beta=1e-2"])
    assert (cfg.learning_rate, cfg.group_size, cfg.estimator, cfg.beta) == (1e-6, 5, "sca", 0.01)
    assert cfg.reward_kwargs == {"alpha": 0.3}


@pytest.mark.parametrize("name", ["grpo_tiny_cpu", "grpo_ssl_qwen25vl3b_webground", "grpo_sca_qwen25vl3b_webground"])
def test_bundled_configs_load(name: str) -> None:
    GRPOConfig.from_yaml(ROOT / "configs" / f"{name}.yaml")


def test_unknown_key_names_the_closest_field(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text("model: m\nlearning_rat: 0.1\n")
    with pytest.raises(UnknownConfigKeyError, match="'learning_rate'"):
        GRPOConfig.from_yaml(path)


def test_unknown_reward_and_estimator() -> None:
    with pytest.raises(UnknownRewardError, match="binary"):
        GRPOConfig(model="m", reward="binar")
    with pytest.raises(UnknownEstimatorError, match="dr_grpo"):
        GRPOConfig(model="m", estimator="drgrpo")


@pytest.mark.parametrize(
    ("field", "value", "match"),
    [("eps_low", 1.5, "eps_low"), ("loss_agg", "mean", "token-mean"), ("group_size", 1, "group_size"),
     ("model", "", "model is empty"), ("mini_batches", 3, "divide")],
)  # fmt: skip
def test_bad_values_say_what_to_change(field: str, value: object, match: str) -> None:
    kwargs = {"model": "m", field: value}
    with pytest.raises(ConfigError, match=match):
        GRPOConfig(**kwargs)  # type: ignore[arg-type]
