"""CORE's online self-training (seed 002): semantic code abstraction (:mod:`trainers.core.abstraction`),
trajectory-guided extrapolation (:mod:`trainers.core.extrapolation`) and the loop (:mod:`trainers.core.loop`,
configured by :class:`trainers.core.config.CoreConfig`). The verifiers themselves live in :mod:`gui_envs.verifiers`.
"""
