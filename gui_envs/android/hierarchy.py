"""Parse uiautomator hierarchy XML into the element list of the observation.

The same code parses a real device's ``dump_hierarchy()`` and the simulated phone's dump, so an agent trained
on one sees the same structure on the other.

A dump is ``<hierarchy rotation="0">`` holding nested ``<node>`` elements with the attributes ``index``,
``text``, ``resource-id``, ``class``, ``package``, ``content-desc``, ``checkable``, ``checked``,
``clickable``, ``enabled``, ``focusable``, ``focused``, ``scrollable``, ``long-clickable``, ``password``,
``selected`` and ``bounds="[x1,y1][x2,y2]"`` (device pixels); newer uiautomator versions also write ``hint`` (an
edit field's hint; while the field is empty Android reports the hint as its ``text`` too).

Which nodes become elements: those with text or a content description, and those an agent can act on
(clickable, long-clickable, checkable, scrollable, or an ``EditText``). Pure layout containers are left
out. A clickable container without text of its own (a list row) takes the text of its descendants, so a text
agent can still tell the rows apart.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from typing import Any

from gui_envs.browser.observation import clean_text

_BOUNDS = re.compile(r"\[(-?\d+),(-?\d+)\]\[(-?\d+),(-?\d+)\]")

#: The ``"true"``/``"false"`` attributes of a ``<node>``, in the order uiautomator writes them.
_FLAGS: tuple[str, ...] = (
    "checkable",
    "checked",
    "clickable",
    "enabled",
    "focusable",
    "focused",
    "scrollable",
    "long-clickable",
    "password",
    "selected",
)

#: Attributes every ``<node>`` of a uiautomator dump carries, in the order uiautomator writes them.
NODE_ATTRIBUTES: tuple[str, ...] = (
    "index",
    "text",
    "resource-id",
    "class",
    "package",
    "content-desc",
    *_FLAGS,
    "bounds",
)
#: Attributes some uiautomator versions write and others leave out (read when present, ``""`` otherwise).
OPTIONAL_ATTRIBUTES: tuple[str, ...] = ("hint",)


class HierarchyParseError(ValueError):
    """The text is not a uiautomator hierarchy dump."""


@dataclass(frozen=True)
class UIElement:
    """One element of the observation.

    Attributes:
        id: position in the element list (document order), as a string; stable while the screen is unchanged.
        class_name: the Android class (``android.widget.Button``).
        text: the node's ``text``.
        content_desc: the node's ``content-desc``.
        resource_id: the node's ``resource-id`` (``com.example:id/save``).
        package: the app the node belongs to.
        bbox: ``(x0, y0, x1, y1)`` in device pixels.
        clickable, long_clickable, checkable, checked, enabled, focusable, focused, scrollable, selected,
        password: the node's flags.
        label: what to call the element: its text, else its content description, else its descendants' text.
        hint: an edit field's hint (``""`` when the dump has none).
    """

    id: str
    class_name: str
    text: str
    content_desc: str
    resource_id: str
    package: str
    bbox: tuple[int, int, int, int]
    clickable: bool
    long_clickable: bool
    checkable: bool
    checked: bool
    enabled: bool
    focusable: bool
    focused: bool
    scrollable: bool
    selected: bool
    password: bool
    label: str
    hint: str = ""

    @property
    def role(self) -> str:
        """The short class name (``Button``, ``EditText``, ``TextView``)."""
        return self.class_name.rsplit(".", 1)[-1]

    @property
    def editable(self) -> bool:
        return self.role in ("EditText", "AutoCompleteTextView")

    @property
    def showing_hint(self) -> bool:
        """Whether an edit field is empty and shows its hint: Android then reports the hint as the node's ``text``.

        A field whose typed text equals its hint reads as empty too; a dump does not tell the two apart."""
        return self.editable and bool(self.hint) and self.text == self.hint

    @property
    def value(self) -> str:
        """The state an agent reads: an edit field's text (``""`` while it shows its hint), ``checked`` for checked
        boxes, a seek bar's level."""
        if self.editable and self.showing_hint:
            return ""
        if self.editable or self.role == "SeekBar":
            return self.text
        if self.checkable:
            return "checked" if self.checked else ""
        return ""

    @property
    def center(self) -> tuple[float, float]:
        """Centre of the bbox in device pixels."""
        x0, y0, x1, y1 = self.bbox
        return ((x0 + x1) / 2, (y0 + y1) / 2)

    def public(self, scale: float = 1.0) -> dict[str, Any]:
        """The observation's JSON form; ``bbox`` in screenshot pixels (device pixels times ``scale``).

        ``tag`` repeats ``class`` (the Android class name), the phone's counterpart of a web record's HTML tag.
        ``clickable`` says whether a tap can act on the element: never for a disabled one (Android drops the tap),
        whatever its ``clickable`` flag says. The device's own flags follow as it wrote them.
        """
        return {
            "id": self.id,
            "role": self.role,
            "text": self.label,
            "value": self.value,
            "hint": self.hint,
            "bbox": [round(v * scale) for v in self.bbox],
            "clickable": self.enabled
            and (self.clickable or self.long_clickable or self.checkable or self.editable),
            "enabled": self.enabled,
            "checkable": self.checkable,
            "checked": self.checked,
            "focused": self.focused,
            "selected": self.selected,
            "scrollable": self.scrollable,
            "long_clickable": self.long_clickable,
            "password": self.password,
            "resource_id": self.resource_id,
            "content_desc": self.content_desc,
            "class": self.class_name,
            # A view has no HTML tag; its class name stands in, so web and phone records share the key.
            "tag": self.class_name,
            "package": self.package,
        }


def parse_bounds(text: str) -> tuple[int, int, int, int]:
    """``"[0,63][1080,210]"`` -> ``(0, 63, 1080, 210)`` (device pixels).

    >>> parse_bounds("[0,63][1080,210]")
    (0, 63, 1080, 210)
    """
    match = _BOUNDS.fullmatch(text.strip())
    if match is None:
        raise HierarchyParseError(f"bounds must look like [x1,y1][x2,y2], got {text!r}")
    x0, y0, x1, y1 = (int(v) for v in match.groups())
    return (x0, y0, x1, y1)


def parse_hierarchy(xml: str, max_label: int = 120) -> list[UIElement]:
    """The element list of a uiautomator dump, in document (depth-first) order.

    Args:
        xml: the dump.
        max_label: longest label, in characters, for containers labelled by their descendants' text.

    Raises:
        HierarchyParseError: when ``xml`` is not a hierarchy dump.
    """
    try:
        root = ET.fromstring(xml)
    except ET.ParseError as exc:
        raise HierarchyParseError(f"not XML: {exc}") from exc
    if root.tag != "hierarchy":
        raise HierarchyParseError(f"the root element must be <hierarchy>, got <{root.tag}>")
    out: list[UIElement] = []
    for node in root.iter("node"):
        a = node.attrib
        bbox = parse_bounds(a.get("bounds", "[0,0][0,0]"))
        if bbox[2] <= bbox[0] or bbox[3] <= bbox[1]:
            continue  # off screen or collapsed
        flags = {name: a.get(name) == "true" for name in _FLAGS}
        text, desc = a.get("text", ""), a.get("content-desc", "")
        cls = a.get("class", "")
        editable = cls.endswith("EditText") or cls.endswith("AutoCompleteTextView")
        actionable = (
            flags["clickable"]
            or flags["long-clickable"]
            or flags["checkable"]
            or flags["scrollable"]
            or editable
        )
        if not (text or desc or actionable):
            continue
        label = text or desc
        if not label and (flags["clickable"] or flags["long-clickable"]):
            label = _descendant_text(node)[:max_label]
        out.append(
            UIElement(
                id=str(len(out)),
                class_name=cls,
                text=text,
                content_desc=desc,
                resource_id=a.get("resource-id", ""),
                package=a.get("package", ""),
                bbox=bbox,
                clickable=flags["clickable"],
                long_clickable=flags["long-clickable"],
                checkable=flags["checkable"],
                checked=flags["checked"],
                enabled=flags["enabled"],
                focusable=flags["focusable"],
                focused=flags["focused"],
                scrollable=flags["scrollable"],
                selected=flags["selected"],
                password=flags["password"],
                label=label,
                hint=a.get("hint", ""),
            )
        )
    return out


def public_elements(elements: list[UIElement], scale: float) -> list[dict[str, Any]]:
    """The observation's element list: each element's :meth:`UIElement.public` record (bbox in screenshot pixels,
    ``scale`` screenshot pixels per device pixel), its text fields cleaned to the observation's charset."""
    out = []
    for el in elements:
        item = el.public(scale)
        for key in ("text", "value", "hint", "content_desc", "resource_id", "class", "package", "role"):
            item[key] = clean_text(str(item[key]))
        out.append(item)
    return out


def _descendant_text(node: ET.Element) -> str:
    parts = []
    for child in node.iter("node"):
        if child is node:
            continue
        t = child.attrib.get("text") or child.attrib.get("content-desc") or ""
        if t:
            parts.append(t)
    return ", ".join(parts)


def foreground_package(xml: str) -> str:
    """The package of the first node of a dump (the foreground app), or ``""``."""
    match = re.search(r'<node [^>]*?package="([^"]*)"', xml)
    return match.group(1) if match else ""
