"""Shared look of every figure: one model → colour mapping, paper sizes, saving, warnings.

Colours come from the Okabe–Ito palette (colour-blind safe) for up to 8 models; beyond that a
colour-blind-aware extension (Paul Tol's "muted" and "light" sets, then evenly spaced hues in
HUSL space, which keep similar lightness). Models are assigned colours in sorted name order, so
the same model gets the same colour in every figure of a run.
"""

from __future__ import annotations

import colorsys
from pathlib import Path

import matplotlib
import matplotlib.pyplot as plt
from matplotlib.figure import Figure

#: Okabe & Ito (2008), without black (kept for text and reference lines)
OKABE_ITO = ("#E69F00", "#56B4E9", "#009E73", "#F0E442", "#0072B2", "#D55E00", "#CC79A7", "#999999")
#: Paul Tol's muted + light qualitative sets: colour-blind aware, distinct from Okabe–Ito
TOL_EXTENSION = (
    "#332288", "#88CCEE", "#44AA99", "#117733", "#999933", "#DDCC77", "#CC6677", "#882255",
    "#AA4499", "#77AADD", "#EE8866", "#EEDD88", "#FFAABB", "#99DDFF", "#BBCC33", "#AAAA00",
)
#: colours of the outcome categories in decomposition figures
OUTCOME_COLOURS = {
    "success": "#009E73",
    "capability": "#0072B2",
    "timing": "#8C510A",  # timing failure not split by kind (no decision labels for the cell)
    "late": "#D55E00",
    "early": "#E69F00",
    "silent": "#CC79A7",
    "unknown": "#BBBBBB",
}
#: above this many models, figures switch from overlapping lines to ranked dot plots / heatmaps
MANY_MODELS = 12
WIDTHS = {"single": 3.5, "double": 7.0}
WARNING_COLOUR = "#C00000"

RC = {
    "pdf.fonttype": 42,  # TrueType (Type 42) fonts embedded: editable text, no Type 3 bitmaps
    "ps.fonttype": 42,
    "font.size": 8,
    "axes.titlesize": 8,
    "axes.labelsize": 8,
    "xtick.labelsize": 7,
    "ytick.labelsize": 7,
    "legend.fontsize": 7,
    "legend.title_fontsize": 7,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "savefig.dpi": 300,
}


def apply_style() -> None:
    """Set the paper rcParams (Type 42 fonts, small type sizes) globally."""
    matplotlib.rcParams.update(RC)


def model_palette(models) -> dict[str, str]:
    """Deterministic model → hex colour mapping over the sorted distinct model names."""
    names = sorted({str(m) for m in models})
    n = len(names)
    if n <= len(OKABE_ITO):
        colours = list(OKABE_ITO[:n])
    else:
        colours = list(OKABE_ITO) + list(TOL_EXTENSION)
        extra = n - len(colours)
        colours += [_spaced_hue(i, extra) for i in range(max(extra, 0))]
    return dict(zip(names, colours[:n]))


def _spaced_hue(i: int, n: int) -> str:
    # golden-angle hues at two alternating lightness levels so neighbours differ in lightness too
    h = (i * 0.618033988749895) % 1.0
    lightness = 0.45 if i % 2 else 0.62
    r, g, b = colorsys.hls_to_rgb(h, lightness, 0.65)
    return "#{:02X}{:02X}{:02X}".format(round(r * 255), round(g * 255), round(b * 255))


def figure_width(width: str) -> float:
    if width not in WIDTHS:
        raise ValueError(f"width must be one of {sorted(WIDTHS)}, not {width!r}")
    return WIDTHS[width]


def many(models) -> bool:
    return len(set(models)) > MANY_MODELS


def rows_height(n_rows: int, per_row: float = 0.16, base: float = 1.0, minimum: float = 2.2) -> float:
    """Figure height that grows with the number of ranked rows (models) so labels stay legible."""
    return max(minimum, base + per_row * n_rows)


def panel_figure(width: str, n_panels: int, panel_height: float = 2.0, **kwargs):
    """A figure of ``n_panels`` small multiples: one row at double width (up to 4 per row), two
    per row at single width; axes beyond ``n_panels`` are hidden. Returns (fig, flat axes list)."""
    n = max(n_panels, 1)
    per_row = min(n, 4) if figure_width(width) >= WIDTHS["double"] else min(n, 2)
    nrows = -(-n // per_row)
    fig, axes = new_figure(width, panel_height * nrows + 0.6, nrows=nrows, ncols=per_row, **kwargs)
    flat = list(axes.flat)
    for ax in flat[n:]:
        ax.set_visible(False)
    return fig, flat[:n]


def new_figure(width: str, height: float, nrows: int = 1, ncols: int = 1, **kwargs):
    apply_style()
    fig, axes = plt.subplots(nrows, ncols, figsize=(figure_width(width), height), squeeze=False,
                             layout="constrained", **kwargs)
    return fig, axes


def diagnostics_failed(diagnostics: dict | None) -> bool:
    return diagnostics is not None and not bool(diagnostics.get("ok", True))


def diagnostics_text(diagnostics: dict) -> str:
    parts = []
    for key, label, fmt in (("max_rhat", "max R-hat", "{:.3f}"), ("min_ess_bulk", "min bulk ESS", "{:.0f}"),
                            ("min_ess_tail", "min tail ESS", "{:.0f}"), ("n_divergent", "divergences", "{:.0f}")):
        value = diagnostics.get(key)
        if value is not None and value == value:
            parts.append(f"{label} {fmt.format(float(value))}")
    return "; ".join(parts)


def mark_diagnostics(fig: Figure, diagnostics: dict | None) -> Figure:
    """Stamp a visible warning on ``fig`` when the fit's convergence diagnostics failed."""
    if diagnostics_failed(diagnostics):
        detail = diagnostics_text(diagnostics)
        fig.text(0.5, 0.5, "DIAGNOSTICS FAILED", color=WARNING_COLOUR, alpha=0.18, fontsize=22,
                 ha="center", va="center", rotation=25, weight="bold", zorder=100)
        fig.suptitle("Warning: sampler diagnostics failed" + (f" ({detail})" if detail else "")
                     + " — estimates unreliable", color=WARNING_COLOUR, fontsize=7)
        fig._rtanalysis_diagnostics_failed = True  # noqa: SLF001 - read by the report's captions
    return fig


def write_figure(fig: Figure, path_stem) -> list[Path]:
    """Write ``fig`` as ``<stem>.pdf`` (vector, Type 42 fonts) and ``<stem>.png`` (300 dpi)."""
    stem = Path(path_stem)
    stem.parent.mkdir(parents=True, exist_ok=True)
    paths = [stem.with_name(stem.name + ".pdf"), stem.with_name(stem.name + ".png")]
    with matplotlib.rc_context(RC):
        fig.savefig(paths[0], format="pdf", metadata={"CreationDate": None})
        fig.savefig(paths[1], format="png", dpi=300, metadata={"Software": None})
    return paths


def legend_columns(fig: Figure, labels, most: int = 4) -> int:
    """Columns for a legend below ``fig`` so that it fits the figure's width: at most ``most``, fewer
    for long labels (a 40-character model name is about 2 in at the legend's 7 pt; four of them are
    wider than a page)."""
    labels = [str(x) for x in labels]
    if not labels:
        return 1
    # an average glyph is about 0.55 em wide; the handle and the gaps add about 0.45 in per entry
    entry = max(map(len, labels)) * RC["legend.fontsize"] * 0.55 / 72 + 0.45
    return max(1, min(most, len(labels), int(fig.get_figwidth() // entry)))


#: above this many panels side by side, their common x label is written once under the row
SHARED_XLABEL_PANELS = 2


def panel_xlabel(fig: Figure, axes, text: str) -> None:
    """The x label of a row of panels: under each of one or two panels, under the first only of three
    or more (a label per narrow panel runs into its neighbour's; a figure-level label would collide
    with the legend below the panels)."""
    axes = [ax for ax in axes if ax.get_visible()]
    for i, ax in enumerate(axes):
        ax.set_xlabel(text if i == 0 or len(axes) <= SHARED_XLABEL_PANELS else "")


def err(centre, lo, hi):
    """Non-negative [below, above] error-bar lengths (interval ends may round past the estimate)."""
    import numpy as np

    c = np.asarray(centre, dtype=float)
    return [np.clip(c - np.asarray(lo, dtype=float), 0, None), np.clip(np.asarray(hi, dtype=float) - c, 0, None)]


def hbars(ax, y, left, width, colour, height: float = 0.8):
    """Horizontal bars as one PolyCollection: far cheaper to draw than ``barh`` at 60 models."""
    import numpy as np
    from matplotlib.collections import PolyCollection

    y, left, width = (np.asarray(a, dtype=float) for a in (y, left, width))
    h = height / 2
    verts = [[(x0, yy - h), (x0 + w, yy - h), (x0 + w, yy + h), (x0, yy + h)]
             for yy, x0, w in zip(y, left, width) if w > 0]
    ax.add_collection(PolyCollection(verts, facecolors=colour, edgecolors="none", linewidths=0), autolim=True)
    ax.autoscale_view()


def pct(ci_prob: float) -> str:
    """An interval probability as a label: 0.95 → ``95%``, 0.975 → ``97.5%``."""
    return f"{100 * float(ci_prob):g}%"
