"""Every docstring example in ``rewards`` runs and passes (each formula carries a doctest).

That ``rewards`` is the bottom layer is checked with the rest of the layering in ``tests/test_layering.py``."""

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

