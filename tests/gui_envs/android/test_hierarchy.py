"""Hierarchy parsing: a recorded real-device dump and the simulated phone's dump give the same shape."""

from __future__ import annotations

import dataclasses
import xml.etree.ElementTree as ET

import pytest

from gui_envs.android.env import GuiAndroidEnv
from gui_envs.android.hierarchy import (
    NODE_ATTRIBUTES,
    OPTIONAL_ATTRIBUTES,
    HierarchyParseError,
    UIElement,
    parse_bounds,
    parse_hierarchy,
)
from tests.gui_envs.android.conftest import FIXTURES

RECORDED = (FIXTURES / "deskclock_alarms.xml").read_text()


def test_recorded_fixture_parses() -> None:
    elements = parse_hierarchy(RECORDED)
    by_desc = {el.content_desc: el for el in elements if el.content_desc}
    fab = by_desc["Add alarm"]
    assert fab.role == "ImageButton" and fab.clickable and fab.bbox == (451, 2005, 629, 2152)
    assert fab.resource_id == "com.google.android.deskclock:id/fab"
    switches = [el for el in elements if el.role == "Switch"]
    assert [s.checked for s in switches] == [True, False, True] and all(s.checkable for s in switches)
    assert switches[0].value == "checked" and switches[1].value == ""
    recycler = next(el for el in elements if el.role == "RecyclerView")
    assert recycler.scrollable
    # A clickable container without text is labelled by its descendants.
    item = next(el for el in elements if el.resource_id.endswith(":id/alarm_item"))
    assert item.label.startswith("Wake up, 7:30 AM")
    assert {el.package for el in elements} == {"com.google.android.deskclock", "com.android.systemui"}
    assert [el.id for el in elements] == [str(i) for i in range(len(elements))]


def test_every_node_of_the_fixture_has_every_attribute() -> None:
    for node in ET.fromstring(RECORDED).iter("node"):
        assert tuple(node.attrib) == NODE_ATTRIBUTES


def test_parse_errors_are_named() -> None:
    with pytest.raises(HierarchyParseError):
        parse_hierarchy("not xml <")
    with pytest.raises(HierarchyParseError, match="<hierarchy>"):
        parse_hierarchy("<root/>")
    with pytest.raises(HierarchyParseError, match="bounds"):
        parse_bounds("0,0,10,10")
    assert parse_bounds("[-5,0][1080,2400]") == (-5, 0, 1080, 2400)


def test_simulated_dump_matches_the_recorded_shape(android_env: GuiAndroidEnv) -> None:
    android_env.reset(options={"task": "clock.turn_off_alarm", "seed": 1})
    android_env.backend.app_start("com.guigym.clock")
    simulated = android_env.backend.hierarchy()
    # Same node format: every <node> carries exactly uiautomator's attributes, in its order (an edit field adds
    # the hint, as newer uiautomator versions write it).
    root = ET.fromstring(simulated)
    assert root.tag == "hierarchy" and root.attrib == {"rotation": "0"}
    for node in root.iter("node"):
        assert tuple(a for a in node.attrib if a not in OPTIONAL_ATTRIBUTES) == NODE_ATTRIBUTES, node.attrib
        x0, y0, x1, y1 = parse_bounds(node.attrib["bounds"])
        assert 0 <= x0 <= x1 <= 1080 and 0 <= y0 <= y1 <= 2400
    sim, rec = parse_hierarchy(simulated), parse_hierarchy(RECORDED)
    assert sim and rec
    fields = [f.name for f in dataclasses.fields(UIElement)]
    for a, b in zip(sim, rec, strict=False):
        assert [type(getattr(a, f)) for f in fields] == [type(getattr(b, f)) for f in fields]
        assert a.public(1 / 3).keys() == b.public(1 / 3).keys()
    # Both dumps have the same kinds of things: a scrollable list, switches, an image button, the status bar.
    for elements in (sim, rec):
        roles = {el.role for el in elements}
        assert {"Switch", "ImageButton", "TextView"} <= roles, roles
        assert any(el.package == "com.android.systemui" for el in elements)
        assert any(el.content_desc == "Add alarm" for el in elements)
    for dump in (simulated, RECORDED):
        assert 'class="androidx.recyclerview.widget.RecyclerView"' in dump


#: A login screen as a real device dumps it (uiautomator with hints): an empty e-mail field showing its hint, a
#: filled password field, and a disabled button.
LOGIN = """<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation="0">
<node index="0" text="" resource-id="" class="android.widget.FrameLayout" package="com.example.app" content-desc="" checkable="false" checked="false" clickable="false" enabled="true" focusable="false" focused="false" scrollable="false" long-clickable="false" password="false" selected="false" bounds="[0,0][1080,2400]">
<node index="0" text="Email address" resource-id="com.example.app:id/email" class="android.widget.EditText" package="com.example.app" content-desc="" checkable="false" checked="false" clickable="true" enabled="true" focusable="true" focused="true" scrollable="false" long-clickable="true" password="false" selected="false" hint="Email address" bounds="[60,400][1020,540]" />
<node index="1" text="••••" resource-id="com.example.app:id/password" class="android.widget.EditText" package="com.example.app" content-desc="" checkable="false" checked="false" clickable="true" enabled="true" focusable="true" focused="false" scrollable="false" long-clickable="true" password="true" selected="false" hint="Password" bounds="[60,580][1020,720]" />
<node index="2" text="Continue with Email" resource-id="com.example.app:id/continue" class="android.widget.Button" package="com.example.app" content-desc="" checkable="false" checked="false" clickable="true" enabled="false" focusable="true" focused="false" scrollable="false" long-clickable="false" password="false" selected="false" bounds="[60,800][1020,940]" />
</node></hierarchy>"""


def test_a_hint_is_kept_and_never_shown_as_value_and_a_disabled_button_is_not_clickable() -> None:
    email, password, button = parse_hierarchy(LOGIN)
    assert (email.hint, email.value, email.label) == ("Email address", "", "Email address")
    record = email.public()
    assert (record["value"], record["hint"], record["focused"], record["long_clickable"]) == (
        "",
        "Email address",
        True,
        True,
    )
    assert (password.value, password.public()["password"], password.public()["hint"]) == (
        "\u2022" * 4,
        True,
        "Password",
    )
    assert button.clickable and not button.enabled  # the device's flag, kept on the element
    record = button.public()
    assert (record["clickable"], record["enabled"]) == (False, False)
    assert record["resource_id"] == "com.example.app:id/continue" and record["package"] == "com.example.app"
    # A dump without hints (older uiautomator) still parses: the hint is "" and the text is the value.
    old = LOGIN.replace(' hint="Email address"', "").replace(' hint="Password"', "")
    assert parse_hierarchy(old)[0].hint == "" and parse_hierarchy(old)[0].value == "Email address"


def test_the_simulated_phone_writes_hints_like_a_device(android_env: GuiAndroidEnv) -> None:
    android_env.reset(options={"task": "contacts.create_contact", "seed": 0})
    android_env.backend.app_start("com.guigym.contacts")
    android_env._observe()
    fields = [e for e in android_env._elements if e.editable]  # the contacts list's empty search box
    assert fields and all(f.hint and f.text == f.hint and f.value == "" for f in fields), fields
    records = [r for r in android_env.public_elements() if r["role"] == "EditText"]
    assert records and all(r["value"] == "" and r["hint"] == r["text"] for r in records)
    assert {
        "enabled",
        "checked",
        "focused",
        "selected",
        "scrollable",
        "long_clickable",
        "password",
    } <= records[0].keys()
