"""No module uses another module's private (``_name``) helper (issue 27, item 3).

A helper that two modules need is public in the module it belongs to (one definition, a docstring, a stable
name), or moves. Read from the source: ``from m import _name`` (absolute or relative) and ``alias._name`` where
``alias`` is an imported project module, at any depth. One exception: a test module may reach into the module it
tests, the one its file name names (``tests/trainers/test_ipl.py`` -> ``trainers.ipl``, and
``test_grpo_memory.py`` -> a module named ``grpo``), to test a private piece of it directly.

The checker is plain functions over source text; the last test runs it on a synthetic package.
"""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
#: The top-level packages whose modules are checked (and whose private names count).
PACKAGES = ("rewards", "gui_envs", "agents", "trainers", "guigym", "benchmarks", "examples", "tests")


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _module_of(path: Path, root: Path) -> tuple[str, bool]:
    """``(dotted name, is_package)`` of the module in ``path``."""
    parts = list(path.relative_to(root).with_suffix("").parts)
    is_package = parts[-1] == "__init__"
    if is_package:
        parts.pop()
    return ".".join(parts), is_package


def _tests_module(importer: Path, source: str) -> bool:
    """Whether ``importer`` is the test file of ``source``: ``test_<last part>.py`` or ``test_<last part>_*.py``."""
    stem, last = importer.stem, source.rsplit(".", 1)[-1]
    return importer.name.startswith("test_") and (stem == f"test_{last}" or stem.startswith(f"test_{last}_"))


def private_uses(root: Path, packages: tuple[str, ...] = PACKAGES) -> list[str]:
    """``"file:line: module._name"`` for every use of another module's private name under ``root``'s ``packages``."""
    files = [p for pkg in packages if (root / pkg).is_dir() for p in sorted((root / pkg).rglob("*.py"))]
    modules = {_module_of(p, root)[0] for p in files}
    found = []
    for path in files:
        module, is_package = _module_of(path, root)
        package = module.split(".") if is_package else module.split(".")[:-1]
        tree = ast.parse(path.read_text(), filename=str(path))
        aliases: dict[str, str] = {}  # local name -> the project module it is bound to
        uses: list[tuple[int, str, str]] = []  # (line, source module, private name)
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    base = ".".join(package[: len(package) - node.level + 1] + ([base] if base else []))
                for alias in node.names:
                    if f"{base}.{alias.name}" in modules:
                        aliases[alias.asname or alias.name] = f"{base}.{alias.name}"
                    if _private(alias.name) and base.split(".")[0] in packages:
                        uses.append((node.lineno, base, alias.name))
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name in modules:
                        aliases[alias.asname or alias.name] = alias.name if alias.asname else alias.name
                    private = [part for part in alias.name.split(".") if _private(part)]
                    if private and alias.name.split(".")[0] in packages:
                        uses.append((node.lineno, alias.name, private[0]))
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and _private(node.attr):
                target = ast.unparse(node.value)
                if aliases.get(target) in modules:
                    uses.append((node.lineno, aliases[target], node.attr))
                elif target in modules and target.split(".")[0] in aliases:  # ``import a.b`` then ``a.b._x``
                    uses.append((node.lineno, target, node.attr))
        for line, source, name in uses:
            if source != module and not _tests_module(path, source):
                found.append(f"{path.relative_to(root)}:{line}: {source}.{name}")
    return sorted(set(found))


def test_no_module_uses_another_modules_private_helper() -> None:
    found = private_uses(REPO)
    assert found == [], "make these public where they belong, or move them:\n" + "\n".join(found)


def test_the_checker_sees_private_uses(tmp_path: Path) -> None:
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    for init in (pkg / "__init__.py", pkg / "sub" / "__init__.py"):
        init.write_text("")
    (pkg / "helpers.py").write_text(
        "_cache = {}\n\ndef _point(x):\n    return x\n\ndef point(x):\n    return _point(x)\n"
    )
    (pkg / "sub" / "user.py").write_text(
        "from pkg.helpers import point\n\ndef f():\n    from ..helpers import _point\n    return _point(1)\n"
    )
    (pkg / "attr.py").write_text(
        "import pkg.helpers as h\nfrom pkg import helpers\n\nX = h._cache, helpers._point\n"
    )
    (pkg / "test_helpers.py").write_text("from pkg.helpers import _point\n")  # the module it tests: allowed
    (pkg / "test_other.py").write_text("from pkg.helpers import _cache\n")
    assert private_uses(tmp_path, ("pkg",)) == [
        "pkg/attr.py:4: pkg.helpers._cache",
        "pkg/attr.py:4: pkg.helpers._point",
        "pkg/sub/user.py:4: pkg.helpers._point",
        "pkg/test_other.py:1: pkg.helpers._cache",
    ]
