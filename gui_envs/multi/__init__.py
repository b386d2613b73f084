"""Multi-agent view of guigym: the N members of a group as PettingZoo agents (needs the ``multi`` extra).

>>> from gui_envs.multi import parallel_env
>>> group = parallel_env("ClickGrid-v0", n_agents=4, credit="grpo")
>>> obs, infos = group.reset(seed=0)
>>> sorted(obs) == group.possible_agents
True
>>> group.close()
"""

from gui_envs.multi.group import CREDITS, GroupConfigError, GroupEnv, env, parallel_env, raw_env

__all__ = ["CREDITS", "GroupConfigError", "GroupEnv", "env", "parallel_env", "raw_env"]
