"""Is a cell's latency likelihood calibrated? One cell of ``n`` Student-t log-latencies, (ν, μ, σ) drawn
from priors, the posterior of ν computed on a grid (no sampler involved), and the posterior probability
that ν is below the truth (its PIT: uniform when the likelihood is the data's), over many draws, for
three likelihoods side by side:

* ``exact``: every decision's density (what a per-decision model would do; the reference);
* ``quantile_bins``: counts in bins cut at the cell's own quantiles (midpoints of order statistics),
  the package's likelihood before 2026-12-04 — a pseudo-likelihood, its edges come from the data;
* ``order_statistics``: the kept order statistics' exact likelihood, the package's now
  (:func:`rtanalysis.model.data.order_statistic_layout`).

    .venv/bin/python benchmarks/order_statistic_likelihood.py [--n 40] [--reps 300] [--seed 2]

Prints, per likelihood, the PIT's counts in tenths, a χ² p-value of uniformity and the mean PIT
(0.5 when calibrated; above 0.5: the posterior of ν sits too low).
"""

from __future__ import annotations

import argparse

import numpy as np
from _results import append_result
from scipy import stats

from rtanalysis.model.data import BIN_QUANTILES, bin_edges, order_statistic_layout

NU_PRIOR = stats.gamma(2.0, scale=1 / 0.1)  # the package's prior on ν (priors.PRIORS["nu"])
N_NU = 80


def _between(edges, counts, NU, MU, SG):
    """Σ count · log P(between consecutive edges), on the grid."""
    cdf = stats.t.cdf((edges - MU[..., None]) / SG[..., None], NU[..., None])
    cdf = np.concatenate([np.zeros(NU.shape + (1,)), cdf, np.ones(NU.shape + (1,))], axis=-1)
    return (counts * np.log(np.clip(np.diff(cdf, axis=-1), 1e-300, None))).sum(-1)


def _log_likelihoods(x, NU, MU, LS):
    SG = np.exp(LS)
    exact = sum(stats.t.logpdf((xi - MU) / SG, NU) - LS for xi in x)
    e_mid = np.quantile(x, BIN_QUANTILES, method="midpoint")
    c_mid = np.bincount(np.searchsorted(e_mid, x), minlength=len(e_mid) + 1)
    _, count, weight = (a[0] for a in order_statistic_layout([len(x)]))
    e = bin_edges(x)
    dens = (weight * (stats.t.logpdf((e - MU[..., None]) / SG[..., None], NU[..., None]) - LS[..., None])).sum(-1)
    return {"exact": exact, "quantile_bins": _between(e_mid, c_mid, NU, MU, SG),
            "order_statistics": _between(e, count, NU, MU, SG) + dens}


def pit_study(n: int, reps: int, seed: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    u = (np.arange(N_NU) + 0.5) / N_NU
    nu_grid = NU_PRIOR.ppf(u)  # equal prior mass per grid point
    pit = {"exact": [], "quantile_bins": [], "order_statistics": []}
    for _ in range(reps):
        nu, mu, sigma = NU_PRIOR.rvs(random_state=rng), rng.normal(0, 1), np.exp(rng.normal(-0.5, 0.3))
        x = mu + sigma * rng.standard_t(nu, size=n)
        med = np.median(x)
        s = 1.4826 * np.median(np.abs(x - med))
        mu_grid = med + np.linspace(-6, 6, 41) * s / np.sqrt(n)
        ls_grid = np.log(s) + np.linspace(-1.2, 1.2, 41)
        log_prior = stats.norm(0, 1).logpdf(mu_grid)[None, :, None] + stats.norm(-0.5, 0.3).logpdf(ls_grid)[None, None, :]
        NU, MU, LS = np.meshgrid(nu_grid, mu_grid, ls_grid, indexing="ij")
        for name, ll in _log_likelihoods(x, NU, MU, LS).items():
            lp = ll + log_prior
            p = np.exp(lp - lp.max()).sum(axis=(1, 2))
            cdf = np.concatenate([[0], np.cumsum(p / p.sum())])
            pit[name].append(np.interp(NU_PRIOR.cdf(nu), np.arange(N_NU + 1) / N_NU, cdf))
    return {k: np.array(v) for k, v in pit.items()}


def main(argv=None) -> str:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=40)
    ap.add_argument("--reps", type=int, default=300)
    ap.add_argument("--seed", type=int, default=2)
    args = ap.parse_args(argv)
    pit = pit_study(args.n, args.reps, args.seed)
    lines = [f"one cell of {args.n} Student-t log-latencies, {args.reps} prior draws (seed {args.seed}); "
             "PIT of the true nu under the grid posterior"]
    for name, v in pit.items():
        h = np.histogram(v, np.linspace(0, 1, 11))[0]
        lines.append(f"{name:17s} tenths {h.tolist()}  chi2 p = {stats.chisquare(h).pvalue:.3g}  mean PIT {v.mean():.3f}")
    text = "\n".join(lines)
    append_result("order_statistic_likelihood.txt", text)
    return text


if __name__ == "__main__":
    main()
