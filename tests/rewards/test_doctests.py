"""Every docstring example in ``rewards`` runs and passes (each formula carries a doctest)."""

import doctest
import importlib
import pkgutil

import pytest

import rewards

MODULES = sorted(f"rewards.{m.name}" for m in pkgutil.iter_modules(rewards.__path__))


@pytest.mark.parametrize("name", MODULES)
def test_module_doctests(name):
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0


def test_rewards_is_the_bottom_layer():
    import ast
    from pathlib import Path

    for path in Path(rewards.__path__[0]).glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            for name in names:
                top = name.split(".")[0]
                assert top not in {"gui_envs", "agents", "trainers"}, f"{path.name} imports {name}"
