"""The client side: one request at a time to the supervisor's ctl.sock, answered by the guest agent.
Frames are JSON lines; exec output streams as non-terminal frames before the terminal one."""

import json
import socket
import time

from .errors import BoardDown, BoardError
from .state import Paths

TERMINAL = ("exit", "result", "error", "pong")


def _connect(path, timeout=5.0):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(timeout)
    try:
        s.connect(path)
    except (FileNotFoundError, ConnectionRefusedError):
        s.close()
        raise BoardDown()
    except OSError as e:
        s.close()
        raise BoardError("cannot connect to %s: %s" % (path, e))
    return s


def _frames(sock, deadline=None):
    buf = b""
    while True:
        if deadline is not None:
            left = deadline - time.monotonic()
            if left <= 0:
                raise socket.timeout()
            sock.settimeout(left)
        else:
            sock.settimeout(None)
        try:
            chunk = sock.recv(65536)
        except ConnectionResetError:
            chunk = b""
        if not chunk:
            return
        buf += chunk
        while b"\n" in buf:
            line, buf = buf.split(b"\n", 1)
            if line.strip():
                try:
                    yield json.loads(line)
                except ValueError:
                    pass


def request(req, paths=None, timeout=60.0, on_frame=None):
    """Send one request to the guest agent; return its terminal frame.
    Non-terminal frames (exec output) go to on_frame."""
    paths = paths or Paths()
    sock = _connect(paths.ctl)
    try:
        sock.sendall((json.dumps(req) + "\n").encode())
        deadline = time.monotonic() + timeout if timeout else None
        try:
            for fr in _frames(sock, deadline):
                t = fr.get("type")
                if t in TERMINAL:
                    if t == "error":
                        raise BoardError(fr.get("message", "guest agent error"))
                    return fr
                if on_frame:
                    on_frame(fr)
        except socket.timeout:
            raise BoardError("no answer from the board within %g s" % timeout)
        raise BoardError("connection to the board was lost (see %s)" % paths.boot_log)
    finally:
        sock.close()


def ping(paths=None, timeout=10.0):
    return request({"op": "ping"}, paths, timeout=timeout)
