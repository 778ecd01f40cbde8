"""QEMU's monitor (QMP) on qmp.sock: any command, and screendump of what the display scans out."""

import json
import os
import socket
import time

from .client import _connect, _frames
from .errors import BoardDown, BoardError
from .state import Paths, _supervisor_pid, _unlink


def qmp(command, arguments=None, paths=None, timeout=60.0):
    paths = paths or Paths()
    if _supervisor_pid(paths) is None:
        raise BoardDown()
    sock = _connect(paths.qmp, timeout=10)
    try:
        frames = _frames(sock, time.monotonic() + timeout)

        def answer():
            for fr in frames:
                if "return" in fr:
                    return fr["return"]
                if "error" in fr:
                    raise BoardError("QMP %s: %s" % (command, fr["error"].get("desc", fr["error"])))
            raise BoardError("QMP connection closed")
        try:
            next(frames)  # greeting
            sock.sendall(b'{"execute":"qmp_capabilities"}\n')
            answer()
            msg = {"execute": command}
            if arguments:
                msg["arguments"] = arguments
            sock.sendall((json.dumps(msg) + "\n").encode())
            return answer()
        except (socket.timeout, StopIteration):
            raise BoardError("QMP %s: no answer" % command)
    finally:
        sock.close()


def screendump(path, paths=None):
    """Write the scanned-out picture as a binary PPM; return (width, height)."""
    path = os.path.abspath(path)
    tmp = path + ".tmp%d" % os.getpid()
    qmp("screendump", {"filename": tmp}, paths=paths)
    try:
        with open(tmp, "rb") as f:
            head = f.read(64)
        parts = head.split()
        if parts[:1] != [b"P6"]:
            raise BoardError("screendump did not write a PPM")
        if path.endswith(".png"):
            _ppm_to_png(tmp, path)
        else:
            os.replace(tmp, path)
    finally:
        _unlink(tmp)
    return int(parts[1]), int(parts[2])


def _ppm_to_png(ppm, png):
    """Convert QEMU's P6 dump to a PNG a person can open anywhere (zlib, no image library needed)."""
    import struct
    import zlib
    with open(ppm, "rb") as f:
        data = f.read()
    fields, at = [], 0
    while len(fields) < 4:
        while data[at:at + 1].isspace():
            at += 1
        start = at
        while not data[at:at + 1].isspace():
            at += 1
        fields.append(data[start:at])
    width, height = int(fields[1]), int(fields[2])
    pixels = data[at + 1:at + 1 + width * height * 3]
    rows = b"".join(b"\0" + pixels[y * width * 3:(y + 1) * width * 3] for y in range(height))

    def chunk(kind, body):
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF)

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    tmp = png + ".tmp%d" % os.getpid()
    with open(tmp, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows, 6)) + chunk(b"IEND", b""))
    os.replace(tmp, png)
