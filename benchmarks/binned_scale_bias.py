"""The binned latency likelihood's scale, by how the bin edges are read off the data.

Until 2026-12-04 the Student-t and mixture families were fitted on each cell's log-latencies counted in
bins cut at the cell's own quantiles (``rtanalysis.model.data.BIN_QUANTILES``). The edges come from the
same data, so that binned likelihood is a pseudo-likelihood; how the quantile is interpolated decides
whether edges land on data points. Now the package keeps order statistics at those quantiles and uses
their exact likelihood (``order statistics``: the densities at the edges and the probabilities between
them, :func:`rtanalysis.model.data.order_statistic_layout`). Here, for standard-normal samples of n
decisions (300 per n, seed 0), the maximum of each likelihood in (μ, log σ) (Nelder–Mead): bins with
NumPy's ``linear`` (its default) and ``midpoint`` edges, the order statistics, and the exact
maximum-likelihood σ of all the data (the sample SD). Prints the mean σ per n; the truth is 1, and
the exact ML's own small-sample bias is what a true likelihood shares.

    .venv/bin/python benchmarks/binned_scale_bias.py
"""

from __future__ import annotations

import numpy as np
from scipy import optimize, stats

from _results import append_result
from rtanalysis.model.data import BIN_EDGE_METHOD, BIN_QUANTILES, bin_edges, order_statistic_layout

SIZES = (8, 15, 30, 100, 1000)
METHODS = ("linear", "midpoint", "order statistics")


def binned_sigma(x: np.ndarray, method: str) -> float:
    if method == "order statistics":
        e = bin_edges(x)
        _, c, w = (a[0] for a in order_statistic_layout([len(x)]))
    else:
        e = np.quantile(x, BIN_QUANTILES, method=method)
        c, w = np.bincount(np.searchsorted(e, x), minlength=len(e) + 1), np.zeros(len(e))

    def nll(theta):
        cdf = stats.norm.cdf(e, theta[0], np.exp(theta[1]))
        p = np.diff(np.concatenate([[0.0], cdf, [1.0]]))
        return -(c * np.log(np.maximum(p, 1e-300))).sum() - (w * stats.norm.logpdf(e, theta[0], np.exp(theta[1]))).sum()

    return float(np.exp(optimize.minimize(nll, [0.0, 0.0], method="Nelder-Mead").x[1]))


def main(reps: int = 300) -> str:
    lines = [f"mean sigma over {reps} samples per n (truth 1): binned likelihood by edge method, and exact ML",
             f"{'n':>6} " + " ".join(f"{m:>16}" for m in METHODS) + f" {'exact ML':>9}"]
    for n in SIZES:
        rng = np.random.default_rng(0)
        xs = [rng.standard_normal(n) for _ in range(reps)]
        est = [np.mean([binned_sigma(x, m) for x in xs]) for m in METHODS]
        lines.append(f"{n:>6} " + " ".join(f"{v:16.3f}" for v in est) + f" {np.mean([x.std() for x in xs]):9.3f}")
    lines.append(f"the package's method: {BIN_EDGE_METHOD}")
    return "\n".join(lines)


if __name__ == "__main__":
    import time

    append_result("binned_scale_bias.txt", f"# {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}\n" + main())
