"""Simulation studies of the model: simulation-based calibration (:mod:`.sbc`), interval coverage
on simulated designs (:mod:`.calibrate`) and small designs with known truth for tests (:mod:`.toy`)."""
