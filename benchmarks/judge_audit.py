"""Can a blind policy pass a judge? Success of each adversarial policy per answer and infeasible template.

For every answer and infeasible template of the web sites and the simulated phone, over ``--seeds`` task seeds,
the policies of :mod:`gui_envs.judge_audit` are scored by the template's own judge, evaluated from the task
object and its seeded state without a browser (the judges read no page; see that module). Columns:

* ``list_all``, ``echo``, ``empty``, ``stop_now``: success rate of listing every candidate answer in one
  answer, echoing the instruction, an empty answer, a bare ``stop`` at step 1 with each status. Must be 0.
* ``guess``: success rate of one candidate per episode, every candidate in turn; ``chance`` is what a blind
  guess deserves, the mean over seeds of ``1 / #candidates`` (0 for infeasible templates). ``guess`` must be
  at most ``chance`` (equal when exactly one candidate passes per seed, which the tests assert).
* ``oracle``: success of the oracle plan played in the real env (Chromium) over ``--oracle-seeds`` seeds, as
  the reference a working agent reaches. ``-`` with ``--no-oracle``.

The last line says whether every blind policy is at chance or below.

Usage: ``python benchmarks/judge_audit.py [--seeds 20] [--oracle-seeds 20] [--no-oracle] [--quick]``
(``--quick``: 3 seeds, the oracle on 1).
"""

from __future__ import annotations

import argparse
from typing import Any

from tqdm import tqdm

from gui_envs import judge_audit

COLUMNS = (
    ("list_all", "list_every_option"),
    ("echo", "echo_question"),
    ("empty", "empty"),
    ("stop_now", "stop_at_once"),
    ("guess", "each_candidate"),
)


def blind_rates(family: str, name: str, seeds: range) -> dict[str, float]:
    """Per policy, the success rate averaged over seeds (successes / episodes of each seed), and the chance."""
    rates = dict.fromkeys([*judge_audit.POLICIES, "chance"], 0.0)
    for seed in seeds:
        task = judge_audit.build_task(family, name, seed)
        rates["chance"] += judge_audit.chance(task) / len(seeds)
        for policy in judge_audit.POLICIES:
            wins, episodes = judge_audit.play(task, policy)
            rates[policy] += wins / episodes / len(seeds) if episodes else 0.0
    return rates


def oracle_rate(env: Any, name: str, seeds: range, max_steps: int = 40) -> float:
    """Share of ``seeds`` on which the oracle plan, played in ``env``, ends with success."""
    wins = 0
    for seed in seeds:
        env.reset(options={"task": name, "seed": seed})
        for _ in range(max_steps):
            _, _, terminated, truncated, info = env.step(env.oracle_action())
            if terminated or truncated:
                break
        wins += int(info["success"])
    return wins / len(seeds)


def make_env(family: str) -> Any:
    if family == "web":
        from gui_envs.web.env import GuiWebEnv

        return GuiWebEnv(screenshots=False)
    from gui_envs.android.env import GuiAndroidEnv

    return GuiAndroidEnv()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=20, help="task seeds per template for the blind policies")
    parser.add_argument("--oracle-seeds", type=int, default=None, help="seeds for the oracle (default: --seeds)")
    parser.add_argument("--no-oracle", action="store_true", help="skip the oracle column (no browser needed)")
    parser.add_argument("--quick", action="store_true", help="3 seeds, the oracle on 1")
    args = parser.parse_args()
    seeds = range(3 if args.quick else args.seeds)
    oracle_seeds = range(1 if args.quick else (args.oracle_seeds or len(seeds)))
    jobs = [(family, name) for family in judge_audit.FAMILIES for name in judge_audit.templates(family)]

    rows: list[tuple[str, str, dict[str, float], float | None]] = []
    envs: dict[str, Any] = {}
    try:
        for family, name in tqdm(jobs, desc="templates", unit="template"):
            rates = blind_rates(family, name, seeds)
            oracle = None
            if not args.no_oracle:
                if family not in envs:
                    envs[family] = make_env(family)
                oracle = oracle_rate(envs[family], name, oracle_seeds)
            rows.append((family, name, rates, oracle))
    finally:
        for env in envs.values():
            env.close()

    head = ["family", "template", *(c for c, _ in COLUMNS), "chance", "oracle"]
    table = [
        [
            family,
            name,
            *(f"{rates[p]:.3f}" for _, p in COLUMNS),
            f"{rates['chance']:.3f}",
            "-" if oracle is None else f"{oracle:.2f}",
        ]
        for family, name, rates, oracle in rows
    ]
    widths = [max(len(r[i]) for r in [head, *table]) for i in range(len(head))]
    print(f"\nblind policies over {len(seeds)} seeds; oracle over {0 if args.no_oracle else len(oracle_seeds)}")
    print("| " + " | ".join(h.ljust(w) for h, w in zip(head, widths, strict=True)) + " |")
    print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for r in table:
        print("| " + " | ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) + " |")
    # Chance plus float slack; the zero policies must be exactly 0.
    blind_ok = all(
        all(rates[p] == 0.0 for p in judge_audit.ZERO_POLICIES) and rates["each_candidate"] <= rates["chance"] + 1e-9
        for _, _, rates, _ in rows
    )
    print(f"\nevery blind policy at chance or below: {'yes' if blind_ok else 'NO'}")


if __name__ == "__main__":
    main()
