"""Find the JSON value embedded in free text (model output) in time linear in the text's length.

Model output mixes prose and JSON: ``I'll click it: {"action": "click", ...}``. Trying a JSON decoder at
every ``[`` or ``{`` costs a decode of the rest of the text per bracket, which is quadratic: 100 KB of
``[1,`` took 30 s. Instead :func:`json_candidates` scans the text once, matching brackets (and skipping
brackets inside quoted strings), and yields each outermost bracketed span once, with its directly nested
spans as fall-backs, so that the caller decodes every character a bounded number of times.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

#: Bracketed spans :func:`first_json` tries before it gives up. Each failed decode costs a raised exception
#: (tens of microseconds), so 33k tiny spans such as ``[x]`` would take over a second; real model output
#: has a handful of bracketed asides before its JSON, if any.
MAX_DECODE_ATTEMPTS = 32

_OPENERS = re.compile(r"[\[{]")
_SPECIALS = re.compile(r"[\[\]{}\"']")
_CLOSER_OF = {"[": "]", "{": "}"}
# A string body: anything but the quote, a backslash or a newline, or an escape pair. The alternatives
# never overlap, so the match runs in linear time. JSON strings cannot hold a raw newline, so a quote that
# is still open at a newline was not a string opener after all.
_STRING_BODY = {
    '"': re.compile(r'(?:[^"\\\n]|\\.)*'),
    "'": re.compile(r"(?:[^'\\\n]|\\.)*"),
}
# After these characters a JSON (or Python-repr) value or key starts, so a quote there opens a string.
_VALUE_START = frozenset("[{,:")
_BLANK = frozenset(" \t\r\n")


@dataclass
class Candidate:
    """An outermost bracketed span of the text that may hold a JSON value.

    Attributes:
        start: index of its opening ``[`` or ``{``.
        end: index one past its matching closer; for a broken span, one past where it broke.
        closed: the brackets balance (``False`` for a mismatched closer or text that ends inside it).
        children: ``(start, end)`` of the balanced spans directly inside it, in order; tried when the span
            itself is not JSON (``[see {"type": "click", ...}]``).
    """

    start: int
    end: int
    closed: bool
    children: list[tuple[int, int]] = field(default_factory=list)


def json_candidates(text: str) -> Iterator[Candidate]:
    """Yield the outermost bracketed spans of ``text`` in order, in time linear in ``len(text)``.

    Outside brackets quotes are prose (``I'll``) and are ignored. Inside, a quote that follows ``[``,
    ``{``, ``,`` or ``:`` (blanks allowed) opens a string that ends at the next unescaped quote of the same
    kind (or at a newline), and brackets inside it do not count. A closer that does not match ends the span
    as broken, and scanning resumes after it.
    """
    pos = 0
    n = len(text)
    stack: list[int] = []
    children: list[tuple[int, int]] = []
    while pos < n:
        if not stack:
            opener = _OPENERS.search(text, pos)
            if opener is None:
                return
            stack.append(opener.start())
            children = []
            pos = opener.end()
            continue
        match = _SPECIALS.search(text, pos)
        if match is None:
            break
        i = match.start()
        char = text[i]
        if char in "\"'":
            pos = _skip_string(text, i) if _at_value_start(text, i) else i + 1
            continue
        if char in _CLOSER_OF:
            stack.append(i)
            pos = i + 1
            continue
        pos = i + 1
        if _CLOSER_OF[text[stack[-1]]] != char:
            yield Candidate(stack[0], pos, closed=False, children=children)
            stack = []
            continue
        start = stack.pop()
        if not stack:
            yield Candidate(start, pos, closed=True, children=children)
        elif len(stack) == 1:
            children.append((start, pos))
    if stack:
        yield Candidate(stack[0], n, closed=False, children=children)


def _at_value_start(text: str, i: int) -> bool:
    # Walks back over the blank run before this quote only; each run precedes one character, so the
    # total work over the whole scan stays linear.
    j = i - 1
    while j >= 0 and text[j] in _BLANK:
        j -= 1
    return j >= 0 and text[j] in _VALUE_START


def _skip_string(text: str, i: int) -> int:
    """Index just past the string that opens with the quote at ``i`` (or where it stopped short)."""
    quote = text[i]
    end = _STRING_BODY[quote].match(text, i + 1).end()  # type: ignore[union-attr]  # the pattern matches ""
    return end + 1 if end < len(text) and text[end] == quote else end


def between(text: str, opener: str, closer: str, need_close: bool) -> str | None:
    """The text between the first ``opener`` and the next ``closer`` after it (case-insensitive), or ``None``.

    Without a closer the rest of the text counts, unless ``need_close``. Two literal searches, so linear:
    a lazy ``<think>(.*?)</think>`` rescans the rest of the text from every opening tag, which took 16 s on
    ``"<think>" * 14285``.
    """
    opened = re.compile(re.escape(opener), re.IGNORECASE).search(text)
    if opened is None:
        return None
    closed = re.compile(re.escape(closer), re.IGNORECASE).search(text, opened.end())
    if closed is None:
        return None if need_close else text[opened.end() :]
    return text[opened.end() : closed.start()]


def answer_body(text: str) -> str:
    """The answer part of model output: what follows ``<answer>`` (up to ``</answer>``, if it is there), or the
    whole text when there is no such tag. Linear in ``len(text)``."""
    body = between(text, "<answer>", "</answer>", need_close=False)
    return text if body is None else body


def first_json(body: str) -> tuple[Any, tuple[str, str, str] | None]:
    """Decode the first JSON object or list in ``body`` (inside its first fenced block, if any).

    Each outermost bracketed span is decoded once (and once more with Python quotes swapped); when it is
    not JSON, the spans directly inside it are tried. So every character is decoded a bounded number of
    times and the whole call is linear in ``len(body)``. It gives up after :data:`MAX_DECODE_ATTEMPTS`
    failed spans.

    Returns:
        ``(value, None)``, or ``(None, (code, message, snippet))`` with ``code`` ``no_json`` (no brackets)
        or ``invalid_json`` (the first candidate's decoding error).
    """
    fenced = _fenced(body)
    if fenced is not None:
        body = fenced
    first_error: tuple[str, str, str] | None = None
    attempts = 0
    for candidate in json_candidates(body):
        for start, end in [(candidate.start, candidate.end), *candidate.children]:
            chunk = body[start:end]
            value, message = _decode(chunk)
            if message is None:
                return value, None
            if first_error is None:
                first_error = ("invalid_json", f"invalid JSON: {message}", chunk[:200])
            attempts += 1
            if attempts >= MAX_DECODE_ATTEMPTS:
                return None, first_error
    return None, first_error or ("no_json", "no JSON object or list found", body[:200])


def _fenced(body: str) -> str | None:
    """The content of the first fenced code block (```json ... ```), found by two literal searches."""
    start = body.find("```")
    if start < 0:
        return None
    start += 3
    if body.startswith("json", start):
        start += 4
    end = body.find("```", start)
    return body[start:end] if end >= 0 else None


def _decode(chunk: str) -> tuple[Any, str | None]:
    """A JSON object or list decoded from ``chunk`` (as written, else with Python quotes), or why not."""
    message = "not a JSON object or list"
    swapped = _python_quotes_to_json(chunk)
    for text in (chunk, swapped) if swapped != chunk else (chunk,):
        try:
            value = json.loads(text)
        except ValueError as exc:  # JSONDecodeError, and ints over Python's digit limit
            message = str(exc)
            continue
        except RecursionError:
            message = "nested too deeply"
            continue
        if isinstance(value, dict | list):
            return value, None
    return None, message


def _python_quotes_to_json(chunk: str) -> str:
    # Models often print Python reprs ({'action': 'click'}); swapping quote styles recovers most of them.
    return chunk.replace("'", '"').replace("None", "null").replace("True", "true").replace("False", "false")
