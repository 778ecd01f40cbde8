"""Booting, stopping and asking after the board: start, stop, status."""

import os
import shutil
import signal
import subprocess
import sys
import time

from .client import ping, request
from .errors import BoardDown, BoardError
from .hub import _vng_command
from .state import (BOOT_TIMEOUT, ENTRY, HERE, MODULES, Paths, _alive, _boot_info, _killpg, _Lock, _supervisor_pid,
                    _unlink)


def _boot_failure(paths):
    """One line saying why the boot failed, from the logs."""
    reason = None
    try:
        with open(paths.boot_log, errors="replace") as f:
            lines = f.read().splitlines()
        for line in lines:
            if ("guest-init: ERROR" in line or "Kernel panic" in line
                    or ("qemu-system" in line and "error" in line.lower())):
                reason = line.strip()
    except OSError:
        lines = []
    if reason is None:
        try:
            with open(paths.sup_log, errors="replace") as f:
                sup = [ln.split("supervisor: ", 1)[-1] for ln in f.read().splitlines() if ln.strip()]
        except OSError:
            sup = []
        tail = [ln for ln in lines if ln.strip() and not ln.startswith("#")][-1:]
        reason = "; ".join(sup[-1:] + [t.strip() for t in tail]) or "no output"
    return reason


def note_boot(machine):
    """One line in $KIOSKCAM_BOOT_LOG for each boot of an emulated machine: .ci/run's budget counts them."""
    log = os.environ.get("KIOSKCAM_BOOT_LOG")
    if log:
        with open(log, "a") as f:
            f.write("%s\n" % machine)


def start(timeout=None, quiet=False, paths=None):
    """Boot the board unless it is up; return the boot time in seconds."""
    paths = paths or Paths()
    timeout = timeout or float(os.environ.get("KIOSKCAM_BOARD_BOOT_TIMEOUT", BOOT_TIMEOUT))
    os.makedirs(paths.state, exist_ok=True)
    say = (lambda m: None) if quiet else (lambda m: print("board: " + m, flush=True))
    with _Lock(paths):
        try:
            ping(paths, timeout=10)
            boot = _boot_info(paths).get("boot_seconds")
            say("already running (booted in %s s)" % boot)
            return boot
        except BoardError:
            pass
        if _supervisor_pid(paths) is None:
            for p in (paths.ctl, paths.agent, paths.qmp, paths.info):
                _unlink(p)
            if len(paths.ctl) >= 100 or len(paths.agent) >= 100:
                raise BoardError("state dir path too long for unix sockets (max ~90 chars): %s" % paths.state)
            _vng_command(paths)  # validate before building anything
            b = subprocess.run([os.path.join(HERE, "build-modules.sh"), paths.state],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            if b.returncode != 0:
                msg = b.stdout.strip().splitlines()
                raise BoardError("module build failed: %s" % (msg[-1] if msg else "?"))
            os.makedirs(paths.guest, exist_ok=True)
            os.makedirs(paths.logs, exist_ok=True)
            for name in ("guest-init.sh", "guest-agent.py", "guest-card.sh"):
                shutil.copy2(os.path.join(HERE, name), os.path.join(paths.guest, name))
            for ko in MODULES:
                shutil.copy2(os.path.join(paths.state, ko), os.path.join(paths.guest, ko))
            env = dict(os.environ, KIOSKCAM_BOARD_DIR=paths.state)
            with open(paths.sup_log, "ab") as log:
                subprocess.Popen([sys.executable, ENTRY, "_supervise"],
                                 stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                 env=env, cwd="/", start_new_session=True)
            say("booting (log: %s)" % paths.boot_log)
            note_boot("x86 board")
        else:
            say("already booting, waiting (log: %s)" % paths.boot_log)
        deadline = time.monotonic() + timeout
        seen_sup = False
        while True:
            if os.path.exists(paths.ctl):
                try:
                    ping(paths, timeout=10)
                    break
                except BoardError:
                    pass
            pid = _supervisor_pid(paths)
            seen_sup = seen_sup or pid is not None
            if pid is None and (seen_sup or time.monotonic() > deadline - timeout + 5):
                raise BoardError("boot failed: %s (log: %s)" % (_boot_failure(paths), paths.boot_log))
            if time.monotonic() > deadline:
                _stop_hard(paths)
                raise BoardError("boot timed out after %g s (log: %s)" % (timeout, paths.boot_log))
            time.sleep(0.5)
        boot = _boot_info(paths).get("boot_seconds")
        say("up, booted in %s s (share: %s)" % (boot, paths.share))
        return boot


def _stop_hard(paths):
    pid = _supervisor_pid(paths)
    info = _boot_info(paths)
    vng = info.get("vng_pid")
    if pid:
        os.kill(pid, signal.SIGTERM)
        for _ in range(100):
            if not _alive(pid):
                break
            time.sleep(0.1)
        else:
            os.kill(pid, signal.SIGKILL)
    if vng and _alive(vng):
        _killpg(vng, signal.SIGKILL)
    for p in (paths.ctl, paths.agent, paths.qmp, paths.pid):
        _unlink(p)


def stop(quiet=False, paths=None):
    """Power the guest off cleanly; kill it if it does not go."""
    paths = paths or Paths()
    say = (lambda m: None) if quiet else (lambda m: print("board: " + m, flush=True))
    os.makedirs(paths.state, exist_ok=True)
    with _Lock(paths):
        pid = _supervisor_pid(paths)
        if pid is None:
            for p in (paths.ctl, paths.agent, paths.qmp):
                _unlink(p)
            say("not running")
            return False
        try:
            request({"op": "shutdown"}, paths, timeout=20)
            wait = 600
        except BoardDown:
            wait = 0  # no agent yet (still booting): no clean way down
        except BoardError:
            wait = 100  # the agent may have gone down before answering
        for _ in range(wait):
            if not _alive(pid):
                say("stopped")
                return True
            time.sleep(0.1)
        if not _alive(pid):
            say("stopped")
            return True
        _stop_hard(paths)
        say("stopped (killed: the guest did not power off)")
        return True


def power_cut(quiet=False, paths=None):
    """SIGKILL to QEMU, nothing asked of the guest: a power cut. The card is attached with cache=writeback, so
    what the guest had flushed is in card.img and what it had not is gone with its page cache."""
    paths = paths or Paths()
    say = (lambda m: None) if quiet else (lambda m: print("board: " + m, flush=True))
    with _Lock(paths):
        if _supervisor_pid(paths) is None:
            say("not running")
            return False
        # QEMU first, at once: the supervisor's SIGTERM in _stop_hard may take up to 10 s to act, and a cut that
        # lands seconds after it was asked for is not the cut a test timed.
        vng = _boot_info(paths).get("vng_pid")
        if vng and _alive(vng):
            _killpg(vng, signal.SIGKILL)
        _stop_hard(paths)
        say("power cut (QEMU killed)")
        return True


def status(paths=None):
    """Return (state, info): state is 'running', 'booting' or 'stopped'."""
    paths = paths or Paths()
    pid = _supervisor_pid(paths)
    if pid is None:
        return "stopped", {}
    try:
        pong = ping(paths, timeout=10)
    except BoardError:
        return "booting", {"supervisor_pid": pid}
    info = dict(_boot_info(paths))
    info.update(pong)
    try:
        info["procs"] = request({"op": "procs"}, paths, timeout=10).get("procs", [])
    except BoardError:
        info["procs"] = []
    return "running", info
