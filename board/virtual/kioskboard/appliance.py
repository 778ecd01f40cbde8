"""`make run`: the board as the appliance. The shipped unit under the guest's systemd, sshd with the shipped
drop-in and a key made for the user (kept in the state dir's ssh/), the front panel on 127.0.0.1, and the
commands that pull the roll, printed as they work. Ctrl-C takes down what it brought up; while one runs, a
second says so and leaves it alone."""

import fcntl
import json
import os
import shlex
import signal
import subprocess
import sys
import threading
import time

from .client import request
from .errors import BoardError
from .guest import forwarded_port, kill, run, spawn, systemd
from .lifecycle import start, stop
from .panel import Panel
from .state import HERE, Paths, _unlink

ROLL = "/var/lib/kioskcam/roll"
SSH_ALIAS = "kioskcam-board"
RSYNC_ALIAS = "kioskcam-board-rsync"


class RunPaths:
    """What `make run` keeps in the state dir: the user's key and ssh config, its lock and what it printed."""

    def __init__(self, paths):
        j = lambda *p: os.path.join(paths.state, *p)  # noqa: E731
        self.ssh = j("ssh")
        self.key = j("ssh", "camera")
        self.host_key = j("ssh", "ssh_host_ed25519_key")
        self.authorized = j("ssh", "authorized_keys")
        self.known_hosts = j("ssh", "known_hosts")
        self.config = j("ssh", "config")
        self.kiosk_conf = j("run-kioskcam.conf")
        self.lock = j("run.lock")
        self.info = j("run.json")
        self.panel = j("panel")


def run_config(template):
    """The board's configuration with what a newcomer should be able to try: movies at a rate the emulated
    vivid keeps (10 fps, as the movie tests ask), the zoom buttons, the flash lamp, the appliance's roll, and
    the countdown's key, which the front panel turns on and off; movies as H.264 MP4, which the page's link
    plays in the browser (Motion-JPEG would not)."""
    edits = [
        ("@ROLL@", ROLL),
        ("jpeg-quality = 90\n", "jpeg-quality = 90\ncountdown-s = 0\n"),
        ("cancel = cancel\n", "cancel = cancel\nzoom-in = zoom-in\nzoom-out = zoom-out\n"),
        ("ready = ready\n", "ready = ready\nflash = flash\n"),
        ("optional = display, mode-button,", "optional = display, mode-button, movie-camera, h264-encoder,"),
    ]
    for old, new in edits:
        if old not in template:
            raise BoardError("board/virtual/kioskcam.conf has no %r any more: update appliance.run_config" % old)
        template = template.replace(old, new)
    return template + "\n[movie]\nsize = 640x360\nframe-rate = 10\nmaximum-duration-s = 600\ncodec = h264\n"


def _keygen(path, comment):
    if not os.path.exists(path):
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", comment, "-f", path], check=True)


def make_keys(rp, ports):
    """The user's key (made once, kept), the guest sshd's host key, and an ssh config naming this boot's
    forwarded ports with the host key known in advance (StrictHostKeyChecking: no question asked)."""
    os.makedirs(rp.ssh, mode=0o700, exist_ok=True)
    _keygen(rp.key, "make run: camera")
    _keygen(rp.host_key, "kioskcam virtual board")
    with open(rp.key + ".pub") as f:
        user = f.read()
    with open(rp.authorized, "w") as f:
        f.write(user)
    with open(rp.host_key + ".pub") as f:
        host = " ".join(f.read().split()[:2])
    with open(rp.known_hosts, "w") as f:
        f.writelines("[127.0.0.1]:%d %s\n" % (port, host) for port in ports.values())
    common = ("    HostName 127.0.0.1\n    User camera\n    IdentityFile %s\n    IdentitiesOnly yes\n"
              "    UserKnownHostsFile %s\n    StrictHostKeyChecking yes\n" % (rp.key, rp.known_hosts))
    with open(rp.config, "w") as f:
        f.write("# Written by `make run` for this boot of the virtual board: guest port 22 (SFTP, scp) and 2222 "
                "(rsync)\n# are forwarded to these ports on 127.0.0.1.\n")
        f.write("Host %s\n    Port %d\n%s" % (SSH_ALIAS, ports[22], common))
        f.write("Host %s\n    Port %d\n%s" % (RSYNC_ALIAS, ports[2222], common))


def pull_commands(rp):
    """The commands that pull the whole roll, each into a folder of the current directory."""
    cfg = shlex.quote(rp.config)
    return [
        "sftp -F %s -r %s:/roll/DCIM roll-sftp" % (cfg, SSH_ALIAS),
        "scp -F %s -r %s:/roll/DCIM roll-scp" % (cfg, SSH_ALIAS),
        "rsync -a --exclude='.*' -e 'ssh -F %s' %s:DCIM/ roll-rsync/" % (cfg, RSYNC_ALIAS),
    ]


def _wait(what, check, seconds=120):
    deadline = time.monotonic() + seconds
    while not check():
        if time.monotonic() > deadline:
            raise BoardError("%s did not happen within %d s" % (what, seconds))
        time.sleep(0.5)


def _must(result, what):
    rc, out, err = result
    if rc != 0:
        raise BoardError("%s failed (%d): %s" % (what, rc, (err or out or b"").decode(errors="replace").strip()))
    return out.decode(errors="replace")


class Appliance:
    def __init__(self, binary, paths=None):
        self.binary = os.path.abspath(binary)
        self.paths = paths or Paths()
        self.rp = RunPaths(self.paths)
        self.booted = False
        self.panel = None
        self.lock_file = None
        self.stopping = False

    def claim(self):
        """The run lock, or None with what the running one printed."""
        os.makedirs(self.paths.state, exist_ok=True)
        self.lock_file = open(self.rp.lock, "a+")
        try:
            fcntl.flock(self.lock_file, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            self.lock_file.close()
            self.lock_file = None
            try:
                with open(self.rp.info) as f:
                    return json.load(f)
            except (OSError, ValueError):
                return {}
        return None

    def up(self, say):
        self.booted = request_ping_fails(self.paths)
        start(paths=self.paths)
        ports = {g: forwarded_port(g, self.paths) for g in (22, 2222)}
        make_keys(self.rp, ports)
        with open(os.path.join(HERE, "kioskcam.conf")) as f:
            conf = run_config(f.read())
        with open(self.rp.kiosk_conf, "w") as f:
            f.write(conf)
        say("setting up the appliance in the guest (accounts, roll, udev, sshd, the unit)")
        # The state dir is on the host's root file system, which the guest sees read-only at the same path.
        _must(run("sh board/virtual/guest-appliance.sh %s %s" % (shlex.quote(self.binary), shlex.quote(self.rp.ssh)),
                  timeout=300, paths=self.paths), "guest-appliance.sh")
        _must(run("install -m 0644 %s /etc/kioskcam/kioskcam.conf" % shlex.quote(self.rp.kiosk_conf),
                  paths=self.paths), "installing the configuration")
        self.start_systemd()
        if self._running("sshd"):
            kill("sshd", "TERM", wait=10, paths=self.paths)
        spawn("sshd", "/usr/sbin/sshd -D -e", paths=self.paths)
        _wait("sshd listening on 22 and 2222", lambda: self._log_has(
            "sshd", "Server listening on 0.0.0.0 port 22.", "Server listening on 0.0.0.0 port 2222."))
        say("starting kioskcam.service (systemd in the guest)")
        systemd("systemctl stop kioskcam.service; systemctl reset-failed kioskcam.service", paths=self.paths)
        _must(systemd("systemctl start kioskcam.service", timeout=300, paths=self.paths), "systemctl start kioskcam")
        self.panel = Panel(self.paths, self.rp.panel, conf)
        self.panel.start()
        info = {"pid": os.getpid(), "panel": self.panel.url, "commands": pull_commands(self.rp),
                "ssh_config": self.rp.config}
        tmp = self.rp.info + ".tmp"
        with open(tmp, "w") as f:
            json.dump(info, f)
        os.replace(tmp, self.rp.info)
        return info

    def _running(self, name):
        return any(p["name"] == name and p["running"] for p in request({"op": "procs"}, self.paths).get("procs", []))

    def _log_has(self, name, *words):
        try:
            with open(os.path.join(self.paths.logs, name + ".log"), errors="replace") as f:
                text = f.read()
        except OSError:
            return False
        return all(w in text for w in words)

    def start_systemd(self):
        if systemd("systemctl show --property=Version", paths=self.paths)[0] == 0:
            _must(systemd("systemctl daemon-reload", paths=self.paths), "systemctl daemon-reload")
            return
        spawn("systemd", "sh board/virtual/guest-systemd.sh", paths=self.paths)
        _wait("systemd in the guest", lambda: systemd("systemctl is-system-running", paths=self.paths)[1]
              in (b"running\n", b"degraded\n"))

    def follow(self):
        """The service's journal on our stdout until the board goes or we are stopped."""
        try:
            run("sh board/virtual/guest-systemd.sh exec journalctl -f -n 20 -o short-monotonic -u kioskcam.service",
                paths=self.paths, stdout=sys.stdout.buffer, stderr=sys.stderr.buffer)
        except BoardError as e:
            if not self.stopping:  # the board going down under it, when we take it down, is no news
                print("make run: the journal: %s" % e, file=sys.stderr, flush=True)

    def down(self, say):
        self.stopping = True
        if self.panel is not None:
            self.panel.stop()
        _unlink(self.rp.info)
        if self.booted:
            say("stopping the board")
            stop(quiet=True, paths=self.paths)
        else:
            # The board was up before us (someone else's): leave it up, take down only what we started.
            for what in (lambda: systemd("systemctl stop kioskcam.service", timeout=60, paths=self.paths),
                         lambda: systemd("systemctl exit", paths=self.paths),
                         lambda: kill("sshd", "TERM", wait=10, paths=self.paths)):
                try:
                    what()
                except BoardError:
                    pass
        if self.lock_file is not None:
            self.lock_file.close()


def request_ping_fails(paths):
    """True when the board is not up yet (so this run boots it and will stop it)."""
    from .client import ping
    try:
        ping(paths, timeout=10)
        return False
    except BoardError:
        return True


def banner(info, rp):
    cmds = "\n".join("    " + c for c in info["commands"])
    return """
kioskcam runs on the virtual board as on the appliance: the shipped unit under systemd, sshd for the camera account.

  front panel (display, buttons, lamps, status, roll):  %s
  pull the roll (into a folder here; key and ports in %s):
%s
  the roll on the appliance: %s (the page links every file)

Its journal follows. Ctrl-C stops the service, the panel and the board.
""" % (info["panel"], rp.config, cmds, ROLL)


def main_run(binary, paths=None):
    """`board appliance BINARY` (what `make run` runs). Returns the exit status."""
    app = Appliance(binary, paths)
    say = lambda m: print("make run: " + m, flush=True)  # noqa: E731
    other = app.claim()
    if other is not None:
        print("make run: already running (pid %s), not starting another.\n  front panel: %s\n  pull the roll:\n%s"
              % (other.get("pid", "?"), other.get("panel", "(starting)"),
                 "\n".join("    " + c for c in other.get("commands", []))), flush=True)
        return 0
    def on_signal(signum, frame):
        raise KeyboardInterrupt
    signal.signal(signal.SIGTERM, on_signal)
    # Ctrl-C even when started in the background of a shell, which starts such jobs with SIGINT ignored.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        info = app.up(say)
        print(banner(info, app.rp), flush=True)
        follower = threading.Thread(target=app.follow, daemon=True)
        follower.start()
        while follower.is_alive():
            follower.join(0.5)
        say("the journal ended (the board went down?)")
        return 1
    except KeyboardInterrupt:
        return 130
    except BoardError as e:
        print("make run: %s" % e, file=sys.stderr, flush=True)
        return 1
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        say("stopping")
        app.down(say)
        say("stopped")
