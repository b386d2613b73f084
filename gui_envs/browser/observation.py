"""Page observation: element extraction in one ``page.evaluate`` call, screenshots, Set-of-Marks, a text tree, and
the observation dict every screen env (web and phone) assembles from them (:func:`screen_observation`).

Element ids are stable within a page: the extraction script stamps ``data-guigym-id="<n>"`` on candidate
elements in DOM order the first time it sees them and reuses the stamp afterwards, so a re-extraction of the
same document gives the same ids, and an element keeps its id while scripts change the page around it.
"""

from __future__ import annotations

import base64
import io
import json
import string
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from gymnasium import spaces

#: Clears every id stamp on the page and restarts the count at 0, so that the next extraction numbers elements
#: in DOM order as on a freshly loaded page. For envs that start a new episode in the same document (MiniWoB):
#: without it ids keep counting across episodes and one seed's observation differs between resets.
RESTART_ELEMENT_IDS_JS = (
    "() => { for (const el of document.querySelectorAll('[data-guigym-id]')) el.removeAttribute('data-guigym-id');"
    " window.__guigymNext = 0; }"
)

#: Characters allowed in the env's Text spaces (JSON, URLs, page text). Page text outside it becomes "?".
CHARSET: str = (
    string.ascii_letters
    + string.digits
    + string.punctuation
    + " \n\t"
    + "".join(chr(c) for c in range(0xA0, 0x180))
    + "\u2013\u2014\u2018\u2019\u201c\u201d\u2022\u2026\u20ac\u2122\u00b7\u2190\u2191\u2192\u2193\u2605\u2606"
)
_CHARSET_SET = frozenset(CHARSET)
#: Longest ``elements`` JSON in characters; longer lists are cut at the last element that fits.
MAX_ELEMENTS_CHARS = 100_000
#: Longest text of an observation's other Text fields (URL, instruction, app), in characters.
MAX_TEXT = 4096

# Interactive elements, plus text-bearing ones (headings, cells, paragraphs) so text-only agents can read.
_EXTRACT_JS = r"""
([maxElements, skip]) => {
  const W = window.innerWidth, H = window.innerHeight;
  const interactive = 'a[href],button,input,select,textarea,summary,label,[role=button],[role=link],' +
      '[role=checkbox],[role=radio],[role=tab],[role=menuitem],[role=option],[onclick],[tabindex],[contenteditable=true]';
  const textual = 'h1,h2,h3,h4,p,li,td,th,span,div,b';
  if (window.__guigymNext === undefined) window.__guigymNext = 0;
  const out = [];
  const all = document.body ? document.body.querySelectorAll('*') : [];
  for (const el of all) {
    if (out.length >= maxElements) break;
    if (skip && el.closest(skip)) continue;
    const isInteractive = el.matches(interactive);
    let ownText = '';
    if (!isInteractive) {
      if (!el.matches(textual)) continue;
      for (const n of el.childNodes) if (n.nodeType === 3) ownText += n.textContent;
      ownText = ownText.replace(/\s+/g, ' ').trim();
      if (!ownText) continue;
    }
    if (el.type === 'hidden') continue;
    const r = el.getBoundingClientRect();
    if (r.width < 1 || r.height < 1) continue;
    const st = getComputedStyle(el);
    if (st.visibility === 'hidden' || st.display === 'none' || Number(st.opacity) === 0) continue;
    let id = el.getAttribute('data-guigym-id');
    if (id === null) { id = String(window.__guigymNext++); el.setAttribute('data-guigym-id', id); }
    const tag = el.tagName.toLowerCase();
    let text = isInteractive ? (el.getAttribute('aria-label') || el.innerText || el.getAttribute('placeholder')
        || el.getAttribute('title') || el.getAttribute('alt') || el.value || '') : ownText;
    if ((tag === 'input' || tag === 'textarea' || tag === 'select') && !el.getAttribute('aria-label') &&
        el.labels && el.labels.length) text = el.labels[0].innerText;
    text = String(text).replace(/\s+/g, ' ').trim().slice(0, 200);
    let value = '';
    if (tag === 'input' || tag === 'textarea') value = (el.type === 'checkbox' || el.type === 'radio') ?
        (el.checked ? 'checked' : '') : el.value;
    else if (tag === 'select') value = el.selectedIndex >= 0 ? el.options[el.selectedIndex].text : '';
    out.push({
      id, tag, role: el.getAttribute('role') || (tag === 'input' ? (el.type || 'text') : tag), text,
      value: String(value || '').slice(0, 200),
      bbox: [r.left, r.top, r.right, r.bottom],
      clickable: isInteractive,
      visible: r.right > 0 && r.bottom > 0 && r.left < W && r.top < H,
      name: el.getAttribute('name') || '', href: el.getAttribute('href') || '',
      type: tag === 'input' ? (el.type || 'text') : '',
      options: tag === 'select' ? Array.from(el.options, o => o.text.replace(/\s+/g, ' ').trim().slice(0, 200))
          .slice(0, 100) : [],
    });
  }
  return {url: location.href, title: document.title, scrollY: window.scrollY,
          pageHeight: document.documentElement.scrollHeight, elements: out};
}
"""


@dataclass
class PageView:
    """What one extraction saw.

    Attributes:
        url: the page URL.
        title: the document title.
        elements: every candidate element, on screen or not (the oracle scrolls to off-screen ones); each a
            dict with ``id``, ``tag``, ``role``, ``text``, ``value``, ``bbox`` ``[x0, y0, x1, y1]`` in
            screenshot pixels (relative to the viewport, may lie outside it), ``clickable``, ``visible``,
            ``name``, ``href``, ``type`` (an ``<input>``'s type, else ``""``) and ``options`` (a ``<select>``'s
            option texts in order, at most 100, else ``[]``).
        scroll_y: vertical scroll offset in pixels.
        page_height: document height in pixels.
    """

    url: str
    title: str
    elements: list[dict[str, Any]]
    scroll_y: float = 0.0
    page_height: float = 0.0

    @property
    def visible(self) -> list[dict[str, Any]]:
        """The elements inside the viewport: what the agent's observation lists."""
        return [el for el in self.elements if el["visible"]]

    def by_id(self, element_id: str) -> dict[str, Any] | None:
        for el in self.elements:
            if el["id"] == element_id:
                return el
        return None

    def bbox_of(self, element_id: str | None, size: tuple[int, int]) -> list[int] | None:
        """The bbox of element ``element_id`` in whole pixels, clipped to the viewport ``size`` = (width, height);
        ``None`` when no id is given or no element has it."""
        el = self.by_id(element_id) if element_id else None
        return clip_bbox(el["bbox"], size) if el is not None else None


def extract(page: Any, max_elements: int = 600, skip: str | None = None) -> PageView:
    """Run the extraction script in the page (one round trip). Runs in the browser thread.

    ``skip``: a CSS selector; elements inside a match (the match included) are left out, e.g. a page's own
    scoreboard that is not part of the task.
    """
    raw = page.evaluate(_EXTRACT_JS, [max_elements, skip])
    return PageView(
        url=raw["url"],
        title=raw["title"],
        elements=raw["elements"],
        scroll_y=float(raw["scrollY"]),
        page_height=float(raw["pageHeight"]),
    )


#: Each page's CDP session for :func:`screenshot`, opened on its first capture (opening one costs a round trip).
_CAPTURERS: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()


def screenshot(page: Any, image_format: str = "jpeg", quality: int = 90) -> bytes:
    """Capture the viewport. JPEG is faster to capture and decode than PNG (see ``benchmarks/web_speed.py``).

    One CDP ``Page.captureScreenshot``: the bytes Playwright's ``page.screenshot`` gives with these settings
    (animations running, caret as it is; ``tests/gui_envs/web/test_capture.py``) without the four other round trips
    it makes to the page: a style set up and taken down in every frame (these settings need none), the page's layout
    metrics, and ``document.fonts.ready`` (the bundled sites load no web fonts). They were 10-30% of a web step's
    time (``docs/rollout_speed.md``). A page that has no CDP session (not Chromium) is captured by Playwright."""
    capturer = _CAPTURERS.get(page)
    if capturer is None:
        try:
            capturer = _CAPTURERS[page] = page.context.new_cdp_session(page)
        except Exception:  # noqa: BLE001 - not Chromium: Playwright's capture, same settings
            kind = {"type": "png"} if image_format == "png" else {"type": "jpeg", "quality": quality}
            return page.screenshot(**kind, animations="allow", caret="initial")
    params = {"format": "png"} if image_format == "png" else {"format": "jpeg", "quality": quality}
    return base64.b64decode(capturer.send("Page.captureScreenshot", params)["data"])


def observe(
    page: Any, timeout_ms: float, image_format: str | None = "jpeg", skip: str | None = None
) -> tuple[PageView, bytes]:
    """Extract the elements (leaving out those under the CSS selector ``skip``) and capture the viewport
    (``image_format=None``: no capture, ``b""``). Runs in the browser thread; a navigation that replaced the
    document under the extraction is waited for (``timeout_ms``)."""
    from playwright.sync_api import Error as PlaywrightError

    for attempt in range(3):
        try:
            view = extract(page, skip=skip)
            break
        except PlaywrightError as exc:
            # A navigation that started late (a script's timer, a slow form) replaced the document under us:
            # wait for the new one and extract again.
            if attempt == 2 or "context was destroyed" not in str(exc):
                raise
            page.wait_for_load_state("load", timeout=timeout_ms)
    return view, screenshot(page, image_format) if image_format is not None else b""


def observe_decoded(
    page: Any, observe: Callable[[Any], tuple[PageView, bytes]], size: tuple[int, int]
) -> tuple[PageView, bytes, np.ndarray | None]:
    """``observe(page)`` and its screenshot decoded to (H, W, 3) uint8 (``None`` without a capture). A start prepared
    in the background (:mod:`gui_envs.browser.prefetch`) is observed so: the decode (tens of ms at 1280x720 on a
    busy core) is done there, off the reset's path, and group members copy the array instead of decoding again."""
    view, image = observe(page)
    return view, image, decode(image, size) if image else None


def decode(image: bytes, size: tuple[int, int]) -> np.ndarray:
    """Decode PNG/JPEG bytes to an (H, W, 3) uint8 array; pads or crops to ``size`` = (width, height)."""
    from PIL import Image

    with Image.open(io.BytesIO(image)) as img:
        return fit_frame(np.asarray(img.convert("RGB")), size)


def fit_frame(array: np.ndarray, size: tuple[int, int]) -> np.ndarray:
    """``array`` (H, W, 3) uint8 padded with black or cropped at the bottom right to ``size`` = (width, height)
    pixels; the observation's screenshot has a fixed shape even when a capture comes back a pixel off."""
    width, height = size
    if array.shape[:2] == (height, width):
        return array
    fixed = np.zeros((height, width, 3), np.uint8)
    h, w = min(height, array.shape[0]), min(width, array.shape[1])
    fixed[:h, :w] = array[:h, :w]
    return fixed


def clean_text(text: str) -> str:
    """Replace characters outside :data:`CHARSET` by ``?`` so the value fits the env's Text spaces."""
    if all(c in _CHARSET_SET for c in text):
        return text
    return "".join(c if c in _CHARSET_SET else "?" for c in text)


def clip_bbox(bbox: list[float], size: tuple[int, int]) -> list[int]:
    """Round ``[x0, y0, x1, y1]`` to whole pixels and clip it to the viewport ``size`` = (width, height)."""
    width, height = size
    x0, y0, x1, y1 = bbox
    return [
        int(max(0, min(width, round(x0)))),
        int(max(0, min(height, round(y0)))),
        int(max(0, min(width, round(x1)))),
        int(max(0, min(height, round(y1)))),
    ]


def public_elements(view: PageView, size: tuple[int, int]) -> list[dict[str, Any]]:
    """The observation's element list: visible elements only, bboxes clipped to the viewport.

    Each record: ``id``, ``role`` (ARIA role, else the input type or the tag), ``text``, ``value``, ``bbox``
    ``[x0, y0, x1, y1]`` (screenshot pixels), ``clickable``, ``tag`` (lower-case HTML tag), ``type`` (an
    ``<input>``'s type, ``""`` otherwise) and ``options`` (a ``<select>``'s option texts in order, ``[]``
    otherwise), so multi-word options and input kinds are unambiguous to text-only agents.
    """
    return [
        {
            "id": el["id"],
            "role": el["role"],
            "text": clean_text(el["text"]),
            "value": clean_text(el["value"]),
            "bbox": clip_bbox(el["bbox"], size),
            "clickable": bool(el["clickable"]),
            "tag": el["tag"],
            "type": clean_text(el.get("type", "")),
            "options": [clean_text(o) for o in el.get("options", [])],
        }
        for el in view.visible
    ]


def elements_json(elements: list[dict[str, Any]]) -> str:
    """Compact JSON of the element list (what ``observation["elements"]`` holds)."""
    return json.dumps(elements, separators=(",", ":"), ensure_ascii=True)


def fit_elements(
    elements: list[dict[str, Any]], limit: int = MAX_ELEMENTS_CHARS
) -> tuple[list[dict[str, Any]], str]:
    """``(elements, json)`` with the list cut (by tenths) until its JSON has at most ``limit`` characters."""
    text = elements_json(elements)
    while len(text) > limit and elements:
        elements = elements[: len(elements) * 9 // 10]
        text = elements_json(elements)
    return elements, text


def parse_elements(text: str) -> list[dict[str, Any]]:
    """Inverse of :func:`elements_json`: the list of element dicts of an observation."""
    return json.loads(text)


def axtree_text(elements: list[dict[str, Any]], title: str = "") -> str:
    """A compact accessibility-tree-like text: one line per element, ``[id] role "text" value=...``."""
    lines = [f"page {title!r}"] if title else []
    for el in elements:
        line = f"[{el['id']}] {el['role']} {json.dumps(el['text'], ensure_ascii=True)}"
        if el["value"]:
            line += f" value={json.dumps(el['value'], ensure_ascii=True)}"
        if el["clickable"]:
            line += " clickable"
        lines.append(line)
    return "\n".join(lines)


def draw_marks(image: np.ndarray, elements: list[dict[str, Any]]) -> np.ndarray:
    """Set-of-Marks: draw each clickable element's box and id on a copy of the screenshot."""
    from PIL import Image, ImageDraw

    canvas = Image.fromarray(image)
    draw = ImageDraw.Draw(canvas)
    for el in elements:
        if not el["clickable"]:
            continue
        x0, y0, x1, y1 = el["bbox"]
        if x1 <= x0 or y1 <= y0:
            continue
        draw.rectangle((x0, y0, x1 - 1, y1 - 1), outline=(230, 30, 30), width=2)
        label = str(el["id"])
        w = 7 * len(label) + 4
        draw.rectangle((x0, y0, x0 + w, y0 + 12), fill=(230, 30, 30))
        draw.text((x0 + 2, y0), label, fill=(255, 255, 255))
    return np.asarray(canvas)


def screen_spaces(
    size: tuple[int, int], texts: tuple[str, ...], som: bool = False, axtree: bool = False
) -> dict[str, spaces.Space[Any]]:
    """The spaces of :func:`screen_observation`'s keys: ``screenshot`` (and ``som``) ``Box(0, 255, (H, W, 3),
    uint8)`` for ``size`` = (W, H) pixels, ``elements`` (and ``axtree``) ``Text`` of at most
    :data:`MAX_ELEMENTS_CHARS` characters, and a ``Text`` of at most :data:`MAX_TEXT` characters per name in
    ``texts``."""
    width, height = size
    out: dict[str, spaces.Space[Any]] = {
        "screenshot": spaces.Box(0, 255, (height, width, 3), np.uint8),
        "elements": spaces.Text(MAX_ELEMENTS_CHARS, min_length=0, charset=CHARSET),
        **{name: spaces.Text(MAX_TEXT, min_length=0, charset=CHARSET) for name in texts},
    }
    if som:
        out["som"] = spaces.Box(0, 255, (height, width, 3), np.uint8)
    if axtree:
        out["axtree"] = spaces.Text(MAX_ELEMENTS_CHARS, min_length=0, charset=CHARSET)
    return out


def screen_observation(
    frame: np.ndarray,
    elements: list[dict[str, Any]],
    texts: dict[str, str],
    som: bool = False,
    axtree: bool = False,
    title: str = "",
) -> dict[str, Any]:
    """The observation of a screen env (web page or phone), less its ``step``.

    Args:
        frame: the screenshot, (H, W, 3) uint8 pixels; the observation holds a copy (callers may keep or modify it).
        elements: the public element records (bboxes in screenshot pixels); the JSON is cut to
            :data:`MAX_ELEMENTS_CHARS` characters (:func:`fit_elements`), and ``som`` / ``axtree`` show the same cut.
        texts: the Text fields in order (``url``, ``instruction``, ``app``...), cleaned and cut to :data:`MAX_TEXT`.
        som: add ``som``, the screenshot with Set-of-Marks boxes and ids (:func:`draw_marks`).
        axtree: add ``axtree`` (:func:`axtree_text`, headed by the page ``title`` when there is one).
    """
    elements, text = fit_elements(elements)
    obs: dict[str, Any] = {
        "screenshot": frame.copy(),
        "elements": text,
        **{name: clean_text(value)[:MAX_TEXT] for name, value in texts.items()},
    }
    if som:
        obs["som"] = draw_marks(frame, elements)
    if axtree:
        obs["axtree"] = axtree_text(elements, title)[:MAX_ELEMENTS_CHARS]
    return obs
