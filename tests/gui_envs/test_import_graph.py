"""The layering inside ``gui_envs``: ``browser <- tasks <- web, android``, and the phone never reaches into the web.

Read from the source (every import statement, at any depth, including those inside functions), so a lazy import
cannot hide an edge.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2] / "gui_envs"


def imported_modules(path: Path, package: str) -> set[str]:
    """Every module ``path`` imports, absolute (relative imports resolved against ``package``, its own)."""
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1] + ([base] if base else []))
            out.add(base)
            out.update(f"{base}.{alias.name}" for alias in node.names)
    return out


def imports_under(package: str) -> dict[str, set[str]]:
    """``{file: modules it imports}`` for every module of ``gui_envs/<package>/``."""
    return {
        str(p.relative_to(ROOT.parent)): imported_modules(p, ".".join(p.relative_to(ROOT.parent).parts[:-1]))
        for p in sorted((ROOT / package).rglob("*.py"))
    }


FORBIDDEN = {
    # package: the gui_envs packages none of its modules may import
    "android": ("gui_envs.web",),
    "browser": ("gui_envs.web", "gui_envs.android", "gui_envs.tasks"),
    "tasks": ("gui_envs.web", "gui_envs.android"),
}


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_layering(package: str) -> None:
    bad = [
        (path, name)
        for path, names in imports_under(package).items()
        for name in sorted(names)
        if any(name == f or name.startswith(f + ".") for f in FORBIDDEN[package])
    ]
    assert not bad, f"gui_envs/{package} must not import {FORBIDDEN[package]}: {bad}"


def test_the_checker_sees_lazy_and_relative_imports(tmp_path: Path) -> None:
    # A module of gui_envs.android with a function-level import and a relative one: both edges count.
    probe = tmp_path / "probe.py"
    probe.write_text("def f():\n    from gui_envs.web.env import GuiWebEnv\n\nfrom ..web import ground\n")
    names = imported_modules(probe, "gui_envs.android")
    assert {"gui_envs.web.env", "gui_envs.web", "gui_envs.web.ground"} <= names
