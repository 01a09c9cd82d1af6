"""How fast can the capability likelihood's gradient be? (issue 13 §1: the floor under the sampling
time.) The term that dominates the model's gradient at leaderboard scale — per labelled group
(model, item, length): c·log p + (n − c)·log(1 − p), log p = e_(k,x)·log σ(η_(m,k,i)), with its
gradient scattered to the (m, k, i) pairs and the (k, x) exponents — timed side by side as the
PyTensor graph the model compiles (numba backend, no fastmath, as the sampler runs it), as a
hand-written numba loop (one pass, branches instead of switches, no temporaries) and as whole-array
NumPy (its own SIMD ``expm1`` and ``log``; numba and PyTensor's numba kernels call the scalar libm,
as this machine's numba has no SVML); then the sampling time that term alone implies at the defaults
(4 chains × 2000 iterations × the leapfrog steps per iteration, on 2 cores).

    python benchmarks/bench_kernel.py --aggregates d.pkl      # a pickled ModelData
    python benchmarks/bench_kernel.py --tasks 100 --seeds 3    # simulate leaderboard60

Appends to ``benchmarks/results/bench_kernel.txt``.
"""

from __future__ import annotations

import argparse
import os
import time

from _leaderboard import add_data_arguments, leaderboard_aggregates
from _results import append_result

os.environ.setdefault("PYTENSOR_FLAGS", "base_compiledir=" + os.path.abspath(".cache/pytensor"))

LEAPFROG_STEPS, ITERATIONS, CHAINS, CORES = 15, 2000, 4, 2  # measured at every rung (docs/scale.md)


def _loop():
    import numba
    import numpy as np

    @numba.njit(fastmath=False)
    def capable_loglik(log_sig, expo, pair_of, kx_of, n, c, g_ls, g_ex):
        g_ls[:] = 0.0
        g_ex[:] = 0.0
        total = 0.0
        for r in range(n.shape[0]):
            ls, e = log_sig[pair_of[r]], expo[kx_of[r]]
            lc = min(e * ls, -1e-12)
            log1m = np.log1p(-np.exp(lc)) if lc < -0.6931471805599453 else np.log(-np.expm1(lc))
            total += c[r] * lc + (n[r] - c[r]) * log1m
            dl = c[r] - (n[r] - c[r]) / np.expm1(-lc)  # d/d lc
            g_ls[pair_of[r]] += dl * e
            g_ex[kx_of[r]] += dl * ls
        return total

    return capable_loglik


def _numpy(pair_of, kx_of, n, c, n_pairs: int, n_kx: int):
    """The same value and gradient as whole-array NumPy: log(1 − p) as log(−expm1(log p)) for every
    group (one SIMD expm1 and one log per group; the graph's switch to log1p(−exp) below −log 2 only
    moves the last bits), the gradients scattered by ``bincount`` (a sequential, deterministic sum)."""
    import numpy as np

    w = n - c

    def capable_loglik(log_sig, expo):
        ls, e = log_sig[pair_of], expo[kx_of]
        prod = e * ls
        lc = np.minimum(prod, -1e-12)
        em = np.expm1(lc)
        total = float(np.sum(c * lc) + np.sum(w * np.log(-em)))
        dl = (em + 1.0) / em * w + c  # d/d lc
        dl *= prod <= -1e-12  # the clamp passes no gradient (as pt.minimum's)
        return (total, np.bincount(pair_of, weights=dl * e, minlength=n_pairs),
                np.bincount(kx_of, weights=dl * ls, minlength=n_kx))

    return capable_loglik


def _ms(fn, reps: int) -> float:
    fn()
    t = time.perf_counter()
    for _ in range(reps):
        fn()
    return (time.perf_counter() - t) / reps * 1000


def main(argv=None) -> int:
    import numpy as np
    import pytensor
    import pytensor.tensor as pt

    from rtanalysis.model import build

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_data_arguments(ap)
    ap.add_argument("--reps", type=int, default=200)
    args = ap.parse_args(argv)
    d, label = leaderboard_aggregates(args)
    CL = d.cap_labelled
    pair, pair_of, kx, kx_of = build._factor(CL)
    n, c = CL["n"].to_numpy(float), CL["capable"].to_numpy(float)
    rng = np.random.default_rng(0)
    log_sig = -np.log1p(np.exp(-rng.normal(1.0, 1.0, len(pair))))
    expo = np.exp(rng.normal(0.0, 0.3, len(kx)))

    pytensor.config.numba__fastmath = False  # as the sampler compiles it
    LS, EX = pt.dvector("log_sig"), pt.dvector("expo")
    lc = pt.minimum(EX[kx_of] * LS[pair_of], -1e-12)
    total = pt.sum(c * lc + (n - c) * pt.log1mexp(lc))
    graph = pytensor.function([LS, EX], [total, *pt.grad(total, [LS, EX])], trust_input=True)
    loop = _loop()
    g_ls, g_ex = np.zeros(len(pair)), np.zeros(len(kx))
    value, d_ls, d_ex = graph(log_sig, expo)
    same = (abs(loop(log_sig, expo, pair_of, kx_of, n, c, g_ls, g_ex) - float(value)) <= 1e-9 * abs(float(value))
            and np.allclose(g_ls, d_ls, rtol=1e-9, atol=1e-9) and np.allclose(g_ex, d_ex, rtol=1e-9, atol=1e-9))
    vec = _numpy(pair_of, kx_of, n, c, len(pair), len(kx))
    v_value, v_ls, v_ex = vec(log_sig, expo)
    same_numpy = (abs(v_value - float(value)) <= 1e-9 * abs(float(value))
                  and np.allclose(v_ls, d_ls, rtol=1e-9, atol=1e-9) and np.allclose(v_ex, d_ex, rtol=1e-9, atol=1e-9))
    t_graph = _ms(lambda: graph(log_sig, expo), args.reps)
    t_loop = _ms(lambda: loop(log_sig, expo, pair_of, kx_of, n, c, g_ls, g_ex), args.reps)
    t_numpy = _ms(lambda: vec(log_sig, expo), args.reps)
    grads = CHAINS * ITERATIONS * LEAPFROG_STEPS
    lines = [f"# {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; {label}: {len(CL):,} labelled groups, "
             f"{len(pair):,} (model, item) pairs, {len(kx)} (type, length) exponents; load average "
             f"{tuple(round(x, 1) for x in os.getloadavg())}",
             f"{'implementation':34s} {'ms per value+gradient':>22s} {'ns per group':>13s} "
             f"{'sampling floor s':>17s}"]
    for name, ms in (("PyTensor graph (the model's)", t_graph), ("hand-written numba loop", t_loop),
                     ("whole-array NumPy (SIMD expm1, log)", t_numpy)):
        lines.append(f"{name:34s} {ms:22.3f} {ms * 1e6 / len(CL):13.1f} {grads * ms / 1000 / CORES:17.1f}")
    lines.append(f"same value and gradient: loop {same}, NumPy {same_numpy}; ratio graph/loop {t_graph / t_loop:.2f}x, "
                 f"graph/NumPy {t_graph / t_numpy:.2f}x; floor = "
                 f"{CHAINS} chains x {ITERATIONS} iterations x {LEAPFROG_STEPS} leapfrog steps x ms / {CORES} cores")
    append_result("bench_kernel.txt", "\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
