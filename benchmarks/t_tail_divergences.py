"""The Student-t family's tails and NUTS, side by side: the data of one SBC prior draw (the t study's
design and seed, ``benchmarks/sbc_study.py``) fitted with the family's log-CDF / log-survival
(``families._t_logcdf``, ``_t_logsf``: symmetry and a far-tail series) and with PyMC's own
(``pm.logcdf`` / ``pm.logccdf`` of ``StudentT``; the latter is log(1 − F), −inf with a NaN gradient
from z ≈ 30 at ν = 60), both 2 chains × 200 draws after 200 tuning steps as in the study. Prints
divergences, nutpie's divergence message, step sizes, leapfrog steps per draw and ν's posterior mean
against the truth.

    .venv/bin/python benchmarks/t_tail_divergences.py [--sim 71]
"""

from __future__ import annotations

import argparse
import dataclasses

import numpy as np
from _results import append_result
from sbc_study import sbc_design


def _fit(t, p_all, j: int, seed: int):
    from rtanalysis.model.fit import fit
    from rtanalysis.model.sbc import _load, generate

    recs = generate(t, p_all.take([j]), np.random.default_rng([seed, j]))
    return fit(_load(recs), draws=200, chains=2, seed=seed + j, progress=False, tune=None, latency_family="t")


def main(argv=None) -> str:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sim", type=int, default=71)
    ap.add_argument("--seed", type=int, default=2026)
    args = ap.parse_args(argv)
    from rtanalysis.model import families
    from rtanalysis.model.sbc import prior_draws, template_from_design

    t = template_from_design(sbc_design(), seed=args.seed)
    prior, p_all = prior_draws(t, args.sim + 1, args.seed, "t")
    truth = float(prior["nu"].values.ravel()[args.sim])
    lines = [f"SBC t design, prior draw {args.sim} (true nu {truth:.1f}), 2 chains x 200 draws, 200 tuning"]
    ours = families.FAMILIES["t"]
    pymc_tails = dataclasses.replace(ours, pt_logcdf=families._lazy("logcdf", families._student),
                                     pt_logsf=families._lazy("logccdf", families._student))
    for label, fam in (("PyMC's logcdf/logccdf", pymc_tails), ("the family's (now)", ours)):
        families.FAMILIES["t"] = fam
        try:
            res = _fit(t, p_all, args.sim, args.seed)
        finally:
            families.FAMILIES["t"] = ours
        st = res.idata["sample_stats"]
        msgs = {str(m) for m in np.ravel(st["divergence_message"].values) if m is not None and str(m) not in ("None", "nan")}
        lines.append(f"{label:22s} divergences {int(st['diverging'].values.sum()):4d} of 400  step sizes "
                     f"{np.round(st['step_size'].values.mean(axis=1), 3).tolist()}  leapfrog steps per draw "
                     f"{st['n_steps'].values.mean():.1f}  nu mean {float(res.idata['posterior']['nu'].mean()):.1f}"
                     + (f"  ({'; '.join(sorted(msgs))})" if msgs else ""))
    text = "\n".join(lines)
    append_result("t_tail_divergences.txt", text)
    return text


if __name__ == "__main__":
    main()
