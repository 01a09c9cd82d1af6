"""Paper tables: the decomposition, metrics, counterfactuals and pairwise comparisons as CSV,
Markdown and LaTeX (booktabs).

An estimate with an interval is printed as ``0.42 [0.37, 0.48]``: a column ``X`` that has
companions ``X_lo`` and ``X_hi`` is collapsed into one text column. The writers and the readers
here round-trip: :func:`read_markdown` / :func:`read_latex` followed by :func:`expand_intervals`
give back the numbers at the printed precision.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pandas as pd

DIGITS = 2
_NUM = r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?|nan|inf|-inf|—"
INTERVAL_RE = re.compile(rf"^\s*({_NUM})\s*\[\s*({_NUM})\s*,\s*({_NUM})\s*\]\s*$")
MISSING = "—"  # printed for a missing number (never "nan")

LATEX_ESCAPES = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
                 "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}"}
_LATEX_RE = re.compile("|".join(re.escape(k) for k in LATEX_ESCAPES))
_LATEX_UNRE = re.compile("|".join(re.escape(v) for v in sorted(LATEX_ESCAPES.values(), key=len, reverse=True)))
_LATEX_INV = {v: k for k, v in LATEX_ESCAPES.items()}
#: characters pdflatex cannot take raw (applied after escaping, so their ``$`` survive)
LATEX_UNICODE = {"—": "---", "−": r"$-$", "λ": r"$\lambda$", "×": r"$\times$", "·": r"$\cdot$", "≤": r"$\leq$",
                 "≥": r"$\geq$"}
_UNICODE_INV = {v: k for k, v in LATEX_UNICODE.items()}
_UNICODE_UNRE = re.compile("|".join(re.escape(v) for v in sorted(_UNICODE_INV, key=len, reverse=True)))


# --------------------------------------------------------------------------------------------
# numbers <-> text


def format_number(x, digits: int = DIGITS) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)) or x is pd.NA:
        return MISSING
    if isinstance(x, (bool, np.bool_)):
        return str(bool(x))
    if isinstance(x, (int, np.integer)):
        return str(int(x))
    return f"{float(x):.{digits}f}"


def format_interval(estimate, lo, hi, digits: int = DIGITS) -> str:
    """``0.42 [0.37, 0.48]``; a missing estimate prints as ``—``, missing ends are left out."""
    est = format_number(estimate, digits)
    if est == MISSING:
        return MISSING
    if format_number(lo, digits) == MISSING or format_number(hi, digits) == MISSING:
        return est
    return f"{est} [{format_number(lo, digits)}, {format_number(hi, digits)}]"


def parse_interval(text: str) -> tuple[float, float, float]:
    """Inverse of :func:`format_interval`: ``"0.42 [0.37, 0.48]"`` → ``(0.42, 0.37, 0.48)``."""
    m = INTERVAL_RE.match(str(text))
    if m:
        return tuple(_to_float(g) for g in m.groups())
    value = _to_float(str(text).strip())
    return value, math.nan, math.nan


def _is_number(s: str) -> bool:
    try:
        _to_float(s.strip())
    except ValueError:
        return False
    return True


def _to_float(s: str) -> float:
    return math.nan if s in (MISSING, "", "nan") else float(s)


def interval_columns(frame: pd.DataFrame) -> list[str]:
    """Columns ``X`` of ``frame`` that have both ``X_lo`` and ``X_hi``."""
    return [c for c in frame.columns if f"{c}_lo" in frame.columns and f"{c}_hi" in frame.columns]


def display_frame(frame: pd.DataFrame, digits: int = DIGITS) -> pd.DataFrame:
    """Text version of ``frame``: intervals collapsed into ``X`` cells, numbers rounded, no ``nan``."""
    ivals = interval_columns(frame)
    drop = {f"{c}_{end}" for c in ivals for end in ("lo", "hi")}
    out = {}
    for col in frame.columns:
        if col in drop:
            continue
        if col in ivals:
            out[col] = [format_interval(e, lo, hi, digits)
                        for e, lo, hi in zip(frame[col], frame[f"{col}_lo"], frame[f"{col}_hi"])]
        elif pd.api.types.is_bool_dtype(frame[col]) or pd.api.types.is_numeric_dtype(frame[col]):
            out[col] = [format_number(v, digits) for v in frame[col]]
        else:
            out[col] = [MISSING if pd.isna(v) else str(v) for v in frame[col]]
    return pd.DataFrame(out, columns=list(out))


def expand_intervals(frame: pd.DataFrame) -> pd.DataFrame:
    """Inverse of :func:`display_frame` for a parsed text table: interval cells become ``X``,
    ``X_lo``, ``X_hi`` floats, numeric text becomes numbers, the rest stays text."""
    out = {}
    for col in frame.columns:
        values = frame[col].astype(str).tolist()
        if any(INTERVAL_RE.match(v) for v in values) and all(INTERVAL_RE.match(v) or _is_number(v) for v in values):
            parsed = [parse_interval(v) for v in values]
            out[col] = [p[0] for p in parsed]
            out[f"{col}_lo"] = [p[1] for p in parsed]
            out[f"{col}_hi"] = [p[2] for p in parsed]
            continue
        try:
            out[col] = [_to_float(v) for v in values]
        except ValueError:
            out[col] = values
    return pd.DataFrame(out)


# --------------------------------------------------------------------------------------------
# Markdown


def _md_cell(text: str) -> str:
    return str(text).replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def to_markdown(frame: pd.DataFrame, caption: str | None = None, digits: int = DIGITS) -> str:
    """A GitHub pipe table (numbers right-aligned), preceded by ``Table: caption`` when given."""
    text = display_frame(frame, digits)
    numeric = [pd.api.types.is_numeric_dtype(frame[c]) or c in interval_columns(frame) for c in text.columns]
    lines = []
    if caption:
        lines += [f"Table: {caption}", ""]
    lines.append("| " + " | ".join(_md_cell(c) for c in text.columns) + " |")
    lines.append("|" + "|".join("---:" if n else ":---" for n in numeric) + "|")
    for row in text.itertuples(index=False):
        lines.append("| " + " | ".join(_md_cell(v) for v in row) + " |")
    return "\n".join(lines) + "\n"


def _split_md_row(line: str) -> list[str]:
    cells, cur, i = [], [], 0
    body = line.strip()
    body = body[1:] if body.startswith("|") else body
    while i < len(body):
        ch = body[i]
        if ch == "\\" and i + 1 < len(body):
            cur.append(body[i + 1])
            i += 2
            continue
        if ch == "|":
            cells.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
        i += 1
    if "".join(cur).strip():
        cells.append("".join(cur).strip())
    return cells


def read_markdown(text: str) -> pd.DataFrame:
    """Parse a pipe table written by :func:`to_markdown` into a frame of strings."""
    rows = [line for line in text.splitlines() if line.strip().startswith("|")]
    if len(rows) < 2:
        raise ValueError("no Markdown table found")
    header = _split_md_row(rows[0])
    body = [_split_md_row(r) for r in rows[2:]]
    return pd.DataFrame(body, columns=header, dtype=object)


# --------------------------------------------------------------------------------------------
# LaTeX


def latex_escape(text: str) -> str:
    """Escape LaTeX's special characters and spell out the few non-ASCII symbols the tables use."""
    out = _LATEX_RE.sub(lambda m: LATEX_ESCAPES[m.group()], str(text))
    for char, tex in LATEX_UNICODE.items():
        out = out.replace(char, tex)
    return out


def latex_unescape(text: str) -> str:
    text = _UNICODE_UNRE.sub(lambda m: _UNICODE_INV[m.group()], text)
    return _LATEX_UNRE.sub(lambda m: _LATEX_INV[m.group()], text)


def to_latex(frame: pd.DataFrame, caption: str, label: str, digits: int = DIGITS) -> str:
    """A booktabs ``table`` environment with caption and label (pandas' Styler); all text escaped
    for pdflatex by :func:`latex_escape` (Styler's own ``escape="latex"`` leaves λ, ×, − raw)."""
    text = display_frame(frame, digits)
    numeric = [pd.api.types.is_numeric_dtype(frame[c]) or c in interval_columns(frame) for c in text.columns]
    escaped = text.map(latex_escape)
    escaped.columns = [latex_escape(c) for c in text.columns]
    styler = escaped.style.hide(axis="index")
    return styler.to_latex(column_format="".join("r" if n else "l" for n in numeric), position="tbp",
                           position_float="centering", hrules=True, caption=latex_escape(caption), label=label)


def _split_latex_row(line: str) -> list[str]:
    body = line.strip()
    if body.endswith(r"\\"):
        body = body[:-2]
    cells = re.split(r"(?<!\\)&", body)
    return [latex_unescape(c.strip()) for c in cells]


def read_latex(text: str) -> pd.DataFrame:
    """Parse a booktabs table written by :func:`to_latex` into a frame of strings."""
    lines = text.splitlines()
    try:
        top = lines.index(r"\toprule")
        mid = lines.index(r"\midrule")
        bottom = lines.index(r"\bottomrule")
    except ValueError as e:
        raise ValueError("not a booktabs table (\\toprule/\\midrule/\\bottomrule missing)") from e
    header = _split_latex_row(" ".join(lines[top + 1:mid]))
    body = [_split_latex_row(line) for line in lines[mid + 1:bottom]]
    return pd.DataFrame(body, columns=header, dtype=object)


# --------------------------------------------------------------------------------------------
# files


def write_table(frame: pd.DataFrame, out_dir, name: str, caption: str, digits: int = DIGITS) -> list[Path]:
    """Write ``name.csv`` (full precision), ``name.md`` and ``name.tex`` into ``out_dir``."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = [out / f"{name}.csv", out / f"{name}.md", out / f"{name}.tex"]
    frame.to_csv(paths[0], index=False)
    paths[1].write_text(to_markdown(frame, caption, digits))
    paths[2].write_text(to_latex(frame, caption, f"tab:{name}", digits))
    return paths


# --------------------------------------------------------------------------------------------
# the report's tables

def decomposition_table(decomposition: pd.DataFrame) -> pd.DataFrame:
    """The posterior decomposition, sorted, with the contract's columns (``model.result.DECOMPOSITION_COLUMNS``)."""
    from ..model.result import DECOMPOSITION_COLUMNS

    # latency_informative: False where the cell's latencies are a constant (P(miss) from logged misses)
    cols = [c for c in [*DECOMPOSITION_COLUMNS, "latency_informative"] if c in decomposition.columns]
    return decomposition[cols].sort_values(["task_type", "clock", "model"]).reset_index(drop=True)


def counterfactual_table(counterfactuals: pd.DataFrame, lambdas=(0.25, 0.5, 1.0, 2.0)) -> pd.DataFrame:
    """Success under latency scales ``lambdas`` (wide: one interval column per λ) per model × task type."""
    cf = counterfactuals[(counterfactuals["scenario"] == "scale") & (counterfactuals["clock"] != "paused")].copy()
    cf["lambda"] = cf["lambda"].astype(float)
    keep = [lam for lam in lambdas if np.isclose(cf["lambda"], lam).any()]
    parts = []
    for lam in keep:
        sub = cf[np.isclose(cf["lambda"], lam)].set_index(["model", "task_type", "clock"])
        name = f"lambda_{lam:g}"
        parts.append(sub[["p_success", "p_success_lo", "p_success_hi"]].rename(
            columns={"p_success": name, "p_success_lo": f"{name}_lo", "p_success_hi": f"{name}_hi"}))
    if not parts:
        return pd.DataFrame(columns=["model", "task_type", "clock"])
    return pd.concat(parts, axis=1).reset_index().sort_values(["task_type", "clock", "model"]).reset_index(drop=True)


def success_table(success: pd.DataFrame) -> pd.DataFrame:
    """The observed success rows of ``metrics.success_rates``: counts, ``success_rate`` and its
    interval, and the task-clustered interval."""
    cols = ["model", "task_type", "clock", "n", "successes", "success_rate", "success_rate_lo", "success_rate_hi",
            "n_clusters", "success_rate_clustered_lo", "success_rate_clustered_hi"]
    return success[[c for c in cols if c in success.columns]].sort_values(["task_type", "clock", "model"]).reset_index(
        drop=True)


def comparison_table(rows: list[dict]) -> pd.DataFrame:
    """Pairwise comparisons (``quantity, a, b, difference, difference_lo, difference_hi, p_a_gt_b``)."""
    cols = ["quantity", "task_type", "clock", "a", "b", "difference", "difference_lo", "difference_hi", "p_a_gt_b"]
    frame = pd.DataFrame(rows)
    return frame[[c for c in cols if c in frame.columns]] if len(frame) else pd.DataFrame(columns=cols)


def latency_table(latency: pd.DataFrame) -> pd.DataFrame:
    """Decision latency per cell from ``metrics.latency_summary``: median, 90th percentile and the
    same relative to the window close (1 = the deadline)."""
    cols = ["model", "task_type", "clock", "time_unit", "n_decisions", "p50", "p90", "rel_p50", "rel_p90"]
    return latency[[c for c in cols if c in latency.columns]].sort_values(["task_type", "clock", "model"]).reset_index(
        drop=True)


def observed_decomposition_table(observed: pd.DataFrame) -> pd.DataFrame:
    """``metrics.observed_decomposition`` made wide: per cell the share of failed episodes of each
    failure type with its interval (columns ``capability``, ``capability_lo``, ...)."""
    keys = ["model", "task_type", "clock"]
    wide = observed.pivot_table(index=keys, columns="failure_type", values=["share", "share_lo", "share_hi"],
                                dropna=False)
    out = observed.groupby(keys)["n_failed"].first().to_frame()
    kinds = [k for k in ("capability", "timing", "both", "unknown") if k in set(observed["failure_type"])]
    for kind in kinds:
        out[kind] = wide[("share", kind)]
        out[f"{kind}_lo"] = wide[("share_lo", kind)]
        out[f"{kind}_hi"] = wide[("share_hi", kind)]
    return out.reset_index().sort_values(["task_type", "clock", "model"]).reset_index(drop=True)
