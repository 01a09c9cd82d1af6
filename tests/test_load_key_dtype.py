"""``key_dtype="category"`` (what the command line loads with): the same tables with the repeated text
keys as pandas categoricals, and the same numbers from every layer that reads them."""

import importlib

import numpy as np
import pandas as pd
import pytest

from rtanalysis import load, schema
from rtanalysis.reporting.ingest import ingest
from rtanalysis.io.keys import episode_rows, value_codes
from rtanalysis.metrics import compute_all
from rtanalysis.model.data import aggregate
from rtanalysis.model.inputs import data_hash
from rtanalysis.scale import read_dataset
from rtanalysis.simulate import simulate
from tests.test_scale_dataset import assert_model_data_equal

REAL = "tests/data/real"
# inspect-ai's own deprecation notices (tenacity, pandas 3.1), not ours
pytestmark = pytest.mark.filterwarnings("ignore:The 'initial' parameter:DeprecationWarning",
                                        "ignore:The inplace keyword")


def as_text(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with its categorical columns as ``str`` (what ``key_dtype="str"`` gives)."""
    return frame.astype({c: "str" for c in frame.columns if isinstance(frame[c].dtype, pd.CategoricalDtype)})


@pytest.fixture(scope="module")
def both(tmp_path_factory):
    """A simulated log with unlabelled decisions, silences and several clocks, loaded both ways."""
    logs = simulate("mixed", seed=5, tasks=3, seeds=2).write(tmp_path_factory.mktemp("logs"))["episodes"]
    return load(logs), load(logs, key_dtype="category"), logs


def test_categorical_tables_equal_the_text_ones_with_sorted_observed_categories(both):
    text, cat, _ = both
    assert dict(cat.episodes.dtypes.astype(str)) == {
        **dict(text.episodes.dtypes.astype(str)), **dict.fromkeys(schema.EPISODE_KEY_COLUMNS, "category")}
    assert [str(d) for d in cat.steps.dtypes] == list(
        schema.with_key_dtype(schema.STEP_COLUMNS, "category").values())
    for table in ("episodes", "steps"):
        a, b = getattr(text, table), getattr(cat, table)
        pd.testing.assert_frame_equal(as_text(b), a, obj=table)
        for c in b.columns:
            if isinstance(b[c].dtype, pd.CategoricalDtype):  # only values present, in text order
                assert list(b[c].cat.categories) == sorted(a[c].dropna().unique()), (table, c)
    assert cat.steps["episode_id"].cat.codes.dtype == np.int16  # 1–4 bytes a decision, not the text
    pd.testing.assert_frame_equal(cat.quarantine, text.quarantine)


def test_every_layer_gives_the_same_numbers_from_either_dtype(both):
    text, cat, _ = both
    from_codes = compute_all(cat.episodes, cat.steps)
    for name, a in compute_all(text.episodes, text.steps).items():  # keys as text in either case
        pd.testing.assert_frame_equal(from_codes[name], a, obj=name)
    assert_model_data_equal(aggregate(text.episodes, text.steps), aggregate(cat.episodes, cat.steps))
    assert data_hash(cat.episodes, cat.steps) == data_hash(text.episodes, text.steps)


@pytest.mark.parametrize("fixture", ["inspect", "realtimegym", "response_slots", "terminal_bench", "harbor"])
def test_real_harness_logs_load_the_same_either_way(fixture):
    path = f"{REAL}/{fixture}/slots.csv" if fixture == "response_slots" else f"{REAL}/{fixture}"
    text, cat = load(path), load(path, key_dtype="category")
    assert len(text.steps) > 0
    pd.testing.assert_frame_equal(as_text(cat.episodes), text.episodes)
    pd.testing.assert_frame_equal(as_text(cat.steps), text.steps)


def test_files_hold_text_whatever_the_key_dtype(tmp_path, monkeypatch):
    """Parquet written from categorical tables (in chunks of rows) reads back exactly as from text."""
    import pyarrow.parquet as pq

    arrow = importlib.import_module("rtanalysis.io.arrow")  # `rtanalysis.load` is also a function

    monkeypatch.setattr(arrow, "PARQUET_CHUNK_ROWS", 100)  # several chunks
    logs = simulate("mixed", seed=5, tasks=3, seeds=2).write(tmp_path / "logs")["episodes"]
    ingest([str(logs)], tmp_path / "text")
    lr, _ = ingest([str(logs)], tmp_path / "cat", key_dtype="category")
    assert isinstance(lr.steps["model"].dtype, pd.CategoricalDtype)
    for table in ("episodes", "steps"):
        a, b = tmp_path / "text" / f"{table}.parquet", tmp_path / "cat" / f"{table}.parquet"
        assert pq.read_schema(a) == pq.read_schema(b)
        assert pq.read_metadata(b).num_row_groups > 1
        pd.testing.assert_frame_equal(pd.read_parquet(b), pd.read_parquet(a))


def test_dataset_reads_back_with_either_key_dtype(tmp_path, both):
    text, cat, logs = both
    ingest([str(logs)], tmp_path / "ds", dataset=True, key_dtype="category")
    for kd, ref in (("str", text), ("category", cat)):
        back = read_dataset(tmp_path / "ds", key_dtype=kd)
        pd.testing.assert_frame_equal(back.episodes, ref.episodes, obj=f"episodes {kd}")
        pd.testing.assert_frame_equal(back.steps, ref.steps, obj=f"steps {kd}")


def test_episode_rows_match_on_both_keys_and_miss_what_is_absent(both):
    for lr in both[:2]:
        rows = episode_rows(lr.steps, lr.episodes)
        ep = lr.episodes.iloc[rows]
        assert (ep["run_id"].astype(str).to_numpy() == lr.steps["run_id"].astype(str).to_numpy()).all()
        assert (ep["episode_id"].astype(str).to_numpy() == lr.steps["episode_id"].astype(str).to_numpy()).all()
        # a subset of episodes, shuffled: decisions of the others get -1, the rest their new row
        sub = lr.episodes.iloc[::-3]
        got = episode_rows(lr.steps, sub)
        expect = pd.MultiIndex.from_arrays([sub["run_id"].astype(str), sub["episode_id"].astype(str)]).get_indexer(
            pd.MultiIndex.from_arrays([lr.steps["run_id"].astype(str), lr.steps["episode_id"].astype(str)]))
        np.testing.assert_array_equal(got, expect)
        assert (got == -1).any() and (got >= 0).any()


def test_latency_cells_split_as_a_sorted_group_by_from_either_dtype(both):
    """The predictive checks' per-cell split (integer codes, one sort) against pandas' sorted group-by,
    with keys missing on some decisions and categories not in text order."""
    from rtanalysis.model.checks import LATENCY_CELL_KEYS, latency_cell_split, log_latency

    text = both[0].steps.copy()
    text.loc[text.index[::7], "task_type"] = None  # no cell: the group-by drops these decisions
    shuffled = text.astype({"model": pd.CategoricalDtype(sorted(text["model"].unique())[::-1])})
    x = log_latency(text)
    keep = ~np.isnan(x) & (np.arange(len(x)) % 5 > 0)
    frame = text.assign(x=x)[keep]
    expect = {k: g["x"].to_numpy() for k, g in frame.groupby(list(LATENCY_CELL_KEYS), sort=True, dropna=True)}
    assert len(expect) > 3
    for steps in (text, text.astype({c: "category" for c in LATENCY_CELL_KEYS}), shuffled):
        got = latency_cell_split(steps, keep, x)
        assert list(got) == list(expect)  # sorted key order, as the group-by's
        for key, values in expect.items():
            np.testing.assert_array_equal(got[key][0], values)  # the decisions in their original order



def test_cell_shares_as_a_group_by_from_either_dtype(both):
    """The predictive checks' observed shares per (model, task type, clock), counted on integer codes,
    against pandas' group-by ``size`` and ``mean``, with keys missing on some decisions."""
    from rtanalysis.model.checks import cell_shares

    text = both[0].steps.copy()
    text.loc[text.index[::7], "task_type"] = None  # no group: the group-by drops these decisions
    keys = ["model", "task_type", "clock"]
    mask = text["window_close"].notna().to_numpy() & (np.arange(len(text)) % 3 > 0)
    flags = {"early": text["too_early"].fillna(False).to_numpy(bool), "silent": text["no_action"].to_numpy(bool)}
    frame = text[keys].assign(**flags)[mask]
    expect = frame.groupby(keys, sort=True, dropna=True).agg(n=("early", "size"), early=("early", "mean"),
                                                              silent=("silent", "mean"))
    assert len(expect) > 3 and 0 < expect["early"].max() and 0 < expect["silent"].max()
    for steps in (text, text.astype({c: "category" for c in keys})):
        got = cell_shares(steps, keys, mask, flags)
        assert sorted(got) == list(expect.index)
        for key, row in expect.iterrows():
            assert got[key] == {"n": row["n"], "early": row["early"], "silent": row["silent"]}  # exactly


def test_item_sums_as_the_group_by_of_a_frame_of_episodes(both):
    """The item-latency check's per-(model, type, clock, unit, item) sums, from integer codes, against
    the group-by of a frame of every episode that it replaced: the same rows, order and values."""
    from rtanalysis.metrics._groups import episode_row
    from rtanalysis.model.checks import _item_sums, log_latency
    from rtanalysis.model.data import aggregate

    for lr in both[:2]:
        e = aggregate(lr.episodes, lr.steps).episodes
        x, row = log_latency(lr.steps), episode_row(lr.steps, lr.episodes)
        acted = ~np.isnan(x)
        f = pd.DataFrame({"m": e["m"].to_numpy(), "k": e["k"].to_numpy(), "clock": e["clock"].to_numpy(),
                          "u": e["u"].to_numpy(), "i": e["i"].to_numpy(),
                          "sx": np.bincount(row[acted], weights=x[acted], minlength=len(e)),
                          "nx": np.bincount(row[acted], minlength=len(e)),
                          "n0": (e["M"].to_numpy() == 0).astype(np.int64),
                          "y0": ((e["M"].to_numpy() == 0) & (e["y"].to_numpy() > 0)).astype(np.int64)})
        f = f[f["i"] >= 0]
        expect = f.groupby(["m", "k", "clock", "u", "i"], sort=True)[["sx", "nx", "n0", "y0"]].sum().reset_index()
        got = _item_sums(e, row, x)
        assert len(expect) > 10
        pd.testing.assert_frame_equal(got, expect, check_exact=True, check_dtype=False)


def test_floored_log_latency_floors_zeros_per_unit_and_keeps_silences():
    from rtanalysis.metrics import floored_log_latency

    lat = np.array([0.0, 2.0, np.nan, 0.0, 0.5, 0.0, 4.0, np.nan])
    unit = np.array(["s", "s", "s", "ms", "ms", "tick", "tick", "ms"], dtype=object)
    # s: smallest positive 2 -> 0 floored at 1; ms: 0.5 -> 0.25; tick: 4 -> 2; no action stays NaN
    expect = np.log([1.0, 2.0, np.nan, 0.25, 0.5, 2.0, 4.0, np.nan])
    for u in (unit, pd.factorize(unit)[0], pd.Categorical(unit).codes):
        np.testing.assert_array_equal(floored_log_latency(lat, u), expect)
    # a unit with only zeros floors them at 1e-3
    np.testing.assert_array_equal(floored_log_latency(np.array([0.0, 0.0]), np.array([1, 1])), np.log([1e-3, 1e-3]))

@pytest.mark.filterwarnings("error")  # pandas deprecates categoricals built from values outside their categories
def test_value_codes_place_values_in_levels_and_others_at_minus_one():
    values = pd.Series(["late", "other", None, "early", "late"], dtype="str")
    for series in (values, values.astype("category"), values.astype(object)):
        np.testing.assert_array_equal(value_codes(series, ("early", "late")), [1, -1, -1, 0, 1])
    assert len(value_codes(values.iloc[:0].astype("category"), ("early",))) == 0


def test_an_unknown_key_dtype_is_an_error_naming_the_choices():
    with pytest.raises(ValueError, match="key_dtype must be one of str, category"):
        load(f"{REAL}/inspect", key_dtype="categorical")


def test_figures_are_the_same_picture_from_either_dtype(both):
    """Rendered pixel for pixel: a categorical key must not reorder or pad a figure's rows."""
    import io

    import matplotlib.pyplot as plt

    from rtanalysis import plots

    pictures = []
    for lr in both[:2]:
        figs = plots.build_figures(lr.episodes, lr.steps)
        pictures.append({})
        for name, fig in figs.items():
            buf = io.BytesIO()
            fig.savefig(buf, format="png", dpi=50)
            plt.close(fig)
            pictures[-1][name] = buf.getvalue()
    assert list(pictures[0]) == list(pictures[1]) and len(pictures[0]) >= 5
    assert [n for n in pictures[0] if pictures[0][n] != pictures[1][n]] == []
