"""QEMU's monitor (QMP) on qmp.sock: any command, and screendump of what the display scans out."""

import json
import os
import socket
import time

from .client import _connect, _frames
from .errors import BoardDown, BoardError
from .state import Paths, _supervisor_pid, _unlink


class Session:
    """One connection to QEMU's monitor, handshake done, for several commands. QEMU serves one monitor client
    at a time (the next one waits), so keep a session short."""

    def __init__(self, paths=None, timeout=60.0):
        self.paths = paths or Paths()
        self.timeout = timeout
        if _supervisor_pid(self.paths) is None:
            raise BoardDown()
        self.sock = _connect(self.paths.qmp, timeout=10)
        try:
            self.frames = _frames(self.sock, time.monotonic() + timeout)
            next(self.frames)  # greeting
            self.command("qmp_capabilities")
        except (socket.timeout, StopIteration):
            self.close()
            raise BoardError("QMP: no greeting")
        except BaseException:
            self.close()
            raise

    def command(self, command, arguments=None):
        msg = {"execute": command}
        if arguments:
            msg["arguments"] = arguments
        self.frames = _frames(self.sock, time.monotonic() + self.timeout)
        try:
            self.sock.sendall((json.dumps(msg) + "\n").encode())
            for fr in self.frames:
                if "return" in fr:
                    return fr["return"]
                if "error" in fr:
                    raise BoardError("QMP %s: %s" % (command, fr["error"].get("desc", fr["error"])))
        except socket.timeout:
            raise BoardError("QMP %s: no answer" % command)
        raise BoardError("QMP connection closed")

    def close(self):
        self.sock.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def qmp(command, arguments=None, paths=None, timeout=60.0):
    with Session(paths, timeout) as session:
        return session.command(command, arguments)


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


def read_ppm(path):
    """QEMU's P6 dump: (width, height, RGB bytes top row first)."""
    with open(path, "rb") as f:
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
    return width, height, data[at + 1:at + 1 + width * height * 3]


def ppm_to_bmp(ppm):
    """The dump as a BMP file's bytes: no compression to spend time on (the front panel sends one several
    times a second to a browser on the same machine). Top-down rows (negative height), BGR, 4-byte aligned."""
    import struct
    width, height, pixels = read_ppm(ppm)
    bgr = bytearray(pixels)
    bgr[0::3], bgr[2::3] = pixels[2::3], pixels[0::3]
    stride = (width * 3 + 3) & ~3
    if stride != width * 3:
        pad = b"\0" * (stride - width * 3)
        bgr = b"".join(bgr[y * width * 3:(y + 1) * width * 3] + pad for y in range(height))
    header = struct.pack("<IiiHHIIiiII", 40, width, -height, 1, 24, 0, len(bgr), 2835, 2835, 0, 0)
    return b"BM" + struct.pack("<IHHI", 14 + len(header) + len(bgr), 0, 0, 14 + len(header)) + header + bytes(bgr)


def _ppm_to_png(ppm, png):
    """Convert QEMU's P6 dump to a PNG a person can open anywhere (zlib, no image library needed)."""
    import struct
    import zlib
    width, height, pixels = read_ppm(ppm)
    rows = b"".join(b"\0" + pixels[y * width * 3:(y + 1) * width * 3] for y in range(height))

    def chunk(kind, body):
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF)

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    tmp = png + ".tmp%d" % os.getpid()
    with open(tmp, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows, 6)) + chunk(b"IEND", b""))
    os.replace(tmp, png)
