"""GRPOConfig: YAML and overrides, and the errors a user meets for bad names and keys."""

from __future__ import annotations

from pathlib import Path

import pytest

from gui_envs.reward_wrappers import UnknownRewardError
from trainers.advantages import UnknownEstimatorError
from trainers.config_io import ConfigError, UnknownConfigKeyError
from trainers.grpo_config import GRPOConfig
from trainers.heldout import SplitOverlapError

ROOT = Path(__file__).resolve().parents[2]


def test_yaml_and_overrides(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text("model: m\nlearning_rate: 1e-6\nreward: ssl\nreward_kwargs: {alpha: 0.3}\n")
    cfg = GRPOConfig.from_yaml(path, ["group_size=5", "estimator=sca", "beta=1e-2"])
    assert (cfg.learning_rate, cfg.group_size, cfg.estimator, cfg.beta) == (1e-6, 5, "sca", 0.01)
    assert cfg.reward_kwargs == {"alpha": 0.3}


@pytest.mark.parametrize("name", ["grpo_tiny_cpu", "grpo_tiny_heldout", "grpo_ssl_qwen25vl3b_webground",
                                  "grpo_sca_qwen25vl3b_webground"])
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


def test_held_out_seeds_as_a_list_or_a_range() -> None:
    assert GRPOConfig(model="m", eval_seeds=None).eval_seed_list == []
    cfg = GRPOConfig(model="m", num_train_seeds=100, eval_seeds={"start": 100, "count": 3})
    assert cfg.eval_seed_list == [100, 101, 102]
    assert GRPOConfig(model="m", seed_start=50, num_train_seeds=10, eval_seeds=[3, 60, 49]).eval_seed_list == [3, 60, 49]


@pytest.mark.parametrize(
    ("split", "shown"),
    [({"start": 90, "count": 20}, "90, 91, 92, 93, 94, ... (10 in all)"), ([5, 200, 99], "5, 99")],
)  # fmt: skip
def test_held_out_seeds_in_the_training_stream_are_refused(split: object, shown: str) -> None:
    with pytest.raises(SplitOverlapError) as err:
        GRPOConfig(model="m", num_train_seeds=100, eval_seeds=split)  # type: ignore[arg-type]
    message = str(err.value)
    assert "training seeds 0..99" in message and shown in message and "eval_seeds={start: 100" in message


def test_held_out_split_from_yaml_and_overrides(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text("model: m\nnum_train_seeds: 1000\neval_seeds: {start: 1000, count: 50}\n")
    cfg = GRPOConfig.from_yaml(path, ["eval_every=25", "eval_samples=4"])
    assert (len(cfg.eval_seed_list), cfg.eval_every, cfg.eval_samples) == (50, 25, 4)
    with pytest.raises(SplitOverlapError):
        GRPOConfig.from_yaml(path, ["eval_seeds=[999, 1000]"])


@pytest.mark.parametrize(
    ("field", "value", "match"),
    [("eval_every", -1, "eval_every"), ("eval_samples", -2, "eval_samples"),
     ("eval_seeds", {"start": 5}, "start and count"), ("eval_seeds", [1, 1], "twice"), ("eval_seeds", [], "non-empty"),
     ("eval_seeds", {"start": 5, "count": 0}, "count an int >= 1")],
)  # fmt: skip
def test_bad_held_out_values_say_what_to_change(field: str, value: object, match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        GRPOConfig(model="m", num_train_seeds=1, seed_start=0, **{field: value})  # type: ignore[arg-type]


def test_a_non_seed_split_that_overlaps_is_refused_naming_the_shared_items() -> None:
    from trainers.heldout import check_no_overlap

    check_no_overlap(["a", "b"], ["c"], "task templates")
    with pytest.raises(SplitOverlapError, match=r"held-out task templates overlap the training task templates at b: move"):
        check_no_overlap(["a", "b"], ["b", "c", "b"], "task templates", hint="move b out")


def test_group_envs_need_slots_that_split_into_groups() -> None:
    assert GRPOConfig(model="m", group_envs=True, num_envs=16, group_size=8).group_envs
    with pytest.raises(ConfigError, match="multiple of group_size"):
        GRPOConfig(model="m", group_envs=True, num_envs=12, group_size=8)
    with pytest.raises(ConfigError, match="other than 'ipl'"):
        GRPOConfig(model="m", group_envs=True, num_envs=8, group_size=8, reward="ipl")
