"""Trainer configs from YAML files and ``key=value`` overrides, with unknown keys caught early.

Every trainer config is a dataclass whose ``__post_init__`` validates it; this module only gets the values
in. A YAML file is a flat mapping of field names; an override ``lr=1e-3`` is parsed as YAML (numbers,
booleans, lists, mappings) and wins over the file.
"""

from __future__ import annotations

import dataclasses
import difflib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

from gui_envs.schema.errors import did_you_mean

T = TypeVar("T")


class ConfigError(ValueError):
    """A trainer config is wrong; the message names the field and says what to change."""


class UnknownConfigKeyError(ConfigError):
    """A config file or override names a field the config does not have."""


def config_from_dict(cls: type[T], values: Mapping[str, Any]) -> T:
    """``cls(**values)`` after checking every key is a field of ``cls``.

    Raises:
        UnknownConfigKeyError: for a key that is not a field, with the closest field names.
    """
    fields = {f.name for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
    for key in values:
        if key not in fields:
            raise UnknownConfigKeyError(
                f"{cls.__name__} has no field {key!r}.{did_you_mean(key, sorted(fields))} "
                f"Known fields: {', '.join(sorted(fields))}"
            )
    for f in dataclasses.fields(cls):  # type: ignore[arg-type]
        value = values.get(f.name)
        # `--set env_kwargs=rows=5` (the -k syntax): a string where a mapping goes failed when the env was made.
        if f.default_factory is dict and value is not None and not isinstance(value, Mapping):
            raise ConfigError(
                f"{cls.__name__}: {f.name} must be a mapping, e.g. {f.name}={{rows: 2}}, got {value!r}"
            )
    try:
        return cls(**values)
    except TypeError as exc:  # a value of the wrong type reached a check in __post_init__ ("'>' not supported ...")
        raise ConfigError(f"{cls.__name__}: {_wrong_types(cls, values) or exc}") from exc


def check_value_types(cls: type, values: Mapping[str, Any]) -> None:
    """Raise :class:`ConfigError` when a value's type is not its field's annotation's (``learning_rate=fast``).

    For dataclasses that take any value without a check, such as TRL's ``GRPOConfig`` built by ``parse_dict``:
    a string learning rate would otherwise fail deep inside the first optimiser step.
    """
    wrong = _wrong_types(cls, values)
    if wrong:
        raise ConfigError(f"{cls.__name__}: {wrong}")


def check_output_dir(path: str | Path, field: str = "output_dir") -> None:
    """Raise :class:`ConfigError` when ``path`` is an existing file: a run writes a folder there, and would fail
    only when it first saves, after the model has loaded (or after its first steps)."""
    if Path(path).expanduser().is_file():
        raise ConfigError(
            f"{field} {str(path)!r} is a file; a run writes a folder there: pick a new folder name"
        )


def _wrong_types(cls: type, values: Mapping[str, Any]) -> str:
    """The values whose type the field's annotation does not allow, as one phrase (an int passes for a float;
    ``None``, and fields annotated with anything else, such as an enum or ``Any``, are not checked)."""
    wrong = []
    for f in dataclasses.fields(cls):  # type: ignore[arg-type]
        value = values.get(f.name)
        allowed = _annotation_types(_field_type(cls, f.name).replace("typing.", "").replace(" ", ""))
        if value is None or allowed is None or _allows(allowed, value):
            continue
        names = [t.__name__ for t in allowed if t is not type(None)]
        wrong.append(f"{f.name} must be {' or '.join(_a(n) for n in names)}, got {value!r}")
    return "; ".join(wrong)


#: The annotation words :func:`_annotation_types` reads, and the types of the YAML values each allows.
_ANNOTATION_TYPES: dict[str, type] = {
    "bool": bool, "int": int, "float": float, "str": str, "None": type(None),
    "list": list, "tuple": tuple, "dict": dict,
}  # fmt: skip


def _annotation_types(text: str) -> list[type] | None:
    """The types an annotation such as ``float|None``, ``Optional[int]`` or ``list[str]|str`` allows; ``None``
    when it names anything else (``Any``, an enum, a class): such a field takes what its dataclass takes."""
    members, depth, start = [], 0, 0
    for i, ch in enumerate(text + "|"):
        depth += (ch == "[") - (ch == "]")
        if depth == 0 and ch in "|,":
            members.append(text[start:i])
            start = i + 1
    out: list[type] = []
    for member in members:
        head = member.split("[", 1)[0]
        if head in ("Optional", "Union"):
            inner = _annotation_types(member[len(head) + 1 : -1])
            if inner is None:
                return None
            out += [*inner, *([type(None)] if head == "Optional" else [])]
        elif head in _ANNOTATION_TYPES:
            out.append(_ANNOTATION_TYPES[head])
        else:
            return None
    return list(dict.fromkeys(out)) or None


def _allows(types: list[type], value: Any) -> bool:
    if isinstance(value, bool):  # a bool is an int to isinstance, never to a config
        return bool in types
    if isinstance(value, list) and tuple in types:  # YAML has no tuples
        return True
    return isinstance(value, tuple(types)) or (float in types and isinstance(value, int))


def _a(noun: str) -> str:
    return f"{'an' if noun[0] in 'aeiou' else 'a'} {noun}"


def parse_overrides(overrides: Sequence[str]) -> dict[str, Any]:
    """``["lr=1e-3", "lora=true"]`` -> ``{"lr": 0.001, "lora": True}`` (each value parsed as YAML)."""
    import yaml

    out: dict[str, Any] = {}
    for item in overrides:
        if "=" not in item:
            raise ConfigError(f"override {item!r} must be KEY=VALUE, e.g. learning_rate=1e-5")
        key, value = item.split("=", 1)
        out[key.strip()] = yaml.safe_load(value) if value.strip() else None
    return out


def load_config(cls: type[T], path: str | Path | None = None, overrides: Sequence[str] = ()) -> T:
    """A ``cls`` config from a YAML file (optional) with ``key=value`` overrides applied on top.

    Raises:
        ConfigError: the file is missing or is not a mapping; UnknownConfigKeyError for unknown keys.
    """

    values: dict[str, Any] = {}
    if path is not None:
        values.update(read_yaml_mapping(path))
    values.update(parse_overrides(overrides))
    return config_from_dict(cls, coerce_floats(cls, values))


def read_yaml_mapping(path: str | Path) -> dict[str, Any]:
    """The mapping a YAML config file holds.

    Raises:
        ConfigError: the file is missing (with the closest file names beside it) or holds something else than a
            mapping. A syntax error stays ``yaml.YAMLError``, whose position the command line prints.
    """
    import yaml

    p = Path(path)
    if p.is_dir():  # `-c configs/trl/`: the folder, where one of its files was meant
        files = sorted(str(q) for q in p.glob("*.y*ml"))
        raise ConfigError(
            f"config {str(p)!r} is a folder; pass one of its files: {', '.join(files) or '(none)'}"
        )
    if not p.is_file():
        siblings = sorted(q.name for q in p.parent.glob("*.y*ml")) if p.parent.is_dir() else []
        close = difflib.get_close_matches(p.name, siblings, n=2, cutoff=0.5)
        hint = f" Did you mean {' or '.join(repr(str(p.parent / c)) for c in close)}?" if close else ""
        raise ConfigError(f"config file {str(p)!r} does not exist.{hint}")
    loaded = yaml.safe_load(p.read_text())
    if loaded is not None and not isinstance(loaded, dict):
        raise ConfigError(f"config file {str(p)!r} must hold a mapping of field: value, got {type(loaded).__name__}")
    return dict(loaded or {})


def coerce_floats(cls: type[Any], values: dict[str, Any]) -> dict[str, Any]:
    """``values`` with strings that name a float field read as floats.

    YAML 1.1 reads "1e-6" as a string (it wants "1.0e-6"); coerce where the field's default is a float, or where
    the field is an optional float (``later_learning_rate=1e-7`` stayed a string before).
    """
    out = dict(values)
    for key, value in values.items():
        if isinstance(value, str):
            default = _field_default(cls, key)
            if isinstance(default, float) or _field_type(cls, key).replace(" ", "") in (
                "float", "float|None", "None|float", "Optional[float]",
            ):
                try:
                    out[key] = float(value)
                except ValueError:
                    pass
    return out


def _field_type(cls: type[Any], name: str) -> str:
    """The field's annotation as written (``"float | None"``), ``""`` for an unknown name.

    Read from the classes' ``__annotations__``, not the fields' ``type``: transformers' ``HfArgumentParser``
    rewrites that in place once it has parsed the dataclass (TRL's ``report_to: None | str | list[str]`` becomes
    ``str``, and a list was then refused).
    """
    for klass in cls.__mro__:
        hint = vars(klass).get("__annotations__", {}).get(name)
        if hint is not None:
            return hint if isinstance(hint, str) else hint.__name__ if isinstance(hint, type) else str(hint)
    return ""


def _field_default(cls: type[Any], name: str) -> Any:
    for f in dataclasses.fields(cls):
        if f.name == name:
            return f.default
    return None
