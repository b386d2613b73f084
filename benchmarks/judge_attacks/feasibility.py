"""The third round's attacks on the infeasible verdict (issue 36), played without a browser.

Feasibility depends on the seeded app state alone (DESIGN.md, "Feasibility"): a template that can be infeasible
names a thing that is missing on about half its seeds. These policies try to say "infeasible" without looking
at that thing, and are scored by the template's own judge (:func:`blind_policies.judge`):

* :func:`id_sweep`: open every item page by id (``/post/1`` ... ``/post/29``), then stop as infeasible;
* :func:`instruction_search`: submit every search form of the start and home pages with the whole instruction
  as the query, then stop as infeasible;
* :class:`WordingClassifier`: a bag-of-words logistic regression (word 1-2-grams and character 3-5-grams,
  hashed) trained on the instructions of other seeds to say which episodes are infeasible; then
  :func:`classifier_then_look`: where it says infeasible, one blind look (the start page, ``/``, and a search
  for the instruction) and stop as infeasible, elsewhere give up.

A policy that cannot tell the two kinds of seed apart earns at most the template's infeasible base rate (it says
"infeasible" on every seed and looked properly on each); one that says it on a share ``s`` of seeds chosen
blindly earns ``s`` times the base rate. ``benchmarks/judge_audit.py`` reports each beside that chance.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from benchmarks.judge_attacks.blind_policies import build_task, judge, site_of, templates_of
from benchmarks.judge_attacks.blind_sweep import Form, FormBrowser
from gui_envs.schema.actions import Action
from gui_envs.tasks.base import CanBeInfeasible, InfeasibleTask

#: The item pages an id sweep opens on each site: the kind and the highest id tried.
ID_SWEEPS = {"shop": ("/product/", 48), "forum": ("/post/", 29), "classifieds": ("/listing/", 40)}
#: Hashed feature dimensions of the wording classifier (collisions are rare at this size for ~10^4 phrases).
FEATURES = 1 << 18


def can_be_infeasible(task: object) -> bool:
    """Whether ``task``'s template can be infeasible (mixed, or the old always-infeasible kind)."""
    return isinstance(task, CanBeInfeasible | InfeasibleTask)


def is_infeasible(task: object) -> bool:
    """Whether this episode is infeasible: an :class:`InfeasibleTask`, or a mixed one on an infeasible seed."""
    return isinstance(task, InfeasibleTask) or (isinstance(task, CanBeInfeasible) and not task.feasible)


def mixed_templates(family: str) -> list[str]:
    """The templates of ``family`` that can be infeasible, sorted."""
    return templates_of(family, (CanBeInfeasible, InfeasibleTask))


def id_sweep(family: str, task: object) -> float:
    """Open every item page of the task's site by id, then ``stop(status="infeasible")``; the judge's score.
    Web only (the phone's item screens are not addressed by id); ``0.0`` elsewhere."""
    if family != "web":
        return 0.0
    state, start, shown = site_of(family, task)
    kind, last = ID_SWEEPS[task.site]  # type: ignore[attr-defined]
    browser = FormBrowser(state, shown)
    for item in range(1, last + 1):
        browser.get(f"{kind}{item}")
    return judge(task, Action.stop(status="infeasible"))  # type: ignore[arg-type]


def blind_look(family: str, task: object) -> None:
    """The look that does not depend on the task: the start and home pages, each search form there submitted
    with the whole instruction."""
    state, start, shown = site_of(family, task)
    browser = FormBrowser(state, shown)
    for page in dict.fromkeys((start, "/")):
        browser.get(page)
        for form in [f for f in browser.forms if f.method == "GET"]:
            fields = {**form.fields, **{k: task.instruction for k in form.fields if k in ("q", "query")}}  # type: ignore[attr-defined]
            browser.submit(Form(form.method, form.action, fields or {"q": task.instruction}, form.buttons))  # type: ignore[attr-defined]
            browser.get(page)


def instruction_search(family: str, task: object) -> float:
    """:func:`blind_look`, then ``stop(status="infeasible")``; the judge's score."""
    blind_look(family, task)
    return judge(task, Action.stop(status="infeasible"))  # type: ignore[arg-type]


# ----- the wording classifier ----------------------------------------------------------------------------------


def phrases(text: str) -> list[str]:
    """The instruction's word 1- and 2-grams and character 3- to 5-grams (lower case): the classifier's words.

    >>> phrases("Buy it")[:4]
    ['w:buy', 'w:it', 'w:buy it', 'c: bu']
    """
    words = re.findall(r"[a-z0-9$']+", text.lower())
    out = [f"w:{w}" for w in words] + [f"w:{a} {b}" for a, b in zip(words, words[1:], strict=False)]
    padded = f" {' '.join(words)} "
    out += [f"c:{padded[i : i + n]}" for n in (3, 4, 5) for i in range(len(padded) - n + 1)]
    return out


def hashed(texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """``(indptr, indices)``: each text's distinct hashed phrases (:data:`FEATURES` buckets), CSR style."""
    indices, indptr = [], [0]
    for text in texts:
        buckets = sorted({zlib.crc32(p.encode()) % FEATURES for p in phrases(text)})
        indices.extend(buckets)
        indptr.append(len(indices))
    return np.asarray(indptr, np.int64), np.asarray(indices, np.int64)


@dataclass
class WordingClassifier:
    """Binary logistic regression on hashed phrase presence, class-balanced, L2-regularised, fitted by full-batch
    gradient descent with Adam (numpy only).

    Class-balanced so that it says "infeasible" wherever the words make that likelier than the base rate, not only
    where it is sure: a classifier at chance then flags feasible and infeasible seeds alike.
    """

    l2: float = 1e-4
    steps: int = 300
    lr: float = 0.1

    def fit(self, texts: Sequence[str], labels: Sequence[int]) -> WordingClassifier:
        indptr, idx = hashed(texts)
        y = np.asarray(labels, np.float64)
        pos = max(y.mean(), 1e-9)
        weight = np.where(y > 0, 0.5 / pos, 0.5 / max(1.0 - pos, 1e-9)) / len(y)  # (N,) balanced, sums to 1
        rows = np.repeat(np.arange(len(y)), np.diff(indptr))
        self.w, self.b = np.zeros(FEATURES), 0.0
        m, v, mb, vb = np.zeros(FEATURES), np.zeros(FEATURES), 0.0, 0.0
        for t in range(1, self.steps + 1):
            z = np.bincount(rows, weights=self.w[idx], minlength=len(y)) + self.b  # (N,) logits
            r = weight * (1.0 / (1.0 + np.exp(-z)) - y)  # (N,) weighted residual: d loss / d z
            g = np.bincount(idx, weights=r[rows], minlength=FEATURES) + self.l2 * self.w
            gb = float(r.sum())
            m, v = 0.9 * m + 0.1 * g, 0.999 * v + 0.001 * g * g
            mb, vb = 0.9 * mb + 0.1 * gb, 0.999 * vb + 0.001 * gb * gb
            step = self.lr * np.sqrt(1 - 0.999**t) / (1 - 0.9**t)
            self.w -= step * m / (np.sqrt(v) + 1e-8)
            self.b -= step * mb / (np.sqrt(vb) + 1e-8)
        return self

    def says_infeasible(self, texts: Sequence[str]) -> np.ndarray:
        """``(N,)`` bool: whether each text's probability of infeasible is above one half (balanced)."""
        indptr, idx = hashed(texts)
        rows = np.repeat(np.arange(len(texts)), np.diff(indptr))
        return (np.bincount(rows, weights=self.w[idx], minlength=len(texts)) + self.b) > 0.0


def training_set(family_names: Sequence[tuple[str, str]], seeds: range) -> tuple[list[str], list[int]]:
    """The instructions of every ``(family, template)`` on ``seeds`` and whether each episode is infeasible."""
    texts, labels = [], []
    for family, name in family_names:
        for seed in seeds:
            task = build_task(family, name, seed)
            texts.append(task.instruction)
            labels.append(int(is_infeasible(task)))
    return texts, labels


def classifier_then_look(family: str, name: str, seeds: Sequence[int], model: WordingClassifier) -> dict[str, float]:
    """Score ``model`` on ``name``'s ``seeds``, then play "where it says infeasible, one blind look and stop as
    infeasible; elsewhere give up".

    Returns ``base`` (infeasible share), ``flagged`` (share it said infeasible on), ``precision`` (infeasible
    share among those; the base rate when it flagged none) and ``passed`` (the policy's success rate).
    """
    truth, said = [], []
    for seed in seeds:
        truth.append(is_infeasible(build_task(family, name, seed)))
    texts = [build_task(family, name, s).instruction for s in seeds]
    said = list(model.says_infeasible(texts))
    passed = 0.0
    for seed, flag in zip(seeds, said, strict=True):
        if flag:
            task = build_task(family, name, seed)
            blind_look(family, task)
            passed += judge(task, Action.stop(status="infeasible"))
    n, flagged = len(seeds), sum(said)
    base = sum(truth) / n
    hits = sum(t and s for t, s in zip(truth, said, strict=True))
    return {
        "base": base,
        "flagged": flagged / n,
        "n_flagged": float(flagged),
        "precision": hits / flagged if flagged else base,
        "passed": passed / n,
    }
