"""Per-step training logs: one JSON line per step, the same scalars to TensorBoard and W&B (``report_to``), and a
learning-curve PNG drawn from the JSONL log.

**Metric names.** ``metrics.jsonl`` keeps guigym's names. TensorBoard and W&B get the names a TRL user looks for:
the name TRL's trainer gives the same metric (:data:`TRL_NAMES`, per trainer), else guigym's own, then Hugging
Face ``Trainer``'s prefix (``transformers.integrations.rewrite_logs``, which TRL's trainers log through):
``eval_<x>`` becomes ``eval/<x>``, every other key ``train/<key>``. The x axis is the record's ``step``
(optimiser steps, ``global_step`` in ``Trainer``'s words), so the step-0 held-out point of an untrained policy
is at step 0.

==============================  =================================  ===========================================
guigym key (``metrics.jsonl``)  TensorBoard / W&B name             meaning (the same in both trainers)
==============================  =================================  ===========================================
GRPO ``reward_mean``            ``train/reward``                   mean episode reward of the step's rollouts
GRPO ``reward_std``             ``train/reward_std``               their std (guigym ddof 0, TRL ddof 1)
GRPO ``kl``                     ``train/kl``                       mean per-token k3 KL to the reference
GRPO ``entropy``                ``train/entropy``                  mean per-token policy entropy
GRPO ``clip_frac``              ``train/clip_ratio/region_mean``   fraction of tokens whose ratio was clipped
GRPO ``completion_len``         ``train/completions/mean_length``  mean tokens per sampled completion
DPO ``reward_chosen``           ``train/rewards/chosen``           ``beta * (log pi - log ref)`` of the chosen
DPO ``reward_rejected``         ``train/rewards/rejected``         the same of the rejected
DPO ``reward_margin``           ``train/rewards/margins``          chosen minus rejected implicit reward
DPO ``accuracy``                ``train/rewards/accuracies``       fraction of pairs with a positive margin
all ``loss``                    ``train/loss``                     the optimised loss
all ``lr``                      ``train/learning_rate``            learning rate after the step
all ``eval_<x>``                ``eval/<x>``                       held-out metrics (greedy, sampled success)
any other ``<key>``             ``train/<key>``                    guigym's metric; TRL has no name for it
==============================  =================================  ===========================================

Not mapped on purpose: SFT's ``token_acc`` (tokens given probability > 0.5) is not TRL's ``mean_token_accuracy``
(the argmax equals the label), and ``epoch`` is the 0-based epoch index, not ``Trainer``'s fractional epoch.

**Reporters.** ``tensorboard`` writes ``<output_dir>/runs/events.out.tfevents.*`` (``torch.utils.tensorboard``,
flushed after every record so that a killed run keeps its steps); a resumed run opens the same folder with
``purge_step`` one past the checkpoint, so TensorBoard drops the steps the killed run logged after it, as the
JSONL log does. ``wandb`` starts ``wandb.init(project=$WANDB_PROJECT or "guigym", name=<output_dir's name>,
dir=output_dir, config=<the run's config>)``; ``WANDB_MODE=offline`` writes the run under
``<output_dir>/wandb/offline-run-*`` (what the tests use). A resumed run is a new W&B run whose history starts
at the step after the checkpoint (W&B cannot drop a run's logged steps; the JSONL log and TensorBoard are the
records that read as one run).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from gui_envs.schema.errors import did_you_mean

#: ``report_to`` values: where the scalars go besides ``metrics.jsonl`` (which is always written).
REPORTERS = ("tensorboard", "wandb")

_COMMON = {"loss": "loss", "lr": "learning_rate"}
#: guigym key -> TRL's name for the same metric, per trainer (see the module docstring's table).
TRL_NAMES: dict[str, dict[str, str]] = {
    "grpo": {
        **_COMMON,
        "reward_mean": "reward",
        "kl": "kl",
        "entropy": "entropy",
        "clip_frac": "clip_ratio/region_mean",
        "completion_len": "completions/mean_length",
    },
    "sft": dict(_COMMON),
    "dpo": {
        **_COMMON,
        "reward_chosen": "rewards/chosen",
        "reward_rejected": "rewards/rejected",
        "reward_margin": "rewards/margins",
        "accuracy": "rewards/accuracies",
    },
}


def check_report_to(value: str | Iterable[str] | None) -> list[str]:
    """``report_to`` as a list of reporter names: ``[]``, ``"none"`` and ``None`` mean the JSONL log only; one name
    may be given as a string.

    Raises:
        ValueError: an unknown name (the message lists the known ones).
    """
    if value is None or value == "none":
        return []
    names = [value] if isinstance(value, str) else list(value)
    names = [n for n in names if n != "none"]
    unknown = [n for n in names if n not in REPORTERS]
    if unknown:
        raise ValueError(
            f"report_to={names!r}: unknown {unknown}; use a list of {list(REPORTERS)}, or [] / 'none' for the "
            f"JSONL log only.{did_you_mean(unknown[0], REPORTERS)}"
        )
    return list(dict.fromkeys(names))


#: The extra that installs each reporter's package.
EXTRAS = {"tensorboard": "guigym[train]", "wandb": "guigym[wandb]"}


def require_reporters(names: Iterable[str]) -> None:
    """Import each reporter's package, so that a run stops before loading a model when one is missing.

    Raises:
        ImportError: naming the package and the extra that installs it (:data:`EXTRAS`).
    """
    for name in names:
        try:
            if name == "tensorboard":
                from torch.utils.tensorboard import SummaryWriter  # noqa: F401  (needs the tensorboard package)
            else:
                import wandb  # noqa: F401
        except ImportError as exc:
            raise ImportError(
                f"report_to=[{name!r}] needs the {name} package, which is not installed: pip install '{EXTRAS[name]}'"
            ) from exc


def reported_name(key: str, trainer: str = "grpo") -> str:
    """The TensorBoard / W&B name of a log key (see the module docstring's table).

    >>> reported_name("reward_mean"), reported_name("success_rate"), reported_name("eval_greedy_success")
    ('train/reward', 'train/success_rate', 'eval/greedy_success')
    """
    if key.startswith("eval_"):
        return "eval/" + key[len("eval_") :]
    return "train/" + TRL_NAMES.get(trainer, {}).get(key, key)


def scalars(record: dict[str, Any], trainer: str = "grpo") -> dict[str, float]:
    """The record's numbers under their reported names (``step`` is the x axis, not a scalar)."""
    return {
        reported_name(k, trainer): float(v)
        for k, v in record.items()
        if k != "step" and isinstance(v, int | float) and not isinstance(v, bool)
    }


class RunLog:
    """Append-only ``metrics.jsonl``; on resume, records of steps after the checkpoint are dropped first,
    so the log never holds a step twice. With ``report_to``, every record's numbers also go to TensorBoard and / or
    W&B under TRL's names (module docstring).

    Args:
        path: the JSONL file; reporters write beside it (its folder is the run's ``output_dir``).
        start_step: steps already completed (records carry the 1-based ``step``; those ``<= start_step`` stay).
        report_to: reporter names (:data:`REPORTERS`); ``[]`` for the JSONL log only.
        trainer: which trainer's name table applies (``grpo``, ``sft``, ``dpo``).
        config: the run's config, stored with the W&B run.

    Raises:
        ValueError: an unknown reporter name.
        ImportError: a reporter's package is not installed; the message names the extra that installs it.
    """

    def __init__(
        self,
        path: str | Path,
        start_step: int = 0,
        report_to: str | Iterable[str] | None = (),
        trainer: str = "grpo",
        config: dict[str, Any] | None = None,
    ) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.trainer = trainer
        names = check_report_to(report_to)
        require_reporters(names)  # before the log is touched
        out = self.path.parent
        self.reporters: list[Any] = [
            _TensorBoard(out, start_step) if name == "tensorboard" else _Wandb(out, config) for name in names
        ]
        kept = [r for r in read_log(self.path) if r.get("step", -1) <= start_step] if self.path.exists() else []
        self.path.write_text("".join(json.dumps(r) + "\n" for r in kept))

    def write(self, record: dict[str, Any]) -> None:
        """Append ``record`` to the JSONL log and send its numbers to the reporters at ``record["step"]``."""
        with self.path.open("a") as f:
            f.write(json.dumps(record) + "\n")
        if self.reporters and "step" in record:
            values = scalars(record, self.trainer)
            for reporter in self.reporters:
                reporter.log(values, int(record["step"]))

    def close(self) -> None:
        """Flush and close the reporters (the W&B run is finished); the JSONL log needs nothing."""
        for reporter in self.reporters:
            reporter.close()
        self.reporters = []


class _TensorBoard:
    """Scalars to ``<out_dir>/runs`` with ``torch.utils.tensorboard``."""

    def __init__(self, out_dir: Path, start_step: int) -> None:
        from torch.utils.tensorboard import SummaryWriter
        # purge_step: TensorBoard drops the events at or after it from earlier files of this folder, the
        # steps a killed run logged after its checkpoint.
        self.writer = SummaryWriter(log_dir=str(out_dir / "runs"), purge_step=start_step + 1)

    def log(self, values: dict[str, float], step: int) -> None:
        for name, value in values.items():
            self.writer.add_scalar(name, value, step)
        self.writer.flush()

    def close(self) -> None:
        self.writer.close()


class _Wandb:
    """Scalars to a W&B run (``WANDB_MODE=offline`` keeps it on disk under ``<out_dir>/wandb``)."""

    def __init__(self, out_dir: Path, config: dict[str, Any] | None) -> None:
        import wandb
        self.run = wandb.init(
            project=os.environ.get("WANDB_PROJECT", "guigym"),
            name=out_dir.resolve().name,
            dir=str(out_dir),
            config=config or {},
            reinit="create_new",  # a second run in the same process (an IPL round, a test) is its own run
        )

    def log(self, values: dict[str, float], step: int) -> None:
        # train/global_step as Trainer's W&B callback logs it, so TRL users' W&B panels keep their x axis.
        self.run.log({**values, "train/global_step": step}, step=step)

    def close(self) -> None:
        self.run.finish()


def read_log(path: str | Path) -> list[dict[str, Any]]:
    """The records of a JSONL log (a torn last line, from a kill mid-write, is skipped)."""
    out = []
    for line in Path(path).read_text().splitlines():
        try:
            out.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return out


def panel_title(names: Sequence[str]) -> str:
    """A panel's title: its one key, ``success`` for a panel of success curves (training beside held-out), else
    the keys joined.

    >>> panel_title(["reward_margin", "eval_reward_margin"])
    'reward_margin / eval_reward_margin'
    """
    if len(names) > 1 and all("success" in n for n in names):
        return "success"
    return " / ".join(names)


def plot_curve(
    log: str | Path,
    png: str | Path,
    keys: Sequence[str | Sequence[str]] = ("reward_mean", "success_rate"),
    xlabel: str = "step",
) -> Path:
    """Draw ``keys`` against ``step`` from a JSONL log into ``png``, one panel per entry (``xlabel`` names what a
    step counts). An entry that is a sequence of keys shares one panel, with a legend: a held-out curve drawn on
    the same axes as the training curve it is compared with."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    records = read_log(log)
    fig, axes = plt.subplots(1, len(keys), figsize=(4.5 * len(keys), 3.2), squeeze=False)
    for ax, entry in zip(axes[0], keys, strict=True):
        names = [entry] if isinstance(entry, str) else list(entry)
        for key in names:
            pts = [(r["step"], r[key]) for r in records if r.get(key) is not None]
            if pts:
                ax.plot(*zip(*pts, strict=True), marker=".", label=key)
        if not ax.lines:  # a key this run never logged: say so instead of an empty frame
            ax.text(0.5, 0.5, "not logged in this run", ha="center", va="center", transform=ax.transAxes)
        elif len(names) > 1:
            ax.legend(fontsize=7)
        ax.set_xlabel(xlabel)
        ax.set_title(panel_title(names))
        ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(png, dpi=80)
    plt.close(fig)
    return Path(png)
