"""Find a Chromium binary: a Playwright-managed one when installed, the system Chromium otherwise.

``python -m gui_envs.browser.chromium`` prints the path it finds, or exits with status 1 and a hint.
"""

from __future__ import annotations

import glob
import os
import shutil
import sys
from pathlib import Path

#: Flags every guigym Chromium starts with: no background traffic to Google, no first-run UI.
CHROMIUM_FLAGS: tuple[str, ...] = (
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
    "--disable-default-apps",
    "--disable-quic",
)

_SYSTEM_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome")


class ChromiumNotFoundError(RuntimeError):
    """No Chromium was found; the message says how to install one."""


def playwright_managed_chromium() -> str | None:
    """The newest Chromium that ``playwright install chromium`` put in its cache, if any."""
    root = Path(os.environ.get("PLAYWRIGHT_BROWSERS_PATH", Path.home() / ".cache" / "ms-playwright"))
    patterns = (
        "chromium-*/chrome-linux*/chrome",
        "chromium-*/chrome-mac*/Chromium.app/Contents/MacOS/Chromium",
    )
    found = sorted(p for pattern in patterns for p in glob.glob(str(root / pattern)))
    return found[-1] if found else None


def find_chromium() -> str:
    """Path of the Chromium to launch.

    Order: ``$GUIGYM_CHROMIUM``, a Playwright-managed browser, then the system Chromium on ``PATH``.

    Raises:
        ChromiumNotFoundError: with install instructions when none exists.
    """
    explicit = os.environ.get("GUIGYM_CHROMIUM")
    if explicit:
        if not os.access(explicit, os.X_OK):
            raise ChromiumNotFoundError(f"GUIGYM_CHROMIUM={explicit!r} is not an executable file")
        return explicit
    managed = playwright_managed_chromium()
    if managed:
        return managed
    for name in _SYSTEM_NAMES:
        path = shutil.which(name)
        if path:
            return path
    raise ChromiumNotFoundError(
        "no Chromium found. Install one with `apt-get install -y chromium` (Debian/Ubuntu) or "
        "`python -m playwright install chromium`, or point GUIGYM_CHROMIUM at a Chromium binary."
    )


def launch_args(extra: tuple[str, ...] = ()) -> list[str]:
    """Chromium command-line flags; ``--no-sandbox`` is added when running as root, where the sandbox fails."""
    args = list(CHROMIUM_FLAGS) + list(extra)
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        args.append("--no-sandbox")
    return args


def display_available() -> bool:
    """Whether a headed browser can open a window here (an X11 or Wayland display is set)."""
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def headless_for(render_mode: str | None, headless: bool) -> bool:
    """``headless`` as asked, except that ``render_mode="human"`` shows the browser window where a display
    exists (without one the browser stays headless and the env renders nothing, as Gymnasium allows)."""
    if render_mode == "human" and display_available():
        return False
    return headless


if __name__ == "__main__":
    try:
        print(find_chromium())
    except ChromiumNotFoundError as exc:
        print(exc, file=sys.stderr)
        sys.exit(1)
