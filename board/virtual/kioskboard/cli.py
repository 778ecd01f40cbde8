"""The command line: `board COMMAND ...` (argparse), over the functions of the other modules."""

import argparse
import os
import shlex
import sys
import time

from .appliance import main_run
from .errors import BoardError
from .gpio import click, gpio
from .guest import forwarded_port, kill, log_path, procs, run, spawn
from .hub import supervise
from .lifecycle import power_cut, start, status, stop
from .qmp import screendump
from .state import Paths
from .webcam import main_cli as webcam_cli


def _cmd_after_dashdash(rest, what):
    if rest and rest[0] == "--":
        rest = rest[1:]
    if not rest:
        raise BoardError("%s needs a command after --" % what)
    return rest[0] if len(rest) == 1 else shlex.join(rest)


def _print_edges(line, res):
    for e in res.get("edges", []):
        if e.get("edge") is None:
            print("board: %s: no edge, line already %s" % (line, "high (released)" if e["value"] else "low (pressed)"),
                  file=sys.stderr)
        else:
            extra = "" if e.get("irq_delivered") is None else (
                ", interrupt delivered" if e["irq_delivered"] else ", no interrupt (no consumer for this edge)")
            # The guest's CLOCK_MONOTONIC just before the pull was written: a press time the tests know apart
            # from the service's own log (the clock of V4L2's timestamps and of the line's edge events).
            print("%s (offset %d): %s edge, line %s%s, written at monotonic %.6f" % (
                line, e["offset"], e["edge"], "low" if e["value"] == 0 else "high", extra,
                e["monotonic_ns_at_write"] / 1e9))


def main(argv=None):
    ap = argparse.ArgumentParser(prog="board", description="kioskcam virtual board (QEMU + vng)")
    sub = ap.add_subparsers(dest="cmd", metavar="COMMAND")
    p = sub.add_parser("start", help="boot the board (no-op if it is up)")
    p.add_argument("--timeout", type=float, default=None, help="boot timeout in s (default 300)")
    sub.add_parser("stop", help="power the board off")
    sub.add_parser("power-cut", help="kill QEMU with SIGKILL: what the guest had not flushed to the card is lost")
    sub.add_parser("status", help="show whether the board runs (exit 0 running, 3 stopped, 4 booting)")
    p = sub.add_parser("run", help="run a shell command in the guest: run [--timeout S] -- CMD")
    p.add_argument("--timeout", type=float, default=None)
    p.add_argument("rest", nargs=argparse.REMAINDER)
    p = sub.add_parser("spawn", help="start a background guest process: spawn NAME -- CMD")
    p.add_argument("name")
    p.add_argument("rest", nargs=argparse.REMAINDER)
    p = sub.add_parser("kill", help="signal a spawned process: kill NAME [SIGNAL]")
    p.add_argument("name")
    p.add_argument("signal", nargs="?", default="TERM")
    p.add_argument("--wait", type=float, default=None, help="wait up to S seconds for it to exit")
    p = sub.add_parser("logs", help="print a spawned process's output")
    p.add_argument("-f", "--follow", action="store_true")
    p.add_argument("name")
    sub.add_parser("ps", help="list spawned processes")
    p = sub.add_parser("port", help="print the host port (on 127.0.0.1) forwarded to a guest TCP port (22, 2222)")
    p.add_argument("guest_port", type=int)
    for name, hlp in (("press", "pull a button line low (falling edge)"),
                      ("release", "pull a button line high (rising edge)"),
                      ("value", "print a line's value and pull")):
        p = sub.add_parser(name, help=hlp)
        p.add_argument("line", help="line name (shutter, mode, ...) or offset")
    p = sub.add_parser("click", help="press, hold, release")
    p.add_argument("line")
    p.add_argument("--hold-ms", type=int, default=100)
    p = sub.add_parser("screendump", help="write the display's picture to a PPM file (PNG if FILE ends in .png)")
    p.add_argument("file")
    p = sub.add_parser("webcam", help="the USB webcam: plug (prints its node), unplug, truncate (its next frame), node")
    p.add_argument("action", choices=("plug", "unplug", "truncate", "node"))
    p = sub.add_parser("appliance", help="make run: the appliance on the board, its front panel, its pull commands")
    p.add_argument("binary", help="the kioskcam binary to install as /usr/bin/kioskcam")
    sub.add_parser("_supervise")
    args = ap.parse_args(argv)
    paths = Paths()

    try:
        if args.cmd == "_supervise":
            supervise(paths)
            return 0
        if args.cmd == "appliance":
            return main_run(args.binary, paths)
        if args.cmd == "start":
            start(timeout=args.timeout, paths=paths)
        elif args.cmd == "stop":
            stop(paths=paths)
        elif args.cmd == "power-cut":
            power_cut(paths=paths)
        elif args.cmd == "status":
            st, info = status(paths)
            if st != "running":
                print("board: %s (state dir %s)" % (st, paths.state))
                return 3 if st == "stopped" else 4
            g = info.get("gpio", {})
            print("board: running, booted in %s s, guest uptime %.0f s" % (info.get("boot_seconds"), info.get("uptime", 0)))
            print("state dir: %s" % paths.state)
            print("share:     %s" % info.get("share"))
            print("network:   guest %s, %s" % (info.get("guest_address"), ", ".join(
                "127.0.0.1:%s -> %s" % (h, g) for g, h in sorted(info.get("forwards", {}).items()))))
            print("gpio:      /dev/%s label %s, lines %s" % (
                g.get("chip"), g.get("label"),
                " ".join("%s=%s" % (k, v) for k, v in sorted(g.get("lines", {}).items(), key=lambda kv: int(kv[0])))))
            for pr in info.get("procs", []):
                print("proc %-12s pid %-6d %s  %s" % (pr["name"], pr["pid"],
                      "running" if pr["running"] else "exited %s" % pr["status"], pr["cmd"]))
        elif args.cmd == "run":
            cmd = _cmd_after_dashdash(args.rest, "run")
            try:
                rc, _, _ = run(cmd, timeout=args.timeout, paths=paths,
                               stdout=sys.stdout.buffer, stderr=sys.stderr.buffer)
            except BoardError as e:
                print("board: %s" % e, file=sys.stderr)
                return 125
            return rc
        elif args.cmd == "spawn":
            cmd = _cmd_after_dashdash(args.rest, "spawn")
            res = spawn(args.name, cmd, paths=paths)
            print("%s: pid %d, log %s" % (args.name, res["pid"], res["log"]))
        elif args.cmd == "kill":
            res = kill(args.name, args.signal, wait=args.wait, paths=paths)
            msg = "%s: sent signal %d to pid %d" % (args.name, res["signal"], res["pid"])
            if "exited" in res:
                msg += ", exited %s" % res["exited"] if res["exited"] is not None else ", still running"
            print(msg)
        elif args.cmd == "logs":
            path = log_path(args.name, paths)
            if not os.path.exists(path):
                raise BoardError("no log for %r (%s)" % (args.name, path))
            with open(path, "rb") as f:
                while True:
                    data = f.read(65536)
                    if data:
                        sys.stdout.buffer.write(data)
                        sys.stdout.buffer.flush()
                    elif args.follow:
                        time.sleep(0.2)
                    else:
                        break
        elif args.cmd == "ps":
            for pr in procs(paths):
                print("%-12s pid %-6d %-12s %s" % (pr["name"], pr["pid"],
                      "running" if pr["running"] else "exited %s" % pr["status"], pr["cmd"]))
        elif args.cmd == "port":
            print(forwarded_port(args.guest_port, paths))
        elif args.cmd in ("press", "release"):
            _print_edges(args.line, gpio(args.cmd, args.line, paths=paths))
        elif args.cmd == "click":
            if args.hold_ms < 0:
                raise BoardError("--hold-ms must be >= 0")
            _print_edges(args.line, click(args.line, args.hold_ms, paths=paths))
        elif args.cmd == "value":
            res = gpio("get", args.line, paths=paths)
            print("%s (offset %d): value %d, %s" % (args.line, res["offset"], res["value"], res["pull"]))
        elif args.cmd == "webcam":
            webcam_cli(args.action, paths)
        elif args.cmd == "screendump":
            w, h = screendump(args.file, paths=paths)
            print("%s: %dx%d" % (args.file, w, h))
        else:
            ap.print_help()
            return 2
    except BoardError as e:
        print("board: %s" % e, file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 141
    return 0
