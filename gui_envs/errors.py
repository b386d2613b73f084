"""The one "reset first" error every guigym env raises."""

from __future__ import annotations

import gymnasium as gym


class ResetNeededError(gym.error.ResetNeeded, RuntimeError):
    """``step``, ``render``, ``oracle_action`` or ``privileged`` was called before the first ``reset``.

    Fix: call ``env.reset()`` first. It is gymnasium's ``ResetNeeded`` and a ``RuntimeError``, so handlers of
    either catch it.
    """
