"""The one answer judge of every web and phone answer task: :func:`answers_match`.

Kept apart from the task classes so that the audit (:mod:`benchmarks.judge_attacks.blind_policies`) and the tests
can call it on plain strings.
"""

from __future__ import annotations

import re

#: Numeric answers must equal a numeric reference within this absolute tolerance (in the reference's unit).
#: It only absorbs float formatting ("12.5" vs "$12.50"); every numeric reference has at most two decimals, so
#: a different amount never passes.
NUMERIC_TOLERANCE = 1e-6

# Unit words a numeric answer may carry, by canonical unit: an answer may drop the reference's unit or spell
# it another way ("12 h" for "12 hours"), but never give a different one or a unit the reference lacks.
_UNITS = {
    "hour": ("hour", "hours", "h", "hr", "hrs"),
    "minute": ("minute", "minutes", "min", "mins"),
    "calorie": ("calorie", "calories", "cal", "kcal"),
    "serving": ("serving", "servings"),
    "percent": ("percent", "%"),
}
_UNIT_OF = {word: unit for unit, words in _UNITS.items() for word in words}
_QUANTITY = re.compile(r"(?P<num>[-+]?(?:\d+(?:\.\d*)?|\.\d+))(?:\s*(?P<unit>%)|\s+(?P<word>[a-z]+))?")
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")
# The currency is never what is asked: "$12", "12 dollars" and "12" are the same amount.
_CURRENCY = re.compile(r"[$\u20ac\u00a3]|\b(?:dollars?|usd)\b")
_LIST_SEPARATOR = re.compile(r"\s*(?:[;,&]|\band\b)\s*")


def _quantity(text: str) -> tuple[float, str | None] | None:
    """``(value, canonical unit or None)`` when ``text`` is one number with at most a known unit word."""
    text = _THOUSANDS.sub("", _CURRENCY.sub(" ", text.lower()))
    text = re.sub(r"\s+", " ", text).strip(" .!?;:'\"")
    found = _QUANTITY.fullmatch(text)
    if found is None:
        return None
    word = found.group("unit") or found.group("word")
    if word is not None and word not in _UNIT_OF:
        return None
    return float(found.group("num")), _UNIT_OF.get(word) if word else None


def answer_key(text: str) -> str:
    """The normalised text an answer is compared by: lower-case letters and digits only.

    >>> answer_key("  Tom.B! "), answer_key("Like-new")
    ('tomb', 'likenew')
    """
    return "".join(ch for ch in text.casefold() if ch.isalnum())


def _items(text: str) -> set[str]:
    return {answer_key(part) for part in _LIST_SEPARATOR.split(_THOUSANDS.sub("", text.lower()))} - {""}


def answers_match(answer: str, reference: str) -> bool:
    """Whether a ``stop`` answer matches the reference: the one judge of every web and phone answer task.

    Three rules, chosen by the reference, and nothing looser (no substring, no "first number in the answer"):

    * **numeric** reference (one number, optionally with a currency sign, thousands separators or a unit word,
      e.g. ``"$1,204.50"``, ``"12 hours"``): the answer must be one number equal to it within
      :data:`NUMERIC_TOLERANCE`; it may drop the currency and the unit, or spell the unit another way
      (``"12 h"``), but not carry any other word;
    * **text**: equal after :func:`answer_key` (case, whitespace and punctuation ignored);
    * **list** (a reference with ``,`` / ``;`` / ``&`` / ``and`` between items): the same set of items, in any
      order, with any of those separators. A reference of one item is matched by one item only, so listing
      every option never passes.

    >>> answers_match("420", "420 calories"), answers_match("It has 420 calories.", "420 calories")
    (True, False)
    >>> answers_match("12.5", "$12.50"), answers_match("12 minutes", "12 hours"), answers_match("42", "420")
    (True, False, False)
    >>> answers_match("the acme red scarf", "Acme Red Scarf"), answers_match("", "x")
    (False, False)
    >>> answers_match("Fair and Good", "good, fair"), answers_match("New, Like new, Good, Fair", "Good")
    (True, False)
    """
    answer, reference = str(answer), str(reference)
    key = answer_key(answer)
    if not key:
        return False
    ref_quantity = _quantity(reference)
    if ref_quantity is not None:
        got = _quantity(answer)
        return (
            got is not None
            and abs(got[0] - ref_quantity[0]) <= NUMERIC_TOLERANCE
            and got[1] in (None, ref_quantity[1])
        )
    if key == answer_key(reference):
        return True
    ref_items = _items(reference)
    return len(ref_items) > 1 and _items(answer) == ref_items
