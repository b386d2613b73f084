"""The trainer configs share one base: each field is declared and documented once (issue 27, item 3).

A field the five configs (GRPO, SFT, DPO, IPL, CORE) share lives in :mod:`trainers.config_base`, in the base or a
topic group; a config may redeclare one only to change its default, without a docstring. The counting is
``benchmarks/config_fields.py``'s; the tests also run it on small synthetic configs, so a repeat is seen.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from benchmarks.config_fields import Declaration, config_classes, declarations, repeat_counts
from trainers.config_io import ConfigError, UnknownConfigKeyError

ROOT = Path(__file__).resolve().parents[2]

#: Names a few configs each declare and document themselves, because they mean something different in each.
DIFFERENT: dict[str, tuple[set[str], str]] = {
    "beta": (
        {"GRPOConfig", "PairFields"},
        "GRPO's k3 KL coefficient (0: off) vs the DPO temperature of DPO and IPL",
    ),
    "data": (
        {"SFTConfig", "DPOConfig", "IPLConfig"},
        "trajectory folders (SFT), one pair file (DPO, a str), trajectories or an offline dataset read as CoaT trees (IPL)",
    ),
    "num_envs": (
        {"GRPOConfig", "CoreConfig"},
        "env copies per process (GRPO) vs env slots per env id (CORE)",
    ),
}


def repeats(decls: list[Declaration]) -> dict[str, set[str]]:
    """``{name: owners}`` of the field names documented in more than one class."""
    owners: dict[str, set[str]] = {}
    for d in decls:
        if d.documented:
            owners.setdefault(d.name, set()).add(d.owner)
    return {name: who for name, who in owners.items() if len(who) > 1}


def bad_redeclarations(configs: list[type]) -> list[str]:
    """Redeclarations of an inherited field that add a docstring or keep the inherited default."""
    decls = {(d.owner, d.name): d for d in declarations(configs)}
    classes = {k for c in configs for k in c.__mro__ if dataclasses.is_dataclass(k)}
    bad = []
    for cls in classes:
        for (owner, name), d in decls.items():
            if owner != cls.__qualname__:
                continue
            inherited = [
                decls[(b.__qualname__, name)] for b in cls.__mro__[1:] if (b.__qualname__, name) in decls
            ]
            if not inherited:
                continue
            if d.documented:
                bad.append(
                    f"{owner}.{name} is documented again (its docstring lives in {inherited[0].owner})"
                )
            if d.default == inherited[0].default:
                bad.append(f"{owner}.{name} repeats {inherited[0].owner}'s default {d.default}")
    return sorted(bad)


def test_each_shared_field_is_documented_once() -> None:
    decls = declarations(config_classes())
    found = repeats(decls)
    unexplained = {
        name: who for name, who in found.items() if name not in DIFFERENT or who != DIFFERENT[name][0]
    }
    assert unexplained == {}, (
        f"move these fields to trainers.config_base (or list why they differ): {unexplained}"
    )
    assert repeat_counts(config_classes())["documented"] == {2: len(DIFFERENT), 3: 1, 5: 0}


def test_a_config_redeclares_a_shared_field_only_to_change_its_default() -> None:
    assert bad_redeclarations(config_classes()) == []


def test_every_field_of_every_config_has_a_docstring_somewhere() -> None:
    documented = {d.name for d in declarations(config_classes()) if d.documented}
    for cls in config_classes():
        missing = [f.name for f in dataclasses.fields(cls) if f.name not in documented]
        assert missing == [], f"{cls.__name__}: fields without a docstring: {missing}"


# ----- the checks see a repeat: synthetic configs ------------------------------------------------------------


@dataclass
class _Base:
    lr: float = 1e-6
    """Learning rate."""


@dataclass
class _Copied(_Base):
    lr: float = 1e-5
    """Learning rate, written again."""
    steps: int = 1
    """Steps."""


@dataclass
class _SameDefault(_Base):
    lr: float = 1e-6


@dataclass
class _Other:
    steps: int = 2
    """Steps, written in a second config."""
    tags: list[str] = field(default_factory=list)


def test_the_checks_report_a_field_written_twice() -> None:
    decls = declarations([_Copied, _Other])
    assert repeats(decls) == {"lr": {"_Base", "_Copied"}, "steps": {"_Copied", "_Other"}}
    assert [d.default for d in decls if d.name == "tags"] == ["field(default_factory=list)"]
    assert bad_redeclarations([_Copied, _SameDefault]) == [
        "_Copied.lr is documented again (its docstring lives in _Base)",
        "_SameDefault.lr repeats _Base's default 1e-06",
    ]
    assert repeat_counts([_Copied, _Other])["documented"] == {2: 2, 3: 0, 5: 0}


# ----- behaviour kept: defaults, YAML files, overrides, errors ---------------------------------------------------


def test_defaults_that_differ_by_trainer_are_kept() -> None:
    from trainers.core.config import CoreConfig
    from trainers.dpo_config import DPOConfig
    from trainers.grpo_config import GRPOConfig
    from trainers.ipl_config import IPLConfig
    from trainers.sft_config import SFTConfig

    grpo, sft = GRPOConfig(model="m"), SFTConfig(model="m", data="d")
    dpo, ipl, core = DPOConfig(model="m", data="d"), IPLConfig(model="m", data="d"), CoreConfig(model="m")
    assert [c.output_dir for c in (grpo, sft, dpo, ipl, core)] == [
        f"runs/{n}" for n in ("grpo", "sft", "dpo", "ipl", "core")
    ]
    assert [c.learning_rate for c in (grpo, sft, dpo, ipl, core)] == [1e-6, 1e-5, 1e-6, 1e-6, 1e-5]
    assert [c.batch_size for c in (grpo, sft, dpo, ipl, core)] == [32, 32, 8, 128, 8]  # GRPO's: 4 groups of 8
    assert (grpo.env_id, sft.env_id, ipl.env_id) == ("ClickGrid-v0", "", None)
    assert (grpo.max_new_tokens, ipl.max_new_tokens, core.max_new_tokens) == (256, 128, 128)
    assert (core.top_p, core.top_k, grpo.top_p, grpo.top_k) == (0.9, 50, None, None)
    assert (ipl.lora_r, ipl.lora_alpha, ipl.sft_weight, dpo.sft_weight) == (128, 256, 1.0, 0.0)
    assert (grpo.logprob_chunk_size, sft.logprob_chunk_size, core.env_kwargs) == (
        1024,
        0,
        {"screenshots": False},
    )


@pytest.mark.parametrize("path", sorted((ROOT / "configs").glob("*.yaml")), ids=lambda p: p.name)
def test_every_config_file_loads(path: Path) -> None:
    classes = {c.__name__.removesuffix("Config").lower(): c for c in config_classes()}
    cls = classes[path.name.split("_")[0]]
    config = cls.from_yaml(path, ["seed=7"])
    assert config.seed == 7 and config.to_dict()["model"] == config.model


def test_a_shared_field_is_checked_and_an_unknown_key_named() -> None:
    from trainers.core.config import CoreConfig
    from trainers.ipl_config import IPLConfig
    from trainers.sft_config import SFTConfig

    with pytest.raises(ConfigError, match="model is empty"):
        CoreConfig()
    with pytest.raises(ConfigError, match="warmup_ratio must be in"):
        IPLConfig.from_yaml(None, ["model=m", "data=d", "warmup_ratio=1.5"])
    with pytest.raises(ConfigError, match="dtype='bf16'"):
        SFTConfig(model="m", data="d", dtype="bf16")
    with pytest.raises(UnknownConfigKeyError, match="CoreConfig has no field 'lora'"):
        CoreConfig.from_yaml(None, ["model=m", "lora=true"])  # CORE's SFT takes no LoRA
    with pytest.raises(UnknownConfigKeyError, match="Did you mean 'learning_rate'"):
        SFTConfig.from_yaml(None, ["model=m", "data=d", "learning_rat=1e-4"])
