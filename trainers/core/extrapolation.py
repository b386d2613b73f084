"""CORE's trajectory-guided extrapolation (seed 002, section 3.3; prompts of App. A.3 and E.3).

Two ways to grow the supervised task space beyond the expert demonstrations:

* **Success-based task augmentation** (section 3.3.1, :func:`augment_success`): a trajectory the environment
  judged successful on a task with no demonstration becomes a new supervised task; its label functions are
  synthesised from the trajectory itself and must pass on it.
* **Failure-driven exploration** (section 3.3.2, :func:`explore_failure`): a failed trajectory gets a new intent
  that it *does* accomplish, from App. A.3's generation prompt (with an LLM) refined by App. A.3's refinement
  rules, or from the final app-state change (no model: ``"Add Crunchy Almonds to the cart"``). The new intent is
  checked by the INVALID rules (:func:`refine_intent`: imperative, explicit object, no negation) and kept only
  if freshly synthesised label functions pass on the trajectory.

:func:`judge_intent` is App. E.3's optional LLM-as-judge: does the new intent match the trajectory better than
the original one?
"""

from __future__ import annotations

import copy
import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from gui_envs.schema.trajectory import Trajectory
from gui_envs.verifiers.api import TrajectoryView, view_of
from trainers.core.abstraction import LLM, abstract, accepted, semantic_descriptions

#: App. A.3, new intent generation, verbatim, with the described trajectory appended.
INTENT_PROMPT = (
    "Below is a trajectory to complete a task. Please Analyze the trajectory and write a reasonable task intent "
    "that the trajectory does successfully complete.\n\nTrajectory:\n{trajectory}\n"
)

#: App. A.3, intent refinement, verbatim; ``<<EXAMPLES>>`` is filled with :data:`REFINE_EXAMPLES`.
REFINE_PROMPT = (
    'You are given a candidate "task intent" that was automatically generated from a trajectory. Your job is to '
    "transform it into a clean, imperative-style intent, leave it unchanged if it already meets the criteria, or "
    "flag it as INVALID if it doesn't describe a real intent. Follow these rules exactly: 1. Preserve well-formed "
    "intents: If the candidate already adheres to all the rules below (clean, imperative style with a clear action "
    'and explicit object), return it exactly as is. 2. No prefixes or labels: Don\'t start with "The task is," '
    '"New task intent:," "This intent," or any extra words. 3. Validity check: If it doesn\'t describe a real intent '
    'or is meaningless, respond with exactly \'INVALID\'. For example, "New task intent:", "OBSERVATION: ", or any '
    "other non-intent placeholder should be flagged as 'INVALID'. 4. Explicit object requirement: The intent must "
    "include both a clear action *and* an explicit object or target. If the candidate has no specified object "
    '(e.g. "Add to cart", "Compare the prices of the products", "Stop", "Go back"), respond with \'INVALID\'. 5. '
    "Prohibit negation or interruption intents: If the candidate describes stopping, canceling, preventing, or "
    "otherwise negating another action (e.g., \"The task intent is to stop the...\"), respond with 'INVALID'. "
    "Examples: {examples}\n\nCandidate: {candidate}\n"
)

#: ``<<EXAMPLES>>`` of the refinement prompt for guigym's sites and apps.
REFINE_EXAMPLES = (
    '"The task is to add the Crunchy Almonds to the wishlist." -> "Add the Crunchy Almonds to the wishlist"; '
    '"Set an alarm for 07:30" -> "Set an alarm for 07:30"; "Go back" -> INVALID; "Stop adding items" -> INVALID'
)

#: App. E.3, LLM-as-judge, verbatim.
JUDGE_PROMPT = (
    "You are given a trajectory and two possible intents. Decide which intent better matches the trajectory. "
    "Consider logic, relevance, and goal alignment. Trajectory: {trajectory} Intent1: {original} Intent2: {new} "
    "Output: Only respond with one of the following: 'Intent 1' / 'Intent 2' / 'Cannot decide'"
)

INVALID = "INVALID"
_PREFIXES = re.compile(
    r"^\s*(?:new task intent|task intent|intent|the task is(?: to)?|the task intent is(?: to)?|this intent(?: is)?"
    r"(?: to)?|task|answer|output)\s*[:\-]?\s*",
    re.I,
)
#: Words that make an intent a negation or interruption (rule 5).
_NEGATION = {
    "stop",
    "cancel",
    "prevent",
    "avoid",
    "don't",
    "dont",
    "do",
    "not",
    "never",
    "abort",
    "undo",
    "quit",
}
#: Verbs that start an imperative intent on guigym's sites and apps (rule 2 / imperative style).
IMPERATIVE_VERBS = frozenset(
    "add remove delete open create write post set turn enable disable switch change edit update search find "
    "show go navigate buy order place favourite favorite bookmark subscribe unsubscribe upvote downvote vote star "
    "unstar mark save rename move sort filter list tell answer reply comment check uncheck start reset log select "
    "pick increase decrease record note call send view visit book put empty clear toggle".split()
)


def refine_intent(candidate: str) -> str:
    """App. A.3's refinement rules applied without a model: strip prefixes, quotes and the final full stop
    (rule 2); ``INVALID`` (rules 3-5) for a placeholder, a non-imperative sentence, no explicit object (fewer than
    two words after the verb, or only a particle), or a negation or interruption.

    >>> refine_intent("The task is to add the Crunchy Almonds to the wishlist.")
    'Add the Crunchy Almonds to the wishlist'
    >>> [refine_intent(x) for x in ("Add to cart", "Go back", "Stop the timer", "New task intent:", "OBSERVATION: ")]
    ['INVALID', 'INVALID', 'INVALID', 'INVALID', 'INVALID']
    """
    text = candidate.strip().splitlines()[0] if candidate.strip() else ""
    text = _PREFIXES.sub("", text).strip().strip("\"'`").rstrip(".").strip()
    words = text.split()
    if len(words) < 2 or text.endswith(":") or text.upper() == INVALID:
        return INVALID
    verb = words[0].lower()
    if verb in _NEGATION or any(w.lower().strip(",.") in ("not", "don't", "never") for w in words):
        return INVALID
    if verb not in IMPERATIVE_VERBS:
        return INVALID
    rest = [w.lower() for w in words[1:]]
    # An explicit object: something after the verb that is not only a particle or a bare container ("to cart").
    particles = {
        "to",
        "the",
        "a",
        "an",
        "back",
        "up",
        "down",
        "on",
        "off",
        "in",
        "into",
        "cart",
        "page",
        "it",
        "them",
    }
    if all(w in particles for w in rest):
        return INVALID
    return text[0].upper() + text[1:]


# ----- the deterministic intent: the final app-state change ---------------------------------------------------------
#: ``collection -> (template when a record appeared, template when one disappeared)``; ``{x}`` is the record's
#: first field (before ``" | "``), ``{rest}`` the second field.
CHANGE_TEMPLATES: Mapping[str, tuple[str | None, str | None]] = {
    "shop.wishlist": ("Add {x} to the wishlist", "Remove {x} from the wishlist"),
    "shop.cart": ("Add {x} to the cart", "Remove {x} from the cart"),
    "shop.orders": ("Place an order for {items}", None),
    "forum.posts": ("Create a forum post titled '{x}'", "Delete the forum post '{x}'"),
    "forum.comments": ("Write the comment '{x}' on the post '{on}'", "Delete the comment '{x}'"),
    "forum.votes": ("Mark the post '{x}' as {rest}", None),
    "forum.subscriptions": ("Subscribe to the forum {x}", "Unsubscribe from the forum {x}"),
    "forum.bios": ("Set the bio of {x} to '{rest}'", None),
    "classifieds.listings": ("Create a listing titled '{x}'", "Delete the listing '{x}'"),
    "classifieds.favourites": (
        "Add the listing '{x}' to the favourites",
        "Remove the listing '{x}' from the favourites",
    ),
    "clock.alarms": ("Set an alarm for {x}", "Delete the alarm at {x}"),
    "clock.cities": ("Add {x} to the world clock", "Remove {x} from the world clock"),
    "contacts.contacts": ("Add the contact {x}", "Delete the contact {x}"),
    "expenses.expenses": ("Add the expense {x} of {rest}", "Delete the expense {x}"),
    "notes.notes": ("Save a note titled '{x}'", "Delete the note '{x}'"),
    "notes.todos": ("Add the to-do '{x}'", "Delete the to-do '{x}'"),
    "recipes.favourites": ("Add {x} to the favourite recipes", "Remove {x} from the favourite recipes"),
    "settings.values": ("Set {x} to {value}", None),
}


def _fill(template: str, description: str) -> str:
    """``template`` filled from one fact record (``"airplane | 1"``: ``x`` airplane, ``rest`` 1, ``value`` on).

    >>> _fill("Set {x} to {value}", "airplane | 1"), _fill("Add {x} to the cart", "Mouse | qty 1 | colour ")
    ('Set airplane to on', 'Add Mouse to the cart')
    """
    parts = [p.strip() for p in description.split(" | ")]
    on = next((p[3:] for p in parts if p.startswith("on ")), "")
    items = parts[-1] if parts else description
    rest = parts[1] if len(parts) > 1 else ""
    # Settings store switches as 1 / 0; an intent reads them as on / off.
    value = {"1": "on", "0": "off"}.get(rest, rest)
    return template.format(x=parts[0], rest=rest, on=on, items=items, value=value)


def state_change_intent(trajectory: Any) -> str:
    """The intent the final app-state change describes (the first added record, else the first removed one,
    in collection order), refined by :func:`refine_intent`; ``INVALID`` when nothing changed."""
    view: TrajectoryView = view_of(trajectory)
    if not view.states:
        return INVALID
    first, last = view.states[0], view.states[-1]
    removed_candidates = []
    for collection in sorted(set(first) | set(last)):
        before, after = list(first.get(collection, ())), list(last.get(collection, ()))
        add_t, remove_t = CHANGE_TEMPLATES.get(
            collection, ("Add '{x}' to " + collection, "Remove '{x}' from " + collection)
        )
        added = [d for d in after if d not in before]
        if added and add_t:
            return refine_intent(_fill(add_t, added[0]))
        removed = [d for d in before if d not in after]
        if removed and remove_t:
            removed_candidates.append(_fill(remove_t, removed[0]))
    return refine_intent(removed_candidates[0]) if removed_candidates else INVALID


def described(trajectory: Any) -> str:
    """The trajectory as the numbered semantic descriptions the prompts read."""
    return "\n".join(f"{i + 1}. {d}" for i, d in enumerate(semantic_descriptions(trajectory)))


def llm_intent(trajectory: Any, llm: LLM) -> str:
    """App. A.3: a generated intent, refined by the LLM with the refinement prompt, then by the rules."""
    raw = llm(INTENT_PROMPT.format(trajectory=described(trajectory))).strip()
    refined = llm(REFINE_PROMPT.format(examples=REFINE_EXAMPLES, candidate=raw)).strip()
    return INVALID if INVALID in refined.upper() else refine_intent(refined)


def judge_intent(trajectory: Any, original: str, new: str, llm: LLM) -> str:
    """App. E.3's LLM-as-judge: ``"new"`` (Intent 2 preferred), ``"original"`` or ``"undecided"``."""
    reply = llm(JUDGE_PROMPT.format(trajectory=described(trajectory), original=original, new=new))
    m = re.search(r"intent\s*([12])", reply, re.I)
    return {"1": "original", "2": "new"}[m.group(1)] if m else "undecided"


# ----- new tasks -------------------------------------------------------------------------------------------------
@dataclass
class NewTask:
    """A task mined from a sampled trajectory.

    Attributes:
        name: a stable id, ``<origin>:<parent task>:<hash of the instruction>``.
        origin: ``"success"`` (augmentation) or ``"failure"`` (exploration).
        parent: the task the trajectory was sampled on (``env_id|template|seed``).
        instruction: the new task's instruction (the original one for ``success``).
        functions: its label functions, each passing on the trajectory.
        trajectory_id: the trajectory it came from.
        judge: the LLM judge's verdict (``"new"``, ``"original"``, ``"undecided"``), or ``None`` when not judged.
    """

    name: str
    origin: str
    parent: str
    instruction: str
    functions: list[str]
    trajectory_id: str
    judge: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return dict(vars(self))


def _name(origin: str, parent: str, instruction: str) -> str:
    return f"{origin}:{parent}:{hashlib.sha1(instruction.encode()).hexdigest()[:8]}"


def augment_success(
    traj: Trajectory, parent: str, llm: LLM | None = None, timeout_s: float = 2.0
) -> NewTask | None:
    """Section 3.3.1: a successful trajectory on a task with no demonstration becomes a task, with label functions
    synthesised from it (and passing on it); ``None`` when no function could be synthesised."""
    functions = accepted(abstract(traj, llm, timeout_s=timeout_s))
    if not functions:
        return None
    return NewTask(
        _name("success", parent, traj.instruction), "success", parent, traj.instruction, functions, traj.id
    )


def explore_failure(
    traj: Trajectory, parent: str, llm: LLM | None = None, judge: LLM | None = None, timeout_s: float = 2.0
) -> tuple[NewTask, Trajectory] | None:
    """Section 3.3.2: a new intent for a failed trajectory and the relabelled trajectory, or ``None`` when the
    intent is INVALID or no freshly synthesised label function passes on the trajectory.

    The intent comes from ``llm`` (App. A.3) when given, falling back to :func:`state_change_intent` when the
    LLM's is INVALID. With ``judge``, App. E.3's verdict is recorded (it does not filter, as in the paper).
    """
    intent = llm_intent(traj, llm) if llm is not None else INVALID
    if intent == INVALID:
        intent = state_change_intent(traj)
    if intent == INVALID or intent == traj.instruction:
        return None
    relabelled = copy.copy(traj)
    relabelled.instruction = intent
    relabelled.success = True
    relabelled.metadata = {**traj.metadata, "relabelled_from": traj.instruction, "source_trajectory": traj.id}
    relabelled.id = f"{traj.id}-x"
    functions = accepted(abstract(relabelled, llm, timeout_s=timeout_s))
    if not functions:
        return None
    verdict = judge_intent(traj, traj.instruction, intent, judge) if judge is not None else None
    task = NewTask(
        _name("failure", parent, intent), "failure", parent, intent, functions, relabelled.id, verdict
    )
    return task, relabelled


def tasks_summary(tasks: Sequence[NewTask]) -> dict[str, int]:
    """Counts by origin (what the loop's metrics report)."""
    return {
        "new_success": sum(t.origin == "success" for t in tasks),
        "new_failure": sum(t.origin == "failure" for t in tasks),
    }
