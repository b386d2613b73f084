"""Every third-party package the code imports is declared in ``pyproject.toml``, in the dependencies or an extra.

Read from the source like the layering test (every import statement, at any depth), so a lazy import inside a
function, the usual way an optional dependency is reached, counts too.
"""

from __future__ import annotations

import ast
import importlib.metadata
import re
import sys
from pathlib import Path

import pytest

tomllib = pytest.importorskip("tomllib")  # Python 3.11+

REPO = Path(__file__).resolve().parents[1]
OWN = ("gui_envs", "agents", "rewards", "trainers", "guigym", "benchmarks", "examples", "tests")
#: Imports that no extra installs, on purpose: the BrowserGym probe runs in its own virtual environment
#: (``benchmarks/browsergym_probe.py`` says how to make it).
NOT_DECLARED = {"browsergym"}


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def declared() -> set[str]:
    """The normalised distribution names in ``[project] dependencies`` and every optional-dependency list."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    requirements = list(project["dependencies"])
    for extra in project["optional-dependencies"].values():
        requirements += extra
    return {_norm(re.match(r"[A-Za-z0-9._-]+", r).group(0)) for r in requirements}


def third_party_imports() -> dict[str, str]:
    """``{top-level import name: a file that imports it}`` over the repository's packages."""
    found: dict[str, str] = {}
    for package in OWN:
        for path in sorted((REPO / package).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.Import):
                    names = [alias.name for alias in node.names]
                elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
                    names = [node.module]
                else:
                    continue
                for name in names:
                    top = name.split(".")[0]
                    local = (path.parent / f"{top}.py").exists()  # a script's sibling module
                    if top in sys.stdlib_module_names or top in OWN or top == "__future__" or local:
                        continue
                    found.setdefault(top, str(path.relative_to(REPO)))
    return found


def test_every_import_is_declared() -> None:
    distributions = importlib.metadata.packages_distributions()
    names = declared()
    missing = []
    for top, where in sorted(third_party_imports().items()):
        if top in NOT_DECLARED:
            continue
        # An installed package names its distribution (PIL -> pillow, yaml -> PyYAML); one that is not
        # installed here (vllm, a GPU extra) is looked up by its import name.
        candidates = {_norm(d) for d in distributions.get(top, [top])}
        if not candidates & names:
            missing.append(f"{top} (imported in {where}; distribution {sorted(candidates)})")
    assert not missing, "imported but declared in no dependency list of pyproject.toml:\n" + "\n".join(
        missing
    )


def test_pygame_comes_with_the_play_extra() -> None:
    # gymnasium.utils.play imports pygame; the `play` extra installs it through gymnasium's own extra.
    extras = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert any(r.startswith("gymnasium[classic-control]") for r in extras["play"])
    assert "play" in re.search(r"guigym\[([^\]]*)\]", extras["all"][0]).group(1).split(",")
