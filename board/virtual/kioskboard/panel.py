"""The front panel of `make run`: a web page on 127.0.0.1 with the board's display (QMP screendumps), the buttons
the configuration wires (gpio-sim lines: a click, or held for as long as the mouse is), the lamps read back
from their lines, the service's `kioskcam status` and the roll, each file fetched from the guest when asked.
Python's standard library only; the page itself is panel.html beside the `board` script."""

import collections
import json
import os
import re
import shlex
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from .errors import BoardError
from .gpio import gpio
from .guest import run
from .qmp import Session, ppm_to_bmp
from .state import HERE

BUTTONS = ("shutter", "mode", "cancel", "zoom-in", "zoom-out", "camera")
LAMPS = ("ready", "tally", "flash")
ROLL = "/var/lib/kioskcam/roll"
# Dumps a second at most, while someone looks.
SCREEN_RATE = 6.0
SESSION = 2.0
# The shortest hold a click gets: the service's debounce wants a press to last (board click's default).
MIN_HOLD = 0.1
# Seconds between two polls of lamps, status and roll (each starts a process in the slow guest).
POLL = 0.3
# How late the panel replays the hand on the lines: a click released within it is timed in the guest itself.
REPLAY = 0.4
# Nobody has asked for anything this long: stop dumping and polling until someone does.
IDLE = 10.0
CONNECTOR = "/sys/class/drm/card0-Virtual-1/status"
CONFIG = "/etc/kioskcam/kioskcam.conf"
# What the page's board controls do in the guest: vivid's disconnect (the service shows the camera lost, lets
# go of it, and takes it back when vivid, every descriptor closed, counts as connected again); bochs's
# connector forced off and back (a pulled cable: bochs sends no hot-plug event, the status is what is read);
# the countdown written into the configuration and the unit restarted, as an operator would.
DEVICES = {
    ("camera", "disconnect"): "v4l2-ctl -d /dev/video0 -c disconnect=1",
    ("display", "unplug"): "echo off > %s" % CONNECTOR,
    ("display", "plug"): "echo detect > %s" % CONNECTOR,
}
COUNTDOWN = ("sed -i 's/^countdown-s = .*/countdown-s = %%d/' %s && sh board/virtual/guest-systemd.sh exec "
             "systemctl restart kioskcam.service" % CONFIG)
ITEM = re.compile(r"^DCIM/[0-9]{3}[A-Za-z0-9_]{5}/[A-Z0-9_]{4}[0-9]{4}\.(JPG|MOV|MP4)$")


def wired(conf):
    """{role: line} for the buttons and lamps the configuration wires (INI [buttons] and [outputs])."""
    section, found = None, {}
    for raw in conf.splitlines():
        line = raw.split("#", 1)[0].strip()
        if line.startswith("["):
            section = line.strip("[]")
        elif "=" in line and section in ("buttons", "outputs"):
            key, value = (part.strip() for part in line.split("=", 1))
            if key in BUTTONS + LAMPS and value != "none":
                found[key] = value
    return found


class Panel:
    def __init__(self, paths, folder, conf):
        self.paths = paths
        self.folder = folder
        os.makedirs(os.path.join(folder, "roll"), exist_ok=True)
        lines = wired(conf)
        self.buttons = {r: lines[r] for r in BUTTONS if r in lines}
        self.lamps = {r: lines[r] for r in LAMPS if r in lines}
        self.stopped = threading.Event()
        self.seen = time.monotonic()
        self.cond = threading.Condition()
        self.frame = (0, None)  # (number, BMP bytes)
        self.frame_times = []
        self.state = {"status": None, "status_error": "not asked yet", "lamps": {}, "roll": []}
        self.pressing = threading.Condition()
        self.presses = collections.deque()  # (role, "press" | "release" | "click", seconds held or None, when)
        self.button_error = None
        self.devices = {"display": "plug", "countdown": "0"}  # what each was last told
        self.fetch_lock = threading.Lock()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self.server.daemon_threads = True
        self.url = "http://127.0.0.1:%d/" % self.server.server_address[1]

    def start(self):
        for target in (self.server.serve_forever, self.grab, self.poll, self.press_worker):
            threading.Thread(target=target, daemon=True).start()

    def stop(self):
        self.stopped.set()
        for cond in (self.cond, self.pressing):
            with cond:
                cond.notify_all()
        self.server.shutdown()
        self.server.server_close()

    def viewed(self):
        self.seen = time.monotonic()

    def idle(self):
        return time.monotonic() - self.seen > IDLE

    # --- the display -----------------------------------------------------------------------------
    def grab(self):
        """Screendumps while someone looks, at most SCREEN_RATE a second, each session with QEMU's monitor
        kept for SESSION seconds (the handshake costs as much as a dump under load), then let go so that
        `board screendump` gets its turn."""
        path = os.path.join(self.folder, "screen.ppm")
        while not self.stopped.is_set():
            if self.idle():
                time.sleep(0.2)
                continue
            try:
                with Session(self.paths, timeout=10) as monitor:
                    until = time.monotonic() + SESSION
                    while time.monotonic() < until and not self.stopped.is_set() and not self.idle():
                        began = time.monotonic()
                        # PPM, QEMU's cheapest (a PNG costs its main loop, which also runs the guest's I/O,
                        # about 90 ms under load), sent on as a BMP (no compression: the browser is local).
                        monitor.command("screendump", {"filename": path})
                        self.shown(ppm_to_bmp(path))
                        time.sleep(max(0.0, 1.0 / SCREEN_RATE - (time.monotonic() - began)))
            except (BoardError, OSError, ValueError, IndexError):
                time.sleep(1.0)

    def shown(self, data):
        with self.cond:
            now = time.monotonic()
            self.frame_times = [t for t in self.frame_times if now - t < 2.0] + [now]
            self.frame = (self.frame[0] + 1, data)
            self.cond.notify_all()

    def frame_after(self, number, wait=5.0):
        with self.cond:
            self.cond.wait_for(lambda: self.frame[0] > number or self.stopped.is_set(), timeout=wait)
            return self.frame

    def screen_rate(self):
        with self.cond:
            times = self.frame_times
            return (len(times) - 1) / (times[-1] - times[0]) if len(times) > 1 and times[-1] > times[0] else 0.0

    # --- lamps, status, roll ---------------------------------------------------------------------
    def poll(self):
        """Lamps, status and the roll's listing, as often as the guest answers (one process started there a
        poll); a still new in the listing is fetched before the page hears of it, so its thumbnail is there."""
        listing = ("/usr/bin/kioskcam status --json; echo; echo '--- roll'; "
                   "cd %s && find DCIM -type f ! -name '.*' -printf '%%p\\t%%s\\n' | sort" % ROLL)
        while not self.stopped.is_set():
            if self.idle():
                time.sleep(0.2)
                continue
            state = {"lamps": {}, "roll": self.state["roll"], "status": None, "status_error": None}
            try:
                state["lamps"] = {role: gpio("get", line, paths=self.paths)["value"] == 1
                                  for role, line in self.lamps.items()}
                rc, out, err = run(listing, timeout=30, paths=self.paths)
                status, _, roll = out.decode(errors="replace").partition("\n--- roll\n")
                try:
                    state["status"] = json.loads(status)
                except ValueError:
                    state["status_error"] = (status.strip() or err.decode(errors="replace").strip()
                                             or "kioskcam status gave nothing")
                state["roll"] = []
                for row in roll.splitlines():
                    name, _, size = row.partition("\t")
                    if ITEM.match(name) and size.isdigit():
                        state["roll"].append({"path": name, "size": int(size),
                                              "kind": "still" if name.endswith(".JPG") else "movie"})
                for item in state["roll"]:
                    if item["kind"] == "still":
                        self.fetch(item["path"], item["size"])
            except BoardError as e:
                state["status_error"] = "board: %s" % e
            self.state = state
            time.sleep(POLL)

    def fetch(self, path, size):
        """The roll's file at `path` in the panel's folder, fetched from the guest unless it is there whole."""
        local = os.path.join(self.folder, "roll", path)
        with self.fetch_lock:
            if not (os.path.exists(local) and os.path.getsize(local) == size):
                rc, out, _ = run("cat %s" % shlex.quote(os.path.join(ROLL, path)), timeout=120, paths=self.paths)
                if rc != 0:
                    return None
                os.makedirs(os.path.dirname(local), exist_ok=True)
                with open(local + ".tmp", "wb") as f:
                    f.write(out)
                os.replace(local + ".tmp", local)
        return local

    def item(self, path):
        """A file of the roll (as the last listing has it), or None."""
        size = next((i["size"] for i in self.state["roll"] if i["path"] == path), None)
        local = self.fetch(path, size) if size is not None else None
        if local is None:
            return None
        with open(local, "rb") as f:
            return f.read()

    # --- buttons ---------------------------------------------------------------------------------
    def press_worker(self):
        """The hand's presses and releases replayed on the lines REPLAY seconds after they came, one at a time
        and in order: a release within REPLAY of its press makes one click in the guest held exactly as long
        as the hand held (the agent times it there); a longer hold is a press and a release each REPLAY late,
        so the hold the service measures is the hand's, not the latency of the way to the guest."""
        pressed = {}  # role: when the hand pressed it (host monotonic)
        while True:
            with self.pressing:
                self.pressing.wait_for(lambda: self.presses or self.stopped.is_set())
                if not self.presses:
                    return
                role, action, held, at = self.presses.popleft()
                if action == "press":
                    self.pressing.wait_for(lambda: self.stopped.is_set() or any(
                        j[:2] == (role, "release") for j in self.presses), timeout=max(0.0, at + REPLAY - time.monotonic()))
                    release = next((j for j in self.presses if j[:2] == (role, "release")), None)
                    if release is not None:
                        self.presses.remove(release)
                        action, held = "click", release[2] if release[2] is not None else release[3] - at
            line = self.buttons[role]
            self.note("%s %s (came %.3f s ago, held %s)" % (role, action, time.monotonic() - at, held))
            try:
                if action == "click":
                    edges = gpio("click", line, hold_ms=max(MIN_HOLD, held or 0.0) * 1000, paths=self.paths)["edges"]
                    # What the line did in the guest: a stalled guest stretches a click into a long press.
                    self.note("%s line held %.0f ms in the guest" % (role, (
                        edges[-1]["monotonic_ns_at_write"] - edges[0]["monotonic_ns_at_write"]) / 1e6))
                elif action == "press":
                    gpio("press", line, paths=self.paths)
                    pressed[role] = at
                else:
                    began = pressed.pop(role, at)
                    until = began + REPLAY + max(MIN_HOLD, held if held is not None else at - began)
                    time.sleep(max(0.0, until - time.monotonic()))
                    gpio("release", line, paths=self.paths)
                self.button_error = None
                self.note("%s %s done" % (role, action))
            except BoardError as e:
                self.button_error = "%s %s: %s" % (role, action, e)
                self.note(self.button_error)

    def note(self, what):
        """One line in the panel's log (buttons.log in its folder): what it did on the lines, and when."""
        with open(os.path.join(self.folder, "buttons.log"), "a") as f:
            f.write("%.3f %s\n" % (time.monotonic(), what))

    def button(self, role, action, held=None):
        """Queue a press, a release (with how long the hand held, in seconds) or a click of MIN_HOLD."""
        self.note("%s %s asked (held %s)" % (role, action, held))
        with self.pressing:
            self.presses.append((role, action, held, time.monotonic()))
            self.pressing.notify_all()

    def device(self, name, action):
        """A board control (DEVICES, or the countdown's seconds): None when done, else what went wrong."""
        if name == "countdown":
            command = COUNTDOWN % int(action)
        else:
            command = DEVICES[(name, action)]
        try:
            rc, out, err = run(command, timeout=300, paths=self.paths)
        except BoardError as e:
            return str(e)
        if rc != 0:
            return "%s %s: %s" % (name, action, (err or out).decode(errors="replace").strip() or "status %d" % rc)
        self.devices[name] = action
        return None

    def snapshot(self):
        return dict(self.state, buttons=list(self.buttons), button_error=self.button_error, devices=self.devices,
                    screen_rate=round(self.screen_rate(), 1), frame=self.frame[0])


def _handler(panel):
    page = os.path.join(HERE, "panel.html")

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def send(self, code, body, kind="application/json", headers=()):
            self.send_response(code)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "no-store")
            for k, v in headers:
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self):
            panel.viewed()
            path, _, query = self.path.partition("?")
            if path == "/":
                with open(page, "rb") as f:
                    self.send(200, f.read(), "text/html; charset=utf-8")
            elif path == "/screen.bmp":
                after = re.search(r"(?:^|&)after=([0-9]+)", query)
                number, data = panel.frame_after(int(after.group(1)) if after else 0)
                if data is None:
                    self.send(503, b'{"error": "no screendump yet"}')
                else:
                    self.send(200, data, "image/bmp", [("X-Frame", str(number))])
            elif path == "/state":
                self.send(200, json.dumps(panel.snapshot()).encode())
            elif path.startswith("/roll/"):
                data = panel.item(path[len("/roll/"):])
                if data is None:
                    self.send(404, b'{"error": "not in the roll"}')
                else:
                    kind = "image/jpeg" if path.endswith(".JPG") else "video/quicktime" if path.endswith(".MOV") else "video/mp4"
                    self.send(200, data, kind)
            else:
                self.send(404, b'{"error": "no such page"}')

        def do_POST(self):
            panel.viewed()
            path, _, query = self.path.partition("?")
            parts = path.strip("/").split("/")
            held = re.search(r"(?:^|&)held=([0-9]+)", query)
            if len(parts) == 3 and parts[0] == "button" and parts[1] in panel.buttons \
                    and parts[2] in ("press", "release", "click"):
                # Answered once queued: the browser sends the release as soon as the press is queued.
                panel.button(parts[1], parts[2], int(held.group(1)) / 1000.0 if held else None)
                self.send(202, b'{"queued": true}')
            elif len(parts) == 3 and parts[0] == "device" and ((parts[1], parts[2]) in DEVICES or (
                    parts[1] == "countdown" and parts[2] in ("0", "3", "5", "10"))):
                error = panel.device(parts[1], parts[2])
                self.send(500 if error else 200, json.dumps({"error": error}).encode())
            else:
                self.send(404, b'{"error": "no such button or device"}')

    return Handler
