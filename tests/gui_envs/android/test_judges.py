"""Judges that cannot be gamed on the phone (issues 9 and 23), played on task objects without a browser.

* blind policies score 0, one guess per episode scores chance;
* no constant answer beats a blind guess (the answer generators pay no prior);
* an infeasible template passes only after a search for the asked thing itself;
* a state template fails when anything changed beyond the asked change, so touching every item in turn passes
  only as often as a blind guess.

App changes are made with the SQL of the apps' own request handlers (``gui_envs/android/apps``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any
from urllib.parse import urlencode

import pytest

from benchmarks.judge_attacks import blind_policies
from gui_envs.android.apps.clock import Clock
from gui_envs.android.apps.contacts import Contacts
from gui_envs.android.apps.expenses import Expenses
from gui_envs.android.apps.launcher import Launcher
from gui_envs.android.apps.notes import Notes
from gui_envs.android.apps.recipes import Recipes
from gui_envs.android.apps.settings import Settings
from gui_envs.android.tasks import TASKS
from gui_envs.android.tasks.base import StateTask
from gui_envs.browser.site import Request
from gui_envs.schema.actions import Action
from gui_envs.tasks.base import CanBeInfeasible
from gui_envs.tasks.looking import is_the_name
from tests.gui_envs.judge_suite import check_template

CLOCK, CONTACTS, EXPENSES = Clock.package, Contacts.package, Expenses.package
NOTES, RECIPES, SETTINGS, LAUNCHER = Notes.package, Recipes.package, Settings.package, Launcher.package
#: Words that would give a template's verdict away in its name (an agent reads ``info["task"]``).
VERDICT_WORDS = ("infeasible", "missing", "impossible", "cannot", "fake", "nonexist")
SWITCHES = ("wifi", "bluetooth", "airplane", "dark_mode", "adaptive")


def answer_templates() -> list[str]:
    return [n for n in blind_policies.templates("phone") if blind_policies.is_answer_task(blind_policies.build_task("phone", n, 0))]


def infeasible_templates() -> list[str]:
    """The templates that can be infeasible (on a seed-drawn half of their seeds)."""
    return sorted(n for n, t in TASKS.items() if issubclass(t, CanBeInfeasible))


def infeasible_seeds(name: str, n: int) -> list[int]:
    """The first ``n`` seeds on which ``name`` asks for a thing its app lacks."""
    seeds = (s for s in range(10 * n + 50) if not blind_policies.build_task("phone", name, s).feasible)
    return [next(seeds) for _ in range(n)]


def state_templates() -> list[str]:
    return sorted(n for n, t in TASKS.items() if issubclass(t, StateTask))


@pytest.mark.parametrize("name", blind_policies.templates("phone"))
def test_blind_policies_score_nothing_but_chance(name: str) -> None:
    check_template("phone", name)


def test_phone_answers_use_the_shared_judge() -> None:
    # The unit and currency rules reach the phone too: "25 min" for "25 minutes", "$" on an amount in dollars.
    task = blind_policies.build_task("phone", "recipes.cooking_time", 0)
    value = task.reference_answer.split()[0]
    assert blind_policies.judge(task, Action.stop(answer=f"{value} min")) == 1.0
    assert blind_policies.judge(task, Action.stop(answer=f"It takes {value} minutes")) == 0.0
    task = blind_policies.build_task("phone", "expenses.expense_amount", 0)
    assert blind_policies.judge(task, Action.stop(answer=f"${task.reference_answer}")) == 1.0


# ----- names --------------------------------------------------------------------------------------------------


def test_no_template_name_gives_its_verdict_away() -> None:
    assert len(infeasible_templates()) == 5  # the phone cannot lack an app without its home screen showing it
    for name in TASKS:
        assert not any(word in name for word in VERDICT_WORDS), name


# ----- constant answers ---------------------------------------------------------------------------------------


def best_constant(name: str, seeds: range) -> tuple[str, float, float]:
    """``(answer, pass rate, chance)``: the one answer that passes most of ``seeds`` under the template's own
    judge, among every candidate of every seed, and the audit's chance (mean ``1 / #candidates``)."""
    pool: list[str] = []
    tasks, chance = [], 0.0
    for seed in seeds:
        task = blind_policies.build_task("phone", name, seed)
        # build_task shares the databases: read the candidates before the next seed replaces them.
        cands = blind_policies.candidates(task)
        pool.extend(cands)
        tasks.append(task)
        chance += 1.0 / len(cands)
    # An answer judge reads only the reference, so the older tasks still judge after their databases moved on.
    pool = list(dict.fromkeys(pool))
    wins = {c: sum(blind_policies.judge(t, Action.stop(answer=c)) >= 1.0 for t in tasks) for c in pool}
    best = max(pool, key=lambda c: wins[c])
    return best, wins[best] / len(tasks), chance / len(tasks)


def test_no_constant_answer_beats_a_blind_guess() -> None:
    # Over 200 seeds: the best constant passes at most chance plus two binomial standard errors (sampling
    # noise); before the generators drew answers uniformly, "1" passed recipes.count_cuisine 82 times in 200.
    seeds = range(200)
    report = {}
    for name in answer_templates():
        best, rate, chance = best_constant(name, seeds)
        report[name] = (best, rate, round(chance, 3))
        assert rate <= chance + 2 * math.sqrt(chance * (1 - chance) / len(seeds)), (name, best, rate, chance)
    assert len(report) == 11, report


def test_the_android_version_is_seeded() -> None:
    versions = set()
    for seed in range(40):
        task = blind_policies.build_task("phone", "settings.android_version", seed)
        versions.add(task.candidates()[0])
        assert task.reference_answer in task.candidates()
    assert len(versions) >= 4


def test_count_tasks_change_the_app_to_match_the_drawn_count() -> None:
    for seed in range(20):
        task = blind_policies.build_task("phone", "recipes.count_cuisine", seed)
        like = f"%{task.cuisine}%"
        rows = task.rows("SELECT id FROM recipes WHERE name LIKE ? OR cuisine LIKE ?", (like, like))
        assert str(len(rows)) == task.reference_answer
        task = blind_policies.build_task("phone", "clock.count_enabled_alarms", seed)
        assert str(len(task.rows("SELECT id FROM alarms WHERE enabled = 1"))) == task.reference_answer


# ----- infeasible looks ---------------------------------------------------------------------------------------


def searched(task: Any, *queries: str) -> float:
    """The judge's score after searching ``queries`` with the app's own search handler (which logs each with
    its result count) and stopping as infeasible."""
    for query in queries:
        search(task, query)
    return task.evaluate(Action.stop(status="infeasible"))


def search(task: Any, query: str) -> int:
    """Search the task's app for ``query`` as its search box does; the number of results."""
    package = getattr(task, "search_app", None) or task.app
    response = task.state.apps[package].handle(Request.from_url("GET", "/search?" + urlencode({"q": query})))
    assert response.status == 200, (package, query)
    return int(task.state.db(package).execute("SELECT results FROM searches ORDER BY id DESC LIMIT 1").fetchone()[0])


@pytest.mark.parametrize("name", infeasible_templates())
def test_only_a_search_for_the_asked_thing_is_a_look(name: str) -> None:
    for seed in infeasible_seeds(name, 6):
        task = blind_policies.build_task("phone", name, seed)
        assert searched(task, task.missing) == 1.0, (name, seed)
        # One word of a longer name is no look: a prober types common words on every task (issue 36).
        task = blind_policies.build_task("phone", name, seed)
        if len(task.missing.split()) > 1:
            assert searched(task, max(task.missing.split(), key=len)) == 0.0
        # The whole instruction pasted into the search box finds nothing whatever the app holds: no look.
        task = blind_policies.build_task("phone", name, seed)
        assert searched(task, task.instruction) == 0.0
        task = blind_policies.build_task("phone", name, seed)
        assert searched(task, f"{task.missing} please") == 0.0
        # A word fragment, as a prober types on every task.
        task = blind_policies.build_task("phone", name, seed)
        assert searched(task, task.missing.lower()[1:4]) == 0.0
        # A sweep of every name the template could ask about, the asked one among them.
        task = blind_policies.build_task("phone", name, seed)
        sweep = [o for o in task.alternatives() if o != task.missing][:40] + [task.missing]
        assert len(sweep) >= 3 and searched(task, *sweep) == 0.0


@pytest.mark.parametrize("name", infeasible_templates())
def test_a_feasible_seed_fails_an_infeasible_stop_after_the_same_look(name: str) -> None:
    seed = next(s for s in range(50) if blind_policies.build_task("phone", name, s).feasible)
    task = blind_policies.build_task("phone", name, seed)
    assert search(task, task.missing) >= 1  # the thing is there: the search finds it
    assert task.evaluate(Action.stop(status="infeasible")) == 0.0


def test_only_the_name_is_the_name() -> None:
    assert is_the_name("Beef Wellington", "Beef Wellington") and is_the_name(" beef  wellington ", "Beef Wellington")
    assert not is_the_name("ell", "Beef Wellington") and not is_the_name("wellington", "Beef Wellington")
    assert not is_the_name("open the recipe for beef wellington", "Beef Wellington")
    assert not is_the_name("", "") and is_the_name("NFC", "nfc")


def test_task_independent_looks_never_pass() -> None:
    # Fixed probes on every seed of every infeasible template: short common strings, and the instruction.
    probes = ("the", "a", "an", "ing", "er", "on", "app", "note", "recipe", "setting", "zzz", "x")
    for name in infeasible_templates():
        for seed in infeasible_seeds(name, 15):
            task = blind_policies.build_task("phone", name, seed)
            assert searched(task, *probes, task.instruction) == 0.0, (name, seed)


# ----- side effects -------------------------------------------------------------------------------------------


def sql(task: Any, package: str, statement: str, params: tuple[Any, ...] = ()) -> None:
    db = task.state.db(package)
    with db:
        db.execute(statement, params)


def first_other(task: Any, package: str, table: str, target: int | None) -> int:
    return next(r for (r,) in task.state.rows(package, f"SELECT rowid FROM {table} ORDER BY rowid") if r != target)


def flip(package: str, table: str, column: str) -> Callable[[Any, int], None]:
    """A tap on a row's switch, star or check box: the handler stores the opposite of what it showed."""
    return lambda t, rid: sql(t, package, f"UPDATE {table} SET {column} = 1 - {column} WHERE rowid = ?", (rid,))


def delete(package: str, table: str) -> Callable[[Any, int], None]:
    return lambda t, rid: sql(t, package, f"DELETE FROM {table} WHERE rowid = ?", (rid,))


def setting_row(key: str) -> Callable[[Any], int]:
    return lambda t: t.rowid("settings", "key = ?", (key,))


class Item:
    """A one-item template: its table, the asked row, and what the asked action does to a row."""

    def __init__(
        self,
        package: str,
        table: str,
        target: Callable[[Any], int],
        touch: Callable[[Any, int], None],
        items: Callable[[Any], list[int]] | None = None,
    ) -> None:
        self.package, self.table, self.target, self.touch = package, table, target, touch
        self.items = items or (
            lambda t: [r for (r,) in t.state.rows(package, f"SELECT rowid FROM {table} ORDER BY rowid")]
        )


def _switch_rows(task: Any) -> list[int]:
    return [task.rowid("settings", "key = ?", (k,)) for k in SWITCHES]


def _toggle(key: str) -> Item:
    return Item(SETTINGS, "settings", setting_row(key), flip(SETTINGS, "settings", "value"), _switch_rows)


ITEMS: dict[str, Item] = {
    "clock.turn_off_alarm": Item(CLOCK, "alarms", lambda t: t.alarm_id, flip(CLOCK, "alarms", "enabled")),
    "clock.turn_on_alarm": Item(CLOCK, "alarms", lambda t: t.alarm_id, flip(CLOCK, "alarms", "enabled")),
    "clock.delete_alarm": Item(CLOCK, "alarms", lambda t: t.alarm_id, delete(CLOCK, "alarms")),
    "clock.change_alarm_time": Item(
        CLOCK, "alarms", lambda t: t.alarm_id,
        lambda t, r: sql(t, CLOCK, "UPDATE alarms SET hour = ?, minute = ? WHERE id = ?", (t.hour, t.minute, r)),
    ),
    "clock.add_city": Item(
        CLOCK, "cities", lambda t: t.rowid("cities", "name = ?", (t.city,)),
        lambda t, r: sql(t, CLOCK, "UPDATE cities SET added = 1 WHERE id = ?", (r,)),
        lambda t: [r for (r,) in t.rows("SELECT id FROM cities WHERE added = 0 ORDER BY id")],
    ),
    "contacts.delete_contact": Item(CONTACTS, "contacts", lambda t: t.cid, delete(CONTACTS, "contacts")),
    "contacts.add_favourite": Item(CONTACTS, "contacts", lambda t: t.cid, flip(CONTACTS, "contacts", "starred")),
    "contacts.edit_phone": Item(
        CONTACTS, "contacts", lambda t: t.cid,
        lambda t, r: sql(t, CONTACTS, "UPDATE contacts SET phone = ? WHERE id = ?", (t.phone, r)),
    ),
    "expenses.delete_expense": Item(EXPENSES, "expenses", lambda t: t.xid, delete(EXPENSES, "expenses")),
    "expenses.edit_amount": Item(
        EXPENSES, "expenses", lambda t: t.xid,
        lambda t, r: sql(t, EXPENSES, "UPDATE expenses SET amount_cents = ? WHERE id = ?", (t.cents, r)),
    ),
    "notes.delete_note": Item(NOTES, "notes", lambda t: t.nid, delete(NOTES, "notes")),
    "notes.edit_note": Item(
        NOTES, "notes", lambda t: t.nid,
        lambda t, r: sql(t, NOTES, "UPDATE notes SET body = ? WHERE id = ?", (t.new_body, r)),
    ),
    "notes.complete_todo": Item(NOTES, "todos", lambda t: t.tid, flip(NOTES, "todos", "done")),
    "notes.delete_todo": Item(NOTES, "todos", lambda t: t.tid, delete(NOTES, "todos")),
    "recipes.add_favourite": Item(RECIPES, "recipes", lambda t: t.rid, flip(RECIPES, "recipes", "favourite")),
    "recipes.remove_favourite": Item(RECIPES, "recipes", lambda t: t.rid, flip(RECIPES, "recipes", "favourite")),
    "multi.favourite_quickest_recipe": Item(
        RECIPES, "recipes", lambda t: t.rid, flip(RECIPES, "recipes", "favourite")
    ),
    "settings.wifi": _toggle("wifi"),
    "settings.bluetooth": _toggle("bluetooth"),
    "settings.airplane_mode": _toggle("airplane"),
    "settings.dark_theme": _toggle("dark_mode"),
    "settings.adaptive_brightness": _toggle("adaptive"),
    "settings.search_bluetooth": _toggle("bluetooth"),
    "settings.turn_on_setting": Item(
        SETTINGS, "settings", lambda t: t.rowid("settings", "key = ?", (t.key,)), flip(SETTINGS, "settings", "value"),
        lambda t: [*_switch_rows(t), t.rowid("settings", "key = ?", (t.key,))],
    ),
}


def _prepare(name: str, task: Any) -> None:
    """What a template needs besides the item change (a search, the foreground app)."""
    if name == "settings.search_bluetooth":
        sql(task, SETTINGS, "INSERT INTO searches (query, results) VALUES ('bluetooth', 1)")


def _new_note(title: str, body: str) -> Callable[[Any], None]:
    return lambda t: sql(t, NOTES, "INSERT INTO notes (title, body) VALUES (?, ?)", (title, body))


def _open(package: str) -> Callable[[Any], None]:
    def go(task: Any) -> None:
        task.state.package = package

    return go


#: Templates that are not about one existing item: (the asked change, one change beyond it), each as the
#: app's handlers would make it.
OTHERS: dict[str, tuple[Callable[[Any], None], Callable[[Any], None]]] = {
    "clock.add_alarm": (
        lambda t: sql(t, CLOCK, "INSERT INTO alarms (hour, minute, label, enabled) VALUES (?, ?, ?, 1)",
                      (t.hour, t.minute, t.label)),
        lambda t: sql(t, CLOCK, "UPDATE alarms SET enabled = 1 - enabled WHERE id = 1"),
    ),
    "clock.start_timer": (
        lambda t: sql(t, CLOCK, "UPDATE timer SET seconds = ?, running = 1 WHERE id = 1", (t.minutes * 60,)),
        lambda t: sql(t, CLOCK, "UPDATE stopwatch SET running = 1"),
    ),
    "clock.start_stopwatch": (
        lambda t: sql(t, CLOCK, "UPDATE stopwatch SET running = 1, laps = ?", (t.laps,)),
        lambda t: sql(t, CLOCK, "UPDATE timer SET seconds = 60, running = 1 WHERE id = 1"),
    ),
    "contacts.create_contact": (
        lambda t: sql(t, CONTACTS, "INSERT INTO contacts (first, last, phone, email, starred) VALUES (?, ?, ?, '', 0)",
                      (t.first, t.last, t.phone)),
        lambda t: sql(t, CONTACTS, "DELETE FROM contacts WHERE id = 1"),
    ),
    "expenses.add_expense": (
        lambda t: sql(t, EXPENSES, "INSERT INTO expenses (account_id, name, amount_cents, category) VALUES "
                      "((SELECT id FROM accounts WHERE name = ?), ?, ?, ?)", (t.account, t.item, t.cents, t.category)),
        lambda t: sql(t, EXPENSES, "INSERT INTO expenses (account_id, name, amount_cents, category) VALUES "
                      "(1, 'Taxi', 100, 'Transport')"),
    ),
    "expenses.open_account": (
        lambda t: (sql(t, EXPENSES, "INSERT OR REPLACE INTO prefs (key, value) VALUES ('last_account', ?)",
                       (t.account_id,)), _open(EXPENSES)(t)),
        lambda t: sql(t, EXPENSES, "DELETE FROM expenses WHERE id = (SELECT MIN(id) FROM expenses)"),
    ),
    "launcher.open_app": (
        lambda t: _open(t.target.package)(t),
        lambda t: sql(t, NOTES, "DELETE FROM notes WHERE id = (SELECT MIN(id) FROM notes)"),
    ),
    "launcher.search_and_open": (
        lambda t: (sql(t, LAUNCHER, "INSERT INTO searches (query, results) VALUES (?, 1)", (t.target.label,)),
                   _open(t.target.package)(t)),
        lambda t: sql(t, SETTINGS, "UPDATE settings SET value = 1 - value WHERE key = 'wifi'"),
    ),
    "notes.create_note": (
        lambda t: _new_note(t.title, t.body)(t),
        lambda t: _new_note("Scratch", "x")(t),
    ),
    "notes.add_todo": (
        lambda t: sql(t, NOTES, "INSERT INTO todos (text, done) VALUES (?, 0)", (t.text,)),
        lambda t: sql(t, NOTES, "UPDATE todos SET done = 1 - done WHERE id = (SELECT MIN(id) FROM todos)"),
    ),
    "multi.note_account_total": (
        lambda t: _new_note(t.title, t.total)(t),
        lambda t: sql(t, EXPENSES, "DELETE FROM expenses WHERE id = (SELECT MIN(id) FROM expenses)"),
    ),
    "multi.note_contact_phone": (
        lambda t: _new_note(t.title, t.phone)(t),
        lambda t: _new_note(t.title + " again", t.phone)(t),
    ),
    "settings.brightness": (
        lambda t: sql(t, SETTINGS, "UPDATE settings SET value = ? WHERE key = 'brightness'", (t.level,)),
        lambda t: sql(t, SETTINGS, "UPDATE settings SET value = 1 - value WHERE key = 'dark_mode'"),
    ),
}


def test_every_state_template_has_a_side_effect_check() -> None:
    assert sorted([*ITEMS, *OTHERS]) == state_templates()


def feasible_seeds(name: str, seeds: range) -> list[int]:
    """``seeds`` where ``name`` can be done (all of them for a template that is never infeasible)."""
    return [s for s in seeds if getattr(blind_policies.build_task("phone", name, s), "feasible", True)]


@pytest.mark.parametrize("name", state_templates())
def test_the_asked_change_passes_and_one_more_fails(name: str) -> None:
    for seed in feasible_seeds(name, range(8))[:4]:
        task = blind_policies.build_task("phone", name, seed)
        assert task.evaluate(None) == 0.0 and not task.side_effects(), (name, seed)
        if name in ITEMS:
            item = ITEMS[name]
            target = item.target(task)
            _prepare(name, task)
            item.touch(task, target)
            assert task.evaluate(None) == 1.0, (name, seed, task.side_effects())
            item.touch(task, first_other(task, item.package, item.table, target))
        else:
            asked, extra = OTHERS[name]
            asked(task)
            assert task.evaluate(None) == 1.0, (name, seed, task.side_effects())
            extra(task)
        assert task.side_effects() and task.evaluate(None) == 0.0, (name, seed)
        assert task.evaluate(Action.stop()) == 0.0


def test_a_switch_flipped_back_is_no_side_effect() -> None:
    task = blind_policies.build_task("phone", "settings.wifi", 0)
    ITEMS["settings.wifi"].touch(task, task.rowid("settings", "key = 'wifi'"))
    bluetooth = task.rowid("settings", "key = 'bluetooth'")
    ITEMS["settings.wifi"].touch(task, bluetooth)
    assert task.side_effects() == [f"settings.settings row {bluetooth} changed ['value']"]
    assert task.evaluate(None) == 0.0
    ITEMS["settings.wifi"].touch(task, bluetooth)
    assert task.evaluate(None) == 1.0


def sweep_rate(names: list[str], seeds: range) -> tuple[float, float]:
    """``(pass rate, blind guess)`` of the sweep over ``names`` x ``seeds``: tap every item in turn, stopping as
    soon as the judge passes (the env ends the episode then); the blind guess is the mean of 1 / #items."""
    wins, guess, episodes = 0, 0.0, 0
    for name in names:
        item = ITEMS[name]
        for seed in feasible_seeds(name, seeds):
            task = blind_policies.build_task("phone", name, seed)
            _prepare(name, task)
            rows = item.items(task)
            assert item.target(task) in rows
            guess, episodes = guess + 1.0 / len(rows), episodes + 1
            for row in rows:
                item.touch(task, row)
                if task.evaluate(None) >= 1.0:
                    wins += 1
                    break
    return wins / episodes, guess / episodes


def _within_noise(rate: float, guess: float, episodes: int) -> bool:
    return rate <= guess + 2 * math.sqrt(guess * (1 - guess) / episodes)


@pytest.mark.parametrize("name", sorted(n for n in ITEMS if not n.startswith("settings.")))
def test_touching_every_item_passes_only_as_a_blind_guess(name: str) -> None:
    # Only a sweep whose first tap hit the asked item passes: a blind guess's 1 / #items.
    seeds = range(60)
    rate, guess = sweep_rate([name], seeds)
    assert _within_noise(rate, guess, len(seeds)), (name, rate, guess)


def test_flipping_every_switch_passes_only_as_a_blind_guess() -> None:
    # A switch template names its switch, and the switches sit in a fixed order, so a sweep in that order
    # passes settings.wifi (the first) every time and the others never: over the switch templates together,
    # a blind guess's share.
    names, seeds = sorted(n for n in ITEMS if n.startswith("settings.")), range(20)
    rate, guess = sweep_rate(names, seeds)
    assert _within_noise(rate, guess, len(names) * len(seeds)), (rate, guess)


def test_open_account_fails_once_another_account_was_opened() -> None:
    """Opening accounts in turn until the asked one shows (a sweep) fails; opening the asked one first passes."""
    from benchmarks.judge_attacks.blind_sweep import FormBrowser

    for seed in range(6):
        for wrong_first in (False, True):
            task = blind_policies.build_task("phone", "expenses.open_account", seed)
            state, _, shown = blind_policies.site_of("phone", task)
            browser = FormBrowser(state, shown)
            ids = [r[0] for r in task.rows("SELECT id FROM accounts ORDER BY id")]
            if wrong_first:
                browser.get(f"/account/{next(i for i in ids if i != task.account_id)}")
                assert task.evaluate(None) == 0.0
            browser.get(f"/account/{task.account_id}")
            assert task.evaluate(None) == (0.0 if wrong_first else 1.0), (seed, wrong_first)
