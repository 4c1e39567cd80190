"""The report as a reader sees it: headless Chromium at 1400 x 1000, a view of the report opened by the
report's own javascript (``app.setView``), measured in the page and photographed.  Used by
tests/test_report.py; ``python tests/browser.py results/cpu/report.html OUT_DIR`` takes the screenshots."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

WINDOW = (1400, 1000)
APT_LOCK = "/tmp/stsq-apt.lock"  # one apt-get at a time across the test workers (tests/slurm/cluster.sh takes it too)


def chromium() -> str | None:
    return next((p for p in (shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome")) if p), None)


def install_chromium() -> str | None:
    """Chromium: installed from Debian's packages where it is missing and this is root with apt-get (as CI is, and
    as the Slurm tests install Slurm); None where it cannot be."""
    if chromium() or os.geteuid() != 0 or not shutil.which("apt-get"):
        return chromium()
    script = ("apt-get install -y -q chromium >/dev/null 2>&1 || "
              "{ apt-get update -q >/dev/null && apt-get install -y -q chromium >/dev/null; }")
    subprocess.run(["timeout", "900", "flock", APT_LOCK, "sh", "-c", script], capture_output=True,
                   env={**os.environ, "DEBIAN_FRONTEND": "noninteractive"})
    return chromium()


def _view_script(path: str, content: str) -> str:
    # open the view once the app has started, then write what it displays into the body's attributes
    return ("<script>setTimeout(function(){"
            + (f"app.setView({{navbarMode:'resultinfo',resultPath:'{path}',content:'{content}',"
               f"contentPath:results['{path}'].data_uri}});" if path else "")
            + "setTimeout(function(){var out=[];document.querySelectorAll('img').forEach(function(i){"
              "if(i.naturalWidth>200){out.push(i.clientWidth+'/'+i.naturalWidth+'/'+i.clientHeight+'/'"
              "+i.naturalHeight)}});var f=document.querySelector('iframe');"
              "document.body.setAttribute('data-imgs',out.join(';'));"
              "document.body.setAttribute('data-iframe',f?f.clientWidth+'/'+f.clientHeight:'');"
              # where the page's text and figures start in the window (the page is not scrolled): above 0
              # is cut off
              "var tops=[];document.querySelectorAll('.prose, img').forEach(function(x){"
              "if(x.tagName!='IMG'||x.naturalWidth>200){tops.push(Math.round(x.getBoundingClientRect().top))}});"
              "document.body.setAttribute('data-tops',tops.join(';'));},1500);},1500);"
              "</script>")


def with_view(report: Path, dest: Path, path: str = "", content: str = "img") -> Path:
    """A copy of the report that opens ``path`` (a result of the report) on load."""
    src = report.read_text()
    i = src.rindex("</body>")  # the last one: the report's own scripts hold the string too
    dest.write_text(src[:i] + _view_script(path, content) + src[i:])
    return dest


def _run(*args, timeout=120) -> str:
    exe = chromium()
    r = subprocess.run([exe, "--headless", "--no-sandbox", "--disable-gpu", f"--window-size={WINDOW[0]},{WINDOW[1]}",
                        "--virtual-time-budget=4000", *args], capture_output=True, text=True, timeout=timeout)
    return r.stdout


def view(page: Path, png: Path) -> dict:
    """The opened view photographed to ``png``, and what it displays: each figure image's displayed and
    natural size (width, width, height, height), the iframe's size, and where the page's text and figures
    start in the window (px from its top, the page not scrolled)."""
    dom = _run("--dump-dom", f"--screenshot={png.resolve()}", page.resolve().as_uri())
    imgs = re.search(r'data-imgs="([^"]*)"', dom)
    frame = re.search(r'data-iframe="([^"]*)"', dom)
    sizes = [tuple(int(v) for v in s.split("/")) for s in imgs.group(1).split(";") if s] if imgs else []
    iframe = tuple(int(v) for v in frame.group(1).split("/")) if frame and frame.group(1) else None
    tops = re.search(r'data-tops="([^"]*)"', dom)
    return {"images": sizes, "iframe": iframe, "tops": [int(v) for v in tops.group(1).split(";") if v] if tops else []}


def page_height(html: Path, width: int) -> int:
    """The height (px) of an HTML page laid out at ``width`` px."""
    src = html.read_text()
    probe = html.with_name(html.stem + ".probe.html")
    script = ("<script>setTimeout(function(){document.body.setAttribute('data-height',"
              "document.documentElement.scrollHeight)},500)</script>")
    probe.write_text(src.replace("</body>", script + "</body>") if "</body>" in src else src + script)
    exe = chromium()
    dom = subprocess.run([exe, "--headless", "--no-sandbox", "--disable-gpu", f"--window-size={width},1000",
                          "--virtual-time-budget=3000", "--dump-dom", probe.resolve().as_uri()],
                         capture_output=True, text=True, timeout=120).stdout
    return int(re.search(r'data-height="(\d+)"', dom).group(1))


if __name__ == "__main__":
    report, out = Path(sys.argv[1]), Path(sys.argv[2])
    out.mkdir(parents=True, exist_ok=True)
    root = report.parent.name
    for name in ["landing", *sys.argv[3:]]:
        path = "" if name == "landing" else f"results/{root}/figures/{name}.png"
        print(name, view(with_view(report, out / f"{name}.html", path), out / f"{name}.png"))
