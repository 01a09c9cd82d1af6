"""The data hash the reports record: the same data give the same hash whatever the row order or
the dtype a loader chose, and any changed value changes it."""

import importlib

import numpy as np

from rtanalysis import load
from rtanalysis.model.inputs import HASH_CHUNK_ROWS, data_hash


def test_hash_ignores_order_and_dtype_and_sees_every_value(monkeypatch):
    lr = load("rtanalysis/data/example")
    h = data_hash(lr.episodes, lr.steps)
    shuffled = data_hash(lr.episodes.sample(frac=1, random_state=1), lr.steps.sample(frac=1, random_state=2))
    assert shuffled == h
    steps = lr.steps.copy()
    steps["step"] = steps["step"].astype("float64")  # a loader that read the step as a float
    steps["on_time"] = steps["on_time"].astype(object)  # booleans as Python objects
    assert data_hash(lr.episodes, steps) == h
    steps["model"] = steps["model"].astype("category")  # text as a pandas categorical
    steps["action"] = steps["action"].astype(object)  # text (and missing values) as Python objects
    assert data_hash(lr.episodes, steps) == h
    # text hashed in pieces gives the same digest as in one
    fit_module = importlib.import_module("rtanalysis.model.inputs")
    monkeypatch.setattr(fit_module, "HASH_CHUNK_ROWS", 1000)  # the steps: several pieces
    assert data_hash(lr.episodes, lr.steps) == h
    monkeypatch.setattr(fit_module, "HASH_CHUNK_ROWS", HASH_CHUNK_ROWS)
    for col, change in (("latency", lambda s: s + np.where(np.arange(len(s)) == 5, 1e-9, 0.0)),
                        ("action", lambda s: s.where(np.arange(len(s)) != 3, "other")),
                        ("too_late", lambda s: s.where(np.arange(len(s)) != 4, ~s.fillna(False)))):
        changed = lr.steps.copy()
        changed[col] = change(changed[col])
        assert data_hash(lr.episodes, changed) != h, col


def test_hash_of_the_example_is_the_one_earlier_reports_recorded():
    """A report's data hash identifies its data across versions: a faster digest must not change it
    (the column-by-column digest with each text row hashed as str, as computed before this test)."""
    lr = load("rtanalysis/data/example")
    assert data_hash(lr.episodes, lr.steps) == "158b20c701f1c9241432c7b5486d9dbfc9b0feaf7f64aac9c5c2ff0d9b21b172"
