"""report.html as a reader sees it: rendered by headless Chromium (Debian's ``chromium`` package).

One report (observed metrics, no fit: the figures and tables a reader gets first) from a small
simulated benchmark in which one model's name is HTML. The page is loaded in the browser with a
small script appended that, once the page has loaded, writes what it measured into the DOM, which
``--dump-dom`` prints: whether every figure loaded (``naturalWidth > 0``), the page's scroll width
against the window's, and which elements exist. A screenshot is taken too, and must not be blank.

Skipped when Chromium is missing outside CI; in CI (``CI=true``, where ``.ci/run`` installs it) a
missing browser fails the test.
"""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import orjson
import pytest

from tests.browser import HEIGHT, WIDTH, chromium, page_check, run_browser

pytestmark = pytest.mark.slow

EVIL = "<b>evil</b><script>document.title='pwned'</script>"
#: what the report's check adds to :func:`tests.browser.check_script`'s report
REPORT_FIELDS = f"""scroll_width: document.documentElement.scrollWidth,
    window_width: window.innerWidth,
    n_scripts: document.scripts.length,
    bold_evil: Array.from(document.querySelectorAll("b")).filter(b => b.textContent === "evil").length,
    evil_as_text: document.body.textContent.includes({json.dumps(EVIL).replace("</", "<\\/")}),"""


def write_logs_with_an_html_model_name(out: Path) -> Path:
    """A small simulated benchmark whose first model is renamed to :data:`EVIL`."""
    from rtanalysis.simulate import simulate

    sim = simulate("high_frequency", seed=1, tasks=3, seeds=2)
    first = sim.design.models[0].name
    path = out / "logs.jsonl.gz"
    with gzip.open(path, "wb") as fh:
        for rec in sim.records:
            if rec["model"] == first:
                rec = {**rec, "model": EVIL}
            fh.write(orjson.dumps(rec) + b"\n")
    return path


@pytest.fixture(scope="module")
def report_html(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("browser_report")
    logs = write_logs_with_an_html_model_name(out)
    done = subprocess.run([sys.executable, "-m", "rtanalysis.cli", "report", str(logs), "--out", str(out / "report"),
                           "--no-fit", "--quiet"], capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    return out / "report" / "report.html"


def test_every_figure_loads_nothing_overflows_and_html_in_a_name_stays_text(report_html, tmp_path):
    exe = chromium()
    seen = page_check(exe, report_html, tmp_path / "profile", REPORT_FIELDS)
    assert seen["n_images"] >= 3, seen
    assert seen["broken"] == [], f"figures that did not load: {seen['broken']}"
    assert seen["window_width"] == WIDTH
    assert seen["scroll_width"] <= seen["window_width"], f"the page is wider than the window: {seen}"
    # the name is shown as its characters: no <b> or <script> element came from it
    assert seen["evil_as_text"], "the model name does not appear as text"
    assert seen["bold_evil"] == 0
    assert seen["n_scripts"] == 1, "only the check's own script may run"
    assert seen["title"] != "pwned"


def test_screenshot_shows_the_page(report_html, tmp_path):
    exe = chromium()
    shot = tmp_path / "report.png"
    run_browser(exe, tmp_path / "profile", f"--screenshot={shot}", report_html.as_uri())
    from PIL import Image

    with Image.open(shot) as im:
        assert im.size == (WIDTH, HEIGHT)
        pixels = np.asarray(im.convert("L"), dtype=float)
    # a blank or failed render is one flat colour; a page of text and figures is not
    assert pixels.std() > 10, f"screenshot looks blank (grey-level sd {pixels.std():.1f})"
    assert (pixels < 128).mean() > 0.01, "hardly any dark pixels: no text or figures rendered"
