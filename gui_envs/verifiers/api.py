"""CORE's label-function API (seed 002, section 3.1 and App. F.1): validators over a recorded trajectory.

A label function is a small Python function an LLM writes from an expert's key step; it calls these
validators on ``trajectory`` and returns ``True`` only when every call passes. The paper's functions start with
``from Function_APIs import *``; inside the sandbox (:mod:`gui_envs.verifiers.sandbox`) that import yields
exactly the names in :data:`API`. This module is standard-library only (with the answer judge
:mod:`gui_envs.tasks.judging`, standard-library only too), because the sandbox worker loads it by file path in an
isolated interpreter.

**The trajectory a label function sees** is a :class:`TrajectoryView`, read-only and JSON-serialisable, built
from a recorded :class:`~gui_envs.schema.trajectory.Trajectory` (or a saved folder) by :func:`view_of`:

* ``steps[t]``: a :class:`StepView`, the semantic description of action ``t``: its ``action`` type, the target
  element's ``text``, ``tag`` (HTML tag, or the Android class on the phone), ``role`` and input ``element_type``,
  the ``typed_text``, the ``answer`` and ``status`` of a stop, the ``app`` of an ``open_app``, and the
  ``location`` it was taken at. The target element comes from the element list the env recorded *before* the
  step (privileged key ``verifier_record``, see :mod:`gui_envs.verifiers.facts`): the element named by
  ``element_id``, else the smallest element whose box holds the ``point`` (clickable ones first). A ``type``
  action without a target types into the element the last pointer action targeted (where the focus is).
* ``locations[i]`` and ``states[i]``, ``i = 0..n``: the URL (web) or ``package/activity`` (phone) and the
  app-state facts *before* step ``i``; index ``n`` is the state after the last step (the collectors record it
  as ``metadata["final_privileged"]``; without it the last recorded state stands in).

**Matching rule** (the same for every validator): both strings are normalised (Unicode NFKC, case-folded,
curly quotes made straight, runs of whitespace made one space, trimmed); the expected string matches when it
occurs in the actual one as a whole-word substring: not preceded or followed by a letter or digit
(``"Almonds"`` matches ``"Crunchy Almonds | $4.99"``, ``"4"`` does not match ``"42"``). An empty expected string
matches only an empty actual one. Tags compare equal after normalisation (``"A"`` is ``"a"``).

**Answers are the exception**: :func:`validate_stop_action` judges the stop's answer with the env's own answer
judge, :func:`gui_envs.tasks.judging.answers_match` (the same function, not a copy), so a label function pays
exactly what the task pays: a whole-word match would pass an answer that lists every candidate.

**Match steps and order**: each validator also records *when* it passed, for the strategy graph's temporal
order (section 3.2): an action validator the indices of its matching steps; a state validator the one index
``t`` from which its fact holds until the end (the fact holds after step ``t``; ``-1`` when it held from the
start). Within one label function the calls are key steps in order: a call passes only on matches at or after
the first match of the previous passing call (so a function with two calls fails on a trajectory that did
the second thing before the first).
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import sys
import unicodedata
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import Any


def _load_judging() -> ModuleType:
    """The env's answer-judging module. Imported as usual in the host; the sandbox worker loads this file by
    path in an interpreter that cannot import ``gui_envs`` (and whose module path is not trusted), so there it
    is loaded by path from beside this package, exactly as the worker loads this file."""
    if __package__:
        from gui_envs.tasks import judging

        return judging
    path = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tasks", "judging.py")
    spec = importlib.util.spec_from_file_location("_guigym_answer_judging", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


answers_match: Callable[[str, str], bool] = _load_judging().answers_match

#: Action types that count as a click for :func:`validate_click_action`.
CLICK_TYPES = frozenset({"click", "double_click", "long_press", "right_click"})
_QUOTES = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"'})


def normalise(text: Any) -> str:
    """The matching rule's normal form of ``text`` (see the module docstring)."""
    s = unicodedata.normalize("NFKC", "" if text is None else str(text)).translate(_QUOTES).casefold()
    return " ".join(s.split())


def matches(expected: Any, actual: Any) -> bool:
    """``expected`` occurs in ``actual`` as a whole-word substring, after :func:`normalise` (the one rule).

    >>> matches("add to wish list", "Add to Wish List"), matches("4", "42"), matches("Almonds", "Crunchy Almonds")
    (True, False, True)
    """
    e, a = normalise(expected), normalise(actual)
    if not e:
        return not a
    return re.search(r"(?<![^\W_])" + re.escape(e) + r"(?![^\W_])", a) is not None


@dataclass(frozen=True)
class StepView:
    """The semantic description of one recorded action (see the module docstring)."""

    index: int
    action: str
    text: str = ""
    tag: str = ""
    role: str = ""
    element_type: str = ""
    typed_text: str = ""
    answer: str = ""
    status: str = ""
    app: str = ""
    key: str = ""
    url: str = ""
    location: str = ""


@dataclass(frozen=True)
class TrajectoryView:
    """A read-only view of a recorded episode, what label functions read (see the module docstring).

    Attributes:
        instruction: the task text.
        steps: one :class:`StepView` per step.
        locations: ``len(steps) + 1`` URLs or ``package/activity`` strings, before each step and at the end.
        states: ``len(steps) + 1`` fact dicts ``{collection: [description, ...]}``, same indexing.
        task: the task template name, if recorded.
    """

    instruction: str
    steps: tuple[StepView, ...]
    locations: tuple[str, ...]
    states: tuple[Mapping[str, tuple[str, ...]], ...]
    task: str | None = None

    @property
    def stop_page_url(self) -> str:
        """Where the episode ended (the paper's ``stop_page_url``)."""
        return self.locations[-1] if self.locations else ""

    def to_json(self) -> dict[str, Any]:
        return {
            "instruction": self.instruction,
            "task": self.task,
            "steps": [dict(vars(s)) for s in self.steps],
            "locations": list(self.locations),
            "states": [{k: list(v) for k, v in s.items()} for s in self.states],
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> TrajectoryView:
        return cls(
            instruction=str(data.get("instruction", "")),
            task=data.get("task"),
            steps=tuple(StepView(**s) for s in data["steps"]),
            locations=tuple(str(x) for x in data["locations"]),
            states=tuple({k: tuple(str(x) for x in v) for k, v in s.items()} for s in data["states"]),
        )


# ----- building a view from a recorded trajectory ------------------------------------------------------------
def _target(action: Mapping[str, Any], elements: Sequence[Mapping[str, Any]]) -> Mapping[str, Any] | None:
    element_id = action.get("element_id")
    if element_id is not None:
        return next((el for el in elements if str(el.get("id")) == str(element_id)), None)
    point = action.get("point")
    if not point:
        return None
    x, y = float(point[0]), float(point[1])
    hits = [el for el in elements if el.get("bbox") and el["bbox"][0] <= x <= el["bbox"][2] and el["bbox"][1] <= y <= el["bbox"][3]]
    if not hits:
        return None

    def rank(el: Mapping[str, Any]) -> tuple[int, float]:
        x0, y0, x1, y1 = el["bbox"]
        return (0 if el.get("clickable") else 1, (x1 - x0) * (y1 - y0))

    return min(hits, key=rank)


def _label(el: Mapping[str, Any] | None) -> str:
    if el is None:
        return ""
    return str(el.get("text") or el.get("content_desc") or "")


def describe_steps(
    actions: Sequence[Mapping[str, Any] | None],
    elements: Sequence[Sequence[Mapping[str, Any]]],
    locations: Sequence[str],
) -> tuple[StepView, ...]:
    """Semantic descriptions of ``actions`` (action dicts; ``None`` for unparsed output), given the element
    list and location recorded before each one."""
    out, focus = [], None
    for i, action in enumerate(actions):
        if action is None:
            out.append(StepView(index=i, action="invalid", location=locations[i]))
            continue
        kind = str(action.get("type", ""))
        target = _target(action, elements[i])
        if kind in CLICK_TYPES or kind == "hover":
            focus = target
        elif kind == "type" and target is None:
            target = focus
        out.append(
            StepView(
                index=i,
                action=kind,
                text=_label(target),
                tag=str((target or {}).get("tag") or ""),
                role=str((target or {}).get("role") or ""),
                element_type=str((target or {}).get("type") or ""),
                typed_text=str(action.get("text") or "") if kind == "type" else "",
                answer=str(action.get("answer") or "") if kind == "stop" else "",
                status=str(action.get("status") or "") if kind == "stop" else "",
                app=str(action.get("app") or ""),
                key=str(action.get("key") or ""),
                url=str(action.get("url") or ""),
                location=locations[i],
            )
        )
    return tuple(out)


def view_from_records(
    instruction: str,
    actions: Sequence[Mapping[str, Any] | None],
    records: Sequence[Mapping[str, Any]],
    task: str | None = None,
) -> TrajectoryView:
    """A view from one ``verifier_record`` per state: ``len(actions) + 1`` records (the last one the final
    state), or ``len(actions)`` when the final state was not recorded (the last recorded one stands in)."""
    records = list(records) or [{}]
    while len(records) < len(actions) + 1:
        records.append(records[-1])
    locations = tuple(str(r.get("location", "")) for r in records)
    states = tuple({k: tuple(map(str, v)) for k, v in dict(r.get("facts") or {}).items()} for r in records)
    steps = describe_steps(actions, [list(r.get("elements") or []) for r in records], locations)
    return TrajectoryView(instruction=instruction, steps=steps, locations=locations, states=states, task=task)


def view_of(trajectory: Any) -> TrajectoryView:
    """The :class:`TrajectoryView` of a ``Trajectory``, a saved trajectory folder (path), or a view."""
    if isinstance(trajectory, TrajectoryView):
        return trajectory
    if isinstance(trajectory, Mapping):
        return TrajectoryView.from_json(trajectory)
    if not hasattr(trajectory, "steps"):
        from gui_envs.schema.trajectory import Trajectory

        trajectory = Trajectory.load(trajectory)
    records = [dict(s.privileged.get("verifier_record") or {}) for s in trajectory.steps]
    final = (trajectory.metadata or {}).get("final_privileged") or {}
    if final.get("verifier_record"):
        records.append(dict(final["verifier_record"]))
    actions = [s.action.to_dict() if s.action is not None else None for s in trajectory.steps]
    return view_from_records(trajectory.instruction, actions, records, task=trajectory.task)


# ----- the validators -------------------------------------------------------------------------------------------
#: The log of the current label function's validator calls: ``(name, passed, match steps)``; the sandbox
#: clears it before each function and reads it after.
CALL_LOG: list[tuple[str, bool, tuple[int, ...]]] = []


#: The earliest step the next validator call may match: the calls of one label function are key steps in
#: temporal order ("check each API call condition sequentially", App. B), so each call only counts matches at or
#: after the first match of the call before it.
_CURSOR = [-(10**9)]


def start_log() -> None:
    """Forget the previous label function's calls (the sandbox calls this before each function)."""
    CALL_LOG.clear()
    _CURSOR[0] = -(10**9)


def _record(name: str, steps: Iterable[int]) -> bool:
    found = tuple(sorted(t for t in steps if t >= _CURSOR[0]))
    CALL_LOG.append((name, bool(found), found))
    if found:
        _CURSOR[0] = found[0]
    return bool(found)


def _steps(trajectory: TrajectoryView) -> tuple[StepView, ...]:
    if not isinstance(trajectory, TrajectoryView):
        raise TypeError("the first argument of a validator must be the trajectory")
    return trajectory.steps


def validate_click_action(trajectory: TrajectoryView, text: str) -> bool:
    """A click (tap, double click, long press, right click) on an element whose text matches ``text``."""
    return _record("click", (s.index for s in _steps(trajectory) if s.action in CLICK_TYPES and matches(text, s.text)))


def validate_click_or_hover_action(trajectory: TrajectoryView, action: str, tag: str, text: str) -> bool:
    """A ``click`` (any click kind) or ``hover`` on an element with tag ``tag`` (``""``: any) and text ``text``."""
    want = normalise(action)
    kinds = CLICK_TYPES if want == "click" else frozenset({want})
    return _record(
        "click_or_hover",
        (
            s.index
            for s in _steps(trajectory)
            if s.action in kinds and (not normalise(tag) or normalise(tag) == normalise(s.tag)) and matches(text, s.text)
        ),
    )


def validate_type_action(trajectory: TrajectoryView, text: str, target_text_field: str | None = None) -> bool:
    """Typed text matching ``text``, into a field whose label matches ``target_text_field`` (``None``: any)."""
    return _record(
        "type",
        (
            s.index
            for s in _steps(trajectory)
            if s.action == "type"
            and matches(text, s.typed_text)
            and (target_text_field is None or matches(target_text_field, s.text))
        ),
    )


def validate_stop_action(trajectory: TrajectoryView, answer: str) -> bool:
    """The episode stopped with an answer the env's judge accepts for the reference ``answer``
    (:func:`~gui_envs.tasks.judging.answers_match`: one number equal to a numeric reference, the same text, or
    the same set of list items; never a list of guesses that contains it)."""
    return _record(
        "stop", (s.index for s in _steps(trajectory) if s.action == "stop" and answers_match(s.answer, str(answer)))
    )


def validate_stop_status(trajectory: TrajectoryView, status: str) -> bool:
    """The episode stopped declaring ``status`` (``success``, ``infeasible`` or ``failure``)."""
    return _record(
        "stop_status", (s.index for s in _steps(trajectory) if s.action == "stop" and normalise(status) == normalise(s.status))
    )


def validate_url_visited(trajectory: TrajectoryView, url: str) -> bool:
    """A location (web URL, or phone ``package/activity``) matching ``url`` was shown at some point; the
    match step of the location shown after step ``t`` is ``t``."""
    _steps(trajectory)
    return _record("url", (i - 1 for i, loc in enumerate(trajectory.locations) if matches(url, loc)))


def validate_app_opened(trajectory: TrajectoryView, app: str) -> bool:
    """An app matching ``app`` (name or package) was in the foreground, or opened with ``open_app``."""
    steps = _steps(trajectory)
    shown = (i - 1 for i, loc in enumerate(trajectory.locations) if i > 0 and matches(app, loc.split("/")[0]))
    opened = (s.index for s in steps if s.action == "open_app" and matches(app, s.app))
    return _record("app", sorted(set(shown) | set(opened)))


def validate_fact(trajectory: TrajectoryView, collection: str, description: str, present: bool = True) -> bool:
    """In the final state, collection ``collection`` holds (``present``) or lacks a record matching
    ``description``; its match step is the step from which that has held without a break."""
    _steps(trajectory)

    def holds(state: Mapping[str, Sequence[str]]) -> bool:
        return any(matches(description, d) for d in state.get(collection, ())) == bool(present)

    states = trajectory.states
    if not states or not holds(states[-1]):
        return _record("fact", ())
    first = len(states) - 1
    while first > 0 and holds(states[first - 1]):
        first -= 1
    return _record("fact", (first - 1,))


def validate_item_in_wishlist(trajectory: TrajectoryView, name: str) -> bool:
    """The shop's wishlist holds the product ``name`` at the end."""
    return validate_fact(trajectory, "shop.wishlist", name)


def validate_item_in_cart(trajectory: TrajectoryView, name: str) -> bool:
    """The shop's cart holds ``name`` at the end (a cart line reads ``name | qty N | colour C | size S``)."""
    return validate_fact(trajectory, "shop.cart", name)


def validate_order_placed(trajectory: TrajectoryView, name: str) -> bool:
    """An order holding ``name`` exists at the end."""
    return validate_fact(trajectory, "shop.orders", name)


def validate_post_created(trajectory: TrajectoryView, title: str) -> bool:
    """A forum post titled ``title`` exists at the end."""
    return validate_fact(trajectory, "forum.posts", title)


def validate_post_deleted(trajectory: TrajectoryView, title: str) -> bool:
    """No forum post titled ``title`` is left at the end."""
    return validate_fact(trajectory, "forum.posts", title, present=False)


def validate_comment_written(trajectory: TrajectoryView, text: str) -> bool:
    """A forum comment reading ``text`` exists at the end."""
    return validate_fact(trajectory, "forum.comments", text)


def validate_listing_created(trajectory: TrajectoryView, title: str) -> bool:
    """A classifieds listing titled ``title`` exists at the end."""
    return validate_fact(trajectory, "classifieds.listings", title)


def validate_listing_deleted(trajectory: TrajectoryView, title: str) -> bool:
    """No classifieds listing titled ``title`` is left at the end."""
    return validate_fact(trajectory, "classifieds.listings", title, present=False)


def validate_alarm_set(trajectory: TrajectoryView, time: str) -> bool:
    """An alarm at ``time`` (``"07:30"``; a record reads ``HH:MM | label | on/off``) exists at the end."""
    return validate_fact(trajectory, "clock.alarms", time)


def validate_expense_added(trajectory: TrajectoryView, name: str) -> bool:
    """An expense named ``name`` exists at the end."""
    return validate_fact(trajectory, "expenses.expenses", name)


def validate_expense_deleted(trajectory: TrajectoryView, name: str) -> bool:
    """No expense named ``name`` is left at the end."""
    return validate_fact(trajectory, "expenses.expenses", name, present=False)


def validate_contact_added(trajectory: TrajectoryView, name: str) -> bool:
    """A contact named ``name`` exists at the end."""
    return validate_fact(trajectory, "contacts.contacts", name)


def validate_contact_deleted(trajectory: TrajectoryView, name: str) -> bool:
    """No contact named ``name`` is left at the end."""
    return validate_fact(trajectory, "contacts.contacts", name, present=False)


def validate_note_saved(trajectory: TrajectoryView, title: str) -> bool:
    """A note titled ``title`` exists at the end."""
    return validate_fact(trajectory, "notes.notes", title)


def validate_setting(trajectory: TrajectoryView, key: str, value: Any) -> bool:
    """Setting ``key`` (``wifi``, ``bluetooth``, ``dark_mode``, ``brightness``...) has ``value`` at the end."""
    return validate_fact(trajectory, "settings.values", f"{key} | {int(value) if isinstance(value, bool) else value}")


#: Every name ``from Function_APIs import *`` provides.
API: dict[str, Callable[..., bool]] = {
    fn.__name__: fn
    for fn in (
        validate_click_action,
        validate_click_or_hover_action,
        validate_type_action,
        validate_stop_action,
        validate_stop_status,
        validate_url_visited,
        validate_app_opened,
        validate_fact,
        validate_item_in_wishlist,
        validate_item_in_cart,
        validate_order_placed,
        validate_post_created,
        validate_post_deleted,
        validate_comment_written,
        validate_listing_created,
        validate_listing_deleted,
        validate_alarm_set,
        validate_expense_added,
        validate_expense_deleted,
        validate_contact_added,
        validate_contact_deleted,
        validate_note_saved,
        validate_setting,
    )
}


def dumps_view(view: TrajectoryView) -> str:
    """Compact JSON of a view (what travels to the sandbox worker)."""
    return json.dumps(view.to_json(), separators=(",", ":"))


__all__ = ["API", "CLICK_TYPES", "StepView", "TrajectoryView", "matches", "normalise", "view_of", *API]
