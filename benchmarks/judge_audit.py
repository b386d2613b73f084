"""Can a blind policy pass a judge? Success of each adversarial policy on every web and phone template.

For every answer, state and infeasible template of the web sites and the simulated phone, over ``--seeds`` task
seeds, the policies of :mod:`benchmarks.judge_attacks.blind_policies` are scored by the template's own judge,
evaluated from the task object and its seeded state without a browser (the judges read no page; forms are
submitted straight to the site's handlers, see :mod:`benchmarks.judge_attacks.blind_sweep`). Columns (``-``
where a policy does not apply):

* ``list_all``, ``echo``, ``empty``, ``stop_now``: listing every candidate answer in one answer, echoing the
  instruction, an empty answer, a bare ``stop`` at step 1 with each status. Must be 0.
* ``name``: reading the template's name (``info["task"]``) and, where it says infeasible or missing, making a
  look that does not depend on the task and stopping as infeasible. Must be 0.
* ``graph``: the list of every candidate, judged by the strategy-graph reward (the graph CORE synthesises from
  the seed's oracle demonstration) instead of the env. Must be 0.
* ``guess``: one candidate per episode, every candidate in turn; ``chance`` is what a blind guess deserves, the
  mean over seeds of ``1 / #candidates`` (0 for infeasible templates). Must be at most ``chance``.
* ``const``: the best constant answer (the one string that passes the most of as many other seeds, 10,000 and
  up), scored on ``--const-seeds`` seeds (at least 50, even in the quick mode: it needs no browser): what
  memorising the commonest answer earns on unseen episodes. Must be at most the chance over those seeds plus
  three binomial standard errors (sampling noise, over ~100 templates).
* ``sweep``: the side-effect sweep on state templates (open every item page, press the buttons the instruction
  names, until the judge passes); ``items`` is the mean number of item pages it found, and its chance is the
  mean ``1 / #items``. Must be at most that plus three standard errors.
* ``oracle``: the oracle plan played in the real env (Chromium) over ``--oracle-seeds`` seeds, the reference a
  working agent reaches (``--no-oracle`` skips it).

Templates that can be infeasible (kind ``mixed``: the named thing is missing on a seed-drawn half of the seeds,
:class:`~gui_envs.tasks.base.CanBeInfeasible`) get the third round's attacks
(:mod:`benchmarks.judge_attacks.feasibility`), each beside its chance. A policy that cannot tell feasible seeds
from infeasible ones earns at most the template's infeasible share ``base`` by always saying infeasible, so:

* ``feas``: the feasible share over 200 seeds (:data:`FEAS_SEEDS`); must lie in [0.3, 0.7]. ``base`` is the
  infeasible share of the audited seeds, the chance below.
* ``id_sweep``: open every item page by id (``/post/1`` ... ``/post/29``), then stop as infeasible (web);
  ``instr``: search for the whole instruction on the start and home pages, then stop as infeasible. Each must
  be at most ``base`` plus three binomial standard errors.
* ``clf_prec``: precision of the wording classifier (word and character n-gram logistic regression, trained
  on the instructions of every template on ``--fit-seeds`` other seeds, 10,000 and up) on seeds 0-199 (it needs
  no page, so it is scored on the feasible share's seeds);
  ``loto_prec`` the same with the template left out of training. Chance is ``base``: at most that plus three
  binomial standard errors over the seeds it flagged.
* ``clf_look``: the classifier, then one blind look (start page, ``/``, a search for the instruction), then stop
  as infeasible where it flagged the seed; chance ``flagged x base``, plus three standard errors.

A second table plays the after-termination attack in the real envs: a wrong ``stop`` (or a wrong click) ends
the episode, then the right answer is sent. ``paid`` counts episodes where that second step was rewarded;
``refused`` those where ``step`` raised the reset-first error. ``paid`` must be 0.

The last line says whether every blind policy is at chance or below.

Usage: ``python benchmarks/judge_audit.py [--seeds 50] [--oracle-seeds 5] [--fit-seeds 100] [--no-oracle] [--quick]``
(``--quick``: 3 seeds, the oracle on 1, the classifier fitted on 10 seeds a template, answer, infeasible and mixed
templates plus five state templates).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import numpy as np
from tqdm import tqdm

# run as a script, the repository root is not on the path; the policies live beside this file (benchmarks/)
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.judge_attacks import blind_policies, feasibility  # noqa: E402
from gui_envs.schema.actions import Action  # noqa: E402
from gui_envs.schema.errors import ResetNeededError  # noqa: E402
from gui_envs.tasks.base import AnswerTask, CanBeInfeasible, StateTask  # noqa: E402

#: (column, policy) of the stop policies that run on answer and infeasible templates.
STOP_COLUMNS = (
    ("list_all", "list_every_option"),
    ("echo", "echo_question"),
    ("empty", "empty"),
    ("stop_now", "stop_at_once"),
    ("guess", "each_candidate"),
)
MUST_BE_ZERO = ("list_all", "echo", "empty", "stop_now", "name", "graph")
#: Seeds a mixed template's feasible share is counted over (issue 36: 30-70% of 200 seeds).
FEAS_SEEDS = 200
#: State templates the quick mode sweeps (the ones the second round of attacks passed).
QUICK_STATE = ("shop.add_to_cart", "forum.open_post", "forum.downvote", "contacts.add_favourite", "notes.delete_note")


def template_rates(family: str, name: str, seeds: range, const_seeds: range) -> dict[str, float]:
    """Every applicable policy's success rate on ``name`` over ``seeds`` (successes / episodes, averaged over
    seeds; the best constant over ``const_seeds``), the chances, and the sweep's mean item count."""
    rates: dict[str, float] = {}

    def add(key: str, value: float) -> None:
        rates[key] = rates.get(key, 0.0) + value / len(seeds)

    kind = "state"
    for seed in seeds:
        task = blind_policies.build_task(family, name, seed)
        kind = (
            "answer" if blind_policies.is_answer_task(task)
            else "mixed" if isinstance(task, CanBeInfeasible)
            else "state" if isinstance(task, StateTask) else "infeasible"
        )  # fmt: skip
        wins, episodes = blind_policies.name_reading(family, task)
        add("name", wins / episodes)
        if kind in ("state", "mixed"):
            task = blind_policies.build_task(family, name, seed)  # name_reading looked around; a fresh episode
            wins, episodes = blind_policies.play(task, "stop_at_once")
            add("stop_now", wins / episodes)
            if kind == "mixed":
                feasible = blind_policies.build_task(family, name, seed).feasible
                add("base", float(not feasible))
                if family == "web":
                    add("id_sweep", feasibility.id_sweep(family, blind_policies.build_task(family, name, seed)))
                add("instr", feasibility.instruction_search(family, blind_policies.build_task(family, name, seed)))
                if not feasible:  # the side-effect sweep can only pass where the task can be done
                    continue
            task = blind_policies.build_task(family, name, seed)
            result = blind_policies.side_effect_sweep(family, task)
            add("sweep", float(result.success))
            add("items", float(result.items))
            add("sweep_chance", 1.0 / max(result.items, 1))
            continue
        task = blind_policies.build_task(family, name, seed)
        add("chance", blind_policies.chance(task))
        for column, policy in STOP_COLUMNS:
            wins, episodes = blind_policies.play(task, policy)
            add(column, wins / episodes if episodes else 0.0)
        if kind == "answer":
            wins, episodes = blind_policies.graph_list(task)
            add("graph", wins / episodes)
    if kind == "answer":  # the constant is fitted on other seeds than those it is scored on
        fit = range(10_000, 10_000 + len(const_seeds))
        rates["const_answer"], rates["const"] = blind_policies.held_out_constant(family, name, fit, const_seeds)  # type: ignore[assignment]
        rates["const_chance"] = float(np.mean([blind_policies.chance(blind_policies.build_task(family, name, s)) for s in const_seeds]))
    if kind == "mixed":  # the share is cheap to count (no policy plays), so over many seeds
        feas_seeds = range(max(len(seeds), FEAS_SEEDS))
        rates["feas"] = float(np.mean([blind_policies.build_task(family, name, s).feasible for s in feas_seeds]))
    rates["kind"] = kind  # type: ignore[assignment]
    return rates


def verdict(rates: dict[str, Any], n: int, n_const: int) -> bool:
    """Whether every blind policy of one template is at chance or below (see the module docstring)."""
    if any(rates.get(c, 0.0) > 0.0 for c in MUST_BE_ZERO):
        return False
    if rates["kind"] == "mixed" and not mixed_ok(rates, n):
        return False
    if rates.get("guess", 0.0) > rates.get("chance", 0.0) + 1e-9:
        return False
    chance = rates.get("const_chance", 0.0)
    if rates.get("const", 0.0) > chance + blind_policies.binomial_slack(chance, n_const) + 1e-9:
        return False
    sweep_chance = rates.get("sweep_chance", 0.0)
    return rates.get("sweep", 0.0) <= sweep_chance + blind_policies.binomial_slack(sweep_chance, n) + 1e-9


def mixed_ok(rates: dict[str, Any], n: int) -> bool:
    """The third round's checks of a template that can be infeasible (module docstring)."""
    base = rates["base"]  # the infeasible share of the audited seeds, which the policies played
    slack = blind_policies.binomial_slack
    if not 0.3 <= rates["feas"] <= 0.7:
        return False
    if any(rates.get(c, 0.0) > base + slack(base, n) + 1e-9 for c in ("id_sweep", "instr")):
        return False
    if "clf_prec" not in rates:
        return True
    base, n = rates["clf_base"], int(rates["clf_n"])  # the classifier is scored on its own (more) seeds
    for prec, flagged in (("clf_prec", "clf_flagged"), ("loto_prec", "loto_flagged")):
        if rates[prec] > base + slack(base, int(rates[flagged] * n)) + 1e-9:
            return False
    look_chance = rates["clf_flagged"] * base
    return rates["clf_look"] <= look_chance + slack(look_chance, n) + 1e-9


def wording_attack(rows: list[tuple[str, str, dict[str, Any], Any]], seeds: range, fit: range) -> None:
    """Fit the wording classifier on every template's instructions over ``fit`` seeds, score it on each mixed
    template's ``seeds`` (``clf_*``), and again with the template left out of training (``loto_*``)."""
    names = [(family, name) for family, name, _, _ in rows]
    texts, labels = feasibility.training_set(names, fit)
    per = len(fit)
    model = feasibility.WordingClassifier().fit(texts, labels)
    for i, (family, name, rates, _) in enumerate(rows):
        if rates["kind"] != "mixed":
            continue
        scored = feasibility.classifier_then_look(family, name, list(seeds), model)
        rates.update(clf_prec=scored["precision"], clf_flagged=scored["flagged"], clf_look=scored["passed"],
                     clf_base=scored["base"], clf_n=float(len(seeds)))  # fmt: skip
        keep = [j for j in range(len(texts)) if not i * per <= j < (i + 1) * per]
        alone = feasibility.WordingClassifier().fit([texts[j] for j in keep], [labels[j] for j in keep])
        scored = feasibility.classifier_then_look(family, name, list(seeds), alone)
        rates.update(loto_prec=scored["precision"], loto_flagged=scored["flagged"])


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

    return GuiAndroidEnv(screenshots=False)


def after_termination(env: Any, episodes: list[dict[str, Any]], wrong: Any, right: Any) -> tuple[int, int, int]:
    """Play ``wrong`` until the episode ends, then ``right`` (computed at reset, from the privileged channel).

    Returns ``(episodes, paid, refused)``: ``paid`` when the step after the end was rewarded or judged a
    success, ``refused`` when it raised the reset-first error.
    """
    paid = refused = 0
    for options in episodes:
        env.reset(**options)
        answer = right(env)
        for _ in range(100):
            _, _, terminated, truncated, _ = env.step(wrong)
            if terminated or truncated:
                break
        try:
            _, reward, _, _, info = env.step(answer)
        except ResetNeededError:
            refused += 1
            continue
        paid += int(reward > 0 or bool(info.get("success")))
    return len(episodes), paid, refused


def after_termination_rows(seeds: range, families: list[str]) -> list[tuple[str, int, int, int]]:
    """The after-termination attack on the web and phone envs (every answer template) and ClickGrid."""
    import gymnasium as gym

    from gui_envs.grid.click_grid import ClickGridEnv

    rows = []
    wrong_stop = Action.stop(answer="definitely wrong")
    for family in families:
        env = make_env(family)
        try:
            names = blind_policies.templates_of(family, (AnswerTask,))
            episodes = [{"options": {"task": n, "seed": s}} for n in names for s in seeds[:2]]
            result = after_termination(
                env, episodes, wrong_stop, lambda e: Action.stop(answer=str(e.privileged()["reference_answer"]))
            )
            rows.append((env.spec.id if env.spec else type(env).__name__, *result))
        finally:
            env.close()
    grid = gym.make("ClickGrid-v0").unwrapped
    assert isinstance(grid, ClickGridEnv)
    rows.append(
        ("ClickGrid-v0", *after_termination(grid, [{"seed": s} for s in seeds], Action.click(-5, -5), lambda e: e.oracle_action()))
    )
    return rows


def print_table(head: list[str], table: list[list[str]]) -> None:
    widths = [max(len(r[i]) for r in [head, *table]) for i in range(len(head))]
    print("| " + " | ".join(h.ljust(w) for h, w in zip(head, widths, strict=True)) + " |")
    print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for r in table:
        print("| " + " | ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) + " |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=50, help="task seeds per template for the blind policies")
    parser.add_argument("--oracle-seeds", type=int, default=5, help="seeds for the oracle column")
    parser.add_argument("--const-seeds", type=int, default=50, help="seeds the best constant is scored on (no browser)")
    parser.add_argument("--fit-seeds", type=int, default=100, help="seeds a template the wording classifier fits on")
    parser.add_argument("--no-oracle", action="store_true", help="skip the oracle column (no browser needed)")
    parser.add_argument("--quick", action="store_true", help="3 seeds, the oracle on 1, a few state templates")
    parser.add_argument("--families", nargs="+", default=list(blind_policies.FAMILIES), choices=blind_policies.FAMILIES)
    args = parser.parse_args()
    seeds = range(3 if args.quick else args.seeds)
    oracle_seeds = range(1 if args.quick else args.oracle_seeds)
    jobs = [
        (family, name)
        for family in args.families
        for name in blind_policies.templates_of(family)
        if not args.quick or name in QUICK_STATE or name in blind_policies.templates(family)
        or name in feasibility.mixed_templates(family)
    ]

    rows: list[tuple[str, str, dict[str, Any], float | None]] = []
    envs: dict[str, Any] = {}
    try:
        for family, name in tqdm(jobs, desc="templates", unit="template"):
            rates = template_rates(family, name, seeds, range(max(len(seeds), args.const_seeds)))
            oracle = None
            if not args.no_oracle:
                if family not in envs:
                    envs[family] = make_env(family)
                oracle = oracle_rate(envs[family], name, oracle_seeds)
            rows.append((family, name, rates, oracle))
    finally:
        for env in envs.values():
            env.close()

    n_const = max(len(seeds), args.const_seeds)
    fit = range(10_000, 10_000 + (10 if args.quick else args.fit_seeds))
    clf_seeds = range(max(len(seeds), FEAS_SEEDS))
    wording_attack(rows, clf_seeds, fit)

    def cell(rates: dict[str, Any], key: str) -> str:
        return f"{rates[key]:.3f}" if key in rates else "-"

    columns = ["list_all", "echo", "empty", "stop_now", "name", "graph", "guess", "chance", "const", "sweep", "items",
               "sweep_chance", "feas", "base", "id_sweep", "instr", "clf_prec", "clf_look", "loto_prec"]  # fmt: skip
    head = ["family", "template", "kind", *columns, "const_answer", "oracle", "ok"]
    table = [
        [
            family,
            name,
            rates["kind"],
            *(cell(rates, c) if c != "items" else (f"{rates['items']:.1f}" if "items" in rates else "-") for c in columns),
            repr(rates["const_answer"]) if "const_answer" in rates else "-",
            "-" if oracle is None else f"{oracle:.2f}",
            "yes" if verdict(rates, len(seeds), n_const) else "NO",
        ]
        for family, name, rates, oracle in rows
    ]
    print(f"\nblind policies over {len(seeds)} seeds; oracle over {0 if args.no_oracle else len(oracle_seeds)}")
    print_table(head, table)
    blind_ok = all(verdict(rates, len(seeds), n_const) for _, _, rates, _ in rows)
    worst = max(rows, key=lambda r: r[2].get("sweep", 0.0) - r[2].get("sweep_chance", 0.0))
    mixed = [r for r in rows if r[2]["kind"] == "mixed"]
    print(
        f"\nwording classifier fitted on seeds {fit.start}-{fit.stop - 1} x {len(rows)} templates "
        f"({len(fit) * len(rows)} instructions), scored on seeds 0-{len(clf_seeds) - 1}"
    )
    for family, name, rates, _ in mixed:
        base = rates["base"]
        print(
            f"{family} {name}: feasible {rates['feas']:.2f} of {max(len(seeds), FEAS_SEEDS)} seeds; id sweep {cell(rates, 'id_sweep')}, instruction "
            f"search {rates['instr']:.3f} vs chance {base:.3f}; classifier flags {rates['clf_flagged']:.2f}, precision "
            f"{rates['clf_prec']:.3f} (left out {rates['loto_prec']:.3f}) vs chance {rates['clf_base']:.3f}; classifier "
            f"+ blind look {rates['clf_look']:.3f} vs {rates['clf_flagged'] * rates['clf_base']:.3f}"
        )
    always = [f"{f} {n}" for f, n, r, _ in rows if r["kind"] == "infeasible"]
    print(f"templates infeasible on every seed: {', '.join(always) or 'none'}")
    print(f"\nlargest sweep excess over its chance: {worst[1]} {worst[2].get('sweep', 0.0):.3f} vs {worst[2].get('sweep_chance', 0.0):.3f}")

    ended = after_termination_rows(seeds if args.quick else range(min(len(seeds), 10)), args.families)
    print("\nafter-termination attack (a wrong stop or click, then the right answer)")
    print_table(["env", "episodes", "paid", "refused"], [[e, str(n), str(p), str(r)] for e, n, p, r in ended])
    ended_ok = all(p == 0 for _, _, p, _ in ended)
    print(f"\nmean sweep chance {np.mean([r[2].get('sweep_chance', 0.0) for r in rows if 'sweep' in r[2]] or [0.0]):.3f}")
    blind_ok = blind_ok and not always
    print(f"every blind policy at chance or below: {'yes' if blind_ok and ended_ok else 'NO'}")


if __name__ == "__main__":
    main()
