"""Commands and processes in the guest: run, spawn, kill, procs, their logs, commands beside its systemd; the
forwarded TCP ports."""

import base64
import os
import shlex

from .client import request
from .errors import BoardDown, BoardError
from .hub import GUEST_PORTS
from .state import Paths, _boot_info, _supervisor_pid


def run(cmd, timeout=None, paths=None, stdout=None, stderr=None):
    """Run a shell command in the guest as root. Returns (status, out, err);
    with stdout/stderr given (binary files), output is streamed there instead
    and out/err are None. Status 124 on timeout."""
    bufs = {"out": [], "err": []}
    sinks = {"out": stdout, "err": stderr}

    def on_frame(fr):
        kind = fr.get("type")
        if kind in bufs:
            data = base64.b64decode(fr.get("data", ""))
            if sinks[kind] is not None:
                sinks[kind].write(data)
                sinks[kind].flush()
            else:
                bufs[kind].append(data)
    req = {"op": "exec", "cmd": cmd}
    if timeout:
        req["timeout"] = float(timeout)
    try:
        fr = request(req, paths, timeout=(float(timeout) + 30) if timeout else None, on_frame=on_frame)
        rc = int(fr.get("status", 1))
    except BoardError as e:
        if timeout and "no answer" in str(e):
            rc = 124
        else:
            raise
    out = None if stdout is not None else b"".join(bufs["out"])
    err = None if stderr is not None else b"".join(bufs["err"])
    return rc, out, err


def systemd(cmd, timeout=120, paths=None):
    """A command beside the guest's systemd (guest-systemd.sh exec), where systemctl and journalctl reach it."""
    return run("sh board/virtual/guest-systemd.sh exec sh -c %s" % shlex.quote(cmd), timeout=timeout, paths=paths)


def forwarded_port(guest_port, paths=None):
    """The host port (on 127.0.0.1) that reaches guest_port, picked at this boot."""
    paths = paths or Paths()
    if _supervisor_pid(paths) is None:
        raise BoardDown()
    host = _boot_info(paths).get("forwards", {}).get(str(guest_port))
    if host is None:
        raise BoardError("guest port %s is not forwarded (forwarded: %s)" % (guest_port, ", ".join(map(str, GUEST_PORTS))))
    return host


def spawn(name, cmd, paths=None):
    return request({"op": "spawn", "name": name, "cmd": cmd}, paths, timeout=30)


def kill(name, sig="TERM", wait=None, paths=None):
    req = {"op": "kill", "name": name, "signal": sig}
    if wait:
        req["wait"] = wait
    return request(req, paths, timeout=30 + (wait or 0))


def procs(paths=None):
    return request({"op": "procs"}, paths, timeout=30).get("procs", [])


def log_path(name, paths=None):
    paths = paths or Paths()
    if not name or "/" in name or name.startswith("."):
        raise BoardError("bad process name %r" % name)
    return os.path.join(paths.logs, name + ".log")
