"""The phone-app framework: a :class:`PhoneApp` is a bundled site with an Android package name.

Apps are server-rendered HTML served in-process (:mod:`gui_envs.browser.site`), styled for a 360 x 800 CSS
pixel screen. Every page shares one layout: a status bar, an app bar (title, an up arrow, action buttons), a
scrolling content area (``<main>``, the ``RecyclerView``), and the soft keyboard, which slides in when a text
field has focus and shrinks the content area above it (Android's ``adjustResize``).

Android class names come from the markup: each helper below tags its element with ``data-class`` where the
tag alone would be ambiguous; the hierarchy script in :mod:`gui_envs.android.simulated` maps the rest.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from typing import Any, ClassVar

from gui_envs.browser.site import LIKE_LITERAL, Response, Site, html_escape, like_contains

#: The system UI's package (status bar) and the soft keyboard's, as on a Pixel.
SYSTEMUI_PACKAGE = "com.android.systemui"
KEYBOARD_PACKAGE = "com.google.android.inputmethod.latin"

CSS = """
*{box-sizing:border-box;-webkit-tap-highlight-color:transparent}
html,body{margin:0;height:100%;overflow:hidden}
body{font:15px/1.35 'DejaVu Sans',Roboto,Arial,sans-serif;color:#1b1b1f;background:#fdfbff}
#statusbar{position:fixed;top:0;left:0;right:0;height:24px;display:flex;justify-content:space-between;
 align-items:center;padding:0 14px;font-size:12px;background:#e9e7ef;color:#333;z-index:5}
.appbar{position:fixed;top:24px;left:0;right:0;height:56px;display:flex;align-items:center;gap:6px;
 padding:0 6px 0 12px;background:var(--accent,#3f51b5);color:#fff;z-index:4}
.appbar h1{flex:1;font-size:19px;font-weight:500;margin:0 0 0 6px;white-space:nowrap;overflow:hidden}
.appbar a,.appbar button{color:#fff;background:none;border:0;font:inherit;font-size:15px;padding:10px 8px;
 text-decoration:none}
.appbar .up{font-size:22px;padding:6px 10px}
main{position:fixed;top:80px;left:0;right:0;bottom:0;overflow-y:auto;padding:8px 12px 90px}
body.noappbar main{top:24px}
body.kbd-open main{bottom:282px}
.row{display:flex;align-items:center;gap:10px;min-height:56px;padding:8px 6px;border-bottom:1px solid #e2e0ea;
 color:inherit;text-decoration:none}
.row>.row{flex:1;border:0}.row .grow{flex:1;display:flex;flex-direction:column}.row .t{font-size:16px}.row .s{font-size:13px;color:#666}
.fab{position:fixed;right:18px;bottom:22px;width:56px;height:56px;border-radius:16px;background:var(--accent,#3f51b5);
 color:#fff;font-size:30px;display:flex;align-items:center;justify-content:center;text-decoration:none;z-index:3;
 border:0}
body.kbd-open .fab{display:none}
.field{display:block;width:100%;font:inherit;font-size:16px;padding:12px 10px;margin:8px 0;border:1px solid #999;
 border-radius:6px;background:#fff}
textarea.field{height:120px;resize:none}
.btn{font:inherit;font-size:15px;padding:10px 18px;margin:6px 6px 6px 0;border:0;border-radius:20px;
 background:var(--accent,#3f51b5);color:#fff;text-decoration:none;display:inline-block}
.btn.flat{background:#e8e6f0;color:#1b1b1f}
.chips{display:flex;flex-wrap:wrap;gap:6px;margin:6px 0}
.chip{display:inline-flex;align-items:center;padding:8px 12px;border:1px solid #999;border-radius:16px;font-size:14px}
.chip input{display:none}.chip.on{background:var(--accent,#3f51b5);color:#fff;border-color:transparent}
.switchrow{display:flex;align-items:center;justify-content:space-between;min-height:56px;padding:8px 6px;
 border-bottom:1px solid #e2e0ea;font-size:16px}
.switchrow input{width:44px;height:24px;accent-color:var(--accent,#3f51b5)}
input[role=switch]{appearance:none;flex:0 0 44px;border-radius:12px;background:#b8b8c0;position:relative;margin:0}
input[role=switch]::before{content:'';position:absolute;top:3px;left:3px;width:18px;height:18px;border-radius:50%;
 background:#fff}
input[role=switch]:checked{background:var(--accent,#3f51b5)}input[role=switch]:checked::before{left:23px}
.tabs{display:flex;border-bottom:1px solid #ccc;margin:-8px -12px 8px}
.tabs a{flex:1;text-align:center;padding:12px 4px;color:#444;text-decoration:none;font-size:15px}
.tabs a.on{color:var(--accent,#3f51b5);border-bottom:3px solid var(--accent,#3f51b5);font-weight:bold}
.big{font-size:44px;text-align:center;margin:24px 0;font-variant-numeric:tabular-nums}
.muted{color:#666}.empty{color:#666;text-align:center;margin:40px 0;font-size:16px}
.search{display:flex;gap:6px;align-items:center}.search .field{flex:1}
h2{font-size:15px;color:var(--accent,#3f51b5);margin:14px 0 4px}
body[data-theme=dark]{background:#1b1b1f;color:#e4e1e6}
body[data-theme=dark] #statusbar{background:#111114;color:#ddd}
body[data-theme=dark] .row,body[data-theme=dark] .switchrow{border-color:#3a3a40}
body[data-theme=dark] .row .s,body[data-theme=dark] .muted,body[data-theme=dark] .empty{color:#a8a8b0}
body[data-theme=dark] .field{background:#2a2a30;color:#e4e1e6;border-color:#77777f}
body[data-theme=dark] .btn.flat{background:#33333a;color:#e4e1e6}
body[data-theme=dark] .tabs a{color:#c8c8d0}body[data-theme=dark] .chip{border-color:#77777f}
body[data-theme=dark] .icon{color:#eee}body[data-theme=dark] #kbd{background:#2b2b30}
body[data-theme=dark] #kbd .k{background:#46464e;color:#eee}
#kbd{position:fixed;left:0;right:0;bottom:0;height:282px;background:#d6d9e0;padding:6px 3px;display:none;z-index:9}
#kbd.show{display:block}
#kbd .kr{display:flex;justify-content:center;gap:4px;margin:0 0 6px}
#kbd .k{flex:0 0 31px;height:48px;border-radius:5px;background:#fff;display:flex;align-items:center;
 justify-content:center;font-size:18px;color:#222}
#kbd .k.w{flex:0 0 48px;background:#b9bec9}#kbd .k.sp{flex:0 0 170px}
"""

_KEY_ROWS: tuple[tuple[str, ...], ...] = (
    tuple("1234567890"),
    tuple("qwertyuiop"),
    tuple("asdfghjkl"),
    ("shift", *tuple("zxcvbnm"), "del"),
    (",", "space", ".", "enter"),
)
_KEY_GLYPH = {"shift": "\u21e7", "del": "\u232b", "enter": "\u21b5", "space": " "}
_KEY_DESC = {"shift": "Shift", "del": "Delete", "enter": "Enter", "space": "Space"}


def keyboard_html() -> str:
    """The soft keyboard: hidden until a text field has focus; each key is a clickable ``Button``."""
    rows = []
    for row in _KEY_ROWS:
        keys = []
        for key in row:
            cls = "k w" if key in ("shift", "del", "enter") else "k sp" if key == "space" else "k"
            desc = f' aria-label="{_KEY_DESC[key]}"' if key in _KEY_DESC else ""
            keys.append(
                f'<div class="{cls}" data-key="{html_escape(key)}" data-class="android.widget.Button" '
                f'data-rid="key_{html_escape(_KEY_DESC.get(key, key).lower())}"{desc}>{html_escape(_KEY_GLYPH.get(key, key))}</div>'
            )
        rows.append(f'<div class="kr">{"".join(keys)}</div>')
    return (
        f'<div id="kbd" data-window="{KEYBOARD_PACKAGE}" data-class="android.widget.FrameLayout">'
        f"{''.join(rows)}</div>"
    )


#: Page script: the keyboard (focus shows it; keys type into the focused field), long-press links, and
#: forms that submit themselves when a switch or chip changes.
PAGE_JS = r"""
(() => {
  const kbd = document.getElementById('kbd');
  const editable = el => !!el && (el.tagName === 'TEXTAREA' || (el.tagName === 'INPUT' &&
      !['checkbox', 'radio', 'range', 'submit', 'button', 'hidden'].includes(el.type)));
  const sync = () => { const on = editable(document.activeElement);
    kbd.classList.toggle('show', on); document.body.classList.toggle('kbd-open', on); };
  document.addEventListener('focusin', sync);
  document.addEventListener('focusout', () => setTimeout(sync, 0));
  kbd.addEventListener('mousedown', ev => ev.preventDefault());
  let shift = false;
  kbd.addEventListener('click', ev => {
    const k = ev.target.closest('[data-key]'); const f = document.activeElement;
    if (!k || !editable(f)) return;
    const key = k.dataset.key;
    if (key === 'shift') { shift = !shift; return; }
    if (key === 'enter') { if (f.tagName === 'TEXTAREA') { f.setRangeText('\n', f.selectionStart, f.selectionEnd, 'end'); }
      else if (f.form) { f.form.requestSubmit(); } return; }
    if (key === 'del') { const s = f.selectionStart, t = f.selectionEnd;
      if (s !== t) f.setRangeText('', s, t, 'end'); else if (s > 0) f.setRangeText('', s - 1, s, 'end'); }
    else { let c = key === 'space' ? ' ' : key; if (shift) { c = c.toUpperCase(); shift = false; }
      f.setRangeText(c, f.selectionStart, f.selectionEnd, 'end'); }
    f.dispatchEvent(new Event('input', {bubbles: true}));
  });
  window.__guigymHideKeyboard = () => { const f = document.activeElement;
    if (editable(f)) { f.blur(); sync(); return true; } return false; };
  let longTimer = null, longFired = false;
  document.addEventListener('mousedown', ev => { const el = ev.target.closest('[data-long]'); if (!el) return;
    longTimer = setTimeout(() => { longFired = true; window.__guigymLeaving = true; location.href = el.dataset.long; }, 500); });
  document.addEventListener('mouseup', () => { clearTimeout(longTimer); });
  document.addEventListener('click', ev => { if (longFired) { ev.preventDefault(); ev.stopPropagation(); longFired = false; } }, true);
  document.addEventListener('change', ev => { const t = ev.target;
    if (t.matches('[data-autosubmit]') && t.form) t.form.requestSubmit(); });
  document.querySelectorAll('input[data-filter]').forEach(inp => inp.addEventListener('input', () => {
    const q = inp.value.trim().toLowerCase();
    document.querySelectorAll(inp.dataset.filter).forEach(el => {
      el.style.display = !q || el.dataset.name.toLowerCase().includes(q) ? '' : 'none'; }); }));
  sync();
})();
"""


class PhoneApp(Site):
    """A bundled phone app: a :class:`~gui_envs.browser.site.Site` with an Android identity.

    Class attributes:
        package: the Android package name (``com.guigym.clock``).
        label: the launcher label (``Clock``).
        accent: the app's colour (CSS).
        glyph: one or two characters drawn on the launcher icon.
        activities: ``(path prefix, activity)`` pairs, longest prefix wins; ``/`` is the main activity.
        aliases: other names ``open_app`` accepts (``"alarm"`` for Clock).
        editable: the tables that hold what the user can change (alarms, contacts, switches); a state task's
            side-effect guard compares them before and after the episode. Logs (``searches``) and where the
            app was left (``prefs``) are not edits.
    """

    package: ClassVar[str] = ""
    label: ClassVar[str] = ""
    accent: ClassVar[str] = "#3f51b5"
    glyph: ClassVar[str] = "?"
    activities: ClassVar[tuple[tuple[str, str], ...]] = (("/", ".MainActivity"),)
    aliases: ClassVar[tuple[str, ...]] = ()
    editable: ClassVar[tuple[str, ...]] = ()

    def activity_for(self, path: str) -> str:
        """The activity name shown for a page path (fully qualified, as ``app_current`` reports it)."""
        best, best_len = ".MainActivity", -1
        for prefix, activity in self.activities:
            if (path == prefix or path.startswith(prefix.rstrip("/") + "/")) and len(prefix) > best_len:
                best, best_len = activity, len(prefix)
        return self.package + best

    def screen(
        self,
        title: str,
        body: str,
        up: str | None = None,
        actions: str = "",
        appbar: bool = True,
    ) -> Response:
        """The shared phone layout around ``body`` (already-escaped HTML).

        Args:
            title: the app bar title (and the document title).
            body: the content area's HTML.
            up: where the app bar's up arrow leads; no arrow when ``None``.
            actions: app bar action buttons (HTML).
            appbar: draw the app bar (the launcher has none).
        """
        arrow = (
            f'<a class="up" href="{html_escape(up)}" id="navigate_up" aria-label="Navigate up" '
            f'data-class="android.widget.ImageButton">\u2190</a>'
            if up
            else ""
        )
        bar = (
            f'<header class="appbar" id="toolbar" data-class="android.view.ViewGroup">{arrow}'
            f'<h1 id="title">{html_escape(title)}</h1>{actions}</header>'
            if appbar
            else ""
        )
        return Response(
            body=(
                "<!doctype html><html><head><meta charset='utf-8'>"
                "<meta name='viewport' content='width=device-width,initial-scale=1'>"
                f"<title>{html_escape(title)}</title><style>{CSS}:root{{--accent:{self.accent}}}</style></head>"
                f'<body data-package="{html_escape(self.package)}" class="{"" if appbar else "noappbar"}">'
                f'<div id="statusbar" data-window="{SYSTEMUI_PACKAGE}" data-class="android.widget.FrameLayout">'
                '<span id="clock">12:00</span><span id="battery" aria-label="Battery 100 percent">100%</span></div>'
                f'{bar}<main id="content" data-scroll data-class="androidx.recyclerview.widget.RecyclerView">'
                f"{body}</main>{keyboard_html()}<script>{PAGE_JS}</script></body></html>"
            )
        )

    def log_search(self, db: sqlite3.Connection, query: str, results: int) -> None:
        """Record a search in the app's ``searches`` table (validators of infeasible tasks read it)."""
        db.execute("INSERT INTO searches (query, results) VALUES (?, ?)", (query, results))

    def search_screen(
        self,
        db: sqlite3.Connection,
        query: str,
        hits: int,
        results: str,
        title: str,
        hint: str,
        none_found: str,
    ) -> Response:
        """Log a search of ``/search`` and show its results screen (the search box keeps the query).

        Args:
            db: The app's database (the search goes into its ``searches`` table).
            query: What the user searched for.
            hits: How many results the search found.
            results: The result rows' HTML; when empty, a ``no_results`` line says ``none_found`` and the query.
            title: The screen's app-bar title.
            hint: The search box's hint.
            none_found: The start of the no-results line (``"No notes match"``).
        """
        self.log_search(db, query, hits)
        empty = f'<p class="empty" id="no_results">{none_found} \u201c{html_escape(query)}\u201d</p>'
        return self.screen(title, search_form("/search", hint, query) + (results or empty), up="/")


def matching_rows(db: sqlite3.Connection, sql: str, query: str) -> list[Any]:
    """The rows ``sql`` selects (as ``db``'s row factory makes them) where each ``LIKE ?`` holds ``query``.

    This is how the apps' search boxes match: anywhere in the field, ignoring ASCII case (SQLite's ``LIKE``);
    an empty query finds nothing rather than everything.
    """
    if not query:
        return []
    # The query is text, not a pattern (``%`` and ``_`` match themselves), and cut to a length SQLite accepts.
    return list(db.execute(sql.replace("LIKE ?", LIKE_LITERAL), (like_contains(query),) * sql.count("LIKE ?")))


#: Every app's database has this table, so infeasible tasks can check that the agent looked.
SEARCHES_SCHEMA = "CREATE TABLE searches (id INTEGER PRIMARY KEY AUTOINCREMENT, query TEXT NOT NULL, results INTEGER NOT NULL);"


# ----- widgets ---------------------------------------------------------------------------------------------


def row_link(
    href: str, title: str, subtitle: str = "", rid: str = "", long: str = "", trailing: str = ""
) -> str:
    """A list row (clickable ``LinearLayout`` holding title and subtitle ``TextView``s)."""
    sub = f'<span class="s">{html_escape(subtitle)}</span>' if subtitle else ""
    lp = f' data-long="{html_escape(long)}" data-longclick' if long else ""
    r = f' data-rid="{html_escape(rid)}"' if rid else ""
    return (
        f'<a class="row" href="{html_escape(href)}" data-class="android.widget.LinearLayout"{r}{lp}>'
        f'<span class="grow"><span class="t">{html_escape(title)}</span>{sub}</span>{trailing}</a>'
    )


def fab(href: str, label: str, rid: str = "fab") -> str:
    """The floating action button (an ``ImageButton`` whose content description is ``label``)."""
    return (
        f'<a class="fab" href="{html_escape(href)}" id="{html_escape(rid)}" aria-label="{html_escape(label)}" '
        f'data-class="android.widget.ImageButton">+</a>'
    )


def text_field(
    name: str, hint: str, value: str = "", rid: str = "", multiline: bool = False, kind: str = "text"
) -> str:
    """An ``EditText``; its hint shows as the node text while it is empty, as on Android."""
    rid = rid or name
    if multiline:
        return (
            f'<textarea class="field" name="{html_escape(name)}" id="{html_escape(rid)}" placeholder="{html_escape(hint)}" '
            f'aria-label="{html_escape(hint)}">{html_escape(value)}</textarea>'
        )
    return (
        f'<input class="field" type="{kind}" name="{html_escape(name)}" id="{html_escape(rid)}" placeholder="{html_escape(hint)}" '
        f'aria-label="{html_escape(hint)}" value="{html_escape(value)}" autocomplete="off">'
    )


def switch(action: str, name: str, label: str, on: bool, rid: str = "") -> str:
    """A labelled ``Switch`` in its own form, saved as soon as it flips."""
    rid = rid or f"switch_{name}"
    return (
        f'<form method="post" action="{html_escape(action)}"><input type="hidden" name="{html_escape(name)}" value="0">'
        f'<label class="switchrow" data-class="android.widget.Switch" data-rid="{html_escape(rid)}">{html_escape(label)}'
        f'<input type="checkbox" role="switch" name="{html_escape(name)}" value="1" data-autosubmit'
        f"{' checked' if on else ''}></label></form>"
    )


def chips(name: str, options: Iterable[str], chosen: str, rid: str = "") -> str:
    """A row of ``RadioButton`` chips (single choice, part of the surrounding form)."""
    out = []
    for option in options:
        on = option == chosen
        out.append(
            f'<label class="chip{" on" if on else ""}" data-class="android.widget.RadioButton" '
            f'data-rid="{html_escape(rid or name)}"><input type="radio" name="{html_escape(name)}" value="{html_escape(option)}"'
            f"{' checked' if on else ''} onchange=\"this.closest('.chips').querySelectorAll('.chip')"
            f".forEach(c => c.classList.toggle('on', c.contains(this)))\">{html_escape(option)}</label>"
        )
    return f'<div class="chips">{"".join(out)}</div>'


def submit(label: str, rid: str = "", form_id: str = "", flat: bool = False) -> str:
    """A submit ``Button`` (``form_id`` ties an app-bar button to the page's form)."""
    f = f' form="{html_escape(form_id)}"' if form_id else ""
    cls = "btn flat" if flat else "btn"
    r = f' id="{html_escape(rid)}"' if rid else ""
    return f'<button type="submit" class="{cls}"{r}{f}>{html_escape(label)}</button>'


def appbar_submit(label: str, form_id: str, rid: str) -> str:
    """An app-bar action that submits the page's form (``Save``, ``Done``)."""
    return f'<button type="submit" form="{html_escape(form_id)}" id="{html_escape(rid)}">{html_escape(label)}</button>'


def search_form(action: str, hint: str, query: str = "", rid: str = "search_box") -> str:
    """A search field that submits on enter (GET ``action?q=...``)."""
    return (
        f'<form method="get" action="{html_escape(action)}" class="search">'
        f"{text_field('q', hint, query, rid=rid)}</form>"
    )


def tabs(items: Iterable[tuple[str, str, str]], current: str) -> str:
    """A tab strip: ``(key, label, href)`` items; the ``current`` key is selected."""
    links = "".join(
        f'<a href="{html_escape(href)}" class="{"on" if key == current else ""}" data-class="android.widget.TextView"'
        f' data-rid="tab_{html_escape(key)}"{" aria-selected=true" if key == current else ""}>{html_escape(label)}</a>'
        for key, label, href in items
    )
    return f'<nav class="tabs" data-class="android.widget.LinearLayout">{links}</nav>'
