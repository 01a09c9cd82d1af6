"""The data hash the reports record: the same data give the same hash whatever the row order or
the dtype a loader chose, and any changed value changes it."""

import importlib

import numpy as np

from rtanalysis import load
from rtanalysis.model.fit import HASH_CHUNK_ROWS, data_hash


def test_hash_ignores_order_and_dtype_and_sees_every_value(monkeypatch):
    lr = load("rtanalysis/data/example")
    h = data_hash(lr.episodes, lr.steps)
    shuffled = data_hash(lr.episodes.sample(frac=1, random_state=1), lr.steps.sample(frac=1, random_state=2))
    assert shuffled == h
    steps = lr.steps.copy()
    steps["step"] = steps["step"].astype("float64")  # a loader that read the step as a float
    steps["on_time"] = steps["on_time"].astype(object)  # booleans as Python objects
    assert data_hash(lr.episodes, steps) == h
    # text hashed in pieces gives the same digest as in one
    fit_module = importlib.import_module("rtanalysis.model.fit")  # the package exports a function `fit`
    monkeypatch.setattr(fit_module, "HASH_CHUNK_ROWS", 1000)  # the steps: several pieces
    assert data_hash(lr.episodes, lr.steps) == h
    monkeypatch.setattr(fit_module, "HASH_CHUNK_ROWS", HASH_CHUNK_ROWS)
    for col, change in (("latency", lambda s: s + np.where(np.arange(len(s)) == 5, 1e-9, 0.0)),
                        ("action", lambda s: s.where(np.arange(len(s)) != 3, "other")),
                        ("too_late", lambda s: s.where(np.arange(len(s)) != 4, ~s.fillna(False)))):
        changed = lr.steps.copy()
        changed[col] = change(changed[col])
        assert data_hash(lr.episodes, changed) != h, col
