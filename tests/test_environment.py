"""environment.yml (conda) and pyproject.toml list the same packages with the same pins."""

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _pyproject() -> dict[str, str]:
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    reqs = list(meta["dependencies"])
    for extra in meta.get("optional-dependencies", {}).values():
        reqs += extra
    out = {}
    for r in reqs:
        m = re.fullmatch(r"([A-Za-z0-9_.\-]+)(?:\[[^\]]*\])?==([^;\s]+)", r.strip())
        assert m, f"pyproject.toml: {r!r} is not pinned with =="
        out[m[1].lower().replace("_", "-")] = m[2]
    return out


def _environment() -> dict[str, str]:
    out = {}
    lines = (ROOT / "environment.yml").read_text().splitlines()
    for line in lines:
        m = re.fullmatch(r"\s*-\s+([A-Za-z0-9_.\-]+)\s*(==|=)\s*([^\s#]+)\s*(#.*)?", line)
        if m and m[1] != "python":
            out[m[1].lower().replace("_", "-")] = m[3]
    return out


def test_same_packages_and_pins():
    py, env = _pyproject(), _environment()
    assert py, "no dependencies parsed from pyproject.toml"
    assert set(py) == set(env), f"only in pyproject: {set(py) - set(env)}; only in environment.yml: {set(env) - set(py)}"
    assert {k: v for k, v in py.items() if env[k] != v} == {}


def test_python_requirement_matches():
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert meta["requires-python"] == ">=3.12"
    assert re.search(r"-\s+python=3\.12", (ROOT / "environment.yml").read_text())
