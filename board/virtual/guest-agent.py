#!/usr/bin/python3
"""kioskcam virtual board: agent running inside the QEMU guest.

Started by guest-init.sh as the last step of the guest's boot. It talks to the
host over the virtio-serial port named "kioskcam.agent" (the host end is a
unix socket held by the `board` supervisor).

Framing, both directions: one JSON object per line, each written as
"\\n" + json + "\\n" so that a partial line left over from an earlier
connection can never glue itself to a real frame. Empty lines are ignored.

Host -> guest requests carry an integer "id"; every guest -> host frame
carries the id of the request it answers.

Requests ("op"):
  ping                               -> {"type": "pong", ...board info}
  exec  cmd, timeout                 -> "out"/"err" frames (base64 "data"),
                                        then {"type": "exit", "status": N}
  cancel target                      -> kills a running exec (no reply)
  spawn name, cmd                    -> {"type": "result", "pid", "log"}
  kill  name, signal                 -> {"type": "result"}
  procs                              -> {"type": "result", "procs": [...]}
  gpio  line, action, hold_ms        -> {"type": "result", "edges": [...]}
  control socket, line, timeout      -> {"type": "result", "connected": true,
                                        "reply": "..."} (one line to the service's
                                        control socket, its reply to EOF), or
                                        {"connected": false, "reason": "..."}
  shutdown                           -> {"type": "result"}, then the agent
                                        exits and the guest powers off
Errors: {"type": "error", "message": "..."}

Python 3 standard library only; runs with the host's /usr/bin/python3 seen
read-only over 9p.
"""

import base64
import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time

PORT_NAME = "kioskcam.agent"


def find_port():
    base = "/sys/class/virtio-ports"
    for _ in range(100):
        try:
            for entry in sorted(os.listdir(base)):
                try:
                    with open(os.path.join(base, entry, "name")) as f:
                        if f.read().strip() == PORT_NAME:
                            dev = "/dev/" + entry
                            if os.path.exists(dev):
                                return dev
                except OSError:
                    pass
        except OSError:
            pass
        time.sleep(0.1)
    raise SystemExit("guest-agent: virtio-serial port %s not found" % PORT_NAME)



def _exec_if_simple(cmd):
    """Prefix `exec` to a command that is one program with arguments (no shell syntax)."""
    if any(c in cmd for c in ";&|<>()$`\n*?{}[]~"):
        return cmd
    return "exec " + cmd

class Gpio:
    """The gpio-sim bank created by guest-init.sh."""

    def __init__(self, cfg_dev):
        self.cfg_dev = cfg_dev
        bank = os.path.join(cfg_dev, "bank0")
        self.dev_name = _read(os.path.join(cfg_dev, "dev_name"))
        self.chip_name = _read(os.path.join(bank, "chip_name"))
        self.label = _read(os.path.join(bank, "label"))
        self.num_lines = int(_read(os.path.join(bank, "num_lines")))
        self.names = {}
        for i in range(self.num_lines):
            path = os.path.join(bank, "line%d" % i, "name")
            if os.path.exists(path):
                name = _read(path)
                if name:
                    self.names[name] = i
        self.sysfs = "/sys/devices/platform/%s/%s" % (self.dev_name, self.chip_name)

    def info(self):
        return {
            "chip": self.chip_name,
            "label": self.label,
            "dev_name": self.dev_name,
            "lines": {str(v): k for k, v in self.names.items()},
        }

    def offset(self, line):
        if line in self.names:
            return self.names[line]
        try:
            off = int(line, 0)
        except ValueError:
            raise AgentError("unknown gpio line %r (names: %s)" % (
                line, ", ".join(sorted(self.names, key=self.names.get))))
        if not 0 <= off < self.num_lines:
            raise AgentError("gpio line offset %d out of range 0..%d" % (off, self.num_lines - 1))
        return off

    def _irq_of(self, off):
        """The Linux irq number that irq_sim mapped for this line, or None."""
        base = "/sys/kernel/irq"
        try:
            entries = os.listdir(base)
        except OSError:
            return None
        for irq in entries:
            d = os.path.join(base, irq)
            try:
                if _read(os.path.join(d, "chip_name")) != "irq_sim":
                    continue
                if int(_read(os.path.join(d, "hwirq"))) != off:
                    continue
            except (OSError, ValueError):
                continue
            return d
        return None

    @staticmethod
    def _irq_count(d):
        try:
            return sum(int(x) for x in _read(os.path.join(d, "per_cpu_count")).split(",") if x)
        except (OSError, ValueError):
            return None

    def set_pull(self, off, level):
        """Pull line `off` to `level` (1 = pull-up, 0 = pull-down) and wait
        until the edge has happened: the simulated value changed and, when a
        consumer has an interrupt on the line, that interrupt was delivered."""
        line_dir = os.path.join(self.sysfs, "sim_gpio%d" % off)
        before = int(_read(os.path.join(line_dir, "value")))
        irq_dir = self._irq_of(off)
        has_action = bool(irq_dir and _read(os.path.join(irq_dir, "actions")))
        count0 = self._irq_count(irq_dir) if has_action else None
        t_write = time.monotonic()
        with open(os.path.join(line_dir, "pull"), "w") as f:
            f.write("pull-up" if level else "pull-down")
        deadline = time.monotonic() + 2.0
        while int(_read(os.path.join(line_dir, "value"))) != level:
            if time.monotonic() > deadline:
                raise AgentError("line %d did not follow its pull: a consumer drives it "
                                 "as an output (see gpioinfo)" % off)
            time.sleep(0.001)
        irq_seen = None
        if before != level and count0 is not None:
            # The interrupt fires through irq_work right after the write; a
            # consumer that watches only the other edge never gets one, so
            # give up waiting after a short while.
            irq_deadline = time.monotonic() + 0.25
            irq_seen = False
            while time.monotonic() < irq_deadline:
                c = self._irq_count(irq_dir)
                if c is not None and c > count0:
                    irq_seen = True
                    break
                time.sleep(0.001)
        return {
            "offset": off,
            "edge": ("rising" if level else "falling") if before != level else None,
            "value": level,
            "irq_delivered": irq_seen,
            "monotonic_ns_at_write": int(t_write * 1e9),
        }


@contextlib.contextmanager
def _realtime():
    """The calling thread under SCHED_FIFO while the block runs (pid 0 is the calling thread), then as before."""
    try:
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(50))
    except OSError:
        yield
        return
    try:
        yield
    finally:
        os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))


def _read(path):
    with open(path) as f:
        return f.read().strip()


class AgentError(Exception):
    pass


class Agent:
    def __init__(self, port, share, gpio):
        self.fd = os.open(port, os.O_RDWR)
        self.share = share
        self.gpio = gpio
        self.logdir = os.path.join(share, "logs")
        os.makedirs(self.logdir, exist_ok=True)
        self.wlock = threading.Lock()
        self.execs = {}      # id -> Popen
        self.spawned = {}    # name -> (Popen, stdin write fd, log path, cmd)
        self.plock = threading.Lock()
        self.cwd = os.environ.get("KIOSKCAM_BOARD_CWD") or "/"
        threading.Thread(target=self._reaper, daemon=True).start()

    # -- transport -----------------------------------------------------
    def send(self, obj):
        data = ("\n" + json.dumps(obj, separators=(",", ":")) + "\n").encode()
        with self.wlock:
            view = memoryview(data)
            while view:
                try:
                    n = os.write(self.fd, view)
                except InterruptedError:
                    continue
                view = view[n:]

    def serve(self):
        buf = b""
        while True:
            try:
                chunk = os.read(self.fd, 65536)
            except InterruptedError:
                continue
            if not chunk:
                # The host end is not connected: virtio_console reports EOF.
                time.sleep(0.2)
                continue
            buf += chunk
            while b"\n" in buf:
                line, buf = buf.split(b"\n", 1)
                line = line.strip()
                if not line:
                    continue
                try:
                    req = json.loads(line)
                except ValueError:
                    continue
                if not isinstance(req, dict):
                    continue
                threading.Thread(target=self.handle, args=(req,), daemon=True).start()

    def handle(self, req):
        rid = req.get("id")
        op = req.get("op")
        try:
            fn = getattr(self, "op_" + str(op), None)
            if fn is None:
                raise AgentError("unknown op %r" % op)
            res = fn(rid, req)
            if res is not None:
                res.setdefault("type", "result")
                res["id"] = rid
                self.send(res)
        except AgentError as e:
            self.send({"id": rid, "type": "error", "message": str(e)})
        except Exception as e:  # report, never die
            self.send({"id": rid, "type": "error", "message": "%s: %s" % (type(e).__name__, e)})

    # -- ops -----------------------------------------------------------
    def op_ping(self, rid, req):
        info = {"type": "pong", "share": self.share, "gpio": self.gpio.info()}
        with open("/proc/uptime") as f:
            info["uptime"] = float(f.read().split()[0])
        return info

    def _env(self):
        env = dict(os.environ)
        env["KIOSKCAM_BOARD_SHARE"] = self.share
        env.setdefault("HOME", "/root")
        return env

    def op_exec(self, rid, req):
        cmd = req.get("cmd")
        if not isinstance(cmd, str) or not cmd:
            raise AgentError("exec needs a command")
        timeout = req.get("timeout")
        p = subprocess.Popen(["/bin/sh", "-c", cmd], stdin=subprocess.DEVNULL,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             cwd=self.cwd, env=self._env(), start_new_session=True)
        self.execs[rid] = p
        pumps = [threading.Thread(target=self._pump, args=(rid, p.stdout, "out")),
                 threading.Thread(target=self._pump, args=(rid, p.stderr, "err"))]
        for t in pumps:
            t.start()
        timed_out = False
        try:
            p.wait(timeout=timeout if timeout and timeout > 0 else None)
        except subprocess.TimeoutExpired:
            timed_out = True
            _killpg(p.pid, signal.SIGKILL)
            p.wait()
        # A background grandchild may keep the pipes open: do not wait forever.
        for t in pumps:
            t.join(timeout=2.0)
        self.execs.pop(rid, None)
        if timed_out:
            status = 124
        elif p.returncode < 0:
            status = 128 - p.returncode
        else:
            status = p.returncode
        return {"type": "exit", "status": status, "timed_out": timed_out}

    def _pump(self, rid, stream, kind):
        while True:
            data = stream.read1(32768) if hasattr(stream, "read1") else stream.read(32768)
            if not data:
                break
            self.send({"id": rid, "type": kind, "data": base64.b64encode(data).decode()})

    def op_cancel(self, rid, req):
        p = self.execs.get(req.get("target"))
        if p is not None:
            _killpg(p.pid, signal.SIGKILL)
        return None

    def op_spawn(self, rid, req):
        name = req.get("name")
        cmd = req.get("cmd")
        if not isinstance(name, str) or not name or "/" in name or name.startswith("."):
            raise AgentError("bad process name %r" % (name,))
        if not isinstance(cmd, str) or not cmd:
            raise AgentError("spawn needs a command")
        with self.plock:
            old = self.spawned.get(name)
            if old is not None and old[0].poll() is None:
                raise AgentError("a process named %r is already running (pid %d)" % (name, old[0].pid))
            if old is not None and old[1] is not None:
                os.close(old[1])
            log = os.path.join(self.logdir, name + ".log")
            logf = open(log, "wb")
            # stdin is a pipe whose write end the agent keeps open: some
            # programs (modetest) exit as soon as their stdin closes.
            rfd, wfd = os.pipe()
            try:
                # A simple command is exec'd by the shell, so that signals and the exit
                # status are the program's own, not those of a shell waiting for it.
                p = subprocess.Popen(["/bin/sh", "-c", _exec_if_simple(cmd)],
                                     stdin=rfd, stdout=logf, stderr=subprocess.STDOUT,
                                     cwd=self.cwd, env=self._env(), start_new_session=True)
            except Exception:
                os.close(wfd)
                raise
            finally:
                os.close(rfd)
                logf.close()
            self.spawned[name] = (p, wfd, log, cmd)
        return {"pid": p.pid, "log": log}

    def op_kill(self, rid, req):
        name = req.get("name")
        sig = _signum(req.get("signal") or "TERM")
        with self.plock:
            ent = self.spawned.get(name)
        if ent is None:
            raise AgentError("no spawned process named %r" % (name,))
        p = ent[0]
        if p.poll() is not None:
            raise AgentError("%s already exited with status %s" % (name, _status(p.returncode)))
        _killpg(p.pid, sig)
        res = {"pid": p.pid, "signal": sig}
        wait = req.get("wait")
        if wait:
            try:
                p.wait(timeout=float(wait))
                res["exited"] = _status(p.returncode)
            except subprocess.TimeoutExpired:
                res["exited"] = None
        return res

    def op_procs(self, rid, req):
        out = []
        with self.plock:
            for name, (p, _w, log, cmd) in sorted(self.spawned.items()):
                rc = p.poll()
                out.append({"name": name, "pid": p.pid, "cmd": cmd, "log": log,
                            "running": rc is None,
                            "status": None if rc is None else _status(rc)})
        return {"procs": out}

    def op_gpio(self, rid, req):
        off = self.gpio.offset(str(req.get("line")))
        action = req.get("action")
        edges = []
        if action == "press":
            edges.append(self.gpio.set_pull(off, 0))
        elif action == "release":
            edges.append(self.gpio.set_pull(off, 1))
        elif action == "click":
            hold = max(0, int(req.get("hold_ms", 100))) / 1000.0
            # A hand is never late to let go, but this thread was: a 100 ms click held 781 ms in the guest while
            # the service started a recording on both vCPUs, near long-press-ms. Real-time for the click alone
            # (spawned commands must not inherit it); the thread sleeps, so it takes no CPU from anyone.
            with _realtime():
                edges.append(self.gpio.set_pull(off, 0))
                # Timed from the press's write, so the wait for its interrupt is part of the hold, not added to it.
                pressed_at = edges[-1]["monotonic_ns_at_write"] / 1e9
                time.sleep(max(0.0, pressed_at + hold - time.monotonic()))
                edges.append(self.gpio.set_pull(off, 1))
        elif action == "get":
            line_dir = os.path.join(self.gpio.sysfs, "sim_gpio%d" % off)
            return {"offset": off, "value": int(_read(os.path.join(line_dir, "value"))),
                    "pull": _read(os.path.join(line_dir, "pull"))}
        else:
            raise AgentError("unknown gpio action %r" % (action,))
        return {"edges": edges}

    def op_control(self, rid, req):
        # The tests ask the service hundreds of times a run: here that costs a connect, where the CLI costs a
        # process start in the emulated guest (4-6 s idle, 10-18 s busy).
        path = req.get("socket")
        line = req.get("line")
        if not isinstance(path, str) or not path or not isinstance(line, str) or "\n" in line:
            raise AgentError("control needs a socket path and one request line")
        timeout = float(req.get("timeout") or 60)
        with contextlib.closing(socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)) as s:
            s.settimeout(timeout)
            try:
                s.connect(path)
            except (FileNotFoundError, ConnectionRefusedError) as e:
                return {"connected": False, "reason": str(e)}
            # Timed here, in the guest, from the request sent to the reply's end: how long the service's loop
            # took to answer, without the host's round trip to the board.
            sent = time.monotonic()
            s.sendall((line + "\n").encode())
            s.shutdown(socket.SHUT_WR)
            reply = b""
            while True:
                chunk = s.recv(65536)
                if not chunk:
                    break
                reply += chunk
            seconds = time.monotonic() - sent
        return {"connected": True, "reply": reply.decode("utf-8", "replace"), "seconds": seconds}

    def op_shutdown(self, rid, req):
        with self.plock:
            for p, wfd, _log, _cmd in self.spawned.values():
                if p.poll() is None:
                    _killpg(p.pid, signal.SIGTERM)
        # Exit (and so power the guest off) once the reply is on its way.
        threading.Timer(0.5, _exit_clean).start()
        return {}

    def _reaper(self):
        # Close the stdin pipe of spawned processes that have exited.
        while True:
            time.sleep(1.0)
            with self.plock:
                for name, (p, wfd, log, cmd) in list(self.spawned.items()):
                    if wfd is not None and p.poll() is not None:
                        try:
                            os.close(wfd)
                        except OSError:
                            pass
                        self.spawned[name] = (p, None, log, cmd)


def _exit_clean():
    os.sync()
    os._exit(0)


def _killpg(pid, sig):
    try:
        os.killpg(pid, sig)
    except (ProcessLookupError, PermissionError):
        try:
            os.kill(pid, sig)
        except OSError:
            pass


def _signum(sig):
    if isinstance(sig, int):
        return sig
    s = str(sig).upper()
    if s.isdigit():
        return int(s)
    if not s.startswith("SIG"):
        s = "SIG" + s
    try:
        return int(getattr(signal, s))
    except AttributeError:
        raise AgentError("unknown signal %r" % (sig,))


def _status(rc):
    return 128 - rc if rc < 0 else rc


def main(argv):
    if len(argv) != 3:
        raise SystemExit("usage: guest-agent.py SHARE_DIR GPIO_SIM_CONFIGFS_DEVICE")
    share, cfg_dev = argv[1], argv[2]
    agent = Agent(find_port(), share, Gpio(cfg_dev))
    print("guest-agent: ready", flush=True)
    agent.serve()


if __name__ == "__main__":
    main(sys.argv)
