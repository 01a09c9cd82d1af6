"""Decision-outcome shares and "thought correctly but too late" on the hand-made fixture."""

import numpy as np
import pytest

from rtanalysis.metrics import decision_validity, wilson
from tests.metrics_fixtures import load_fixture, row

# mA wall decisions of basic.jsonl: ok 4, wrong 1, late 2, early 1, silent 1, unknown 1 (10 in all);
# content-correct with known timing: the 4 ok, 2 late, 1 early = 7
EXPECTED = {"ok": 4, "wrong": 1, "late": 2, "early": 1, "silent": 1, "unknown": 1}


@pytest.fixture(scope="module")
def table():
    res = load_fixture()
    return decision_validity(res.episodes, res.steps)


def test_outcome_shares_by_hand(table):
    for measure, count in EXPECTED.items():
        r = row(table, model="mA", clock="wall", measure=measure)
        assert (r["count"], r["n"], r["denominator"]) == (count, 10, "decisions")
        assert r["share"] == pytest.approx(count / 10)
        lo, hi = wilson(count, 10)
        assert (r["share_lo"], r["share_hi"]) == pytest.approx((float(lo), float(hi)))
    shares = table[(table["model"] == "mA") & (table["clock"] == "wall") & (table["denominator"] == "decisions")]
    assert shares["share"].sum() == pytest.approx(1.0)


def test_correct_but_missed_by_hand(table):
    late = row(table, model="mA", clock="wall", measure="correct_late")
    early = row(table, model="mA", clock="wall", measure="correct_early")
    missed = row(table, model="mA", clock="wall", measure="correct_missed")
    assert (late["count"], late["n"]) == (2, 7)
    assert (early["count"], early["n"]) == (1, 7)
    assert (missed["count"], missed["n"], missed["share"]) == (3, 7, pytest.approx(3 / 7))


def test_group_without_decisions_has_nan_shares(table):
    mb = table[table["model"] == "mB"]
    assert len(mb) == 10 and (mb["n"] == 0).all() and (mb["count"] == 0).all()
    assert mb["share"].isna().all() and mb["share_lo"].isna().all()


def test_rows_sorted_by_group_then_measure(table):
    assert list(table["measure"].iloc[:10]) == [
        "ok", "wrong", "late", "early", "silent", "error", "unknown", "correct_late", "correct_early",
        "correct_missed"]
    assert np.all(table.groupby(["model", "clock"]).size() == 10)
