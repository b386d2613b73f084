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
            close = difflib.get_close_matches(str(key), sorted(fields), n=2)
            hint = f" Did you mean {' or '.join(map(repr, close))}?" if close else ""
            raise UnknownConfigKeyError(
                f"{cls.__name__} has no field {key!r}.{hint} Known fields: {', '.join(sorted(fields))}"
            )
    try:
        return cls(**values)
    except TypeError as exc:  # a value of the wrong type reached a check in __post_init__ ("'>' not supported ...")
        raise ConfigError(f"{cls.__name__}: {_wrong_types(cls, values) or exc}") from exc


def _wrong_types(cls: type, values: Mapping[str, Any]) -> str:
    """The values whose type differs from their field's default's (an int passes for a float), as one phrase."""
    wrong = []
    for f in dataclasses.fields(cls):  # type: ignore[arg-type]
        default, value = f.default, values.get(f.name, dataclasses.MISSING)
        if value is dataclasses.MISSING or value is None or not isinstance(default, (bool, int, float, str)):
            continue
        want = type(default)
        ok = isinstance(value, want) and not (want is not bool and isinstance(value, bool))
        if want is float and isinstance(value, int) and not isinstance(value, bool):
            ok = True
        if not ok:
            wrong.append(f"{f.name} must be a {want.__name__}, got {value!r}")
    return "; ".join(wrong)


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
    """The field's annotation as written (``"float | None"``), ``""`` for an unknown name."""
    for f in dataclasses.fields(cls):
        if f.name == name:
            return f.type if isinstance(f.type, str) else getattr(f.type, "__name__", str(f.type))
    return ""


def _field_default(cls: type[Any], name: str) -> Any:
    for f in dataclasses.fields(cls):
        if f.name == name:
            return f.default
    return None
