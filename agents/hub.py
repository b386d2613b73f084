"""One policy for model names, used by every path that loads a model (agents, trainers, the TRL adapter, the CLI).

A model is named by a local folder (saved with ``save_pretrained``) or a Hugging Face hub id. :func:`resolve_model`
decides, before any loading starts, which it is and whether it can load:

* an existing folder loads as it is;
* a name that can only be a local path (``./x``, ``/x``, ``~/x``, or under a folder that exists here, such as
  ``runs/tiny-llama`` beside ``runs/``) but is missing is a :class:`ModelPathError`;
* a hub id loads as ``from_pretrained`` loads it when the hub answers (a quick metadata request, at most
  :data:`PROBE_TIMEOUT_S` seconds); when it does not (no network, a closed ``HF_ENDPOINT``, ``HF_HUB_OFFLINE=1``),
  the id's snapshot in the local hub cache is used if there is one, and otherwise a :class:`HubUnavailableError`
  says, in one line, which id could not be fetched and how to use a local folder instead.

Without this check ``from_pretrained`` retries each file of an unreachable hub for minutes before it fails.
"""

from __future__ import annotations

import os
from pathlib import Path

#: Seconds the hub's metadata request may take before the hub counts as unreachable.
PROBE_TIMEOUT_S = 5.0


class ModelPathError(FileNotFoundError):
    """A model name that can only be a local path names nothing; the message says how to make or pick one."""


class HubUnavailableError(ConnectionError):
    """A hub id cannot be fetched (offline, or the hub does not answer) and is not in the local hub cache."""


def hub_offline() -> bool:
    """Whether ``HF_HUB_OFFLINE`` asks for no network (read now, not at import, so a caller may set it late)."""
    return os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in ("1", "true", "yes", "on")


def looks_local(name: str) -> bool:
    """Whether ``name`` can only be a local path: it starts with ``.``, ``/`` or ``~``, has more than the two parts
    of ``org/name``, or its first part is a folder here (no hub organisation is named after the user's own
    ``runs/`` folder often enough to be worth a download attempt)."""
    parts = Path(name).parts
    return name.startswith((".", "/", "~")) or len(parts) > 2 or (len(parts) == 2 and Path(parts[0]).is_dir())


def resolve_model(name: str | os.PathLike[str], timeout_s: float = PROBE_TIMEOUT_S) -> str:
    """What to hand ``from_pretrained`` for ``name``: the name itself (a folder, or a hub id the hub serves), or the
    cached snapshot folder of a hub id when the hub cannot be reached.

    Args:
        name: a local folder or a hub id (``Qwen/Qwen2.5-0.5B``).
        timeout_s: seconds the hub may take to answer the metadata request.

    Raises:
        ModelPathError: ``name`` can only be a local path and nothing is there, or the hub has no such model.
        HubUnavailableError: ``name`` is a hub id, the hub cannot be reached and the id is not cached.
    """
    text = str(name)
    path = Path(text).expanduser()
    if path.is_file():  # `model=runs/tiny-llama/config.json`: from_pretrained would read the path as a hub id
        inside = (path.parent / "config.json").is_file()
        hint = f" Did you mean its folder {str(path.parent)!r}?" if inside else ""
        raise ModelPathError(
            f"model {text!r} is a file; a model is the folder save_pretrained wrote (config.json and the weights).{hint}"
        )
    if path.exists():
        return text
    if looks_local(text):
        raise ModelPathError(
            f"model {text!r} does not exist: point it at a folder saved with save_pretrained (a `guigym train` run "
            f"writes one to its output_dir), or build the tiny test model there with `guigym tiny-model {text}`"
        )
    reason = _hub_answer(text, timeout_s)
    if reason is None:
        return text
    cached = _cached_snapshot(text)
    if cached is not None:
        return cached
    raise HubUnavailableError(
        f"model {text!r} is not a local folder here and cannot be downloaded ({reason}): pass a folder saved "
        f"with save_pretrained instead (a `guigym train` run or `guigym tiny-model` writes one; where the hub is "
        f"reachable, `hf download {text} --local-dir models/{text.rsplit('/', 1)[-1]}` fetches a hub model)"
    )


#: The files of which a folder saved with ``save_pretrained`` holds at least one (a model's, a PEFT adapter's).
SAVED_MODEL_FILES: tuple[str, ...] = ("config.json", "adapter_config.json")


def check_saved_model(name: str | os.PathLike[str]) -> None:
    """Raise :class:`ModelPathError` when ``name`` is a local folder that holds no saved model (none of
    :data:`SAVED_MODEL_FILES`): a run's ``output_dir`` or an empty folder, which ``from_pretrained`` reports in a
    dozen lines about processors and tokenizers. Sub-folders that hold a model are named. A hub id passes.

    Separate from :func:`resolve_model`, which only needs the folder to exist: its callers may name a folder that
    the run fills later, and the tests of config loading name empty folders.
    """
    folder = Path(name).expanduser()
    if not folder.is_dir() or any((folder / f).is_file() for f in SAVED_MODEL_FILES):
        return
    inner = sorted(str(p.parent) for f in SAVED_MODEL_FILES for p in folder.glob(f"*/{f}"))
    hint = f" Did you mean {' or '.join(map(repr, inner[:2]))}?" if inner else ""
    raise ModelPathError(
        f"model folder {str(name)!r} holds no config.json: it is not a folder saved with save_pretrained (a "
        f"`guigym train` run writes one to its output_dir; `guigym tiny-model {name}` builds a test model).{hint}"
    )


def _hub_answer(repo_id: str, timeout_s: float) -> str | None:
    """``None`` when the hub serves ``repo_id`` (or gates it: ``from_pretrained`` then says how to get access),
    else why it cannot be fetched. Raises :class:`ModelPathError` when the hub says there is no such model."""
    if hub_offline():
        return "HF_HUB_OFFLINE is set"
    from huggingface_hub import constants, model_info
    from huggingface_hub.errors import GatedRepoError, HfHubHTTPError, RepositoryNotFoundError

    try:
        model_info(repo_id, timeout=timeout_s)
    except GatedRepoError:
        return None
    except RepositoryNotFoundError:
        raise ModelPathError(
            f"model {repo_id!r} is neither a local folder nor a model on {constants.ENDPOINT} (a private one needs "
            "`hf auth login`): check the id, or pass a folder saved with save_pretrained"
        ) from None
    except HfHubHTTPError as exc:
        status = getattr(getattr(exc, "response", None), "status_code", "an error")
        return f"{constants.ENDPOINT} answered {status}"
    except Exception as exc:  # noqa: BLE001 - any transport failure (refused, timed out, proxy, DNS) means no hub
        return f"{constants.ENDPOINT} is unreachable: {type(exc).__name__}"
    return None


def _cached_snapshot(repo_id: str) -> str | None:
    """The local hub cache's snapshot folder of ``repo_id`` when it holds a ``config.json``, else ``None``."""
    from huggingface_hub import snapshot_download

    try:
        folder = snapshot_download(repo_id, local_files_only=True)
    except Exception:  # noqa: BLE001 - not cached, in whichever way the cache says so
        return None
    return folder if (Path(folder) / "config.json").is_file() else None


__all__ = [
    "HubUnavailableError",
    "ModelPathError",
    "PROBE_TIMEOUT_S",
    "SAVED_MODEL_FILES",
    "check_saved_model",
    "hub_offline",
    "looks_local",
    "resolve_model",
]
