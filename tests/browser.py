"""Headless Chromium (Debian's package) for the tests that open pages as a reader does: the browser,
a script appended to a copy of a page that reports what the page shows once every image has loaded
or failed, and that report read back from the DOM."""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

WIDTH, HEIGHT = 1280, 2400
CHECK_ID = "rtanalysis-check"


def chromium() -> str:
    """The browser's executable; with CI=true a missing browser fails (``.ci/run`` installs it)."""
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if exe:
        return exe
    if os.environ.get("CI") == "true":
        pytest.fail("chromium is not installed; .ci/run installs it (apt-get install chromium)")
    pytest.skip("chromium is not installed (Debian: apt-get install chromium)")


def run_browser(exe: str, profile: Path, *args: str, budget_ms: int = 10000) -> str:
    """Chromium headless at WIDTH × HEIGHT with ``args`` (``--dump-dom URL``, ``--screenshot=...``); stdout."""
    cmd = [exe, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
           "--disable-component-update", "--disable-sync", "--no-first-run", "--hide-scrollbars",
           "--allow-file-access-from-files", f"--user-data-dir={profile}", f"--window-size={WIDTH},{HEIGHT}",
           f"--virtual-time-budget={budget_ms}", *args]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=180, check=False)
    assert done.returncode == 0, f"chromium failed ({done.returncode}): {done.stderr[-2000:]}"
    return done.stdout


def check_script(fields: str) -> str:
    """A script that, on the page's ``load`` event, writes ``{n_images, broken, title, <fields>}`` as
    JSON into a ``<pre>`` (``broken``: the ``src`` of every image that did not load); ``fields``: more
    entries of that object, JavaScript."""
    return f"""
<script id="{CHECK_ID}-script">
window.addEventListener("load", () => {{
  const imgs = Array.from(document.images);
  const out = {{
    n_images: imgs.length,
    broken: imgs.filter(i => !(i.complete && i.naturalWidth > 0)).map(i => i.getAttribute("src")),
    title: document.title,
    {fields}
  }};
  const pre = document.createElement("pre");
  pre.id = "{CHECK_ID}";
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
}});
</script>
"""


def page_check(exe: str, page: Path, profile: Path, fields: str = "", budget_ms: int = 10000) -> dict:
    """Open a copy of ``page`` (beside it, so its relative links resolve) with :func:`check_script`
    appended, and return what the script reported."""
    text = page.read_text(encoding="utf-8")
    assert "</body>" in text, page
    probe = page.with_name(f".check-{page.name}")
    probe.write_text(text.replace("</body>", check_script(fields) + "</body>", 1), encoding="utf-8")
    try:
        dom = run_browser(exe, profile, "--dump-dom", probe.as_uri(), budget_ms=budget_ms)
    finally:
        probe.unlink()
    found = re.search(rf'<pre id="{CHECK_ID}"[^>]*>(.*?)</pre>', dom, re.S)  # a theme may add attributes
    assert found, f"{page}: the check script did not run: {dom[-500:]}"
    return json.loads(html.unescape(found[1]))
