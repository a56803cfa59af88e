#!/usr/bin/env python3
"""Drive headless Chromium through the DevTools protocol over a pipe.

usage: cdp.py live URL SCREENSHOT.png
       cdp.py nojs URL OUT.html
  Open URL (a run page of `avo serve`), then, without reloading it, wait
  until the server's events have updated the page at least twice and the
  candidate table has grown by at least 3 rows; print the row counts seen,
  save a screenshot.  Exit 1 naming what did not happen.

nojs: load URL with JavaScript disabled and write the DOM as Chromium built
it (what --dump-dom gives, which prints nothing when scripts are off).

Chromium reads commands on fd 3 and answers on fd 4
(--remote-debugging-pipe), each message JSON ended by a NUL byte, so no
WebSocket library is needed.
"""
import base64
import json
import os
import subprocess
import sys
import tempfile
import time


class Browser:
    def __init__(self):
        cmd_r, self.cmd_w = os.pipe()
        self.out_r, out_w = os.pipe()
        self.profile = tempfile.mkdtemp(prefix="avo-cdp-")
        chrome = os.environ.get("CHROME", "chromium")
        # Chromium reads fd 3 and writes fd 4: dup the pipe ends there in the
        # child (through fds above both, in case one of them is 3 or 4);
        # pass_fds keeps 3 and 4 open across the exec.
        def fds():
            r, w = os.dup(cmd_r), os.dup(out_w)
            os.dup2(r, 3)
            os.dup2(w, 4)
        self.proc = subprocess.Popen(
            [chrome, "--headless=new", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
             "--remote-debugging-pipe", "--user-data-dir=" + self.profile,
             "--window-size=1280,2000", "about:blank"],
            preexec_fn=fds, pass_fds=(3, 4), stdout=subprocess.DEVNULL,
            stderr=open(os.path.join(self.profile, "stderr"), "w"))
        os.close(cmd_r)
        os.close(out_w)
        self.next_id = 0
        self.buf = b""
        self.session = None

    def send(self, method, params=None, session=True):
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params or {}}
        if session and self.session:
            msg["sessionId"] = self.session
        os.write(self.cmd_w, json.dumps(msg).encode() + b"\0")
        want = self.next_id
        deadline = time.time() + 30
        while time.time() < deadline:
            while b"\0" not in self.buf:
                chunk = os.read(self.out_r, 1 << 20)
                if not chunk:
                    raise SystemExit("FAIL: chromium closed its pipe")
                self.buf += chunk
            raw, self.buf = self.buf.split(b"\0", 1)
            reply = json.loads(raw)
            if reply.get("id") == want:
                if "error" in reply:
                    raise SystemExit("FAIL: %s: %s" % (method, reply["error"]))
                return reply.get("result", {})
        raise SystemExit("FAIL: no answer to " + method)

    def open(self, url, scripts=True):
        target = self.send("Target.createTarget",
                           {"url": url if scripts else "about:blank"}, session=False)["targetId"]
        self.session = self.send("Target.attachToTarget",
                                 {"targetId": target, "flatten": True}, session=False)["sessionId"]
        if not scripts:
            self.send("Emulation.setScriptExecutionDisabled", {"value": True})
            self.send("Page.navigate", {"url": url})

    def dom(self):
        """The document's markup, or "" while a navigation replaces it."""
        try:
            root = self.send("DOM.getDocument", {"depth": 0})["root"]["nodeId"]
            return self.send("DOM.getOuterHTML", {"nodeId": root})["outerHTML"]
        except SystemExit:
            return ""

    def eval(self, expr):
        r = self.send("Runtime.evaluate", {"expression": expr, "returnByValue": True})
        return r.get("result", {}).get("value")

    def screenshot(self, path):
        data = self.send("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True})
        with open(path, "wb") as f:
            f.write(base64.b64decode(data["data"]))

    def close(self):
        try:
            self.send("Browser.close", session=False)
        except SystemExit:
            pass
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        subprocess.run(["rm", "-rf", self.profile])


def wait_until(b, expr, seconds):
    deadline = time.time() + seconds
    while time.time() < deadline:
        v = b.eval(expr)
        if v:
            return v
        time.sleep(0.2)
    return None


def live(url, shot):
    b = Browser()
    try:
        b.open(url)
        if not wait_until(b, "document.readyState === 'complete' && "
                             "!!document.getElementById('live')", 20):
            raise SystemExit("FAIL: the run page did not load")
        # A mark that a reload would wipe: the updates must come without one.
        b.eval("window.avoMark = 1")
        rows = "document.querySelectorAll('tr[data-cand]').length"
        first = b.eval(rows)
        print("rows at load:", first)
        grown = wait_until(b, "(%s >= %d && +(document.body.getAttribute('data-updates') || 0) >= 2)"
                              " ? %s : 0" % (rows, first + 3, rows), 40)
        updates = b.eval("document.body.getAttribute('data-updates')")
        if not grown:
            raise SystemExit("FAIL: the page did not grow by 3 candidates through server events"
                             " in 40 s (rows %s, updates %s, state %r)"
                             % (b.eval(rows), updates,
                                b.eval("document.getElementById('live-state').textContent")))
        if b.eval("window.avoMark") != 1:
            raise SystemExit("FAIL: the page was reloaded, not updated in place")
        print("rows after %s updates: %s" % (updates, grown))
        state = b.eval("document.getElementById('live-state').textContent")
        if not state.startswith("live"):
            raise SystemExit("FAIL: the page's state line says %r" % state)
        b.screenshot(shot)
    finally:
        b.close()


def nojs(url, out):
    b = Browser()
    try:
        b.open(url, scripts=False)
        deadline = time.time() + 20
        html = ""
        while time.time() < deadline:
            html = b.dom()
            if "</body>" in html and "page made" in html:
                break
            time.sleep(0.2)
        else:
            raise SystemExit("FAIL: %s did not load without JavaScript" % url)
        with open(out, "w", encoding="utf-8") as f:
            f.write(html)
    finally:
        b.close()


if __name__ == "__main__":
    if len(sys.argv) != 4 or sys.argv[1] not in ("live", "nojs"):
        raise SystemExit(__doc__)
    (live if sys.argv[1] == "live" else nojs)(sys.argv[2], sys.argv[3])
