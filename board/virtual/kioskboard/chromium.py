"""Headless chromium (Debian's package) driven over the DevTools protocol on a pipe (--remote-debugging-pipe:
JSON messages on file descriptors 3 and 4, no websocket): the front panel test and the movie playback check."""

import base64
import json
import os
import subprocess
import time


class Chromium:
    """Headless chromium and one page, over the DevTools protocol on a pipe."""

    def __init__(self, profile, log, flags=()):
        to_chrome, self.out = os.pipe()
        self.inp, from_chrome = os.pipe()

        def fds():  # chromium reads commands on fd 3 and writes answers on fd 4
            a, b = os.dup(to_chrome), os.dup(from_chrome)
            os.dup2(a, 3)
            os.dup2(b, 4)
        self.proc = subprocess.Popen(
            ["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--remote-debugging-pipe",
             "--user-data-dir=" + profile, "--window-size=1280,1400", "--no-first-run"] + list(flags) + ["about:blank"],
            preexec_fn=fds, close_fds=False, stdin=subprocess.DEVNULL, stdout=log, stderr=log)
        os.close(to_chrome)
        os.close(from_chrome)
        self.buffer = b""
        self.next_id = 0
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        self.call("Emulation.setDeviceMetricsOverride", {"width": 1280, "height": 1400, "deviceScaleFactor": 1,
                                                          "mobile": False}, page=True)

    def call(self, method, params=None, page=False):
        self.next_id += 1
        message = {"id": self.next_id, "method": method, "params": params or {}}
        if page:
            message["sessionId"] = self.session
        os.write(self.out, json.dumps(message).encode() + b"\0")
        while True:
            while b"\0" not in self.buffer:
                chunk = os.read(self.inp, 1 << 20)
                if not chunk:
                    raise RuntimeError("chromium closed the DevTools pipe")
                self.buffer += chunk
            text, self.buffer = self.buffer.split(b"\0", 1)
            answer = json.loads(text)
            if answer.get("id") == self.next_id:
                if "error" in answer:
                    raise RuntimeError("%s: %s" % (method, answer["error"]))
                return answer["result"]

    def evaluate(self, expression):
        result = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True,
                                                "awaitPromise": True}, page=True)
        if "exceptionDetails" in result:
            raise RuntimeError("page script: %s" % result["exceptionDetails"].get("text"))
        return result["result"].get("value")

    def screenshot(self, path):
        shot = self.call("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True}, page=True)
        with open(path, "wb") as f:
            f.write(base64.b64decode(shot["data"]))
        return path

    def mouse(self, kind, x, y):
        self.call("Input.dispatchMouseEvent", {"type": kind, "x": x, "y": y, "button": "left",
                                               "buttons": 1 if kind != "mouseReleased" else 0, "clickCount": 1},
                  page=True)

    def centre(self, selector):
        return self.evaluate("(() => { const r = document.querySelector(%s).getBoundingClientRect();"
                             " return [r.x + r.width / 2, r.y + r.height / 2]; })()" % json.dumps(selector))

    def press(self, selector, hold):
        """Mouse down on the element's centre, hold `hold` seconds, up: a person's click."""
        box = self.centre(selector)
        self.mouse("mouseMoved", *box)
        self.mouse("mousePressed", *box)
        time.sleep(hold)
        self.mouse("mouseReleased", *box)

    def close(self):
        try:
            self.call("Browser.close")
            self.proc.wait(30)
        except (RuntimeError, OSError, subprocess.TimeoutExpired):
            self.proc.kill()
            self.proc.wait()
