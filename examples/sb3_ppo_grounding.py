"""SB3 PPO on a grounding id (web or phone), trained with the binary reward and with SSL's; one figure.

    python examples/sb3_ppo_grounding.py                              # GuiWebGround-Box-v0, 2 x 512 steps
    python examples/sb3_ppo_grounding.py --env GuiAndroidGround-Box-v0
    python examples/sb3_ppo_grounding.py --quick                      # 2 x 8 steps, the CI check

No wrapper is written here: the ``-Box-v0`` ids (:mod:`gui_envs.tasks.sb3_grounding`) register box-mode grounding with
the click normalised to ``[-1, 1]^2``, a quarter-size screenshot with the instruction banner, and the reward
named by ``reward=`` (``ssl``: SSL's ``C + alpha * S_hat`` over Gaussian-field zones, seed 000 section 3.2).
One step is one episode (one click, a new page each reset). A CNN reading the instruction from pixels is a
hard start; the curves show what the reward signal alone buys. Writes ``runs/sb3_grounding/<env>.png``.

The default budget is set by the env's cost: every step is a new page (restored, loaded and described at each
reset; SB3 resets right after the step, which leaves the background preparation little time), so 512 steps per
reward took 6 min 36 s for both rewards on the idle 2-core development machine (2026-12-01). That is far too few
for a CNN to learn to read the instruction (both rewards ended at 0% over the last 100 episodes); pass
``--steps`` for longer runs. SSL's sweet spot lies inside the target box (the Gaussian field is 0 outside it), so
a policy that never hits gets the same zero reward from both, and early curves coincide.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import gymnasium as gym

import gui_envs  # noqa: F401  (registers the ids)

try:  # run as a script (python examples/...) or imported as examples.sb3_ppo_grounding
    from sb3_common import RUNS, final_rate, plot_curves, train_one
except ImportError:
    from examples.sb3_common import RUNS, final_rate, plot_curves, train_one


def main(argv: list[str] | None = None) -> dict[str, float]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--env", default="GuiWebGround-Box-v0", help="GuiWebGround-Box-v0 or GuiAndroidGround-Box-v0")
    parser.add_argument("--steps", type=int, default=512, help="env steps (= episodes) per reward")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=RUNS / "sb3_grounding", help="output folder")
    parser.add_argument("--quick", action="store_true", help="8 steps per reward (CI)")
    args = parser.parse_args(argv)
    steps = 8 if args.quick else args.steps
    ppo = {"n_steps": 8 if args.quick else 128, "batch_size": 8 if args.quick else 64, "n_epochs": 4}
    curves = {
        reward: train_one(lambda r: gym.make(args.env, reward=r), reward, steps, "CnnPolicy", args.seed, ppo)
        for reward in ("binary", "ssl")
    }
    path = plot_curves(curves, f"PPO on {args.env}", args.out / f"{args.env}.png", window=100)
    rates = {reward: final_rate(points, 100) for reward, points in curves.items()}
    for reward, rate in rates.items():
        print(f"{reward}: {len(curves[reward])} episodes, success over the last 100: {rate:.0%}")
    print(f"curves written to {path}")
    return rates


if __name__ == "__main__":
    main()
