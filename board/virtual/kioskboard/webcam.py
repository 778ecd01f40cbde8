"""The board's USB webcam (board/virtual/webcam.py in the guest, on raw-gadget over dummy_hcd, driven by
uvcvideo): plug, unplug, truncate the next frame, the node uvcvideo made. Not there at boot: the tests that want
it plug it."""

import os
import shlex

from .errors import BoardError
from .guest import kill, procs, run, spawn
from .state import HERE, Paths

NAME = "webcam"

# uvcvideo's capture node (index 0; index 1 is its metadata node), one path a line.
_NODES = ("for d in /sys/class/video4linux/video*; do [ -e \"$d/device/driver\" ] || continue; "
          "[ \"$(basename \"$(readlink \"$d/device/driver\")\")\" = uvcvideo ] && [ \"$(cat \"$d/index\")\" = 0 ] "
          "&& echo \"/dev/${d##*/}\"; done; true")


def _sh(cmd, paths, timeout=60):
    rc, out, err = run(cmd, timeout=timeout, paths=paths)
    if rc != 0:
        raise BoardError("webcam: %s: %s" % (cmd, (err or out).decode(errors="replace").strip()))
    return out.decode()


def nodes(paths=None):
    """The capture nodes uvcvideo has registered now."""
    return _sh(_NODES, paths or Paths()).split()


def _running(paths):
    return any(p["name"] == NAME and p["running"] for p in procs(paths))


def _wait_in_guest(condition, what, timeout, paths):
    """Polls `condition` (shell) in the guest itself: one round trip, where polling from here would cost one a
    look (a second or more each on a loaded machine)."""
    rc, _, _ = run("n=0; until %s; do n=$((n+1)); [ $n -lt %d ] || exit 1; sleep 0.1; done"
                   % (condition, int(timeout * 10)), timeout=timeout + 30, paths=paths)
    if rc != 0:
        raise BoardError("webcam: %s within %g s (board logs %s)" % (what, timeout, NAME))


_HAS_NODE = "[ -n \"$(%s)\" ]" % _NODES


def plug(timeout=60.0, paths=None):
    """Connect the webcam (loading dummy_hcd and raw_gadget, both built here, and uvcvideo the first time); return its capture node
    once uvcvideo has registered it."""
    paths = paths or Paths()
    if _running(paths):
        raise BoardError("webcam: already plugged")
    # insmod loads no dependency: Debian's (usbcore, udc-core) come first, by modprobe.
    load = "".join("grep -q '^%s ' /proc/modules || { ko=%s; modprobe -a $(modinfo -F depends $ko | tr , ' ') "
                   "&& insmod $ko; }; " % (name, shlex.quote(os.path.join(paths.guest, name + ".ko")))
                   for name in ("dummy_hcd", "raw_gadget"))
    load += "grep -q '^uvcvideo ' /proc/modules || modprobe uvcvideo; "
    spawn(NAME, "%sexec /usr/bin/python3 -S %s" % (load, shlex.quote(os.path.join(HERE, "webcam.py"))), paths=paths)
    _wait_in_guest(_HAS_NODE, "uvcvideo registered no node", timeout, paths)
    return nodes(paths)[0]


def unplug(timeout=30.0, paths=None):
    """Disconnect the webcam (its program closes raw-gadget: a USB disconnect); return once uvcvideo's node
    is gone."""
    paths = paths or Paths()
    if not _running(paths):
        raise BoardError("webcam: not plugged")
    kill(NAME, "TERM", wait=10, paths=paths)
    _wait_in_guest("! " + _HAS_NODE, "uvcvideo's node is still there after the unplug", timeout, paths)


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
