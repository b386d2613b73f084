"""Install a folder atomically, and clean the temporary folders that killed writers leave behind.

A writer builds a folder under a temporary name in the destination's parent,
``.tmp-<name>-<host>-<pid>-<random>``, then :func:`install_folder` moves it into place. Replacing an existing
folder uses one atomic exchange where the system has one (Linux ``renameat2(RENAME_EXCHANGE)``); elsewhere
it renames the old folder to ``.old-<name>-...`` first and deletes it only once the new one is in place.
:func:`clean_stale_temporaries` removes what a killed writer left and puts an orphaned ``.old-*`` back.
"""

from __future__ import annotations

import ctypes
import errno
import hashlib
import logging
import os
import re
import shutil
import socket
import sys
import time
import uuid
from pathlib import Path

#: A temporary folder older than this many seconds is stale even when a process with its writer's pid runs
#: (pids are reused; a save takes seconds).
STALE_AFTER_S = 3600.0

logger = logging.getLogger(__name__)
_HOST = hashlib.sha1(socket.gethostname().encode("utf-8", "surrogateescape")).hexdigest()[:8]
_TEMP_RE = re.compile(r"^\.(?P<kind>tmp|old)-(?P<name>.+)-(?P<host>[0-9a-f]{8})-(?P<pid>\d+)-[0-9a-f]{8}$")


def clean_stale_temporaries(root: str | os.PathLike[str], now: float | None = None) -> list[Path]:
    """Remove the stale ``.tmp-*`` and ``.old-*`` folders under ``root``; never raises on a file system error.

    A folder is stale when the process that wrote it is gone: its name says it was written on this host
    by a pid that no longer runs, or it is older than :data:`STALE_AFTER_S` seconds (by modification
    time; this covers other hosts and names this version did not write). A stale ``.old-<name>-*`` folder
    whose ``<name>`` is missing holds the only copy of that folder (its writer died between its two
    renames) and is renamed back to ``<name>`` instead.

    Args:
        root: the folder that holds the installed folders and their temporaries.
        now: the current time in seconds since the epoch (``time.time()`` when ``None``).

    Returns:
        The folders removed or restored (their old paths).
    """
    now = time.time() if now is None else now
    done: list[Path] = []
    try:
        entries = list(Path(root).iterdir())
    except OSError:
        return done
    for entry in entries:
        if not entry.name.startswith((".tmp-", ".old-")) or not _is_stale(entry, now):
            continue
        match = _TEMP_RE.match(entry.name)
        try:
            if match and match["kind"] == "old" and not (entry.parent / match["name"]).exists():
                os.rename(entry, entry.parent / match["name"])
            else:
                shutil.rmtree(entry)
        except OSError as exc:  # a read-only root or a concurrent cleaner: leave it for next time
            logger.debug("could not clean %s: %s", entry, exc)
            continue
        done.append(entry)
    return done


def temp_name(kind: str, name: str) -> str:
    """``.<kind>-<name>-<host>-<pid>-<random>`` (kind ``tmp`` or ``old``): the host and pid say whose it is."""
    return f".{kind}-{name}-{_HOST}-{os.getpid()}-{uuid.uuid4().hex[:8]}"


def _is_stale(folder: Path, now: float) -> bool:
    try:
        age = now - folder.stat().st_mtime
    except OSError:
        return False  # gone already
    if age > STALE_AFTER_S:
        return True
    match = _TEMP_RE.match(folder.name)
    return bool(match) and match["host"] == _HOST and not _pid_alive(int(match["pid"]))


def _pid_alive(pid: int) -> bool:
    if os.name != "posix":
        return True  # no cheap check; the age rule still applies
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, OSError):
        return True
    return True


def install_folder(tmp: Path, final: Path) -> None:
    """Move the complete folder ``tmp`` to ``final``, replacing a previous ``final`` without losing it."""
    try:
        os.rename(tmp, final)  # fails when ``final`` is a non-empty folder
        return
    except OSError:
        if not final.exists():
            raise
    if _exchange(tmp, final):
        shutil.rmtree(tmp, ignore_errors=True)  # it now holds the previous folder
        return
    old = final.parent / temp_name("old", final.name)
    os.rename(final, old)
    os.rename(tmp, final)
    shutil.rmtree(old, ignore_errors=True)


_RENAME_EXCHANGE = 2  # linux/fs.h
_AT_FDCWD = -100


def _exchange(a: Path, b: Path) -> bool:
    """Swap two paths in one atomic step (Linux ``renameat2(RENAME_EXCHANGE)``); ``False`` where unsupported."""
    if sys.platform != "linux":
        return False
    try:
        renameat2 = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):  # not glibc >= 2.28
        return False
    renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    if renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    logger.debug("renameat2 exchange failed (%s); using two renames", errno.errorcode.get(ctypes.get_errno()))
    return False
