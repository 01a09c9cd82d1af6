"""One recovery criterion for the slow structure tests (item time intensities, the mixture family,
clock effects): the decomposition's errors are of the size of its posterior spread."""

import numpy as np

#: the 90 % interval's half-width in SDs of a normal posterior
Z90 = 1.645


def assert_recovered(res, truth, quantities=("p_timely", "share_timing", "p_capable"), n_rows: int = 6) -> None:
    """For each quantity: ``n_rows`` scored rows, mean |error| ≤ 0.05 and root-mean-square
    standardised error ≤ 2 (SD from the fit's 90 % interval, which it must have been fitted with)."""
    from rtanalysis.model.studies.calibrate import score_fit

    s = score_fit(res.decomposition(), truth)
    for q in quantities:
        got = s[s["quantity"] == q]
        assert len(got) == n_rows
        z = (got["estimate"] - got["truth"]) / ((got["hi"] - got["lo"]) / (2 * Z90))
        assert got["abs_error"].mean() <= 0.05, (q, got)
        assert np.sqrt((z**2).mean()) <= 2.0, (q, z.round(2).tolist())
