"""Rendering of the written report: a list of blocks → Markdown and standalone HTML.

A block is a small dict: ``{"kind": "h1"|"h2"|"h3"|"p"|"warning"|"list"|"table"|"figure", ...}``.
Every text from the data (model names, task types, log text) is escaped here: HTML-escaped in
the HTML, with Markdown's table pipes escaped in tables. Figures are embedded in the HTML as
base64 PNG so the file stands alone.
"""

from __future__ import annotations

import base64
import html
from pathlib import Path

from . import tables

CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;max-width:62rem;margin:2rem auto;padding:0 1rem;
line-height:1.45;color:#222}
h1{font-size:1.7rem}h2{font-size:1.35rem;border-bottom:1px solid #ddd;padding-bottom:.2rem;margin-top:2rem}
h3{font-size:1.1rem}
table{border-collapse:collapse;font-size:.85rem;margin:.6rem 0}
th,td{padding:.2rem .5rem;border-bottom:1px solid #e5e5e5;text-align:left}td.num{text-align:right;
font-variant-numeric:tabular-nums}
caption{caption-side:top;text-align:left;font-style:italic;padding-bottom:.3rem}
figure{margin:1.2rem 0}figure img{max-width:100%;height:auto;border:1px solid #eee}
figcaption{font-size:.9rem;color:#333}
.warning{border:2px solid #C00000;background:#fff1f1;color:#700;padding:.6rem .9rem;margin:1rem 0;font-weight:600}
"""


def _md_table(block: dict) -> str:
    return tables.to_markdown(block["frame"], caption=block.get("caption"), digits=block.get("digits", 2))


def to_markdown(blocks: list[dict]) -> str:
    """Render ``blocks`` as Markdown (figures referenced by relative path)."""
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
            out.append(_md_table(b))
        elif kind == "figure":
            out.append(f"![{b['title']}]({b['path']})\n\n*Figure: {b['caption']}*")
        else:
            raise ValueError(f"unknown block kind {kind!r}")
    return "\n\n".join(out).rstrip() + "\n"


def _html_table(block: dict) -> str:
    frame = block["frame"]
    text = tables.display_frame(frame, block.get("digits", 2))
    numeric = {c for c in text.columns if c in tables.interval_columns(frame)
               or (c in frame.columns and frame[c].dtype.kind in "iuf")}
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in text.columns)
    rows = []
    for row in text.itertuples(index=False):
        cells = "".join(f'<td class="num">{html.escape(str(v))}</td>' if c in numeric
                        else f"<td>{html.escape(str(v))}</td>" for c, v in zip(text.columns, row))
        rows.append(f"<tr>{cells}</tr>")
    caption = f"<caption>{html.escape(block['caption'])}</caption>" if block.get("caption") else ""
    return f"<table>{caption}<thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"


def _inline(text: str) -> str:
    """Escape, then render the two Markdown inline forms the report uses (**bold**, `code`)."""
    import re

    s = html.escape(text)
    s = re.sub(r"\*\*(.+?)\*\*", r"<strong>\1</strong>", s)
    return re.sub(r"`([^`]+)`", r"<code>\1</code>", s)


def to_html(blocks: list[dict], title: str, base_dir: Path) -> str:
    """Render ``blocks`` as one standalone HTML page; figure PNGs (paths relative to ``base_dir``)
    are embedded as base64 data URIs."""
    body = []
    for b in blocks:
        kind = b["kind"]
        if kind in ("h1", "h2", "h3"):
            body.append(f"<{kind}>{_inline(b['text'])}</{kind}>")
        elif kind == "p":
            body.append(f"<p>{_inline(b['text'])}</p>")
        elif kind == "warning":
            body.append(f'<div class="warning" role="alert">⚠ Warning: {_inline(b["text"])}</div>')
        elif kind == "list":
            body.append("<ul>" + "".join(f"<li>{_inline(i)}</li>" for i in b["items"]) + "</ul>")
        elif kind == "table":
            body.append(_html_table(b))
        elif kind == "figure":
            data = base64.b64encode((base_dir / b["path"]).read_bytes()).decode("ascii")
            body.append(f'<figure><img alt="{html.escape(b["title"])}" src="data:image/png;base64,{data}">'
                        f"<figcaption>{_inline(b['caption'])}</figcaption></figure>")
        else:
            raise ValueError(f"unknown block kind {kind!r}")
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><title>{html.escape(title)}</title>"
            f"<style>{CSS}</style></head><body>\n" + "\n".join(body) + "\n</body></html>\n")
