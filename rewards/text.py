"""Text matching shared by the rewards: tokenisation, token F1 and token-set F1.

Tokens are lower-cased runs of word characters (``\\w+``, Unicode aware), so punctuation and spacing do not
count. Two empty strings match perfectly (F1 = 1); one empty string against a non-empty one scores 0.
"""

from __future__ import annotations

import re
from collections import Counter

_TOKEN = re.compile(r"\w+", re.UNICODE)


def tokenize(text: str) -> list[str]:
    """Lower-cased word tokens of ``text``.

    >>> tokenize("Search: New York, NY!")
    ['search', 'new', 'york', 'ny']
    """
    return _TOKEN.findall(text.lower())


def _f1(overlap: int, n_pred: int, n_ref: int) -> float:
    if n_pred == 0 and n_ref == 0:
        return 1.0
    if overlap == 0:
        return 0.0
    precision = overlap / n_pred
    recall = overlap / n_ref
    return 2.0 * precision * recall / (precision + recall)


def token_f1(prediction: str, reference: str) -> float:
    """Token-level F1 over token multisets (SQuAD style); MobileIPL's input-text score (seed 003, sec. 3.3).

    >>> token_f1("buy milk milk", "buy milk")  # overlap 2, P = 2/3, R = 1
    0.8
    """
    pred, ref = tokenize(prediction), tokenize(reference)
    overlap = sum((Counter(pred) & Counter(ref)).values())
    return _f1(overlap, len(pred), len(ref))


def token_set_f1(prediction: str, reference: str) -> float:
    """Token-set F1: duplicates ignored; the GUI-R1-style text check (seed 001, App. A.3 and F.2).

    >>> token_set_f1("buy milk milk", "buy milk")
    1.0
    """
    pred, ref = set(tokenize(prediction)), set(tokenize(reference))
    return _f1(len(pred & ref), len(pred), len(ref))


def normalise_text(text: str) -> str:
    """Strip surrounding whitespace and collapse inner runs: the form used for exact text matches.

    >>> normalise_text("  hello   world ")
    'hello world'
    """
    return " ".join(text.split())
