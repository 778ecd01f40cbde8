"""Where the board keeps its state, and what that state says: the state dir's paths, the kernel to
boot, whether the supervisor runs, the lock that serialises start and stop, and the boot info."""

import fcntl
import json
import os

from .errors import BoardError

# board/virtual, the folder of this package: its scripts are copied into the guest, its `board` is the CLI.
HERE = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))
REPO = os.path.dirname(os.path.dirname(HERE))
# The executable entry point; the supervisor is started as `board _supervise`.
ENTRY = os.path.join(HERE, "board")
BOOT_TIMEOUT = 300.0
# What build-modules.sh builds into the state dir (board/virtual/modules/*.sh), copied for the guest.
MODULES = ("gpio-sim.ko", "raw_gadget.ko", "vicodec.ko", "dummy_hcd.ko")


def state_dir():
    d = os.environ.get("KIOSKCAM_BOARD_DIR") or os.path.join(REPO, ".build", "board")
    return os.path.abspath(d)


class Paths:
    def __init__(self, state=None):
        self.state = state or state_dir()
        j = lambda *p: os.path.join(self.state, *p)  # noqa: E731
        self.share = j("share")
        self.guest = j("share", ".guest")
        self.logs = j("share", "logs")
        self.qmp = j("qmp.sock")
        self.agent = j("agent.sock")
        self.ctl = j("ctl.sock")
        self.pid = j("supervisor.pid")
        self.boot_log = j("boot.log")
        self.sup_log = j("supervisor.log")
        self.info = j("boot.json")
        self.lock = j("lock")
        self.module = j("gpio-sim.ko")


def _under_tmp(path):
    real = os.path.realpath(path)
    return any(real == t or real.startswith(t + "/") for t in ("/tmp", "/var/tmp"))


def kernel_image():
    k = os.environ.get("KIOSKCAM_BOARD_KERNEL")
    if k:
        if not os.path.isfile(k):
            raise BoardError("KIOSKCAM_BOARD_KERNEL=%s does not exist" % k)
        return k
    imgs = [f for f in os.listdir("/boot") if f.startswith("vmlinuz-")]
    if not imgs:
        raise BoardError("no /boot/vmlinuz-* (apt-get install linux-image-amd64)")

    def vkey(name):
        out = []
        for part in name[len("vmlinuz-"):].replace("-", ".").split("."):
            out.append((0, int(part), "") if part.isdigit() else (1, 0, part))
        return out
    return os.path.join("/boot", sorted(imgs, key=vkey)[-1])


def _unlink(p):
    try:
        os.unlink(p)
    except FileNotFoundError:
        pass


def _killpg(pid, sig):
    try:
        os.killpg(pid, sig)
    except OSError:
        pass


def _alive(pid):
    if not pid:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # a zombie is not alive
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _supervisor_pid(paths):
    try:
        with open(paths.pid) as f:
            pid = int(f.read().strip())
    except (OSError, ValueError):
        return None
    try:
        with open("/proc/%d/cmdline" % pid, "rb") as f:
            if b"_supervise" not in f.read():
                return None
    except OSError:
        return None
    return pid if _alive(pid) else None


class _Lock:
    def __init__(self, paths):
        self.path = paths.lock

    def __enter__(self):
        self.f = open(self.path, "w")
        fcntl.flock(self.f, fcntl.LOCK_EX)
        return self

    def __exit__(self, *a):
        fcntl.flock(self.f, fcntl.LOCK_UN)
        self.f.close()


def _boot_info(paths):
    try:
        with open(paths.info) as f:
            return json.load(f)
    except (OSError, ValueError):
        return {}
