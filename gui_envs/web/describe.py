"""ScreenSpot-style referring expressions for elements of the bundled sites' pages.

A grounding instruction that quotes the target's visible text is solved by string matching against the
element list, so it measures nothing about grounding. ScreenSpot describes targets by function ("the button
that puts the webcam in the basket"), by position ("the third link of the top menu", "the title of the second
product") or by paraphrase ("the box for the delivery address"). This module builds such descriptions from the
page structure (which card, list row or labelled row an element sits in, the form it submits, its link
target, its place among elements of its kind), keeps only those that pick out exactly one candidate on the
page, and draws one with the episode's generator.
"""

from __future__ import annotations

import re
import urllib.parse
from collections import defaultdict
from typing import Any

from gui_envs.tasks.grounding import ordinal

# Structure around each element, in one round trip: the region it sits in (the header's brand or menu, or the
# main content), the enclosing group (product card, list row, labelled row, table row), the group's label and
# other texts, the form it belongs to and the page heading.
CONTEXT_JS = r"""
(ids) => {
  const wanted = new Set(ids);
  const groups = new Map();
  const counters = {};
  const kindOf = (g) => g.matches('.card') ? 'card' : g.matches('.post') ? 'post' : g.matches('tr') ? 'tr' : 'row';
  for (const g of document.querySelectorAll('.card, .post, tr, .row')) {
    const k = kindOf(g);
    counters[k] = (counters[k] || 0) + 1;
    groups.set(g, {kind: k, index: counters[k]});
  }
  const h1 = document.querySelector('main h1');
  const out = {};
  for (const el of document.querySelectorAll('[data-guigym-id]')) {
    const id = el.getAttribute('data-guigym-id');
    if (!wanted.has(id)) continue;
    const g = el.closest('.card, .post, tr, .row');
    const info = g ? groups.get(g) : null;
    let label = '';
    if (g) for (const n of g.childNodes) {
      if (n.nodeType === 3 && n.textContent.trim()) { label = n.textContent.trim().replace(/:$/, ''); break; }
      if (n.nodeType === 1) break;
    }
    const anchors = [];
    if (g) for (const a of g.querySelectorAll('a, span, div, b, td, .price')) {
      if (a === el || a.contains(el) || el.contains(a) || a.children.length) continue;
      const t = a.innerText.replace(/\s+/g, ' ').trim();
      if (t) anchors.push(t);
    }
    const form = el.form || el.closest('form');
    const lab = el.tagName === 'LABEL' ? el.querySelector('input, select, textarea') : null;
    out[id] = {
      area: el.closest('a.brand') ? 'brand' : el.closest('nav') ? 'nav' : 'main',
      group_kind: info ? info.kind : '', group_index: info ? info.index : 0,
      group_count: info ? counters[info.kind] : 0, group_label: label, anchors: anchors.slice(0, 6),
      action: form ? (form.getAttribute('action') || '') : '', type: (el.type || '').toLowerCase(),
      value: el.tagName === 'BUTTON' ? (el.value || '') : '',
      in_label: !!(el.closest('label') && el.tagName !== 'LABEL'),
      wraps: lab ? (lab.type === 'radio' || lab.type === 'checkbox' ? 'option' : 'field') : '',
      heading: h1 ? h1.innerText.trim() : '',
    };
  }
  return out;
}
"""


#: What a link in the header's menu does, by its path (the visible word is never used).
_NAV_FUNCTION: dict[str, str] = {
    "/cart": "the shopping basket link in the header",
    "/wishlist": "the header link to the items saved for later",
    "/orders": "the header link to your purchase history",
    "/post": "the header link for advertising something you want to sell",
    "/my-ads": "the header link to the adverts you have published yourself",
    "/favourites": "the header link to the adverts you bookmarked",
}

#: What a form's submit button does, by the end of the form's action path; ``{item}`` is the page's subject.
_BUTTON_FUNCTION: tuple[tuple[str, str], ...] = (
    ("/cart/add", "the button that puts {item} in the shopping basket"),
    ("/wishlist/add", "the button that saves {item} for later"),
    ("/wishlist/remove", "the button that takes {item} off the saved-for-later list"),
    ("/favourite", "the button that bookmarks or un-bookmarks this advert"),
    ("/subscribe", "the button that follows or stops following this community"),
    ("/delete", "the button that erases this page's content for good"),
    ("/comment", "the button that sends your reply"),
    ("/checkout", "the button that confirms the purchase"),
    ("/bio", "the button that stores your profile blurb"),
)

#: Paraphrases of text fields, by the input's ``name`` (never the field's visible label).
_FIELD_FUNCTION: dict[str, str] = {
    "q": "the box where you type what to look for",
    "qty": "the box for how many units you want",
    "name": "the box for the recipient of the parcel",
    "address": "the box for where the parcel should be delivered",
    "title": "the headline box",
    "price": "the box for the asking amount in dollars",
    "description": "the large box describing the item",
    "bio": "the box for your profile blurb",
}

_SORT_FUNCTION: dict[str, str] = {
    "price_asc": "the option that lists the cheapest items first",
    "price_desc": "the option that lists the most expensive items first",
    "rating": "the option that lists the items people liked most first",
    "name": "the option that lists the items alphabetically",
    "new": "the option that shows the most recent threads first",
    "top": "the option that shows the most upvoted threads first",
    "title": "the option that orders the threads alphabetically",
    "cheap": "the option that lists the cheapest items first",
    "pricey": "the option that lists the most expensive items first",
    "newest": "the option that shows the most recent adverts first",
}

_GROUP_NOUN = {"card": "product", "post": "entry in the list", "tr": "row of the table"}


def element_kind(el: dict[str, Any], ctx: dict[str, Any]) -> str:
    """``link``, ``button``, ``field`` or ``option``: what an instruction calls the element."""
    if el["tag"] == "a":
        return "link"
    if el["tag"] == "label":
        return ctx["wraps"] or "option"
    if el["tag"] in ("textarea", "select") or (el["tag"] == "input" and ctx["type"] not in _BUTTON_TYPES):
        return "option" if ctx["type"] in ("radio", "checkbox") else "field"
    return "button"


_BUTTON_TYPES = ("submit", "button", "reset", "image")


def targetable(el: dict[str, Any], ctx: dict[str, Any]) -> bool:
    """One box per control: a radio's ``<label>`` rather than its dot, a text field rather than its label."""
    kind = element_kind(el, ctx)
    if el["tag"] == "label":
        return kind == "option"
    return not (kind == "option" and ctx["in_label"])


def candidate_descriptions(
    el: dict[str, Any], ctx: dict[str, Any], peers: dict[str, list[str]], viewport: tuple[int, int]
) -> list[str]:
    """Every structural description of ``el``; uniqueness on the page is checked by the caller.

    Args:
        el: the element record (``observation.PageView`` form).
        ctx: its structure, from :data:`CONTEXT_JS`.
        peers: ids of the page's candidate elements keyed by ``"<scope>|<kind>"`` in document order, for
            ordinals (``page|button``, ``group:<kind>:<index>|link``, ``nav|link``).
        viewport: ``(width, height)`` in pixels, for coarse screen positions.
    """
    kind = element_kind(el, ctx)
    out: list[str] = []

    def rank(scope: str) -> tuple[int, int] | None:
        ids = peers.get(f"{scope}|{kind}", [])
        return (ids.index(el["id"]) + 1, len(ids)) if el["id"] in ids else None

    if ctx["area"] == "brand":
        out += ["the site's logo at the top left of the page", "the site name in the page header"]
    elif ctx["area"] == "nav":
        r = rank("nav")
        if r:
            out.append(f"the {ordinal(*r)} link of the menu at the top of the page")
        path = urllib.parse.urlsplit(el.get("href", "")).path
        if path in _NAV_FUNCTION:
            out.append(_NAV_FUNCTION[path])
    group = f"group:{ctx['group_kind']}:{ctx['group_index']}" if ctx["group_kind"] else ""
    if group and ctx["area"] == "main":
        r, noun = rank(group), _GROUP_NOUN.get(ctx["group_kind"])
        place = ordinal(ctx["group_index"], ctx["group_count"])
        if r and noun and (r[1] == 1 or (kind == "link" and r[0] == 1)):
            if kind == "link":
                out.append(f"the {'name' if ctx['group_kind'] == 'card' else 'title'} of the {place} {noun}")
            else:
                out.append(f"the {kind} in the {place} {noun}")
        elif r and noun:
            out.append(f"the {ordinal(*r)} {kind} in the {place} {noun}")
        money = [a for a in ctx["anchors"] if re.fullmatch(r"\$[\d,.]+", a)]
        if noun and money and kind in ("link", "button"):
            out.append(f"the {kind} beside the price {money[0]}")
        if ctx["group_label"] and r:
            out.append(f"the {ordinal(*r)} {kind} in the row labelled {ctx['group_label']}")
        if kind == "link" and "/user/" in el.get("href", ""):
            out.append(f"the author's name in the {place} {noun or 'row'}")
    query = urllib.parse.parse_qs(urllib.parse.urlsplit(el.get("href", "")).query)
    if kind == "link" and "sort" in query and query["sort"][0] in _SORT_FUNCTION:
        out.append(_SORT_FUNCTION[query["sort"][0]])
    if kind == "button":
        item = f'"{ctx["heading"]}"' if ctx["heading"] else "this item"
        for suffix, template in _BUTTON_FUNCTION:
            if ctx["action"].endswith(suffix):
                out.append(template.format(item=item))
                break
        if ctx["value"] in ("up", "down"):
            out.append(f"the thumbs-{ctx['value']} button")
    if kind == "field" and el.get("name") in _FIELD_FUNCTION:
        out.append(_FIELD_FUNCTION[el["name"]])
    r = rank("page")
    if r and r[0] <= 5:
        out.append(f"the {ordinal(*r)} {'text box' if kind == 'field' else kind} on the page")
    out.append(f"the {kind} at the {screen_region(el['bbox'], viewport)} of the page")
    return out


def screen_region(bbox: list[float], viewport: tuple[int, int]) -> str:
    """Which ninth of the viewport (pixels) holds the bbox centre: ``top left`` ... ``bottom right``.

    >>> screen_region([0, 0, 10, 10], (1280, 720)), screen_region([600, 300, 680, 420], (1280, 720))
    ('top left', 'centre')
    """
    width, height = viewport
    cx, cy = (bbox[0] + bbox[2]) / 2, (bbox[1] + bbox[3]) / 2
    row = ("top", "middle", "bottom")[min(2, int(3 * cy / height))]
    col = ("left", "centre", "right")[min(2, int(3 * cx / width))]
    return "centre" if (row, col) == ("middle", "centre") else f"{row} {col}"


def describe_page(
    elements: list[dict[str, Any]], contexts: dict[str, dict[str, Any]], viewport: tuple[int, int]
) -> dict[str, list[str]]:
    """The unambiguous descriptions of each candidate: id -> descriptions no other candidate shares.

    Args:
        elements: the candidate elements (targetable, visible, clickable), in document order.
        contexts: id -> structure from :data:`CONTEXT_JS`.
        viewport: ``(width, height)`` in pixels.
    """
    peers: dict[str, list[str]] = defaultdict(list)
    for el in elements:
        ctx = contexts[el["id"]]
        kind = element_kind(el, ctx)
        peers[f"page|{kind}"].append(el["id"])
        if ctx["area"] == "nav":
            peers[f"nav|{kind}"].append(el["id"])
        if ctx["group_kind"]:
            peers[f"group:{ctx['group_kind']}:{ctx['group_index']}|{kind}"].append(el["id"])
    options = {el["id"]: candidate_descriptions(el, contexts[el["id"]], peers, viewport) for el in elements}
    owners: dict[str, set[str]] = defaultdict(set)
    for element_id, texts in options.items():
        for text in texts:
            owners[text].add(element_id)
    return {i: [t for t in dict.fromkeys(texts) if len(owners[t]) == 1] for i, texts in options.items()}
