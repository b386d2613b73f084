"""The strategy graph (seed 002, section 3.2): a DAG of label functions whose paths are valid solutions.

Vertices are label functions (their code); an edge ``u -> v`` says ``u``'s key step comes before ``v``'s. A
*path* runs from a vertex with in-degree 0 to one with out-degree 0. The graph starts as the linear path of the
expert demonstration's key steps (:meth:`StrategyGraph.linear`).

* :meth:`StrategyGraph.classify` (section 3.2, "trajectory classification"): **fully** passed when, on some
  path, every function passes in temporal order (each function's match step is at or after the previous
  function's: :attr:`~gui_envs.verifiers.sandbox.Verdict.match_steps`, chosen greedily earliest-first, which
  is optimal for a chain); **partially** when some function passes; **failed** when none does.
* :meth:`StrategyGraph.expand` (section 3.2, "graph expansion"): a partially-passed but successful
  trajectory's own key-step functions become a new path; a new function whose normalised code equals an
  existing vertex's reuses that vertex, and an edge that would close a cycle is dropped (the graph stays a DAG).
* :meth:`StrategyGraph.average_path_count` over several graphs is the paper's Fig. 6 statistic.
"""

from __future__ import annotations

import ast
import json
import textwrap
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from gui_envs.verifiers.sandbox import Verdict, run_label_functions

Classification = Literal["fully", "partially", "failed"]


def code_key(code: str) -> str:
    """The normalised identity of a label function: its AST dump without comments, docstrings or layout."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return " ".join(code.split())
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr) and isinstance(getattr(body[0], "value", None), ast.Constant) and isinstance(body[0].value.value, str):
            node.body = body[1:] or [ast.Pass()]  # type: ignore[attr-defined]
    return ast.dump(tree, annotate_fields=False)


def call_label(code: str) -> str:
    """A short label for drawing: the validator calls of ``code`` (``validate_`` dropped), one per line."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return code[:40]
    calls = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id.startswith("validate_"):
            args = [repr(a.value) for a in node.args if isinstance(a, ast.Constant)]
            args += [f"{k.arg}={k.value.value!r}" for k in node.keywords if isinstance(k.value, ast.Constant)]
            calls.append(f"{node.func.id[9:]}({', '.join(args)})")
    return "\n".join(calls) or code[:40]


class GraphCycleError(ValueError):
    """An edge would close a cycle; the strategy graph must stay acyclic."""


@dataclass
class Classified:
    """The result of :meth:`StrategyGraph.classify`.

    Attributes:
        label: ``fully``, ``partially`` or ``failed``.
        passed: per vertex, whether its function passed (regardless of order).
        best_fraction: the largest fraction of any path passed in order, in [0, 1] (the process reward).
        best_path: that path's vertex ids.
    """

    label: Classification
    passed: dict[int, bool]
    best_fraction: float
    best_path: list[int]


class StrategyGraph:
    """A DAG of label functions (see the module docstring).

    Attributes:
        codes: vertex id -> label-function code.
        edges: ``(u, v)`` pairs, ``u`` before ``v``.
        task: the task template name, if any.
    """

    def __init__(self, task: str | None = None) -> None:
        self.task = task
        self.codes: dict[int, str] = {}
        self.edges: set[tuple[int, int]] = set()

    # ----- building -----------------------------------------------------------------------------------------
    @classmethod
    def linear(cls, codes: Sequence[str], task: str | None = None) -> StrategyGraph:
        """The initial graph: the expert's key-step functions as one path, in order."""
        graph = cls(task)
        ids = [graph.add_vertex(c) for c in codes]
        for u, v in zip(ids, ids[1:], strict=False):
            if u != v:
                graph.add_edge(u, v)
        return graph

    def add_vertex(self, code: str) -> int:
        """The id of the vertex testing the same thing as ``code`` (normalised code identity), added if new."""
        key = code_key(code)
        for vid, existing in self.codes.items():
            if code_key(existing) == key:
                return vid
        vid = max(self.codes, default=-1) + 1
        self.codes[vid] = code
        return vid

    def _reaches(self, start: int, goal: int) -> bool:
        stack, seen = [start], set()
        while stack:
            node = stack.pop()
            if node == goal:
                return True
            if node not in seen:
                seen.add(node)
                stack.extend(v for u, v in self.edges if u == node)
        return False

    def add_edge(self, u: int, v: int) -> None:
        """Add ``u -> v``; raises :class:`GraphCycleError` when ``v`` already reaches ``u`` (or ``u == v``)."""
        if u == v or self._reaches(v, u):
            raise GraphCycleError(f"edge {u} -> {v} would close a cycle; drop it or merge the two vertices")
        self.edges.add((u, v))

    def expand(self, trajectory: Any, new_functions: Sequence[str], timeout_s: float = 2.0) -> list[int]:
        """Merge ``new_functions`` (the key steps of ``trajectory``, a successful episode, in order) as a path;
        returns the path's vertex ids, or ``[]`` when ``trajectory`` already passes fully (nothing to learn).

        Shared vertices are reused; an edge that would close a cycle is skipped (section 3.2 keeps the graph a
        DAG), so the merged path may run through a shortcut of the existing order instead. ``trajectory`` may be
        ``None`` to merge without the check.
        """
        if trajectory is not None and self.classify(trajectory, timeout_s).label == "fully":
            return []
        ids = []
        for code in new_functions:
            vid = self.add_vertex(code)
            if vid not in ids:
                ids.append(vid)
        for u, v in zip(ids, ids[1:], strict=False):
            if (u, v) not in self.edges:
                try:
                    self.add_edge(u, v)
                except GraphCycleError:
                    continue
        return ids

    # ----- paths --------------------------------------------------------------------------------------------
    def sources(self) -> list[int]:
        targets = {v for _, v in self.edges}
        return sorted(v for v in self.codes if v not in targets)

    def paths(self) -> list[list[int]]:
        """Every path from an in-degree-0 vertex to an out-degree-0 vertex."""
        out_edges: dict[int, list[int]] = {v: [] for v in self.codes}
        for u, v in sorted(self.edges):
            out_edges[u].append(v)
        result: list[list[int]] = []

        def walk(path: list[int]) -> None:
            nexts = out_edges[path[-1]]
            if not nexts:
                result.append(path)
            for n in nexts:
                walk([*path, n])

        for s in self.sources():
            walk([s])
        return result

    def path_count(self) -> int:
        return len(self.paths())

    @staticmethod
    def average_path_count(graphs: Iterable[StrategyGraph]) -> float:
        """Mean number of paths per graph (Fig. 6 of seed 002)."""
        counts = [g.path_count() for g in graphs]
        return sum(counts) / len(counts) if counts else 0.0

    # ----- judging ------------------------------------------------------------------------------------------
    def verdicts(self, trajectory: Any, timeout_s: float = 2.0) -> dict[int, Verdict]:
        """Every vertex's verdict on ``trajectory`` (one sandbox batch)."""
        ids = sorted(self.codes)
        (row,) = run_label_functions([self.codes[i] for i in ids], [trajectory], timeout_s)
        return dict(zip(ids, row, strict=True))

    def judge(self, verdicts: dict[int, Verdict]) -> Classified:
        """Classify from ready verdicts (see :meth:`classify`)."""
        passed = {i: bool(v.passed) for i, v in verdicts.items()}
        best, best_path = 0.0, []
        for path in self.paths():
            cur, done = -(10**9), 0
            for vid in path:
                later = [t for t in verdicts[vid].match_steps if t >= cur] if passed[vid] else []
                if not later:
                    break
                cur, done = min(later), done + 1
            fraction = done / len(path)
            if fraction > best or not best_path:
                best, best_path = fraction, path
        label: Classification = "fully" if best >= 1.0 else "partially" if any(passed.values()) else "failed"
        return Classified(label, passed, best, best_path)

    def classify(self, trajectory: Any, timeout_s: float = 2.0) -> Classified:
        """``fully`` / ``partially`` / ``failed`` (section 3.2), with the best in-order path fraction."""
        return self.judge(self.verdicts(trajectory, timeout_s))

    # ----- serialisation and drawing -----------------------------------------------------------------------
    def to_json(self) -> dict[str, Any]:
        return {
            "task": self.task,
            "vertices": [{"id": i, "code": self.codes[i]} for i in sorted(self.codes)],
            "edges": [list(e) for e in sorted(self.edges)],
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> StrategyGraph:
        graph = cls(data.get("task"))
        graph.codes = {int(v["id"]): str(v["code"]) for v in data["vertices"]}
        for u, v in data["edges"]:
            graph.add_edge(int(u), int(v))
        return graph

    def save(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(self.to_json(), indent=1))

    @classmethod
    def load(cls, path: str | Path) -> StrategyGraph:
        return cls.from_json(json.loads(Path(path).read_text()))

    def draw(self, path: str | Path) -> Path:
        """Draw the graph to a PNG (needs matplotlib, in the ``dev``/``rl`` extras): vertices are laid out
        by depth (left to right) and labelled with their validator calls."""
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt


        depth = {v: 0 for v in self.codes}
        for _ in range(len(self.codes)):
            for u, v in self.edges:
                depth[v] = max(depth[v], depth[u] + 1)
        columns: dict[int, list[int]] = {}
        for v in sorted(self.codes):
            columns.setdefault(depth[v], []).append(v)
        # Axis units are inches at this scale: columns 2.6 in apart, rows 1.2 in; labels wrap at 30 characters.
        pos = {v: (d * 2.6, -row * 1.2) for d, vs in columns.items() for row, v in enumerate(vs)}
        ncols, nrows = max(columns, default=0) + 1, max((len(vs) for vs in columns.values()), default=1)
        fig, ax = plt.subplots(figsize=(2.6 * ncols + 0.4, 1.2 * nrows + 0.4))
        boxes = {}
        for v, (x, y) in pos.items():
            label = "\n".join(textwrap.fill(line, 30) for line in call_label(self.codes[v]).splitlines())
            boxes[v] = ax.text(x, y, f"{v}: {label}", ha="center", va="center", fontsize=7,
                               bbox={"boxstyle": "round", "fc": "#e8f0fe", "ec": "#2e6fd8"})
        fig.canvas.draw()  # lays the boxes out, so each arrow is clipped at its two boxes' edges
        for u, v in self.edges:
            ax.annotate("", xy=pos[v], xytext=pos[u], arrowprops={
                "arrowstyle": "-|>", "color": "0.3", "patchA": boxes[u].get_bbox_patch(), "patchB": boxes[v].get_bbox_patch()})
        ax.set_xlim(-1.3, 2.6 * ncols - 1.3)
        ax.set_ylim(-1.2 * nrows + 0.6, 0.6)
        ax.axis("off")
        out = Path(path)
        fig.savefig(out, dpi=100, bbox_inches="tight")
        plt.close(fig)
        return out
