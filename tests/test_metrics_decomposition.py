"""Observed capability / timing / both / unknown decomposition of failed episodes."""

import numpy as np
import pytest

from rtanalysis.metrics import observed_decomposition, wilson
from rtanalysis.metrics.decomposition import FAILED_TYPES
from tests.metrics_fixtures import load_fixture, row


@pytest.fixture(scope="module")
def table():
    return observed_decomposition(load_fixture().episodes)


def test_labelled_group_by_hand(table):
    # mA wall failures: a3 (one wrong, one early decision) = both; a5 (silent) = timing
    expected = {"capability": 0, "timing": 1, "both": 1, "unknown": 0}
    for ftype, count in expected.items():
        r = row(table, model="mA", clock="wall", failure_type=ftype)
        assert (r["count"], r["n_failed"], r["n_labelled"]) == (count, 2, 2)
        assert r["share"] == pytest.approx(count / 2)
        lo, hi = wilson(count, 2)
        assert (r["share_lo"], r["share_hi"]) == pytest.approx((float(lo), float(hi)))
    assert row(table, model="mA", clock="wall", failure_type="both")["share_labelled"] == 0.5
    assert np.isnan(row(table, model="mA", clock="wall", failure_type="unknown")["share_labelled"])


def test_unlabelled_failures_are_unknown(table):
    # mB episodes have no decisions: their 4 failures cannot be typed
    r = row(table, model="mB", failure_type="unknown")
    assert (r["count"], r["n_failed"], r["share"], r["n_labelled"]) == (4, 4, 1.0, 0)
    assert np.isnan(row(table, model="mB", failure_type="timing")["share_labelled"])


def test_group_without_failures_is_nan(table):
    paused = table[(table["model"] == "mA") & (table["clock"] == "paused")]
    assert len(paused) == len(FAILED_TYPES) and (paused["n_failed"] == 0).all() and paused["share"].isna().all()
