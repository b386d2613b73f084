"""Issue 36: whether a task can be done depends on the seeded app state alone (DESIGN.md, "Feasibility").

Every template that can be infeasible is feasible on 30-70% of 200 seeds; the instruction and the start screen
are the same whichever way the seed fell; looks that do not depend on the named thing (an id sweep, a search for
the whole instruction) earn no more than always saying "infeasible"; and a wording classifier trained on other
seeds (cut down from the audit's: 10 seeds a template) picks infeasible seeds no better than their base rate.
No browser: see :mod:`benchmarks.judge_attacks.feasibility`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from benchmarks.judge_attacks import blind_policies, feasibility
from gui_envs.browser.site import Request
from gui_envs.tasks.base import CanBeInfeasible, InfeasibleTask

MIXED = [(family, name) for family in blind_policies.FAMILIES for name in feasibility.mixed_templates(family)]


def test_no_template_is_infeasible_on_every_seed() -> None:
    for family in blind_policies.FAMILIES:
        assert not blind_policies.templates_of(family, (InfeasibleTask,)), family
    assert len(MIXED) >= 10


@pytest.mark.parametrize(("family", "name"), MIXED)
def test_feasible_on_30_to_70_percent_of_200_seeds(family: str, name: str) -> None:
    feasible = sum(blind_policies.build_task(family, name, seed).feasible for seed in range(200))
    assert 60 <= feasible <= 140, (name, feasible)


def forced(value: bool) -> Callable[[CanBeInfeasible], bool]:
    """A draw that makes the same generator call as the real one and then says ``value``."""

    def draw(self: CanBeInfeasible) -> bool:
        self.rng.integers(2**32)
        self.feasible = value
        return value

    return draw


def start_screen(family: str, task: object) -> str:
    """What the agent's first observation is rendered from: the start page (web) or the home screen (phone)."""
    if family == "web":
        state, _, _ = blind_policies.site_of("web", task)
        response = state.handle(Request.from_url("GET", task.start_path, None))  # type: ignore[attr-defined]
    else:
        response = task.state.apps["com.guigym.launcher"].handle(Request.from_url("GET", "/", None))  # type: ignore[attr-defined]
    body = response.body
    return body.decode() if isinstance(body, bytes) else body


@pytest.fixture
def variants(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[str, str, int], tuple[object, object]]]:
    def both(family: str, name: str, seed: int) -> tuple[tuple[str, str, str], tuple[str, str, str]]:
        out = []
        for value in (True, False):
            monkeypatch.setattr(CanBeInfeasible, "draw_feasible", forced(value))
            task = blind_policies.build_task(family, name, seed)
            out.append((task.name, task.instruction, start_screen(family, task)))
        return out[0], out[1]

    yield both


@pytest.mark.parametrize(("family", "name"), MIXED)
def test_name_instruction_and_start_screen_do_not_tell(family: str, name: str, variants: Callable) -> None:  # type: ignore[type-arg]
    for seed in range(5):
        feasible, infeasible = variants(family, name, seed)
        assert feasible == infeasible, (name, seed)


@pytest.mark.parametrize(("family", "name"), MIXED)
def test_blind_looks_earn_at_most_always_saying_infeasible(family: str, name: str) -> None:
    seeds = range(20)
    base = sum(not blind_policies.build_task(family, name, s).feasible for s in seeds) / len(seeds)
    slack = blind_policies.binomial_slack(base, len(seeds))
    sweep = sum(feasibility.id_sweep(family, blind_policies.build_task(family, name, s)) for s in seeds) / len(seeds)
    search = sum(feasibility.instruction_search(family, blind_policies.build_task(family, name, s)) for s in seeds)
    assert sweep == 0.0, name  # no template's look is a page an id sweep opens
    assert search / len(seeds) <= base + slack, (name, search, base)


def test_the_wording_classifier_is_at_chance() -> None:
    names = [(f, n) for f in blind_policies.FAMILIES for n in blind_policies.templates_of(f)]
    texts, labels = feasibility.training_set(names, range(10_000, 10_010))
    model = feasibility.WordingClassifier().fit(texts, labels)
    for family, name in MIXED:
        scored = feasibility.classifier_then_look(family, name, range(30), model)
        n_flagged = int(scored["n_flagged"])
        assert scored["precision"] <= scored["base"] + blind_policies.binomial_slack(scored["base"], n_flagged) + 1e-9
        chance = scored["flagged"] * scored["base"]
        assert scored["passed"] <= chance + blind_policies.binomial_slack(chance, 30) + 1e-9, (name, scored)


def test_the_wording_classifier_finds_a_give_away() -> None:
    # The check can fail: where the words say the verdict (the third round's "in size XXXL"), it is exact.
    texts = [f"Buy the {c} shirt in size {s}." for c in ("red", "blue", "green", "plain") for s in ("M", "L", "XXXL")]
    labels = [int("XXXL" in t) for t in texts]
    model = feasibility.WordingClassifier().fit(texts * 20, labels * 20)
    assert list(model.says_infeasible(texts)) == [bool(y) for y in labels]
