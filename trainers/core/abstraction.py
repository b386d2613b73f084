"""CORE's semantic code abstraction (seed 002, section 3.1; prompts of App. A.1 and A.2; metrics of App. E.2).

Three stages turn one expert demonstration into label functions:

1. **Semantic descriptions** (section 3.1.1): each action becomes a sentence from a fixed template per action
   type, filled with the element it acted on (``click`` on element 42 with text "Add to Wish List" becomes
   ``Click the button 'Add to Wish List'``; on the phone ``Tap ...``). The element comes from the recorded
   :class:`~gui_envs.verifiers.api.TrajectoryView` (the element list the env recorded before the step).
2. **Key-step identification** (section 3.1.2): with any LLM callable (``prompt -> text``) and App. A.1's prompt,
   or with a deterministic rule that needs no model (:func:`rule_key_steps`, the default: the steps that change
   app state, type text, pick from a dropdown, open an app or stop with an answer).
3. **Label-function synthesis** (section 3.1.3): with the LLM and App. A.2's prompt, up to 5 attempts per key step,
   each run in the sandbox on the expert trajectory, which must pass; or with the deterministic synthesiser
   (:func:`gui_envs.verifiers.synth.synthesise`), whose functions are sandbox-checked the same way; on this
   default path each function that checks an action is tied to the rule's key step it verifies (the record
   carries the step's semantic description), and a function for an action that is no key step is dropped.

:func:`synthesis_metrics` reports OSR, FTSR and ESP (App. E.2) over the synthesis records.
"""

from __future__ import annotations

import difflib
import inspect
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from gui_envs.verifiers.api import API, CLICK_TYPES, StepView, TrajectoryView, view_of
from gui_envs.verifiers.sandbox import check_source, run_label_function
from gui_envs.verifiers.synth import synthesise

#: Any language model as a plain function: prompt in, completion out (an ``HFGenerator`` through
#: :func:`generator_llm`, an API client, a user's own).
LLM = Callable[[str], str]

#: App. E.2 runs five synthesis attempts per key step.
MAX_ATTEMPTS = 5

# ----- 1. semantic descriptions -------------------------------------------------------------------------------
_WEB_KINDS = {"a": "link", "button": "button", "input": "field", "textarea": "field", "select": "dropdown",
              "img": "image", "option": "option", "label": "label"}  # fmt: skip
_PHONE_KINDS = {"button": "button", "imagebutton": "icon", "imageview": "icon", "edittext": "field",
                "switch": "switch", "checkbox": "checkbox", "textview": "text", "radiobutton": "option"}  # fmt: skip


def family_of(view: TrajectoryView) -> str:
    """``"web"`` when the locations are URLs, else ``"phone"`` (``package/activity`` locations)."""
    first = next((loc for loc in view.locations if loc), "")
    return "web" if first.startswith(("http://", "https://", "about:")) else "phone"


def _kind(step: StepView, family: str) -> str:
    if family == "web":
        if step.tag == "input" and step.element_type in ("checkbox", "radio", "submit", "button"):
            return {"submit": "button"}.get(step.element_type, step.element_type)
        return _WEB_KINDS.get(step.tag.lower(), step.role or "element")
    cls = step.tag.rsplit(".", 1)[-1].lower()
    return _PHONE_KINDS.get(cls, "element")


def describe(step: StepView, family: str = "web") -> str:
    """The template sentence of one action (section 3.1.1); ``family`` is ``"web"`` or ``"phone"``.

    >>> describe(StepView(index=0, action="click", text="Add to Wish List", tag="button"))
    "Click the button 'Add to Wish List'"
    >>> describe(StepView(index=1, action="type", text="Search", tag="input", typed_text="almonds"))
    "Type 'almonds' into the field 'Search'"
    >>> describe(StepView(index=0, action="click", text="Alarm", tag="android.widget.TextView"), "phone")
    "Tap the text 'Alarm'"
    """
    click = "Click" if family == "web" else "Tap"
    target = f"the {_kind(step, family)} '{step.text}'" if step.text else "an unlabelled spot"
    a = step.action
    if a == "click":
        return f"{click} {target}"
    if a in CLICK_TYPES:
        verb = {"double_click": "Double-click", "long_press": "Long-press", "right_click": "Right-click"}[a]
        return f"{verb} {target}"
    if a == "hover":
        return f"Hover over {target}"
    if a == "type":
        into = f" into the field '{step.text}'" if step.text else ""
        return f"Type '{step.typed_text}'{into}"
    if a == "press":
        return f"Press the key '{step.key}'"
    if a == "scroll":
        return "Scroll the page" if family == "web" else "Scroll the screen"
    if a == "swipe":
        return "Swipe on the screen"
    if a == "open_app":
        return f"Open the app '{step.app}'"
    if a == "navigate":
        return f"Go to '{step.url}'" if step.url else "Go back"
    if a == "wait":
        return "Wait"
    if a == "stop":
        if step.answer:
            return f"Stop with the answer '{step.answer}'"
        return f"Stop and report the task as {step.status or 'done'}"
    return "An invalid action"


def semantic_descriptions(trajectory: Any) -> list[str]:
    """One template sentence per step of ``trajectory`` (a view, ``Trajectory`` or saved folder)."""
    view = view_of(trajectory)
    family = family_of(view)
    return [describe(s, family) for s in view.steps]


# ----- 2. key-step identification --------------------------------------------------------------------------------
#: App. A.1, verbatim, with the objective and the described steps appended.
KEY_STEP_PROMPT = (
    "You will be provided with: - Objective: A clear task or question to be addressed. - Successful Action "
    "Sequence: A set of steps demonstrating how the Objective was previously achieved. Your task: Analyze the "
    'provided "Objective" and the "Successful Action Sequence" to extract the key action sequence. The key action '
    "sequence should include only the essential steps that directly contribute to achieving the Objective. - "
    "Exclude irrelevant, redundant, or non-critical actions from the Successful Action Sequence. Focus solely on "
    "the necessary steps required for success, based on your understanding of the Objective and any contextual "
    "information from the images (if provided). But Do not modify the original wording of any action. - Do not "
    "simply repeat and output the Successful Action Sequence; critically evaluate and distill it into a concise "
    "list of core actions. Output: Present the key action sequence as a numbered list without any additional "
    "explanation outside the list: 1. Key action 1 2. Key action 2 ...\n\n"
    "Objective: {objective}\nSuccessful Action Sequence:\n{steps}\n"
)


def _changed(view: TrajectoryView, i: int) -> bool:
    states = view.states
    return i + 1 < len(states) and dict(states[i]) != dict(states[i + 1])


def rule_key_steps(trajectory: Any) -> list[int]:
    """Key steps by rule, no model: the steps that change task-relevant app state, type text, pick from a
    dropdown, open an app, or stop with an answer or an ``infeasible`` status; a trajectory with none of
    these (a navigation task) keeps its last step, where the destination was reached."""
    view = view_of(trajectory)
    keep = []
    for s in view.steps:
        if (
            _changed(view, s.index)
            or (s.action == "type" and s.typed_text)
            or (s.action in CLICK_TYPES and s.tag.lower() in ("select", "option"))
            or (s.action == "open_app" and s.app)
            or (s.action == "stop" and (s.answer or s.status == "infeasible"))
        ):
            keep.append(s.index)
    if not keep and view.steps:
        keep = [view.steps[-1].index]
    return keep


def parse_numbered(text: str) -> list[str]:
    """The items of a numbered list (``1. x`` / ``2) y``), in order; other lines are ignored.

    >>> parse_numbered("Here:\\n1. Click the link 'A'\\n2) Type 'b'\\nthanks")
    ["Click the link 'A'", "Type 'b'"]
    """
    return [m.group(1).strip() for m in re.finditer(r"(?m)^\s*\d+[.)]\s*(.+?)\s*$", text)]


def llm_key_steps(trajectory: Any, llm: LLM) -> list[int]:
    """Key steps chosen by ``llm`` with App. A.1's prompt. Each listed line is mapped back to the step with
    that exact description (the prompt forbids rewording), else the closest one (difflib ratio >= 0.8);
    unmatched lines are dropped. Falls back to :func:`rule_key_steps` when nothing matches."""
    view = view_of(trajectory)
    descriptions = semantic_descriptions(view)
    steps = "\n".join(f"{i + 1}. {d}" for i, d in enumerate(descriptions))
    reply = llm(KEY_STEP_PROMPT.format(objective=view.instruction, steps=steps))
    picked: list[int] = []
    for line in parse_numbered(reply):
        close = difflib.get_close_matches(line, descriptions, n=1, cutoff=0.8)
        if close:
            # Several steps may read the same: take the first one after the previous pick.
            start = picked[-1] + 1 if picked else 0
            idx = next((i for i in range(start, len(descriptions)) if descriptions[i] == close[0]), None)
            if idx is not None:
                picked.append(idx)
    return picked or rule_key_steps(view)


def key_steps(trajectory: Any, llm: LLM | None = None) -> list[int]:
    """Key-step indices of ``trajectory``: by ``llm`` (App. A.1) when given, else by :func:`rule_key_steps`."""
    return llm_key_steps(trajectory, llm) if llm is not None else rule_key_steps(trajectory)


# ----- 3. label-function synthesis -------------------------------------------------------------------------------
#: App. A.2, verbatim; ``<<API_FUNCTIONS>>`` and ``<<GUIDANCE>>`` are filled per benchmark and key step.
LABEL_FUNCTION_PROMPT = (
    "You are an AI assistant tasked with using the correct API functions to generate a verification function in "
    "Python to determine whether a specific task has been completed based on a Trajectory. The task is a fixed "
    "text description provided below, representing the current goal that the function should evaluate. The "
    "Trajectory is a sequence of actions represented as strings, which you will analyze using the provided API "
    "functions. Here are the available API functions you can use: {api}\nYou will be provided with the following "
    "code format: ```python\nfrom Function_APIs import *\ndef verify_function(trajectory):\n    # Check each API "
    "call condition sequentially\n    # Only one <API_call> in one if statement, avoiding two <API_call> with "
    "'and' or nested if statements.\n    if not <API_call_1>:\n        return False\n    if not <API_call_2>:\n"
    "        return False\n    # Add more <API_call> if needed\n    # Return True only if all conditions were "
    "satisfied\n    return True\n```\nThe verification function should: 1. Use the provided API functions to "
    "validate actions within the Trajectory. 2. Simply output the code only without explanation and example "
    "usage. 3. Each if statement can only contain one API call, and cannot have nested if statements. "
    "Guidance: {guidance}"
)


def api_listing() -> str:
    """``<<API_FUNCTIONS>>``: each validator's signature and first docstring line."""
    lines = []
    for name, fn in API.items():
        doc = (inspect.getdoc(fn) or "").splitlines()[0:1]
        lines.append(f"- {name}{inspect.signature(fn)}: {doc[0] if doc else ''}")
    return "\n" + "\n".join(lines)


def guidance(objective: str, step_description: str) -> str:
    """``<<GUIDANCE>>`` for one key step: what the function must verify and the project's rules."""
    return (
        f"The task is: {objective!r}. Write a function that verifies exactly this key step: {step_description!r}. "
        "Quote element texts and typed text exactly as they appear in the key step. The first argument of every "
        "API call is `trajectory`. End the code with the line `result = verify_function(trajectory)`."
    )


def extract_code(reply: str) -> str:
    """The Python code of an LLM reply: the first fenced block (else the whole reply), with the paper's trailing
    ``result = verify_function(trajectory)`` added when missing."""
    m = re.search(r"```(?:python)?\s*\n(.*?)```", reply, re.S)
    code = (m.group(1) if m else reply).strip() + "\n"
    if not re.search(r"(?m)^result\s*=\s*verify_function\(", code):
        code += "result = verify_function(trajectory)\n"
    return code


@dataclass
class SynthesisRecord:
    """One key step's synthesis.

    Attributes:
        step: the key step's index in the expert trajectory (``-1``: a state fact the synthesiser added).
        description: its semantic description.
        code: the accepted label function, or ``None`` when no attempt passed.
        attempts: attempts made (1..5).
        first_success: the attempt (1-based) that first passed on the expert trajectory, or ``None``.
        errors: why each failed attempt failed.
    """

    step: int
    description: str
    code: str | None
    attempts: int
    first_success: int | None
    errors: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return dict(vars(self))


def _passes(code: str, view: TrajectoryView, timeout_s: float) -> str | None:
    """``None`` when ``code`` is accepted by the whitelist and passes on ``view``; else why not."""
    rejected = check_source(code)
    if rejected is not None:
        return str(rejected)
    verdict = run_label_function(code, view, timeout_s)
    if verdict.error is not None:
        return str(verdict.error)
    return None if verdict.passed else "returned False on the expert trajectory"


def llm_synthesise(
    trajectory: Any, steps: Sequence[int], llm: LLM, max_attempts: int = MAX_ATTEMPTS, timeout_s: float = 2.0
) -> list[SynthesisRecord]:
    """One label function per key step from ``llm`` with App. A.2's prompt, each attempt sandbox-checked on the
    expert ``trajectory`` (it must pass); at most ``max_attempts`` attempts per step."""
    view = view_of(trajectory)
    descriptions = semantic_descriptions(view)
    out = []
    for t in steps:
        prompt = LABEL_FUNCTION_PROMPT.format(
            api=api_listing(), guidance=guidance(view.instruction, descriptions[t])
        )
        record = SynthesisRecord(t, descriptions[t], None, 0, None)
        for attempt in range(1, max_attempts + 1):
            record.attempts = attempt
            code = extract_code(llm(prompt))
            why = _passes(code, view, timeout_s)
            if why is None:
                record.code, record.first_success = code, attempt
                break
            record.errors.append(why)
        out.append(record)
    return out


#: The validators that check one action of the trajectory (the others check app state, a location or a stop).
_STEP_VALIDATORS = ("validate_app_opened", "validate_type_action", "validate_click_action")


def _key_step_of(call: str, view: TrajectoryView, keys: Sequence[int], used: set[int]) -> int | None:
    """The first unused key step whose action ``call`` (a step validator's call) checks, else ``None``."""
    for k in keys:
        s = view.steps[k]
        if k in used:
            continue
        if (
            (call.startswith("validate_app_opened(") and s.action == "open_app" and repr(str(s.app)) in call)
            or (
                call.startswith("validate_type_action(")
                and s.action == "type"
                and repr(str(s.typed_text)) in call
            )
            or (
                call.startswith("validate_click_action(")
                and s.action in CLICK_TYPES
                and repr(str(s.text)) in call
            )
        ):
            return k
    return None


def rule_synthesise(trajectory: Any, timeout_s: float = 2.0) -> list[SynthesisRecord]:
    """Section 3.1 without a model: semantic descriptions (3.1.1), key steps by :func:`rule_key_steps` (3.1.2),
    and the deterministic synthesiser's functions (:mod:`gui_envs.verifiers.synth`, 3.1.3), each sandbox-checked
    on ``trajectory`` like an LLM attempt (one attempt each).

    A function that checks one action is tied to the key step it verifies (its record carries that step's index
    and description); one whose action is not a key step is dropped, as the LLM path never writes a function for
    a step it did not pick. Functions on app state, a location or a stop are kept with step ``-1``.
    """
    view = view_of(trajectory)
    descriptions = semantic_descriptions(view)
    keys = rule_key_steps(view)
    used: set[int] = set()
    out = []
    for code in synthesise(view):
        call = _call_of(code)
        step = -1
        if call.startswith(_STEP_VALIDATORS):
            found = _key_step_of(call, view, keys, used)
            if found is None:
                continue  # the action is not a key step: no function for it
            step = found
            used.add(found)
        why = _passes(code, view, timeout_s)
        description = descriptions[step] if step >= 0 else call
        record = SynthesisRecord(
            step, description, code if why is None else None, 1, 1 if why is None else None
        )
        if why is not None:
            record.errors.append(why)
        out.append(record)
    return out


def _call_of(code: str) -> str:
    m = re.search(r"if not (.+):", code)
    return m.group(1) if m else code.strip().splitlines()[0]


def abstract(
    trajectory: Any, llm: LLM | None = None, max_attempts: int = MAX_ATTEMPTS, timeout_s: float = 2.0
) -> list[SynthesisRecord]:
    """Section 3.1 end to end: semantic descriptions, key steps, then label functions, by ``llm`` (App. A.1 and
    A.2) or, the default, by rule (:func:`rule_synthesise`). The accepted functions are
    ``[r.code for r in records if r.code]``, in temporal order."""
    if llm is None:
        return rule_synthesise(trajectory, timeout_s)
    return llm_synthesise(trajectory, key_steps(trajectory, llm), llm, max_attempts, timeout_s)


def accepted(records: Sequence[SynthesisRecord]) -> list[str]:
    """The label functions that passed, in order, without repeats."""
    out: list[str] = []
    for r in records:
        if r.code and r.code not in out:
            out.append(r.code)
    return out


def synthesis_metrics(records: Sequence[SynthesisRecord]) -> dict[str, float]:
    """App. E.2: OSR = successes within the attempts / syntheses; FTSR = first-attempt successes / syntheses;
    ESP = mean attempt of the first success over the successful ones (0.0 when none succeeded).

    >>> rs = [SynthesisRecord(0, "a", "c", 1, 1), SynthesisRecord(1, "b", "c", 3, 3), SynthesisRecord(2, "c", None, 5, None)]
    >>> synthesis_metrics(rs) == {"osr": 2 / 3, "ftsr": 1 / 3, "esp": 2.0, "syntheses": 3}
    True
    """
    n = len(records)
    wins = [r.first_success for r in records if r.first_success is not None]
    return {
        "osr": len(wins) / n if n else 0.0,
        "ftsr": sum(1 for w in wins if w == 1) / n if n else 0.0,
        "esp": sum(wins) / len(wins) if wins else 0.0,
        "syntheses": n,
    }


def generator_llm(generator: Any, max_new_tokens: int = 512, temperature: float = 0.0) -> LLM:
    """An :data:`LLM` from an ``agents`` generator (``HFGenerator``, the API client): one user message in,
    the first completion's text out."""
    from agents.generation import SamplingParams

    sampling = SamplingParams(temperature=temperature, max_new_tokens=max_new_tokens)

    def call(prompt: str) -> str:
        return generator.generate([[{"role": "user", "content": prompt}]], sampling=sampling)[0][0].text

    return call


def to_mapping(records: Sequence[SynthesisRecord]) -> list[Mapping[str, Any]]:
    """JSON rows of the records (what the loop writes under ``label_functions/``)."""
    return [r.to_json() for r in records]
