"""Headless-Chromium checks of tcplab's HTML pages (reports, the ``study all`` dashboard).

:func:`check_page` opens a page as a file in headless Chromium, with no network, and
reads back, from the rendered DOM, the natural size of every image and the page's
element ids: an image that did not decode has size 0 x 0, so the check fails when
an embedded figure is broken. With ``screenshot``, the same run's page is also
captured as a PNG (the README's dashboard picture is made this way, by
``make dashboard-screenshot``).

The probe is a copy of the page with a script appended (written next to the page so
that relative links resolve); the page itself is not changed.

Example (needs Chromium)::

    >>> page = check_page("results/demo/index.html")          # doctest: +SKIP
    >>> page.images, "totals" in page.ids                      # doctest: +SKIP
    ([(560, 373), ...], True)
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

__all__ = ["find", "check_page", "Page"]

_PROBE = ("<script>window.addEventListener('load',()=>{const s=[...document.images].map(i=>i.naturalWidth+'x'"
          "+i.naturalHeight);const ids=[...document.querySelectorAll('[id]')].map(e=>e.id);"
          "const p=document.createElement('pre');p.textContent=['SIZES',s.join(','),'IDS',ids.join(' '),'END']"
          ".join('|');document.body.appendChild(p);});</script>")


@dataclass
class Page:
    """What Chromium rendered: every image's natural (width, height) and the element ids, in page order."""

    images: list[tuple[int, int]]
    ids: list[str]
    screenshot: Path | None


def find() -> str | None:
    """The Chromium executable on ``PATH`` (``chromium`` or ``chromium-browser``), or ``None``."""
    return shutil.which("chromium") or shutil.which("chromium-browser")


def _chromium(args: list[str], profile: Path, timeout: float) -> subprocess.CompletedProcess[str]:
    exe = find()
    if exe is None:
        raise FileNotFoundError("chromium is not installed (apt-get install chromium; `make browser`)")
    cmd = [exe, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
           "--disable-background-networking", "--disable-component-update", "--disable-sync", "--hide-scrollbars",
           f"--user-data-dir={profile}", "--virtual-time-budget=10000", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)


def check_page(page: str | Path, screenshot: str | Path | None = None, width: int = 1280, height: int = 1600,
               timeout: float = 120.0) -> Page:
    """Renders ``page`` in headless Chromium; returns its images' sizes and element ids.

    Args:
        page: the HTML file.
        screenshot: also write a ``width`` x ``height`` PNG of the page here.

    Raises:
        FileNotFoundError: Chromium is not installed.
        RuntimeError: the page did not render (Chromium's stderr is quoted).
    """
    page = Path(page).resolve()
    probe = page.with_name(f".probe-{page.name}")
    probe.write_text(page.read_text(encoding="utf-8").replace("</body>", _PROBE + "</body>"), encoding="utf-8")
    try:
        with tempfile.TemporaryDirectory(prefix="tcplab-chromium-") as tmp:
            out = _chromium(["--dump-dom", probe.as_uri()], Path(tmp) / "profile", timeout)
            m = re.search(r"SIZES\|([0-9x,]*)\|IDS\|([^|]*)\|END", out.stdout)
            if not m:
                raise RuntimeError(f"{page}: Chromium rendered no probe; stderr: {out.stderr[-2000:]}")
            shot = None
            if screenshot is not None:
                shot = Path(screenshot).resolve()
                shot.parent.mkdir(parents=True, exist_ok=True)
                res = _chromium([f"--window-size={width},{height}", f"--screenshot={shot}", page.as_uri()],
                                Path(tmp) / "profile2", timeout)
                if not shot.is_file():
                    raise RuntimeError(f"{page}: Chromium wrote no screenshot; stderr: {res.stderr[-2000:]}")
    finally:
        probe.unlink(missing_ok=True)
    sizes = [(int(w), int(h)) for w, h in (s.split("x") for s in m.group(1).split(",") if s)]
    return Page(sizes, m.group(2).split(), shot)


def main(argv: list[str] | None = None) -> int:
    """``python -m tcplab.chromium PAGE.html [SCREENSHOT.png]``: checks a page (and captures it)."""
    args = sys.argv[1:] if argv is None else argv
    if not 1 <= len(args) <= 2:
        print("usage: python -m tcplab.chromium PAGE.html [SCREENSHOT.png]", file=sys.stderr)
        return 2
    page = check_page(args[0], args[1] if len(args) > 1 else None)
    broken = [i for i, (w, h) in enumerate(page.images) if w == 0 or h == 0]
    print(f"{args[0]}: {len(page.images)} images, {len(broken)} broken, {len(page.ids)} ids"
          + (f"; screenshot {page.screenshot}" if page.screenshot else ""))
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
