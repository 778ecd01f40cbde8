"""The board's USB webcam (board/virtual/webcam.py in the guest, on raw-gadget over dummy_hcd, driven by
uvcvideo): plug, unplug, truncate the next frame, the node uvcvideo made. Not there at boot: the tests that want
it plug it."""

import os
import shlex
import time

from .errors import BoardError
from .guest import kill, procs, run, spawn
from .state import HERE, Paths

NAME = "webcam"

# uvcvideo's capture node (index 0; index 1 is its metadata node), one path a line.
_NODES = r"""for d in /sys/class/video4linux/video*; do
  [ -e "$d/device/driver" ] || continue
  [ "$(basename "$(readlink "$d/device/driver")")" = uvcvideo ] && [ "$(cat "$d/index")" = 0 ] && echo "/dev/${d##*/}"
done; true"""


def _sh(cmd, paths, timeout=60):
    rc, out, err = run(cmd, timeout=timeout, paths=paths)
    if rc != 0:
        raise BoardError("webcam: %s: %s" % (cmd.split("\n")[0], (err or out).decode(errors="replace").strip()))
    return out.decode()


def nodes(paths=None):
    """The capture nodes uvcvideo has registered now."""
    return _sh(_NODES, paths or Paths()).split()


def _running(paths):
    return any(p["name"] == NAME and p["running"] for p in procs(paths))


def plug(timeout=60.0, paths=None):
    """Connect the webcam (loading dummy_hcd, raw_gadget and uvcvideo the first time); return its capture node
    once uvcvideo has registered it."""
    paths = paths or Paths()
    if _running(paths):
        raise BoardError("webcam: already plugged")
    _sh("grep -q '^dummy_hcd ' /proc/modules || modprobe dummy_hcd\n"
        "grep -q '^raw_gadget ' /proc/modules || insmod %s\n"
        "grep -q '^uvcvideo ' /proc/modules || modprobe uvcvideo"
        % shlex.quote(os.path.join(paths.guest, "raw_gadget.ko")), paths)
    spawn(NAME, "/usr/bin/python3 %s" % shlex.quote(os.path.join(HERE, "webcam.py")), paths=paths)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = nodes(paths)
        if found:
            return found[0]
        if not _running(paths):
            raise BoardError("webcam: the device program exited (board logs %s)" % NAME)
        time.sleep(0.3)
    raise BoardError("webcam: uvcvideo registered no node within %g s (board logs %s)" % (timeout, NAME))


def unplug(timeout=30.0, paths=None):
    """Disconnect the webcam (its program closes raw-gadget: a USB disconnect); return once uvcvideo's node
    is gone."""
    paths = paths or Paths()
    if not _running(paths):
        raise BoardError("webcam: not plugged")
    kill(NAME, "TERM", wait=10, paths=paths)
    deadline = time.monotonic() + timeout
    while nodes(paths):
        if time.monotonic() > deadline:
            raise BoardError("webcam: uvcvideo's node is still there %g s after the unplug" % timeout)
        time.sleep(0.2)


def truncate(paths=None):
    """The next MJPEG frame goes out cut in half (no EOI, no error bit)."""
    kill(NAME, "USR1", paths=paths or Paths())


def main_cli(action, paths):
    if action == "plug":
        print(plug(paths=paths))
    elif action == "unplug":
        unplug(paths=paths)
    elif action == "truncate":
        truncate(paths=paths)
    else:
        for n in nodes(paths):
            print(n)
