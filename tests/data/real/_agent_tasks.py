"""The tasks both agent-task fixture generators (make_terminal_bench.py, make_harbor.py) draw trials
for: one list, so the two harnesses' fixtures describe the same benchmark."""

#: task id, category, difficulty, the agent's time limit (s), median agent time as a share of the limit
TASKS = [
    ("fix-permissions", "system-administration", "easy", 180.0, 0.35),
    ("csv-to-parquet", "data-processing", "easy", 360.0, 0.40),
    ("git-merge-conflict", "software-engineering", "medium", 600.0, 0.55),
    ("nginx-reverse-proxy", "system-administration", "medium", 900.0, 0.60),
    ("train-tiny-classifier", "machine-learning", "hard", 1200.0, 0.75),
    ("sqlite-recovery", "data-science", "hard", 1800.0, 0.70),
]
