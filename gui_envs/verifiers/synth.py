"""A deterministic synthesiser: label functions from one oracle demonstration (seed 002, section 3.1).

CORE asks an LLM to turn the expert's key steps into label functions; this module does the same job by rule,
so every bundled template gets a checked-in set (``data/<family>.json``) that is reproducible and needs no
model. The key steps of a recorded :class:`~gui_envs.verifiers.api.TrajectoryView`, in temporal order:

1. every ``open_app``: ``validate_app_opened(trajectory, app)``;
2. every ``type``: ``validate_type_action(trajectory, text, target_text_field=<field label>)`` (no field
   argument when the field has no label);
3. every click whose step changed the app state: ``validate_click_action(trajectory, <element text>)``;
4. every record that the episode added to (or removed from) a fact collection, between the first and the
   final state: ``validate_fact(trajectory, collection, description, present=True|False)``, placed at the step
   from which it held;
5. the final stop: ``validate_stop_action(trajectory, answer)`` with an answer, else
   ``validate_stop_status(trajectory, status)`` for ``infeasible``;
6. when none of 3-5 applies (a navigation task: open a page, search, filter, sort), the final location:
   ``validate_url_visited(trajectory, <final URL or package/activity>)``.

Functions are ordered by the step they match in the demonstration (ties keep the order above), which makes
the demonstration's linear strategy graph pass fully by construction.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from gui_envs.verifiers.api import CLICK_TYPES, TrajectoryView, view_of

TEMPLATE = "from Function_APIs import *\ndef verify_function(trajectory):\n    if not {call}:\n        return False\n    return True\nresult = verify_function(trajectory)\n"


def _lit(value: Any) -> str:
    return repr(str(value))


def label_function(call: str) -> str:
    """A one-key-step label function in the paper's shape around the validator call ``call``."""
    return TEMPLATE.format(call=call)


def _changed(a: Mapping[str, Sequence[str]], b: Mapping[str, Sequence[str]]) -> bool:
    return {k: list(v) for k, v in a.items()} != {k: list(v) for k, v in b.items()}


def synthesise(trajectory: Any) -> list[str]:
    """The label functions of one oracle demonstration (a view, ``Trajectory`` or saved folder), in order."""
    view: TrajectoryView = view_of(trajectory)
    keyed: list[tuple[int, int, str]] = []  # (match step, rule rank, call)
    states = view.states
    for s in view.steps:
        if s.action == "open_app" and s.app:
            keyed.append((s.index, 0, f"validate_app_opened(trajectory, {_lit(s.app)})"))
        elif s.action == "type" and s.typed_text:
            field = f", target_text_field={_lit(s.text)}" if s.text else ""
            keyed.append((s.index, 1, f"validate_type_action(trajectory, {_lit(s.typed_text)}{field})"))
        elif s.action in CLICK_TYPES and s.text and s.index + 1 < len(states) and _changed(states[s.index], states[s.index + 1]):
            keyed.append((s.index, 2, f"validate_click_action(trajectory, {_lit(s.text)})"))
    if states:
        first, last = states[0], states[-1]
        for collection in sorted(set(first) | set(last)):
            before, after = list(first.get(collection, ())), list(last.get(collection, ()))
            added = [d for d in after if d not in before]
            removed = [d for d in before if d not in after]
            for description, present in [(d, True) for d in added] + [(d, False) for d in removed]:
                step = _held_from(states, collection, description, present)
                keyed.append(
                    (step, 3, f"validate_fact(trajectory, {_lit(collection)}, {_lit(description)}, present={present})")
                )
    stop = view.steps[-1] if view.steps and view.steps[-1].action == "stop" else None
    if stop is not None and stop.answer:
        keyed.append((stop.index, 4, f"validate_stop_action(trajectory, {_lit(stop.answer)})"))
    elif stop is not None and stop.status == "infeasible":
        keyed.append((stop.index, 4, f"validate_stop_status(trajectory, {_lit(stop.status)})"))
    if not any(rank >= 2 for _, rank, _ in keyed) and view.locations and view.locations[-1] != view.locations[0]:
        keyed.append((len(view.steps) - 1, 5, f"validate_url_visited(trajectory, {_lit(view.locations[-1])})"))
    keyed.sort(key=lambda k: (k[0], k[1]))
    out: list[str] = []
    for _, _, call in keyed:
        code = label_function(call)
        if code not in out:
            out.append(code)
    return out


def _held_from(states: Sequence[Mapping[str, Sequence[str]]], collection: str, description: str, present: bool) -> int:
    """The step after which ``description``'s presence in ``collection`` held to the end (``-1``: always)."""
    first = len(states) - 1
    while first > 0 and (description in states[first - 1].get(collection, ())) == present:
        first -= 1
    return first - 1


# ----- the checked-in sets -------------------------------------------------------------------------------------
#: Task seed of the demonstration each checked-in set was synthesised from. ``python -m agents.label_sets
#: web|phone`` rebuilds them (it plays the oracle, which lives a layer above the envs).
DATA_SEED = 3


def load_sets(family: str) -> dict[str, dict[str, Any]]:
    """The checked-in sets of ``family`` (``"web"`` or ``"phone"``): ``{task: {"seed", "functions"}}``."""
    import json
    from pathlib import Path

    return json.loads((Path(__file__).with_name("data") / f"{family}.json").read_text())

