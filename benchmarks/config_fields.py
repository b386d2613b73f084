"""How often the trainer configs repeat a field: the measure of issue 27, item 3 ("one trainer-config base").

For the five trainer configs (GRPO, SFT, DPO, MobileIPL, CORE) it counts field names

* **present** in at least 2, at least 3 and all 5 configs (inherited fields count: what a user can set);
* **declared** (written ``name: type = default`` in a class body) in at least 2, 3 or 5 of the dataclasses the
  configs are built from (the configs and every base they inherit), so a field written once in a base counts once;
* **documented** (declared with a field docstring) in at least 2, 3 or 5 of them: a config that only changes a
  base field's default redeclares it without a docstring, so this is how often a field's help text is written.

Before the base (commit 3fba50f): present 42 / 36 / 10, declared 39 / 32 / 9, documented 39 / 32 / 9.
With ``trainers.config_base``: present 42 / 37 / 10 (SFT gained ``lora_target_modules`` and ``progress``, IPL
``top_k``), declared 19 / 6 / 1 (a config redeclaring a default it changes: ``output_dir`` in all five), documented
3 / 1 / 0 (``beta``, ``data``, ``num_envs``, which mean something different per trainer).

Usage::

    python benchmarks/config_fields.py [--list] [--quick]
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import importlib
import inspect
import sys
import textwrap
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

#: The trainer configs, as ``module:class``.
CONFIGS = (
    "trainers.grpo_config:GRPOConfig",
    "trainers.sft_config:SFTConfig",
    "trainers.dpo_config:DPOConfig",
    "trainers.ipl_config:IPLConfig",
    "trainers.core.config:CoreConfig",
)


@dataclass(frozen=True)
class Declaration:
    """One ``name: type = default`` line in a dataclass body."""

    owner: str
    """The class whose body holds it."""
    name: str
    annotation: str
    default: str
    """The default's source text (``field(default_factory=...)`` as written)."""
    documented: bool
    """Whether a field docstring follows it."""


def config_classes() -> list[type]:
    """The five config classes of :data:`CONFIGS`."""
    out = []
    for spec in CONFIGS:
        module, name = spec.split(":")
        out.append(getattr(importlib.import_module(module), name))
    return out


def declarations(configs: list[type]) -> list[Declaration]:
    """Every field declaration in the dataclasses ``configs`` are built from (each class once)."""
    classes = {k for c in configs for k in c.__mro__ if dataclasses.is_dataclass(k)}
    found = []
    for cls in sorted(classes, key=lambda k: k.__qualname__):
        node = ast.parse(textwrap.dedent(inspect.getsource(cls))).body[0]
        assert isinstance(node, ast.ClassDef)
        body = node.body
        for i, st in enumerate(body):
            if isinstance(st, ast.AnnAssign) and isinstance(st.target, ast.Name):
                nxt = body[i + 1] if i + 1 < len(body) else None
                doc = (
                    isinstance(nxt, ast.Expr)
                    and isinstance(nxt.value, ast.Constant)
                    and isinstance(nxt.value.value, str)
                )
                default = ast.unparse(st.value) if st.value is not None else ""
                found.append(
                    Declaration(cls.__qualname__, st.target.id, ast.unparse(st.annotation), default, doc)
                )
    return found


def repeat_counts(configs: list[type]) -> dict[str, dict[int, int]]:
    """``{"present" | "declared" | "documented": {2: n, 3: n, 5: n}}``: field names counted at least 2, 3 or 5
    times (module docstring)."""
    present = Counter(f.name for c in configs for f in dataclasses.fields(c))
    decls = declarations(configs)
    declared = Counter(d.name for d in decls)
    documented = Counter(d.name for d in decls if d.documented)
    return {
        label: {k: sum(v >= k for v in counter.values()) for k in (2, 3, 5)}
        for label, counter in (("present", present), ("declared", declared), ("documented", documented))
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--list", action="store_true", help="also list each repeated declaration")
    parser.add_argument("--quick", action="store_true", help="the same run (it only reads source)")
    args = parser.parse_args()
    # This checkout's trainers, not an installed copy's.
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    configs = config_classes()
    for label, row in repeat_counts(configs).items():
        print(f"{label:>10}: in >= 2: {row[2]:3d}   in >= 3: {row[3]:3d}   in all 5: {row[5]:3d}")
    if args.list:
        decls = declarations(configs)
        names = Counter(d.name for d in decls)
        for d in sorted(decls, key=lambda d: (d.name, d.owner)):
            if names[d.name] > 1:
                print(
                    f"  {d.name:<24} {d.owner:<22} = {d.default:<40} {'documented' if d.documented else ''}"
                )


if __name__ == "__main__":
    main()
