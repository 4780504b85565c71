#!/usr/bin/env python3
"""Opens an eu-stacktrace -f svg flame graph in headless Chromium and uses it
as a person would: looks at it, hovers a frame, clicks one, resets the zoom,
searches.  Chromium is driven through its DevTools protocol on a pipe
(--remote-debugging-pipe: fds 3 and 4, NUL-separated JSON), so nothing but
Python's standard library and Debian's chromium is needed.

    browser.py --svg FLAME.SVG --folded F --chromium /usr/bin/chromium \\
               --shots DIR --zoom-frame NAME --search REGEXP --tap-start N

prints one TAP line per check and saves DIR/flame.png (as opened),
DIR/flame-zoom.png (zoomed into NAME) and DIR/flame-search.png (REGEXP
highlighted).  The expectations come from the folded output of the same
recording: the share of samples whose stack has a frame matching REGEXP,
and NAME's samples.
"""

import argparse
import base64
import fcntl
import json
import os
import re
import select
import shutil
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET

from folded import Tap, escape, inclusive, matching_samples, read_folded, total

SEARCH_FILL = "#e600e6"


class Chromium:
    def __init__(self, chromium, log):
        self.profile = tempfile.mkdtemp(prefix="eu-stacktrace-chromium.")
        to_r, self.to_w = os.pipe()
        self.from_r, from_w = os.pipe()
        # The child's fds 3 and 4 must be the pipe ends, whatever numbers
        # the pipes got here.
        hi_r = fcntl.fcntl(to_r, fcntl.F_DUPFD_CLOEXEC, 20)
        hi_w = fcntl.fcntl(from_w, fcntl.F_DUPFD_CLOEXEC, 20)
        os.close(to_r)
        os.close(from_w)

        def child_fds():
            os.dup2(hi_r, 3)
            os.dup2(hi_w, 4)

        self.proc = subprocess.Popen(
            [chromium, "--headless", "--no-sandbox", "--disable-gpu",
             "--disable-background-networking", "--disable-component-update",
             "--no-first-run", "--disable-sync", "--disable-extensions",
             "--disable-dev-shm-usage", "--hide-scrollbars", "--mute-audio",
             "--no-default-browser-check", "--remote-debugging-pipe",
             "--user-data-dir=" + self.profile, "about:blank"],
            stdin=subprocess.DEVNULL, stdout=log, stderr=log,
            pass_fds=(3, 4), preexec_fn=child_fds)
        os.close(hi_r)
        os.close(hi_w)
        self.buf = b""
        self.next_id = 0
        self.events = []
        self.responses = {}
        self.session = None

    def close(self):
        try:
            self.send("Browser.close", session=False)
            self.proc.wait(timeout=10)
        except Exception:
            self.proc.kill()
            self.proc.wait()
        os.close(self.to_w)
        os.close(self.from_r)
        shutil.rmtree(self.profile, ignore_errors=True)

    def send(self, method, params=None, session=True):
        """Sends a command; returns its id (see result)."""
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params or {}}
        if session and self.session:
            msg["sessionId"] = self.session
        os.write(self.to_w, json.dumps(msg).encode() + b"\0")
        return self.next_id

    def _read(self, deadline):
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([self.from_r], [], [], left)[0]:
            raise TimeoutError("no answer from chromium")
        data = os.read(self.from_r, 1 << 20)
        if not data:
            raise EOFError("chromium closed the pipe (exit status %s)" % self.proc.poll())
        self.buf += data
        while b"\0" in self.buf:
            raw, self.buf = self.buf.split(b"\0", 1)
            msg = json.loads(raw)
            if "id" in msg:
                self.responses[msg["id"]] = msg
            else:
                self.events.append(msg)

    def result(self, cid, timeout=30):
        deadline = time.monotonic() + timeout
        while cid not in self.responses:
            self._read(deadline)
        msg = self.responses.pop(cid)
        if "error" in msg:
            raise RuntimeError("%s" % msg["error"])
        return msg.get("result", {})

    def call(self, method, params=None, session=True, timeout=30):
        return self.result(self.send(method, params, session), timeout)

    def event(self, method, timeout=30):
        deadline = time.monotonic() + timeout
        while True:
            for i, e in enumerate(self.events):
                if e["method"] == method:
                    return self.events.pop(i)["params"]
            self._read(deadline)

    def js(self, expression):
        r = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True})
        if "exceptionDetails" in r:
            raise RuntimeError("script error: %s" % r["exceptionDetails"])
        return r["result"].get("value")

    def mouse(self, kind, x, y, wait=True):
        params = {"type": kind, "x": x, "y": y, "button": "left",
                  "clickCount": 1 if kind != "mouseMoved" else 0}
        if kind == "mouseMoved":
            params["button"] = "none"
        cid = self.send("Input.dispatchMouseEvent", params)
        return self.result(cid) if wait else cid

    def click(self, x, y):
        self.mouse("mouseMoved", x, y)
        self.mouse("mousePressed", x, y)
        self.mouse("mouseReleased", x, y)

    def screenshot(self, path):
        data = self.call("Page.captureScreenshot", {"format": "png"})["data"]
        with open(path, "wb") as f:
            f.write(base64.b64decode(data))
        return os.path.getsize(path)


# What the page knows about its frames, as plain data.
FRAMES_JS = """
(function () {
  return Array.prototype.map.call(document.querySelectorAll("g.f, g.m"), function (g) {
    var r = g.querySelector("rect"), b = r.getBoundingClientRect();
    return { name: g.fg ? g.fg.name : null, x: +g.getAttribute("data-x"),
             s: +g.getAttribute("data-s"), d: +g.getAttribute("data-d"),
             hidden: g.classList.contains("hide"), parent: g.classList.contains("parent"),
             merged: g.classList.contains("m"),
             fill: r.getAttribute("fill"), width: +r.getAttribute("width"),
             rx: +r.getAttribute("x"), cx: b.left + b.width / 2, cy: b.top + b.height / 2,
             label: g.querySelector("text") ? g.querySelector("text").textContent : "" };
  });
})()
"""


def center(b, element_id):
    box = b.js("(function () { var r = document.getElementById(%s).getBoundingClientRect();"
               " return [r.left + r.width / 2, r.top + r.height / 2, r.width]; })()"
               % json.dumps(element_id))
    return box


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--svg", required=True)
    ap.add_argument("--folded", required=True)
    ap.add_argument("--chromium", default="/usr/bin/chromium")
    ap.add_argument("--shots", required=True)
    ap.add_argument("--zoom-frame", required=True)
    ap.add_argument("--search", required=True)
    ap.add_argument("--log", required=True)
    ap.add_argument("--tap-start", type=int, default=1)
    args = ap.parse_args()
    tap = Tap(args.tap_start)
    checks = 6
    stacks = read_folded(args.folded)
    n = total(stacks)

    with open(args.log, "wb") as log:
        try:
            b = Chromium(args.chromium, log)
        except OSError as e:
            for _ in range(checks):
                tap.check(False, "chromium (%s) does not start: %s" % (args.chromium, e))
            return 1
        try:
            run(b, args, tap, stacks, n)
        except Exception as e:  # a dead browser fails the checks left
            while tap.n < args.tap_start - 1 + checks:
                tap.check(False, "browser session ended early: %s: %s" % (type(e).__name__, e))
        finally:
            b.close()
    return 1 if tap.failed else 0


def run(b, args, tap, stacks, n):
    target = next(t for t in b.call("Target.getTargets", session=False)["targetInfos"]
                  if t["type"] == "page")
    b.session = b.call("Target.attachToTarget", {"targetId": target["targetId"],
                                                 "flatten": True}, session=False)["sessionId"]
    b.call("Page.enable")
    b.call("Runtime.enable")
    svg = ET.parse(args.svg).getroot()
    width, height = int(svg.get("width")), int(svg.get("height"))
    b.call("Emulation.setDeviceMetricsOverride", {"width": width, "height": height,
                                                  "deviceScaleFactor": 1, "mobile": False})
    b.call("Page.navigate", {"url": "file://" + os.path.abspath(args.svg)})
    b.event("Page.loadEventFired")

    # 1. It opens: every frame is known to the script, no script error.
    frames = b.js(FRAMES_JS)
    errors = [e for e in b.events if e["method"] == "Runtime.exceptionThrown"]
    n_svg = len(svg.findall(".//{http://www.w3.org/2000/svg}g[@class='f']")) + \
        len(svg.findall(".//{http://www.w3.org/2000/svg}g[@class='m']"))
    drawn = [f for f in frames if f["width"] > 0 and not f["hidden"]]
    tap.check(not errors and len(frames) == n_svg and len(drawn) == n_svg
              and all(f["name"] for f in frames),
              "chromium opens the SVG: %d frames, all drawn and read by the script, no script "
              "error" % len(frames), [json.dumps(e["params"])[:300] for e in errors])

    # 2. Looks like a flame graph: the picture, and the root spans the width.
    size = b.screenshot(os.path.join(args.shots, "flame.png"))
    root = [f for f in frames if f["d"] == 0]
    inner = width - 20
    tap.check(size > 10000 and len(root) == 1 and abs(root[0]["width"] - inner) < 0.5,
              "screenshot %s (%d bytes); the root frame spans the width (%.1f of %d px)"
              % (os.path.join(args.shots, "flame.png"), size,
                 root[0]["width"] if root else -1, inner))

    # 3. The tooltip: function, module, samples, percent.
    name = args.zoom_frame
    target_frames = [f for f in frames if f["name"] == name]
    want = inclusive(stacks).get(escape(name), 0)
    problems = []
    if len(target_frames) != 1:
        problems.append("%d frames named %s, want one" % (len(target_frames), name))
        raise RuntimeError("no single frame %s to use" % name)
    t = target_frames[0]
    b.mouse("mouseMoved", t["cx"], t["cy"])
    tip = b.js("(function () { var t = document.getElementById('tip');"
               " return { hidden: t.classList.contains('hide'),"
               " lines: Array.prototype.map.call(t.querySelectorAll('tspan'),"
               " function (s) { return s.textContent; }) }; })()")
    pct = "%.2f%%" % (100.0 * want / n)
    expect = [name, "/", "%d samples, %s" % (want, pct)]
    lines = tip["lines"]
    if tip["hidden"] or len(lines) < 3 or lines[0] != expect[0] or "/" not in lines[1] \
            or not lines[2].startswith(expect[2]):
        problems.append("tooltip %s, expected [%s, MODULE, %s]" % (tip, name, expect[2]))
    tap.check(not problems, "hovering %s shows a tooltip: %s" % (name, " | ".join(lines)),
              problems)

    # 4. Clicking zooms: the frame spans the width, its ancestors stay (faded),
    # the frames beside it go, its children widen by the same factor.
    b.click(t["cx"], t["cy"])
    after = b.js(FRAMES_JS)
    z = next(f for f in after if f["name"] == name)
    problems = []
    if abs(z["width"] - inner) > 0.5 or abs(z["rx"] - 10) > 0.5:
        problems.append("zoomed frame at x %.2f, width %.2f; want 10, %d" % (z["rx"], z["width"],
                                                                             inner))
    for f in after:
        inside = f["x"] >= z["x"] and f["x"] + f["s"] <= z["x"] + z["s"]
        above = f["x"] <= z["x"] and f["x"] + f["s"] >= z["x"] + z["s"]
        if f["d"] < z["d"]:
            ok = (not f["hidden"] and f["parent"]) if above else f["hidden"]
        elif inside:
            ok = not f["hidden"] and abs(f["width"] - f["s"] * inner / z["s"]) < 0.05
        else:
            ok = f["hidden"]
        if not ok:
            problems.append("after the zoom: %s" % json.dumps(f))
    unzoom = b.js("!document.getElementById('unzoom').classList.contains('hide')")
    if not unzoom:
        problems.append("no Reset Zoom button")
    b.mouse("mouseMoved", 2, 2)
    b.screenshot(os.path.join(args.shots, "flame-zoom.png"))
    shown = sum(1 for f in after if not f["hidden"])
    tap.check(not problems, "clicking %s zooms: it spans the width, %d frames shown of %d, "
              "screenshot flame-zoom.png" % (name, shown, len(after)), problems[:10])

    # 5. Reset Zoom puts every frame back.
    x, y, _ = center(b, "unzoom")
    b.click(x, y)
    back = b.js(FRAMES_JS)
    problems = ["%s: width %.2f, was %.2f" % (f["name"], g["width"], f["width"])
                for f, g in zip(frames, back)
                if g["hidden"] or g["parent"] or abs(f["width"] - g["width"]) > 0.01]
    tap.check(not problems and len(back) == len(frames),
              "Reset Zoom restores all %d frames" % len(back), problems[:10])

    # 6. Search: the Search button asks for a regular expression (a prompt);
    # the matching frames turn magenta and the share of samples under them
    # is shown.
    x, y, _ = center(b, "search")
    b.mouse("mouseMoved", x, y)
    b.mouse("mousePressed", x, y)
    pending = b.mouse("mouseReleased", x, y, wait=False)
    b.event("Page.javascriptDialogOpening")
    b.call("Page.handleJavaScriptDialog", {"accept": True, "promptText": args.search})
    b.result(pending)
    rx = re.compile(args.search)
    found = b.js(FRAMES_JS)
    problems = []
    for f in found:
        hit = f["d"] > 0 and not f["merged"] and bool(rx.search(f["name"]))
        if hit != (f["fill"] == SEARCH_FILL):
            problems.append("%s: fill %s" % (f["name"], f["fill"]))
    hits = sum(1 for f in found if f["fill"] == SEARCH_FILL)
    m = matching_samples(stacks, args.search)
    expect = "Matched: %.2f%% (%d of %d samples)" % (100.0 * m / n, m, n)
    text = b.js("document.getElementById('matched').textContent")
    if text != expect:
        problems.append("shows %r, expected %r" % (text, expect))
    if hits == 0:
        problems.append("nothing highlighted")
    b.mouse("mouseMoved", 2, 2)
    b.screenshot(os.path.join(args.shots, "flame-search.png"))
    tap.check(not problems, "searching %s highlights the %d matching frames and shows %r; "
              "screenshot flame-search.png" % (args.search, hits, text), problems[:10])


if __name__ == "__main__":
    sys.exit(main())
