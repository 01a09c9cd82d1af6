"""pyproject.toml declares ranges, requirements.lock the exact set seen working, environment.yml the same.

- every requirement in pyproject.toml is a range with a lower bound (no ``==`` pin that would clash
  with a user's environment), and admits the version the lock holds;
- the lock holds every package pyproject.toml names (runtime, ``test``, ``notebooks``, ``inspect`` and ``docs`` extras);
- environment.yml pins exactly the lock's version of each package it lists, and lists them all;
- the Makefile installs through the lock.
"""

import os
import re
import tomllib
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[1]
INSTALLED_EXTRAS = ("test", "notebooks", "inspect")  # `make install` installs these
LOCKED_EXTRAS = INSTALLED_EXTRAS + ("docs",)  # and `make docs` this one; `bench` is optional and unlocked
#: packages whose next major (for 0.x: minor) version is known or expected to break our use of them
CAPPED = {"pymc", "pytensor", "arviz", "arviz-stats", "nutpie"}


def _project() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def _requirements(extras=LOCKED_EXTRAS) -> list[Requirement]:
    meta = _project()
    reqs = list(meta["dependencies"])
    for extra in extras:
        reqs += meta["optional-dependencies"][extra]
    return [Requirement(r) for r in reqs]


def _lock() -> dict[str, str]:
    out = {}
    for line in (ROOT / "requirements.lock").read_text().splitlines():
        m = re.match(r"([A-Za-z0-9_.\-]+)==(\S+)", line)
        if m:
            out[canonicalize_name(m[1])] = m[2]
    return out


def _environment() -> dict[str, str]:
    out = {}
    for line in (ROOT / "environment.yml").read_text().splitlines():
        m = re.fullmatch(r"\s*-\s+([A-Za-z0-9_.\-]+)\s*(==|=)\s*([^\s#]+)\s*(#.*)?", line)
        if m and m[1] != "python":
            out[canonicalize_name(m[1])] = m[3]
    return out


def test_pyproject_declares_ranges_with_a_tested_lower_bound():
    all_extras = tuple(_project()["optional-dependencies"])
    for req in _requirements(all_extras):
        ops = {s.operator for s in req.specifier}
        assert ">=" in ops, f"pyproject.toml: {req} has no lower bound"
        assert not ops & {"==", "===", "~="}, f"pyproject.toml: {req} pins a version; declare a range"
        capped = "<" in ops
        assert capped == (canonicalize_name(req.name) in CAPPED), (
            f"pyproject.toml: {req}: upper bounds only where a break is known ({sorted(CAPPED)})")


def test_the_lock_holds_every_requirement_at_a_version_the_range_admits():
    lock = _lock()
    assert len(lock) > 50, "requirements.lock should hold the whole resolved set, not only direct dependencies"
    for req in _requirements():
        name = canonicalize_name(req.name)
        assert name in lock, f"{req.name} is required by pyproject.toml but missing from requirements.lock"
        assert req.specifier.contains(lock[name], prereleases=True), (
            f"requirements.lock has {req.name}=={lock[name]}, outside pyproject.toml's {req.specifier}")


def test_environment_yml_pins_the_locked_versions():
    lock, env = _lock(), _environment()
    direct = {canonicalize_name(r.name) for r in _requirements()}
    assert direct <= set(env), f"missing from environment.yml: {sorted(direct - set(env))}"
    locked_in_env = {k: v for k, v in env.items() if k in lock}
    assert {k: (v, lock[k]) for k, v in locked_in_env.items() if v != lock[k]} == {}
    # the rest (the unlocked bench extra) must at least fall in pyproject.toml's ranges
    ranges = {canonicalize_name(r.name): r.specifier for r in _requirements(tuple(_project()["optional-dependencies"]))}
    for name in set(env) - set(lock):
        assert name in ranges, f"environment.yml lists {name}, which pyproject.toml does not"
        assert ranges[name].contains(env[name], prereleases=True), f"environment.yml {name}={env[name]}"


def test_python_requirement_matches():
    assert _project()["requires-python"] == ">=3.12"
    assert re.search(r"-\s+python=3\.12", (ROOT / "environment.yml").read_text())


def test_make_installs_through_the_lock():
    makefile = (ROOT / "Makefile").read_text()
    installed = re.search(r"pip install .*-c requirements\.lock .*-e \"\.\[([a-z,]+)\]\"", makefile)
    assert installed and set(installed[1].split(",")) == set(INSTALLED_EXTRAS), "`make` installs the locked extras"
    assert all(f"--extra {e}" in makefile for e in LOCKED_EXTRAS), "`make lock` resolves the installed extras"


@pytest.mark.skipif(os.environ.get("CI") != "true", reason="only CI's environment is installed by `make` from the lock")
def test_ci_runs_on_the_locked_versions():
    lock = _lock()
    wrong = {}
    for req in _requirements(INSTALLED_EXTRAS):
        name = canonicalize_name(req.name)
        try:
            have = version(req.name)
        except PackageNotFoundError:
            have = None
        if have != lock[name]:
            wrong[req.name] = (have, lock[name])
    assert wrong == {}, f"installed vs locked: {wrong}"
