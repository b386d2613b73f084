"""The web sites' shared layout: the page frame, the stylesheet and small HTML builders.

The request / response / state plumbing the sites run on lives in :mod:`gui_envs.browser.site`, shared with the
phone apps.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from gui_envs.browser.site import Response, Site, html_escape


class WebSite(Site):
    """A bundled web site: a :class:`~gui_envs.browser.site.Site` with the shared header-bar layout."""

    # ----- page layout ----------------------------------------------------------------------------------
    def page(self, title: str, body: str, flash: str = "") -> Response:
        """The site's shared layout around ``body`` (already escaped HTML)."""
        links = "".join(f'<a href="{html_escape(href)}">{html_escape(label)}</a>' for label, href in self.nav)
        note = f'<p class="flash" role="status">{html_escape(flash)}</p>' if flash else ""
        return Response(
            body=(
                f"<!doctype html><html><head><meta charset='utf-8'><title>{html_escape(title)} | {html_escape(self.title)}</title>"
                f"<style>{CSS}</style></head><body><header><a class='brand' href='/'>{html_escape(self.title)}</a>"
                f"<nav>{links}</nav></header><main>{note}<h1>{html_escape(title)}</h1>{body}</main></body></html>"
            )
        )


#: Shared stylesheet: plain, high-contrast, fixed sizes, so screenshots are stable and elements well apart.
CSS = """
*{box-sizing:border-box}html{scroll-behavior:auto}
body{margin:0;font:15px/1.4 'DejaVu Sans',Arial,sans-serif;color:#1d1d1f;background:#f5f5f7}
header{display:flex;align-items:center;gap:18px;padding:10px 24px;background:#23395d;color:#fff}
header a{color:#fff;text-decoration:none}header .brand{font-weight:bold;font-size:20px;margin-right:24px}
header nav{display:flex;gap:16px}main{padding:12px 24px}h1{font-size:22px;margin:6px 0 12px}
.flash{background:#e6f4ea;border:1px solid #8c8;padding:6px 10px}
.grid{display:grid;grid-template-columns:repeat(4,1fr);gap:12px}
.card{background:#fff;border:1px solid #ccd;border-radius:6px;padding:10px}
.card svg{display:block;margin:0 auto 6px}.price{font-weight:bold;color:#0a5}
table{border-collapse:collapse;background:#fff;margin:8px 0}td,th{border:1px solid #ccd;padding:4px 10px;text-align:left}
form.inline{display:inline}button,.button{font:inherit;padding:5px 12px;margin:2px;cursor:pointer;
border:1px solid #567;border-radius:4px;background:#e9eef6}input,select,textarea{font:inherit;padding:4px;margin:2px}
.row{display:flex;gap:10px;align-items:center;flex-wrap:wrap;margin:6px 0}.muted{color:#667}
.post{background:#fff;border:1px solid #ccd;border-radius:6px;padding:8px 12px;margin:8px 0}
"""


def form(action: str, inner: str, method: str = "post", cls: str = "") -> str:
    """A ``<form>`` (already-escaped ``inner``)."""
    c = f' class="{cls}"' if cls else ""
    return f'<form method="{method}" action="{html_escape(action)}"{c}>{inner}</form>'


def button(label: str, name: str = "", value: str = "") -> str:
    attrs = f' name="{html_escape(name)}" value="{html_escape(value)}"' if name else ""
    return f'<button type="submit"{attrs}>{html_escape(label)}</button>'


def hidden(name: str, value: Any) -> str:
    return f'<input type="hidden" name="{html_escape(name)}" value="{html_escape(value)}">'


def text_input(name: str, label: str, value: str = "", kind: str = "text") -> str:
    """A labelled input; ``aria-label`` carries the label so element extraction can name the field."""
    return (
        f'<label>{html_escape(label)} <input type="{kind}" name="{html_escape(name)}" aria-label="{html_escape(label)}" '
        f'value="{html_escape(value)}"></label>'
    )


def select(name: str, label: str, options: Iterable[tuple[str, str]], chosen: str = "") -> str:
    opts = "".join(
        f'<option value="{html_escape(v)}"{" selected" if v == chosen else ""}>{html_escape(t)}</option>' for v, t in options
    )
    return f'<label>{html_escape(label)} <select name="{html_escape(name)}" aria-label="{html_escape(label)}">{opts}</select></label>'


def table(headers: Iterable[str], rows: Iterable[Iterable[Any]]) -> str:
    head = "".join(f"<th>{html_escape(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{html_escape(c)}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table><tr>{head}</tr>{body}</table>"


def svg_swatch(seed: int, colour: str, size: int = 96) -> str:
    """A small seeded SVG picture: a coloured shape on a tinted tile (the product/listing image)."""
    shapes = (
        f'<circle cx="{size // 2}" cy="{size // 2}" r="{size // 3}" fill="{colour}"/>',
        f'<rect x="{size // 5}" y="{size // 5}" width="{3 * size // 5}" height="{3 * size // 5}" fill="{colour}"/>',
        f'<polygon points="{size // 2},{size // 6} {5 * size // 6},{5 * size // 6} {size // 6},{5 * size // 6}" '
        f'fill="{colour}"/>',
    )
    return (
        f'<svg width="{size}" height="{size}" viewBox="0 0 {size} {size}" role="img" aria-hidden="true">'
        f'<rect width="{size}" height="{size}" fill="#eef"/>{shapes[seed % 3]}</svg>'
    )
