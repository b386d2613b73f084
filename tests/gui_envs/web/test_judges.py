"""Judges that cannot be gamed (issue 9): answer matching, web infeasible rule, blind policies score 0."""

from __future__ import annotations

import pytest

from gui_envs import judge_audit
from gui_envs.actions import Action
from gui_envs.tasks.base import InfeasibleTask
from gui_envs.tasks.judging import NUMERIC_TOLERANCE, answers_match
from gui_envs.web.env import GuiWebEnv
from gui_envs.web.sites.classifieds import SELLERS
from gui_envs.web.tasks import TASKS as WEB_TASKS
from tests.gui_envs.judge_suite import check_template


@pytest.mark.parametrize(
    ("answer", "reference", "expected"),
    [
        # numeric: currency, thousands separators, unit words where the reference has one, tolerance
        ("$1,204.50", "1204.5", True),
        ("1204.50 dollars", "$1,204.50", True),
        ("12", "12 hours", True),
        ("12 h", "12 hours", True),
        ("520 calories", "520 kcal", True),
        ("12 minutes", "12 hours", False),
        ("12 hours", "12", False),
        ("12.00001", "12", False),  # 10 tolerances away
        (f"{12 + NUMERIC_TOLERANCE / 2}", "12", True),
        ("42", "420", False),
        # never the first number of the answer
        ("It has 420 calories.", "420 calories", False),
        ("3 or 4", "3", False),
        ("How many Snacks products cost less than $3.00? Answer with a number.", "3", False),
        # text: case, whitespace and punctuation, never a substring, never "reference plus 20 characters"
        ("  acme RED-scarf. ", "Acme Red Scarf", True),
        ("the acme red scarf", "Acme Red Scarf", False),
        ("maria_k or tom.b", "tom.b", False),
        ("", "x", False),
        ("...", "x", False),
        # lists: set equality, separators , ; & and "and"
        ("Fair and Good", "Good, Fair", True),
        ("fair; good", "Good & Fair", True),
        ("Good, Fair, New", "Good, Fair", False),
        ("New, Like new, Good, Fair", "Good", False),
    ],
)
def test_answers_match(answer: str, reference: str, expected: bool) -> None:
    assert answers_match(answer, reference) is expected


def test_condition_of_listing_every_condition_fails() -> None:
    # Regression: "New, Like new, Good, Fair" used to pass classifieds.condition_of on every seed.
    for seed in range(60):
        task = judge_audit.build_task("web", "classifieds.condition_of", seed)
        assert judge_audit.judge(task, Action.stop(answer="New, Like new, Good, Fair")) == 0.0


def test_echoing_the_question_fails_count_under_price() -> None:
    # Regression: echoing the instruction passed shop.count_under_price on 11/60 seeds (its first number).
    for seed in range(60):
        task = judge_audit.build_task("web", "shop.count_under_price", seed)
        assert judge_audit.judge(task, Action.stop(answer=task.instruction)) == 0.0


def test_seller_names_score_a_blind_guess() -> None:
    # Regression: three seller names passed classifieds.seller_of on 38/60 seeds; one guess deserves 1/6.
    three, wins = ", ".join(SELLERS[:3]), {s: 0 for s in SELLERS}
    for seed in range(60):
        task = judge_audit.build_task("web", "classifieds.seller_of", seed)
        assert judge_audit.judge(task, Action.stop(answer=three)) == 0.0
        assert judge_audit.judge(task, Action.stop(answer=f"{SELLERS[0]} {SELLERS[1]}")) == 0.0
        for s in SELLERS:
            wins[s] += int(judge_audit.judge(task, Action.stop(answer=s)))
    assert sum(wins.values()) == 60  # exactly one seller is right on every seed


@pytest.mark.parametrize("name", judge_audit.templates("web"))
def test_blind_policies_score_nothing_but_chance(name: str) -> None:
    check_template("web", name)


def test_named_product_needs_a_search_that_finds_nothing() -> None:
    task = judge_audit.build_task("web", "shop.add_named_product", 0)
    stop, home = Action.stop(status="infeasible"), task.visited[0]
    word = task.wanted.split()[1]  # "Quantum", "Hover", "Time": no product has it
    assert judge_audit.judge(task, stop) == 0.0
    task.visited.append(f"{home}?q={task.wanted.split()[0]}")  # "Acme" / "Tidal" / "Orchid": found products
    assert task.query("SELECT 1 FROM products WHERE name LIKE ?", (f"%{task.wanted.split()[0]}%",))
    assert judge_audit.judge(task, stop) == 0.0
    task.visited.append(f"{home}?q={word}")
    assert judge_audit.judge(task, stop) == 1.0
    assert judge_audit.judge(task, Action.stop()) == 0.0  # looked, but claimed success


def test_names_keep_the_verdict_to_themselves() -> None:
    # Every agent reads info["task"]: "shop.infeasible_size" told it the verdict before it looked. Class names
    # never reach an agent, but a web template's stays as honest as its name.
    for family in judge_audit.FAMILIES:
        for name in judge_audit.templates_of(family):
            assert not any(word in name for word in judge_audit.VERDICT_WORDS), (family, name)
    for cls in WEB_TASKS.values():
        assert not any(word in cls.__name__.lower() for word in ("infeasible", "missing", "nosuch", "impossible")), cls


@pytest.mark.parametrize("name", judge_audit.templates_of("web", (InfeasibleTask,)))
def test_infeasible_stop_at_step_one_fails_in_the_env(web_env: GuiWebEnv, name: str) -> None:
    # Regression: stop(status="infeasible") at step 1 passed every web infeasible template.
    for seed in (0, 1):
        web_env.reset(options={"task": name, "seed": seed})
        _, reward, terminated, _, info = web_env.step(Action.stop(status="infeasible"))
        assert terminated and reward == 0.0 and not info["success"], (name, seed)
