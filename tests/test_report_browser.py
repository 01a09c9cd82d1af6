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
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import orjson
import pytest

pytestmark = pytest.mark.slow

WIDTH, HEIGHT = 1280, 2400
EVIL = "<b>evil</b><script>document.title='pwned'</script>"
CHECK_ID = "rtanalysis-browser-check"
# appended to a copy of report.html; runs after every image has loaded or failed
CHECK_SCRIPT = f"""
<script id="{CHECK_ID}-script">
window.addEventListener("load", () => {{
  const imgs = Array.from(document.images);
  const out = {{
    n_images: imgs.length,
    broken: imgs.filter(i => !(i.complete && i.naturalWidth > 0)).map(i => i.alt),
    scroll_width: document.documentElement.scrollWidth,
    window_width: window.innerWidth,
    n_scripts: document.scripts.length,
    bold_evil: Array.from(document.querySelectorAll("b")).filter(b => b.textContent === "evil").length,
    title: document.title,
    evil_as_text: document.body.textContent.includes({json.dumps(EVIL).replace("</", "<\\/")}),
  }};
  const pre = document.createElement("pre");
  pre.id = "{CHECK_ID}";
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
}});
</script>
"""


def chromium() -> str:
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if exe:
        return exe
    if os.environ.get("CI") == "true":
        pytest.fail("chromium is not installed; .ci/run installs it (apt-get install chromium)")
    pytest.skip("chromium is not installed (Debian: apt-get install chromium)")


def run_browser(exe: str, profile: Path, *args: str) -> str:
    cmd = [exe, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
           "--disable-component-update", "--disable-sync", "--no-first-run", "--hide-scrollbars",
           f"--user-data-dir={profile}", f"--window-size={WIDTH},{HEIGHT}", "--virtual-time-budget=10000", *args]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=180, check=False)
    assert done.returncode == 0, f"chromium failed ({done.returncode}): {done.stderr[-2000:]}"
    return done.stdout


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
    page = tmp_path / "checked.html"
    page.write_text(report_html.read_text(encoding="utf-8").replace("</body>", CHECK_SCRIPT + "</body>"),
                    encoding="utf-8")
    dom = run_browser(exe, tmp_path / "profile", "--dump-dom", page.as_uri())
    found = re.search(rf'<pre id="{CHECK_ID}">(.*?)</pre>', dom, re.S)
    assert found, "the check script did not run: " + dom[-500:]
    import html

    seen = json.loads(html.unescape(found[1]))
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
