"""``GuiAndroidGround-v0``: one-step grounding on the simulated phone's screens."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from gymnasium import spaces

from gui_envs.actions import Action, coerce_action
from gui_envs.android.env import MAX_TEXT, PhoneEnvBase
from gui_envs.android.hierarchy import UIElement
from gui_envs.web.observation import CHARSET

#: Screens grounding episodes are drawn from: (package, how many list rows deep to go: 0 or 1).
_DEPTHS = (0, 0, 1)


def describe(el: UIElement) -> str:
    """A referring expression for an element: ``the "Save" button``, ``the "Search notes" field``."""
    role, label = el.role, el.label
    if el.editable:
        return f'the "{label}" field'
    if role in ("Switch", "CheckBox", "RadioButton"):
        return f'the "{label}" {"switch" if role == "Switch" else "option"}'
    if role in ("Button", "ImageButton"):
        return f'the "{label}" button'
    if role == "TextView" and el.resource_id.endswith(":id/app_icon"):
        return f'the "{label}" app icon'
    if role == "LinearLayout":
        return f'the "{label.split(", ")[0]}" item'
    return f'"{label}"'


class GuiAndroidGroundEnv(PhoneEnvBase):
    """One-step GUI grounding on phone screens: "tap <description>" on a seeded screen of a bundled app.

    **Episode**: ``reset`` restores the apps for the reset's seed, opens a screen (the home screen or an app's
    main screen, sometimes one list item deeper), and picks a clickable element in the foreground app whose
    label is unique on the screen; one ``step`` ends the episode (``terminated=True``).

    **Observation**: as ``GuiAndroid-v0`` without ``step``: ``screenshot`` ``Box(0, 255, (H, W, 3), uint8)``
    (screenshot pixels, default 360 x 800 for a 1080 x 2400 phone), ``elements`` (JSON ``Text``),
    ``instruction``, ``app`` and ``activity`` (``Text``).

    **Action**: Action JSON / GUI-R1 text (or an ``Action``) whose ``point`` (screenshot pixels) or
    ``element_id`` is the tap target.

    **Reward**: 1.0 when the tap lies inside the target's bbox, else 0.0 (binary, as in grounding benchmarks).
    ``info["target_bbox"]`` = ``[x0, y0, x1, y1]`` screenshot pixels, for SSL-style shaping wrappers. The tap
    is not performed unless ``perform_click=True``.

    Version history: v0, initial release.

    Args:
        apps: labels of the apps whose screens are drawn from (default: every bundled app and the launcher).
        perform_click: also tap the phone (costs one device action and one observation).
        **kwargs: :class:`~gui_envs.android.env.PhoneEnvBase` options (``screenshot_scale``, ``headless``...).
    """

    def __init__(self, apps: Sequence[str] | None = None, perform_click: bool = False, **kwargs: Any) -> None:
        kwargs.setdefault("backend", "simulated")
        if kwargs["backend"] != "simulated":
            raise ValueError("GuiAndroidGround-v0 draws seeded screens, which needs the simulated phone")
        super().__init__(**kwargs)
        installed = {app.label.lower(): pkg for pkg, app in self.backend.apps.items()}  # type: ignore[attr-defined]
        wanted = [a.lower() for a in apps] if apps is not None else sorted(installed)
        unknown = [a for a in wanted if a not in installed]
        if unknown:
            raise ValueError(f"unknown apps {unknown}; choose from {sorted(installed)}")
        self.packages = [installed[a] for a in wanted]
        self.perform_click = perform_click
        self.observation_space = spaces.Dict(self._base_spaces())
        self.action_space = spaces.Text(MAX_TEXT, min_length=0, charset=CHARSET)
        self.target: UIElement | None = None
        self.instruction = ""

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        super().reset(seed=seed)
        screen_seed = int((options or {}).get("seed", self.np_random.integers(2**31 - 1)))
        rng = np.random.default_rng([screen_seed, 13])
        phone = self.backend
        phone.restore(screen_seed)  # type: ignore[attr-defined]
        candidates: list[UIElement] = []
        for _ in range(10):
            package = self.packages[int(rng.integers(len(self.packages)))]
            if package != "com.guigym.launcher":
                phone.app_start(package)
            else:
                phone.press("home")
            self._observe()
            if _DEPTHS[int(rng.integers(len(_DEPTHS)))] and package != "com.guigym.launcher":
                rows = [el for el in self._elements if el.role == "LinearLayout" and el.clickable]
                if rows:
                    phone.click(*rows[int(rng.integers(len(rows)))].center)
                    self._observe()
            candidates = self._candidates()
            if candidates:
                break
        if not candidates:  # pragma: no cover - every bundled screen has a labelled button
            raise RuntimeError("no grounding target found on 10 screens")
        self.target = candidates[int(rng.integers(len(candidates)))]
        self.instruction = f"Tap {describe(self.target)}."
        return self._base_obs(self.instruction), self._info(None, None)

    def _candidates(self) -> list[UIElement]:
        package = self._app[0]
        usable = [
            el
            for el in self._elements
            if el.package == package
            and (el.clickable or el.checkable or el.editable)
            and any(c.isalpha() for c in el.label)
            and (el.bbox[2] - el.bbox[0]) * (el.bbox[3] - el.bbox[1]) >= 400
            and len(el.label) <= 60
        ]
        counts: dict[str, int] = {}
        for el in usable:
            counts[el.label.lower()] = counts.get(el.label.lower(), 0) + 1
        return [el for el in usable if counts[el.label.lower()] == 1]

    def step(self, action: Any) -> tuple[dict[str, Any], float, bool, bool, dict[str, Any]]:
        if self.target is None:
            raise RuntimeError("call reset() before step()")
        parsed, error = coerce_action(action)
        point: tuple[float, float] | None = None
        if parsed is not None and parsed.point is not None:
            point = parsed.point
        elif parsed is not None and parsed.element_id is not None:
            el = self.element(parsed.element_id)
            if el is None:
                error = f"no element with id {parsed.element_id!r} on the current screen"
            else:
                point = (el.center[0] * self.scale, el.center[1] * self.scale)
        elif parsed is not None:
            error = f"grounding needs a tap with a point or element_id, got {parsed.type}"
        hit = False
        if point is not None:
            x0, y0, x1, y1 = self._target_bbox()
            hit = x0 <= point[0] <= x1 and y0 <= point[1] <= y1
            if self.perform_click and parsed is not None:
                error = self.act(Action.click(*point)) or error
        return self._base_obs(self.instruction), 1.0 if hit else 0.0, True, False, self._info(error, hit)

    def oracle_action(self) -> Action:
        """A tap at the centre of the target's bbox (screenshot pixels)."""
        x0, y0, x1, y1 = self._target_bbox()
        return Action.click(float(round((x0 + x1) / 2)), float(round((y0 + y1) / 2)))

    def _target_bbox(self) -> list[int]:
        assert self.target is not None, "call reset() first"
        return [round(v * self.scale) for v in self.target.bbox]

    def _info(self, error: str | None, hit: bool | None) -> dict[str, Any]:
        assert self.target is not None
        return {
            "task": "ground",
            "instruction": self.instruction,
            "target_bbox": self._target_bbox(),
            "target_element": {"id": self.target.id, "role": self.target.role, "text": self.target.label},
            "success": bool(hit),
            "score": 1.0 if hit else 0.0,
            "action_error": error,
            "app": self._app[0],
            "activity": self._app[1],
        }
