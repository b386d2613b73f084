"""guigym in TRL: envs as TRL environments, rewards as TRL reward functions, SCA credit in TRL's advantages.

* :mod:`trainers.trl.env`: :class:`GuiGymEnvironment`, one guigym env per rollout slot of
  ``GRPOTrainer(environment_factory=...)``, its GUI actions as tools (text, or screenshots for VLMs); the
  :class:`EnvironmentFactory` that builds and closes them; :func:`episodes_of` for reward functions;
* :mod:`trainers.trl.data`: dataset rows ``(prompt, env_id, seed)`` from a seed range;
* :mod:`trainers.trl.rewards`: ``env``, ``binary``, ``ssl``, ``graph`` as TRL reward functions;
* :mod:`trainers.trl.sca`: :class:`SCAGRPOTrainer`, SCA credit in TRL's advantage computation;
* :mod:`trainers.trl.train`: :func:`build_trainer` and the entry point ``python -m trainers.trl``.

Needs ``pip install 'guigym[trl]'`` (TRL >= 1.0, transformers >= 5.2). See docs/trl.md.
"""

from trainers.trl.config import GuiGymTRLConfig, TRLConfigError
from trainers.trl.data import build_dataset, dataset_rows
from trainers.trl.env import (
    EnvironmentFactory,
    Episode,
    GuiGymEnvironment,
    episodes_of,
    make_environment_factory,
)
from trainers.trl.rewards import REWARD_FUNCS, reward_funcs

__all__ = [
    "REWARD_FUNCS",
    "EnvironmentFactory",
    "Episode",
    "GuiGymEnvironment",
    "GuiGymTRLConfig",
    "TRLConfigError",
    "build_dataset",
    "dataset_rows",
    "episodes_of",
    "make_environment_factory",
    "reward_funcs",
]
