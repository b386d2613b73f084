"""The layering, read from the real import graph: ``rewards <- gui_envs <- agents <- trainers``, and no cycles.

Every import statement of every module counts, at any depth (inside functions, ``try`` blocks and
``if TYPE_CHECKING:``), so a lazy import cannot hide an edge. The rules (issue 27, item 6):

* ``rewards`` (pure math) imports no environment (``gui_envs``);
* ``gui_envs`` imports neither ``agents`` nor ``trainers``;
* ``agents`` imports neither ``trainers`` nor ``guigym``; ``trainers`` imports no ``guigym`` (the CLI and the
  experiment runners above the trainers, :mod:`guigym.grpo_compare`);
* ``gui_envs.android`` imports nothing of ``gui_envs.web``;
* ``gui_envs.browser`` imports nothing of ``gui_envs.web``, ``gui_envs.android`` or ``gui_envs.tasks``;
  ``gui_envs.tasks`` nothing of ``gui_envs.web`` or ``gui_envs.android``;
* ``gui_envs.schema`` (the shared contracts: actions, trajectories, errors, ...) imports no env family;
* ``benchmarks`` imports nothing of ``tests``;
* no import cycles between modules: no module imports itself through others, not even through a lazy import
  inside a function (a lazy import that breaks a cycle at run time still ties the two modules into one unit).

The checker is plain functions over source text, so the tests below also run it on synthetic packages with a
forbidden import or a cycle and assert that it reports them.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
#: The top-level packages whose modules the graph covers.
PACKAGES = ("rewards", "gui_envs", "agents", "trainers", "guigym", "benchmarks", "examples", "tests")

#: importer prefix -> the module prefixes none of its modules may import.
FORBIDDEN: dict[str, tuple[str, ...]] = {
    "rewards": ("gui_envs", "agents", "trainers", "guigym"),
    "gui_envs": ("agents", "trainers", "guigym"),
    "agents": ("trainers", "guigym"),
    # experiment runners that train (guigym.grpo_compare) sit above trainers, in the CLI's package
    "trainers": ("guigym",),
    "gui_envs.android": ("gui_envs.web",),
    "gui_envs.browser": ("gui_envs.web", "gui_envs.android", "gui_envs.tasks"),
    "gui_envs.tasks": ("gui_envs.web", "gui_envs.android"),
    "benchmarks": ("tests",),
    # the shared contracts sit under every env family, so they import none
    "gui_envs.schema": (
        "gui_envs.android",
        "gui_envs.browser",
        "gui_envs.grid",
        "gui_envs.multi",
        "gui_envs.offline",
        "gui_envs.reward_wrappers",
        "gui_envs.tasks",
        "gui_envs.verifiers",
        "gui_envs.web",
    ),
}


def _under(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(prefix + ".")


def module_name(path: Path, root: Path) -> str:
    """The dotted name of the module in ``path`` (``gui_envs/web/__init__.py`` -> ``gui_envs.web``)."""
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports_of(source: str, module: str, is_package: bool = False) -> set[str]:
    """Every name ``module``'s source imports, at any depth (functions, ``try``, ``if TYPE_CHECKING:``).

    Relative imports are resolved against ``module`` (its own package when ``is_package``). ``from a import b``
    yields ``a.b``, which may name a module or a name in ``a``; :func:`resolve` decides.
    """
    package = module.split(".") if is_package else module.split(".")[:-1]
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                head = package[: len(package) - node.level + 1]
                base = ".".join(head + ([base] if base else []))
            # ``from a import b`` runs module ``a.b`` when there is one, else only ``a`` (``b`` is a name in it):
            # :func:`resolve` takes the longest dotted prefix that is a module.
            found.update(base if alias.name == "*" else f"{base}.{alias.name}" for alias in node.names)
    return found


def resolve(name: str, modules: Iterable[str]) -> str | None:
    """The module of ``modules`` that importing ``name`` runs: the longest dotted prefix that is one."""
    known = set(modules)
    parts = name.split(".")
    for end in range(len(parts), 0, -1):
        candidate = ".".join(parts[:end])
        if candidate in known:
            return candidate
    return None


def import_graph(root: Path, packages: Iterable[str] = PACKAGES) -> dict[str, set[str]]:
    """For each module under ``root/<package>/``, the project modules it imports (anywhere in its source).

    Imports of modules outside ``packages`` (the standard library, third parties) are dropped.
    """
    sources = {
        module_name(p, root): p for package in packages for p in sorted((root / package).rglob("*.py"))
    }
    graph: dict[str, set[str]] = {}
    for module, path in sources.items():
        targets = {
            resolve(n, sources) for n in imports_of(path.read_text(), module, path.name == "__init__.py")
        }
        graph[module] = {t for t in targets if t is not None and t != module}
    return graph


def violations(graph: Mapping[str, set[str]], rules: Mapping[str, tuple[str, ...]] = FORBIDDEN) -> list[str]:
    """``importer -> imported`` for every edge a rule forbids, sorted."""
    return sorted(
        f"{src} -> {dst}"
        for src, targets in graph.items()
        for dst in targets
        for prefix, banned in rules.items()
        if _under(src, prefix) and any(_under(dst, b) for b in banned)
    )


def cycles(graph: Mapping[str, set[str]]) -> list[list[str]]:
    """The import cycles of ``graph``: each strongly connected component with more than one module, sorted.

    Tarjan's algorithm, iterative so that a deep package cannot hit Python's recursion limit.
    """
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph.get(start, ()))))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return sorted(found)


# ----- the project ------------------------------------------------------------------------------------------

GRAPH = import_graph(REPO)


def test_the_graph_covers_the_packages() -> None:
    # A wrong root would make every rule pass vacuously.
    for module in (
        "rewards.ssl",
        "gui_envs.schema.actions",
        "agents.parsing",
        "trainers.grpo",
        "benchmarks.ssl_grid",
    ):
        assert module in GRAPH
    assert "gui_envs.schema.actions" in GRAPH["agents.parsing"]


@pytest.mark.parametrize("prefix", sorted(FORBIDDEN))
def test_layering(prefix: str) -> None:
    bad = violations(GRAPH, {prefix: FORBIDDEN[prefix]})
    assert not bad, f"{prefix} must not import {FORBIDDEN[prefix]}:\n" + "\n".join(bad)


def test_no_import_cycles() -> None:
    found = cycles(GRAPH)
    assert not found, "import cycles:\n" + "\n".join(" <-> ".join(c) for c in found)


# ----- the checker itself ------------------------------------------------------------------------------------


def _tree(root: Path, files: Mapping[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


CLEAN = {
    "rewards/__init__.py": "",
    "rewards/ssl.py": "import numpy as np\n",
    "gui_envs/__init__.py": "",
    "gui_envs/actions.py": "from rewards import ssl\n",
    "gui_envs/web/__init__.py": "",
    "gui_envs/web/env.py": "from ..actions import x\n",
    "gui_envs/android/__init__.py": "",
    "gui_envs/android/env.py": "from gui_envs.actions import x\n",
    "gui_envs/browser/__init__.py": "",
    "gui_envs/browser/page.py": "import json\n",
    "agents/__init__.py": "",
    "agents/oracle.py": "from gui_envs.web.env import GuiWebEnv\n",
    "trainers/__init__.py": "",
    "benchmarks/speed.py": "from agents import oracle\n",
    "tests/__init__.py": "",
    "tests/helpers.py": "from agents import oracle\n",
}


def test_a_clean_tree_passes(tmp_path: Path) -> None:
    graph = import_graph(_tree(tmp_path, CLEAN))
    assert graph["agents.oracle"] == {"gui_envs.web.env"}
    assert graph["gui_envs.web.env"] == {"gui_envs.actions"}  # the relative import, resolved
    assert graph["rewards.ssl"] == set()  # numpy is not a project module
    assert violations(graph) == [] and cycles(graph) == []


@pytest.mark.parametrize(
    ("module", "source", "expected"),
    [
        # a function-level import counts: laziness does not make a layer lower
        (
            "gui_envs/actions.py",
            "def f():\n    from agents.oracle import Oracle\n",
            "gui_envs.actions -> agents.oracle",
        ),
        # so does a type-only one
        (
            "gui_envs/actions.py",
            "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import trainers\n",
            "gui_envs.actions -> trainers",
        ),
        ("rewards/ssl.py", "from gui_envs import actions\n", "rewards.ssl -> gui_envs.actions"),
        ("gui_envs/android/env.py", "from ..web import env\n", "gui_envs.android.env -> gui_envs.web.env"),
        (
            "gui_envs/browser/page.py",
            "import gui_envs.android.env\n",
            "gui_envs.browser.page -> gui_envs.android.env",
        ),
        (
            "benchmarks/speed.py",
            "try:\n    from tests.helpers import f\nexcept ImportError:\n    pass\n",
            "benchmarks.speed -> tests.helpers",
        ),
    ],
)
def test_a_forbidden_import_is_reported(tmp_path: Path, module: str, source: str, expected: str) -> None:
    graph = import_graph(_tree(tmp_path, {**CLEAN, module: source}))
    assert violations(graph) == [expected]


def test_a_cycle_is_reported_even_through_a_lazy_import(tmp_path: Path) -> None:
    files = {
        **CLEAN,
        "gui_envs/actions.py": "from gui_envs.space import Space\n",
        "gui_envs/space.py": "from gui_envs.lists import L\n",
        # closes actions -> space -> lists -> actions, from inside a function
        "gui_envs/lists.py": "def f():\n    from gui_envs import actions\n",
    }
    assert cycles(import_graph(_tree(tmp_path, files))) == [
        ["gui_envs.actions", "gui_envs.lists", "gui_envs.space"]
    ]
