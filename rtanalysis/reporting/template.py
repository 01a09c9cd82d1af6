"""Rendering of the written report: a list of blocks → Markdown and a standalone HTML page.

A block is a small dict: ``{"kind": "h1"|"h2"|"h3"|"p"|"warning"|"list"|"table"|"figure", ...}``.
The HTML comes from a jinja2 template with autoescaping on, so every text from the data (model
names, task types, log text) stays text; the two inline Markdown forms the report writes
(``**bold**``, ``code``) are rendered after escaping. Figures are embedded as base64 PNG so the
file stands alone. The template lives in this module (not a package-data file) so an installed
wheel always has it.
"""

from __future__ import annotations

import base64
import re
from pathlib import Path

import jinja2
from markupsafe import Markup, escape

from . import tables

KINDS = ("h1", "h2", "h3", "p", "warning", "list", "table", "figure")

CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;max-width:62rem;margin:2rem auto;padding:0 1rem;
line-height:1.45;color:#222;overflow-wrap:anywhere}
h1{font-size:1.7rem}h2{font-size:1.35rem;border-bottom:1px solid #ddd;padding-bottom:.2rem;margin-top:2rem}
h3{font-size:1.1rem}
.table-wrap{overflow-x:auto;max-width:100%}
table{border-collapse:collapse;font-size:.85rem;margin:.6rem 0}
th,td{padding:.2rem .5rem;border-bottom:1px solid #e5e5e5;text-align:left}td.num{text-align:right;
font-variant-numeric:tabular-nums;white-space:nowrap}
caption{caption-side:top;text-align:left;font-style:italic;padding-bottom:.3rem}
figure{margin:1.2rem 0}figure img{max-width:100%;height:auto;border:1px solid #eee}
figcaption{font-size:.9rem;color:#333}
.warning{border:2px solid #C00000;background:#fff1f1;color:#700;padding:.6rem .9rem;margin:1rem 0;font-weight:600}
"""

PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1"><title>{{ title }}</title>
<style>{{ css }}</style></head><body>
{% for b in blocks %}
{%- if b.kind in ("h1", "h2", "h3") %}<{{ b.kind }}>{{ b.text | inline }}</{{ b.kind }}>
{%- elif b.kind == "p" %}<p>{{ b.text | inline }}</p>
{%- elif b.kind == "warning" %}<div class="warning" role="alert">⚠ Warning: {{ b.text | inline }}</div>
{%- elif b.kind == "list" %}<ul>{% for item in b["items"] %}<li>{{ item | inline }}</li>{% endfor %}</ul>
{%- elif b.kind == "table" %}<div class="table-wrap"><table>
{%- if b.caption %}<caption>{{ b.caption }}</caption>{% endif %}
<thead><tr>{% for c in b.columns %}<th>{{ c }}</th>{% endfor %}</tr></thead><tbody>
{%- for row in b.rows %}<tr>{% for value, num in row %}<td{% if num %} class="num"{% endif %}>{{ value }}</td>
{%- endfor %}</tr>{% endfor %}</tbody></table></div>
{%- elif b.kind == "figure" %}<figure><img alt="{{ b.title }}" src="data:image/png;base64,{{ b.png }}">
<figcaption>{{ b.caption | inline }}</figcaption></figure>
{%- endif %}
{% endfor %}</body></html>
"""


def inline(text: str) -> Markup:
    """Escape, then render the two Markdown inline forms the report uses (**bold**, `code`)."""
    s = str(escape(text))
    s = re.sub(r"\*\*(.+?)\*\*", r"<strong>\1</strong>", s)
    return Markup(re.sub(r"`([^`]+)`", r"<code>\1</code>", s))


_ENV = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined, keep_trailing_newline=True)
_ENV.filters["inline"] = inline
_PAGE = _ENV.from_string(PAGE)


def _check(blocks: list[dict]) -> None:
    for b in blocks:
        if b["kind"] not in KINDS:
            raise ValueError(f"unknown block kind {b['kind']!r}")


def to_markdown(blocks: list[dict]) -> str:
    """Render ``blocks`` as Markdown (figures referenced by relative path)."""
    _check(blocks)
    out = []
    for b in blocks:
        kind = b["kind"]
        if kind in ("h1", "h2", "h3"):
            out.append("#" * int(kind[1]) + " " + b["text"])
        elif kind == "p":
            out.append(b["text"])
        elif kind == "warning":
            out.append("> **⚠ Warning:** " + b["text"])
        elif kind == "list":
            out.append("\n".join(f"- {item}" for item in b["items"]))
        elif kind == "table":
            out.append(tables.to_markdown(b["frame"], caption=b.get("caption"), digits=b.get("digits", 2)))
        else:
            out.append(f"![{b['title']}]({b['path']})\n\n*Figure: {b['caption']}*")
    return "\n\n".join(out).rstrip() + "\n"


def _table_context(block: dict) -> dict:
    frame = block["frame"]
    text = tables.display_frame(frame, block.get("digits", 2))
    numeric = [c in tables.interval_columns(frame) or (c in frame.columns and frame[c].dtype.kind in "iuf")
               for c in text.columns]
    rows = [list(zip(row, numeric)) for row in text.itertuples(index=False)]
    return {**block, "columns": [str(c) for c in text.columns], "rows": rows, "caption": block.get("caption")}


def to_html(blocks: list[dict], title: str, base_dir: Path) -> str:
    """Render ``blocks`` as one standalone HTML page; figure PNGs (paths relative to ``base_dir``)
    are embedded as base64 data URIs."""
    _check(blocks)
    context = []
    for b in blocks:
        if b["kind"] == "table":
            b = _table_context(b)
        elif b["kind"] == "figure":
            b = {**b, "png": base64.b64encode((Path(base_dir) / b["path"]).read_bytes()).decode("ascii")}
        context.append(b)
    return _PAGE.render(title=title, css=Markup(CSS), blocks=context)
