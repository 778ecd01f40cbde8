#!/usr/bin/python3
"""kioskcam virtual board: tries what the service must not be able to do, and a little that it must.

Run by the board's systemd as a test drop-in's ExecStartPost= of kioskcam.service, so that it runs under
exactly the unit's own sandbox (user, mount namespace, device cgroup, seccomp filters); and run by a test
outside it, as the same user, to show that each refusal comes from the sandbox and not from file modes.
One line per attempt on stdout, `sandbox-probe: NAME ok` or `sandbox-probe: NAME refused ERRNO`, then
the process's own view of its privileges.

usage: sandbox-probe.py
"""
import errno
import os
import socket

# Made by the test: a folder owned by the service's user, outside ReadWritePaths=, and a file in the guest's
# /tmp that a private /tmp does not show.
OUTSIDE = "/var/lib/kioskcam-sandbox-probe"
MARKER = "/tmp/kioskcam-sandbox-probe-marker"


def attempt(name, action):
    try:
        action()
        print(f"sandbox-probe: {name} ok", flush=True)
    except OSError as error:
        print(f"sandbox-probe: {name} refused {errno.errorcode.get(error.errno, error.errno)}", flush=True)


def write_and_remove(folder):
    path = os.path.join(folder, f".tmp-sandbox-probe-{os.getpid()}")
    with open(path, "w") as file:
        file.write("probe\n")
    os.remove(path)


def must_exist(path):
    os.stat(path)


def open_device(path):
    os.close(os.open(path, os.O_RDWR))


def make_socket(family, kind=socket.SOCK_STREAM):
    socket.socket(family, kind).close()


attempt("write-roll", lambda: write_and_remove("/var/lib/kioskcam/roll"))
attempt("write-runtime-directory", lambda: write_and_remove("/run/kioskcam"))
attempt("write-outside", lambda: write_and_remove(OUTSIDE))
attempt("write-etc", lambda: write_and_remove("/etc/kioskcam"))
attempt("see-host-tmp", lambda: must_exist(MARKER))
attempt("write-tmp", lambda: write_and_remove("/tmp"))
attempt("list-home", lambda: os.listdir("/home"))
attempt("open-video0", lambda: open_device("/dev/video0"))
attempt("open-fuse", lambda: open_device("/dev/fuse"))
attempt("socket-unix", lambda: make_socket(socket.AF_UNIX))
attempt("socket-inet", lambda: make_socket(socket.AF_INET))
attempt("socket-inet6", lambda: make_socket(socket.AF_INET6))
attempt("socket-netlink", lambda: make_socket(socket.AF_NETLINK, socket.SOCK_RAW))
with open("/proc/self/status") as status:
    for line in status:
        if line.split(":")[0] in ("Uid", "NoNewPrivs", "Seccomp", "CapEff", "CapBnd"):
            print("sandbox-probe: status " + " ".join(line.split()), flush=True)
