"""``GuiAndroidGround-v0``: one-step grounding on the simulated phone's screens."""

from __future__ import annotations

from collections.abc import Sequence
from types import MappingProxyType
from typing import Any

import numpy as np
from gymnasium import spaces

from gui_envs.android.env import PhoneEnvBase
from gui_envs.android.hierarchy import UIElement
from gui_envs.schema.action_space import ActionSpace
from gui_envs.schema.actions import Action, coerce_action
from gui_envs.schema.errors import ResetNeededError
from gui_envs.schema.lifecycle import SEED, guarded_reset, guarded_step
from gui_envs.tasks.grounding import (
    BANNER_PX,
    box_action_space,
    box_point,
    draw_instruction_banner,
    ordinal,
    pick,
)

#: Screens grounding episodes are drawn from: (package, how many list rows deep to go: 0 or 1).
_DEPTHS = (0, 0, 1)


def describe(el: UIElement) -> str:
    """The exact-text expression of ``describe="text"``: ``the "Save" button``, ``the "Search notes" field``."""
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


#: What each bundled app is for, by its label: app icons are described by function, not by name.
_APP_FUNCTION: dict[str, str] = {
    "clock": "the alarm and timer app",
    "contacts": "the address book app",
    "expenses": "the app that tracks spending",
    "notes": "the note-taking app",
    "recipes": "the cooking app",
    "settings": "the app with the phone's preferences",
}

#: Button functions by the last part of the resource id (never the button's label).
_BUTTON_FUNCTION: dict[str, str] = {
    "delete": "the button that removes this item for good",
    "save": "the button that keeps your changes",
    "action_save": "the tick in the top bar that keeps your changes",
    "fab": "the round floating button at the bottom right",
    "add_city": "the round floating button at the bottom right",
    "star": "the button that marks this person as a favourite or unmarks them",
    "lap": "the button that records a split time",
    "reset": "the button that sets the stopwatch back to zero",
}

#: What a list row shows, by its resource id's stem (``note_row`` -> note).
_ROW_NOUN: dict[str, str] = {"dashboard_tile": "settings category", "todo_item": "task", "search_result": "result"}


def _kind(el: UIElement) -> str:
    if el.editable:
        return "text box"
    if el.role == "Switch":
        return "switch"
    if el.role in ("CheckBox", "RadioButton") or el.checkable:
        return "option"
    if el.role == "LinearLayout":
        return "row"
    if el.resource_id.endswith(":id/app_icon"):
        return "app icon"
    return "button"


def _region(bbox: Sequence[float], size: tuple[float, float]) -> str:
    """Which ninth of the screen holds the bbox centre (``top left`` ... ``bottom right``)."""
    cx, cy = (bbox[0] + bbox[2]) / 2, (bbox[1] + bbox[3]) / 2
    row = ("top", "middle", "bottom")[min(2, int(3 * cy / size[1]))]
    col = ("left", "centre", "right")[min(2, int(3 * cx / size[0]))]
    return "centre" if (row, col) == ("middle", "centre") else f"{row} {col}"


def structural_descriptions(candidates: list[UIElement], size: tuple[float, float]) -> dict[str, list[str]]:
    """ScreenSpot-style descriptions (function, position, paraphrase) that fit exactly one candidate.

    Args:
        candidates: the screen's tappable elements, in hierarchy order.
        size: the screen's ``(width, height)`` in device pixels, for coarse positions.

    Returns:
        id -> descriptions no other candidate shares (possibly empty).
    """
    by_kind: dict[str, list[UIElement]] = {}
    for el in candidates:
        by_kind.setdefault(_kind(el), []).append(el)
    options: dict[str, list[str]] = {}
    for kind, group in by_kind.items():
        top_down = sorted(group, key=lambda e: (e.bbox[1], e.bbox[0]))
        for el in group:
            rid = el.resource_id.rsplit("/", 1)[-1]
            out = []
            if kind == "app icon":
                rows = sorted({e.bbox[1] for e in group})
                cols = sorted({e.bbox[0] for e in group})
                out.append(
                    f"the app icon in row {rows.index(el.bbox[1]) + 1}, column {cols.index(el.bbox[0]) + 1} "
                    "of the app grid"
                )
                if el.label.lower() in _APP_FUNCTION:
                    out.append(f"the icon of {_APP_FUNCTION[el.label.lower()]}")
            elif kind == "row":
                same = [e for e in top_down if e.resource_id == el.resource_id]
                noun = _ROW_NOUN.get(rid, rid.removesuffix("_row").replace("_", " ") or "item")
                out.append(f"the {ordinal(same.index(el) + 1, len(same))} {noun} in the list")
            elif rid in _BUTTON_FUNCTION:
                out.append(_BUTTON_FUNCTION[rid])
            index = top_down.index(el) + 1
            if index <= 5:
                out.append(f"the {ordinal(index, len(top_down))} {kind} from the top of the screen")
            out.append(f"the {kind} at the {_region(el.bbox, size)} of the screen")
            options[el.id] = out
    owners: dict[str, int] = {}
    for texts in options.values():
        for text in set(texts):
            owners[text] = owners.get(text, 0) + 1
    return {i: [t for t in dict.fromkeys(texts) if owners[t] == 1] for i, texts in options.items()}


class GuiAndroidGroundEnv(PhoneEnvBase):
    """One-step GUI grounding on phone screens: "tap <description>" on a seeded screen of a bundled app.

    **Episode**: ``reset`` restores the apps for the reset's seed, opens a screen (the home screen or an app's
    main screen, sometimes one list item deeper), and picks a tappable element in the foreground app; one
    ``step`` ends the episode (``terminated=True``).

    **Instruction**: with ``describe="structure"`` (default) the target is described as ScreenSpot describes
    it, by function, position or paraphrase, never by its label: "Tap the icon of the cooking app.", "Tap the
    third contact in the list.", "Tap the button that removes this item for good.", "Tap the text box at the
    top centre of the screen." (only descriptions that fit exactly one candidate are used). With
    ``describe="text"`` it quotes the target's label, unique on the screen (``Tap the "Save" button.``), which a
    string matcher over ``elements`` solves (see ``benchmarks/ground_baselines.py``).

    **Observation**: as ``GuiAndroid-v0`` without ``step``: ``screenshot`` ``Box(0, 255, (H, W, 3), uint8)``
    (screenshot pixels, default 360 x 800 for a 1080 x 2400 phone), ``elements`` (JSON ``Text``),
    ``instruction``, ``app`` and ``activity`` (``Text``).

    With ``action_type="box"`` the observation is only the screenshot ``Box(0, 255, (H, W, 3), uint8)``,
    with the instruction drawn in a dark banner over its top ``BANNER_PX`` rows (targets never sit under it).

    **Action**: ``action_type="text"`` (default): Action JSON / GUI-R1 JSON (or an ``Action``) whose ``point``
    (screenshot pixels) or ``element_id`` is the tap target; ``action_type="box"``:
    ``Box(low=[0, 0], high=[W - 1, H - 1], (2,), float32)``, the tap point in screenshot pixels, so SB3
    policies can train on it.

    **Reward**: 1.0 when the tap lies inside the target's bbox, else 0.0 (binary, as in grounding benchmarks).
    ``privileged()["target_bbox"]`` = ``[x0, y0, x1, y1]`` screenshot pixels, for SSL-style shaping wrappers
    (the target never appears in ``info``; see :mod:`gui_envs.schema.privileged`). The tap
    is not performed unless ``perform_click=True``.

    Version history: v0, initial release; ``describe`` added (default ``"structure"``; ``"text"`` keeps the
    label-quoting instructions).

    Args:
        apps: labels of the apps whose screens are drawn from (default: every bundled app and the launcher).
        action_type: ``"text"`` or ``"box"``.
        perform_click: also tap the phone (costs one device action and one observation).
        describe: ``"structure"`` (function / position / paraphrase) or ``"text"`` (quote the label).
        **kwargs: :class:`~gui_envs.android.env.PhoneEnvBase` options (``screenshot_scale``, ``headless``...).
    """

    def __init__(
        self,
        apps: Sequence[str] | None = None,
        perform_click: bool = False,
        action_type: str = "text",
        describe: str = "structure",
        **kwargs: Any,
    ) -> None:
        if action_type not in ("text", "box"):
            raise ValueError(f"action_type must be 'text' or 'box', got {action_type!r}")
        if describe not in ("structure", "text"):
            raise ValueError(f"describe must be 'structure' or 'text', got {describe!r}")
        self.action_type, self.describe = action_type, describe
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
        if action_type == "box":
            screenshot_space = self._base_spaces()["screenshot"]
            height, width = screenshot_space.shape[:2]
            self.observation_space = screenshot_space
            self.action_space = box_action_space(width, height)
        else:
            self.observation_space = spaces.Dict(self._base_spaces())
            self.action_space = ActionSpace(self.screen)
        self.target: UIElement | None = None
        self.instruction = ""

    reset_options = MappingProxyType({"seed": SEED})

    @guarded_reset
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        super().reset(seed=seed)
        screen_seed = int((options or {}).get("seed", self.np_random.integers(2**31 - 1)))
        rng = np.random.default_rng([screen_seed, 13])
        phone = self.backend
        phone.restore(screen_seed)  # type: ignore[attr-defined]
        described: dict[str, list[str]] = {}
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
            described = self._described()
            if described:
                break
        if not described:  # pragma: no cover - every bundled screen has a labelled button
            raise RuntimeError("no grounding target found on 10 screens")
        ids = list(described)
        self.target = self.element(ids[int(rng.integers(len(ids)))])
        assert self.target is not None
        self.instruction = f"Tap {pick(described[self.target.id], rng)}."
        return self._observation(), self._info(None, None)

    def _described(self) -> dict[str, list[str]]:
        """Candidate id -> its descriptions (``describe`` mode), for candidates with at least one."""
        package = self._app[0]
        usable = [
            el
            for el in self._elements
            if el.package == package
            and (el.clickable or el.checkable or el.editable)
            and (el.bbox[2] - el.bbox[0]) * (el.bbox[3] - el.bbox[1]) >= 400
        ]
        if self.action_type == "box":
            # The instruction banner covers the top rows of box-mode observations.
            usable = [el for el in usable if el.bbox[1] * self.scale >= BANNER_PX]
        if self.describe == "structure":
            size = (self.screen[0] / self.scale, self.screen[1] / self.scale)
            out = structural_descriptions(usable, size)
            return {i: texts for i, texts in out.items() if texts}
        labelled = [el for el in usable if any(c.isalpha() for c in el.label) and len(el.label) <= 60]
        counts: dict[str, int] = {}
        for el in labelled:
            counts[el.label.lower()] = counts.get(el.label.lower(), 0) + 1
        return {el.id: [describe(el)] for el in labelled if counts[el.label.lower()] == 1}

    @guarded_step
    def step(self, action: Any) -> tuple[dict[str, Any], float, bool, bool, dict[str, Any]]:
        if self.target is None:
            raise ResetNeededError("call reset() before step()")
        if self.action_type == "box":
            point, error = box_point(action)
        else:
            point, error = self._text_action_point(action)
        hit = False
        if point is not None:
            x0, y0, x1, y1 = self._target_bbox()
            hit = x0 <= point[0] <= x1 and y0 <= point[1] <= y1
            if self.perform_click:
                error = self.act(Action.click(*point)) or error
        return self._observation(), 1.0 if hit else 0.0, True, False, self._info(error, hit)

    def _text_action_point(self, action: Any) -> tuple[tuple[float, float] | None, str | None]:
        """The tap point (screenshot pixels) of a text-mode action, or why there is none."""
        parsed, error = coerce_action(action)
        if parsed is None:
            return None, error
        if parsed.point is not None:
            return parsed.point, None
        if parsed.element_id is not None:
            el = self.element(parsed.element_id)
            if el is None:
                return None, f"no element with id {parsed.element_id!r} on the current screen"
            return (el.center[0] * self.scale, el.center[1] * self.scale), None
        return None, f"grounding needs a tap with a point or element_id, got {parsed.type}"

    def oracle_action(self) -> Any:
        """A tap at the centre of the target's bbox: a ``(2,)`` array in box mode, else an ``Action``."""
        x0, y0, x1, y1 = self._target_bbox()
        cx, cy = float(round((x0 + x1) / 2)), float(round((y0 + y1) / 2))
        return np.array([cx, cy], np.float32) if self.action_type == "box" else Action.click(cx, cy)

    def _observation(self) -> Any:
        obs = self._base_obs(self.instruction)
        if self.action_type == "box":
            return draw_instruction_banner(obs["screenshot"], self.instruction)
        return obs

    def _target_bbox(self) -> list[int]:
        if self.target is None:
            raise ResetNeededError("call reset() first")
        return [round(v * self.scale) for v in self.target.bbox]

    def privileged(self) -> dict[str, Any]:
        """``target_bbox`` (screenshot pixels) and ``target_element`` (see :mod:`gui_envs.schema.privileged`)."""
        if self.target is None:
            raise ResetNeededError("call reset() first")
        return {
            "target_bbox": self._target_bbox(),
            "target_element": {"id": self.target.id, "role": self.target.role, "text": self.target.label},
        }

    def _info(self, error: str | None, hit: bool | None) -> dict[str, Any]:
        assert self.target is not None
        return {
            "task": "ground",
            "instruction": self.instruction,
            "success": bool(hit),
            "score": 1.0 if hit else 0.0,
            "action_error": error,
            "app": self._app[0],
            "activity": self._app[1],
        }
