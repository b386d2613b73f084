"""The contracts every guigym environment shares; no environment lives here.

* :mod:`~gui_envs.schema.actions`: the :class:`~gui_envs.schema.actions.Action` record and its JSON forms;
  :mod:`~gui_envs.schema.action_space`: the gymnasium space of every GUI env;
* :mod:`~gui_envs.schema.trajectory`: ``Step`` / ``Trajectory`` and their on-disk format, written atomically
  (:mod:`~gui_envs.schema.atomic_folder`);
* :mod:`~gui_envs.schema.privileged`: the channel for what only rewards, trainers and the oracle may read;
* :mod:`~gui_envs.schema.errors` and :mod:`~gui_envs.schema.lifecycle`: the two exceptions ``step`` may raise
  and the episode rules that every env's ``reset`` / ``step`` / ``close`` follow;
* :mod:`~gui_envs.schema.upcoming`: announced resets, so envs prepare the episodes a caller will ask for;
* :mod:`~gui_envs.schema.registration`: the one list of registered ids (``import gui_envs`` fills it);
* :mod:`~gui_envs.schema.json_scan`: the JSON value in model text, found in linear time (agents' parsers and the
  offline scorers read model output with it).

Import from the modules themselves (``from gui_envs.schema.actions import Action``): this package imports
nothing, so loading one contract does not load the others.
"""
