"""The supervisor (`board _supervise`, detached): runs vng, holds the guest agent's virtio-serial socket
and serves ctl.sock, passing each client's request to the agent and its frames back (the hub)."""

import json
import os
import shlex
import shutil
import signal
import socket
import subprocess
import threading
import time

from . import disk
from .client import TERMINAL
from .errors import BoardError
from .state import REPO, _killpg, _under_tmp, _unlink, kernel_image


class Hub:
    def __init__(self, paths, proc):
        self.paths = paths
        self.proc = proc
        self.lock = threading.Lock()
        self.wlock = threading.Lock()
        self.pending = {}  # id -> client socket
        self.next_id = 1
        self.agent = None
        self.ready = threading.Event()

    def log(self, msg):
        print("%s supervisor: %s" % (time.strftime("%H:%M:%S"), msg), flush=True)

    def connect_agent(self, deadline):
        while time.monotonic() < deadline and self.proc.poll() is None:
            if os.path.exists(self.paths.agent):
                s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                try:
                    s.connect(self.paths.agent)
                    self.agent = s
                    return True
                except OSError:
                    s.close()
            time.sleep(0.2)
        return False

    def to_guest(self, obj):
        data = ("\n" + json.dumps(obj, separators=(",", ":")) + "\n").encode()
        with self.wlock:
            self.agent.sendall(data)

    def reader(self):
        buf = b""
        while True:
            try:
                chunk = self.agent.recv(65536)
            except OSError:
                chunk = b""
            if not chunk:
                self.log("agent connection closed")
                return
            buf += chunk
            while b"\n" in buf:
                line, buf = buf.split(b"\n", 1)
                line = line.strip()
                if not line:
                    continue
                try:
                    fr = json.loads(line)
                except ValueError:
                    continue
                self.dispatch(fr, line)

    def dispatch(self, fr, line):
        rid = fr.get("id")
        if rid == 0:  # readiness probe
            if fr.get("type") == "pong" and not self.ready.is_set():
                self.ready.set()
            return
        terminal = fr.get("type") in TERMINAL
        with self.lock:
            c = self.pending.pop(rid, None) if terminal else self.pending.get(rid)
        if c is None:
            return
        try:
            c.sendall(line + b"\n")
        except OSError:
            if not terminal:
                self.drop(rid)
            return
        if terminal:
            try:
                c.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def drop(self, rid):
        with self.lock:
            c = self.pending.pop(rid, None)
        if c is not None:
            try:
                self.to_guest({"op": "cancel", "id": 0, "target": rid})
            except OSError:
                pass
            try:
                c.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def probe(self):
        while not self.ready.is_set() and self.proc.poll() is None:
            try:
                self.to_guest({"op": "ping", "id": 0})
            except OSError:
                return
            self.ready.wait(1.0)

    def client(self, c):
        try:
            c.settimeout(30.0)
            buf = b""
            while b"\n" not in buf:
                chunk = c.recv(65536)
                if not chunk:
                    return
                buf += chunk
            req = json.loads(buf.split(b"\n", 1)[0])
            if not isinstance(req, dict):
                raise ValueError("request is not an object")
            with self.lock:
                rid = self.next_id
                self.next_id += 1
                self.pending[rid] = c
            req["id"] = rid
            self.to_guest(req)
            c.settimeout(None)
            while True:  # the client sends nothing more: wait for its close
                if not c.recv(4096):
                    break
            with self.lock:
                still = rid in self.pending
            if still:
                self.drop(rid)
        except (OSError, ValueError) as e:
            try:
                c.sendall((json.dumps({"type": "error", "message": "bad request: %s" % e}) + "\n").encode())
            except OSError:
                pass
        finally:
            c.close()

    def serve(self, lsock):
        while True:
            try:
                c, _ = lsock.accept()
            except OSError:
                return
            threading.Thread(target=self.client, args=(c,), daemon=True).start()


# Guest TCP ports reachable from the host through QEMU's user-mode network (SLIRP): sshd's two ports for the
# camera account (SFTP/scp on 22, rsync on 2222). Host ports are picked free at each boot, on loopback only.
GUEST_PORTS = (22, 2222)
GUEST_ADDRESS = "10.0.2.15"


def _free_ports(count):
    """Ports nobody listens on now; all held open together so they differ."""
    socks = []
    try:
        for _ in range(count):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind(("127.0.0.1", 0))
            socks.append(s)
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def _vng_command(paths, forwards=None):
    """forwards: {guest port: host port}; None only to validate the command."""
    vng = os.environ.get("KIOSKCAM_BOARD_VNG") or shutil.which("vng")
    if not vng:
        raise BoardError("vng not found (pip install virtme-ng)")
    for p in (paths.qmp, paths.agent, paths.share):
        if any(ch in p for ch in " ,\t\n'\""):
            raise BoardError("state dir path must not contain spaces, commas or quotes: %s" % paths.state)
    qemu_opts = " ".join([
        "-device bochs-display",
        "-qmp unix:%s,server=on,wait=off" % paths.qmp,
        "-chardev socket,id=kcagent,path=%s,server=on,wait=off" % paths.agent,
        "-device virtio-serial-pci,id=kcserial",
        "-device virtserialport,bus=kcserial.0,name=kioskcam.agent,chardev=kcagent",
        # Our own NIC rather than vng --network: guest-init sets a static address, so no DHCP wait at boot.
        # restrict=on: the guest reaches nothing outside; the forwards below still come in.
        "-netdev user,id=kcnet,restrict=on," + ",".join(
            "hostfwd=tcp:127.0.0.1:%d-:%d" % (host, guest)
            for guest, host in sorted((forwards or {g: 0 for g in GUEST_PORTS}).items())),
        "-device virtio-net-pci,netdev=kcnet",
        disk.drive_option(paths),
    ])
    guest_env = "KIOSKCAM_BOARD_CWD=%s" % shlex.quote(REPO if os.path.isdir(REPO) else "/")
    if _under_tmp(REPO):
        # The guest's /tmp and /var/tmp are its own: guest-init.sh mounts the
        # repo there itself (read-only), below the shared folder. (vng's
        # --rodir would be mounted over the shared folder and hide it.)
        if any(ch in REPO for ch in " ,\t\n'\""):
            raise BoardError("repo path must not contain spaces, commas or quotes: %s" % REPO)
        qemu_opts += (" -fsdev local,id=kcrepo,path=%s,security_model=none,readonly=on,multidevs=remap"
                      " -device virtio-9p-pci,fsdev=kcrepo,mount_tag=kioskcam.repo" % REPO)
        guest_env += " KIOSKCAM_BOARD_REPO=%s" % shlex.quote(REPO)
    guest_cmd = "%s exec /bin/sh %s %s %s" % (
        guest_env,
        shlex.quote(os.path.join(paths.guest, "guest-init.sh")),
        shlex.quote(paths.share),
        shlex.quote(os.path.join(paths.guest, "gpio-sim.ko")))
    cmd = [vng, "--verbose", "--run", kernel_image(), "--name", "kioskcam-board",
           "--disable-kvm", "--force-9p", "--disable-microvm", "--memory", "1G"]
    # Under TCG the guest kernel finds its vCPUs' TSCs unsynchronised and falls back to the HPET, where every
    # clock_gettime is a system call and an emulated device's read; QEMU gives every vCPU the host's clock as
    # its TSC. The Spectre and return-thunk mitigations guard a test machine that runs only the tests, at the
    # cost of every kernel branch. Both together: the soak test 75 s -> 61 s.
    cmd += ["--append", "tsc=reliable", "--append", "mitigations=off"]
    cmd += ["--rwdir", paths.share, "--qemu-opts=" + qemu_opts, "--", guest_cmd]
    return cmd


def supervise(paths):
    """Body of the detached supervisor process (`board _supervise`)."""
    with open(paths.pid, "w") as f:
        f.write("%d\n" % os.getpid())
    forwards = dict(zip(GUEST_PORTS, _free_ports(len(GUEST_PORTS))))
    cmd = _vng_command(paths, forwards)
    t0 = time.time()
    with open(paths.boot_log, "wb") as log:
        log.write(("# %s\n# %s\n" % (time.strftime("%Y-%m-%d %H:%M:%S"), shlex.join(cmd))).encode())
        log.flush()
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                cwd=REPO if os.path.isdir(REPO) else "/", start_new_session=True)
    hub = Hub(paths, proc)
    hub.log("vng pid %d" % proc.pid)

    def on_term(signum, frame):
        hub.log("signal %d: killing the VM" % signum)
        _killpg(proc.pid, signal.SIGKILL)
    signal.signal(signal.SIGTERM, on_term)
    signal.signal(signal.SIGINT, on_term)

    lsock = None
    try:
        if not hub.connect_agent(time.monotonic() + 60):
            hub.log("could not connect to the agent socket")
            _killpg(proc.pid, signal.SIGKILL)
        else:
            threading.Thread(target=hub.reader, daemon=True).start()
            threading.Thread(target=hub.probe, daemon=True).start()
            while not hub.ready.wait(0.5):
                if proc.poll() is not None:
                    break
            if hub.ready.is_set():
                boot = time.time() - t0
                with open(paths.info, "w") as f:
                    json.dump({"boot_seconds": round(boot, 1), "started": t0,
                               "vng_pid": proc.pid, "supervisor_pid": os.getpid(),
                               "guest_address": GUEST_ADDRESS,
                               "forwards": {str(g): h for g, h in forwards.items()}}, f)
                hub.log("agent ready after %.1f s" % boot)
                lsock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                _unlink(paths.ctl)
                lsock.bind(paths.ctl)
                lsock.listen(64)
                threading.Thread(target=hub.serve, args=(lsock,), daemon=True).start()
        rc = proc.wait()
        hub.log("vng exited with status %d" % rc)
    finally:
        if lsock is not None:
            lsock.close()
        for p in (paths.ctl, paths.agent, paths.qmp, paths.pid):
            _unlink(p)
