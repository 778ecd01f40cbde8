#!/usr/bin/python3
"""The board's USB webcam: a UVC 1.1 device written in userspace on raw-gadget over dummy_hcd, so that the
guest's uvcvideo drives it like any USB camera.

usage: webcam.py [--udc dummy_udc.0]     (run as root in the guest; `board webcam plug` starts it)
       webcam.py counter SCREEN.ppm FRAME_X FRAME_Y W H
                                         (on the host: the counter of a WxH frame shown 1:1 at FRAME_X,FRAME_Y)

The device: one VideoControl interface (camera terminal with absolute zoom 100..500, output terminal) and one
VideoStreaming interface with a single **bulk** IN endpoint (dummy_hcd carries no isochronous transfers; UVC
allows bulk). Formats: MJPEG 640x360, 1280x720, 1920x1080 and YUYV 640x360, each at 30 and 15 fps.

The picture: eight 75% colour bars with the frame counter drawn in big digits below, the bars cropped around
the centre by the zoom control (zoom 200 shows the middle half of the scene, so the camera's own zoom shows in
the picture; the counter is drawn after the crop and stays readable). MJPEG frames are compressed by TurboJPEG
(4:2:2) with their Huffman tables taken out and zero bytes padded after EOI, as many webcams send them.

Each frame sent is logged on stdout, one line:
    frame N t=WALL mono=MONO FORMAT WxH zoom=Z bytes=B pad=P sha=SHA256(JPEG to EOI) scan=SHA256(SOS..EOI)
(t is the guest's wall clock when the frame was drawn). SET_CUR of the zoom logs `zoom SET_CUR Z`.
SIGUSR1 (to this process): the next MJPEG frame is sent truncated (its second half, EOI included, left out; no error bit), logged
`truncated N`. SIGTERM/SIGINT: the device goes away (raw-gadget closed: a USB disconnect).

Two processes: this one answers ep0; a forked writer draws and sends frames. A bulk write blocks until the host
reads it, so the writer must never hold up ep0 (a zoom SET_CUR would time out on the host).
"""

import ctypes
import errno
import hashlib
import mmap
import os
import signal
import struct
import sys
import time

# --- raw-gadget ioctls (include/uapi/linux/usb/raw_gadget.h) ------------------------------------------------
RAW_INIT = 0x41015500
RAW_RUN = 0x5501
RAW_EVENT_FETCH = 0x80085502
RAW_EP0_WRITE = 0x40085503
RAW_EP0_READ = 0xC0085504
RAW_EP_ENABLE = 0x40095505
RAW_EP_WRITE = 0x40085507
RAW_CONFIGURE = 0x5509
RAW_VBUS_DRAW = 0x4004550A
RAW_EP0_STALL = 0x550C
RAW_IO_FLAGS_ZERO = 1
EVENT_CONNECT, EVENT_CONTROL = 1, 2
USB_SPEED_HIGH = 3

libc = ctypes.CDLL(None, use_errno=True)
libc.ioctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_void_p]


def ioctl(fd, req, buf=None):
    """ctypes' ioctl releases the GIL (fcntl.ioctl's buffer is limited to 1 KiB for bytes)."""
    while True:
        ret = libc.ioctl(fd, req, ctypes.cast(buf, ctypes.c_void_p) if buf is not None else None)
        if ret >= 0:
            return ret
        e = ctypes.get_errno()
        if e != errno.EINTR or req == RAW_EP_WRITE:
            raise OSError(e, "%s (ioctl %#x)" % (os.strerror(e), req))


def ep_io(ep, data=b"", length=None, flags=0):
    n = len(data) if length is None else length
    buf = ctypes.create_string_buffer(8 + max(n, len(data)))
    struct.pack_into("<HHI", buf, 0, ep, flags, n)
    buf[8:8 + len(data)] = data
    return buf


# --- the device -------------------------------------------------------------------------------------------
VID, PID = 0x1D6B, 0x0102
STRINGS = {1: "kioskcam", 2: "Board Webcam", 3: "KC16"}
BULK_EP = 0x81
MAX_PACKET = 512
PAYLOAD = 16384  # dwMaxPayloadTransferSize: uvcvideo ends a payload on a short URB or at this size
INTERVALS = (333333, 666666)  # 30 and 15 fps, in 100 ns
ZOOM_MIN, ZOOM_MAX, ZOOM_DEF = 100, 500, 100
CT_ID, OT_ID = 1, 3
CT_ZOOM_ABSOLUTE = 0x0B
VS_PROBE, VS_COMMIT = 1, 2
SET_CUR, GET_CUR, GET_MIN, GET_MAX, GET_RES, GET_LEN, GET_INFO, GET_DEF = (
    0x01, 0x81, 0x82, 0x83, 0x84, 0x85, 0x86, 0x87)

# (format index, frame index) -> (fourcc, width, height)
FRAMES = {
    (1, 1): ("mjpeg", 640, 360), (1, 2): ("mjpeg", 1280, 720), (1, 3): ("mjpeg", 1920, 1080),
    (2, 1): ("yuyv", 640, 360),
}
YUY2_GUID = bytes.fromhex("5955593200001000800000aa00389b71")


def frame_buffer_size(fmt, w, h):
    return w * h * 2  # YUYV exactly; MJPEG frames (padding included) stay far below it


def device_descriptor():
    return struct.pack("<BBHBBBBHHHBBBB", 18, 1, 0x0200, 0xEF, 0x02, 0x01, 64, VID, PID, 0x0100, 1, 2, 3, 1)


def frame_descriptor(subtype, index, w, h):
    size = frame_buffer_size(None, w, h)
    rate_bits = w * h * 16
    d = struct.pack("<BBBBBHHIIIIB", 26 + 4 * len(INTERVALS), 0x24, subtype, index, 0, w, h,
                    rate_bits * 15, rate_bits * 30, size, INTERVALS[0], len(INTERVALS))
    return d + b"".join(struct.pack("<I", i) for i in INTERVALS)


def config_descriptor():
    colour = struct.pack("<BBBBBB", 6, 0x24, 0x0D, 1, 1, 4)
    mjpeg = [frame_descriptor(0x07, fr, w, h) for (fm, fr), (_, w, h) in sorted(FRAMES.items()) if fm == 1]
    yuyv = [frame_descriptor(0x05, fr, w, h) for (fm, fr), (_, w, h) in sorted(FRAMES.items()) if fm == 2]
    formats = (struct.pack("<BBBBBBBBBBB", 11, 0x24, 0x06, 1, len(mjpeg), 1, 1, 0, 0, 0, 0) + b"".join(mjpeg)
               + colour
               + struct.pack("<BBBBB", 27, 0x24, 0x04, 2, len(yuyv)) + YUY2_GUID
               + struct.pack("<BBBBBB", 16, 1, 0, 0, 0, 0) + b"".join(yuyv) + colour)
    vs_header_len = 13 + 2
    vs_header = struct.pack("<BBBBHBBBBBBBBB", vs_header_len, 0x24, 0x01, 2, vs_header_len + len(formats),
                            BULK_EP, 0, OT_ID, 0, 0, 0, 1, 0, 0)
    # Camera terminal: bmControls bit 9 is absolute zoom.
    ct = struct.pack("<BBBBHBBHHHB3s", 18, 0x24, 0x02, CT_ID, 0x0201, 0, 0, 0, 0, 0, 3, bytes([0, 0x02, 0]))
    ot = struct.pack("<BBBBHBBB", 9, 0x24, 0x03, OT_ID, 0x0101, 0, CT_ID, 0)
    vc_header = struct.pack("<BBBHHIBB", 13, 0x24, 0x01, 0x0110, 13 + len(ct) + len(ot), 48000000, 1, 1)
    body = (struct.pack("<BBBBBBBB", 8, 0x0B, 0, 2, 0x0E, 0x03, 0, 2)  # IAD: video interface collection
            + struct.pack("<BBBBBBBBB", 9, 4, 0, 0, 0, 0x0E, 0x01, 0, 2) + vc_header + ct + ot
            + struct.pack("<BBBBBBBBB", 9, 4, 1, 0, 1, 0x0E, 0x02, 0, 0) + vs_header + formats
            + endpoint_descriptor()[:7])
    return struct.pack("<BBHBBBBB", 9, 2, 9 + len(body), 2, 1, 0, 0x80, 250) + body


def endpoint_descriptor():
    """usb_endpoint_descriptor as EP_ENABLE takes it (9 bytes: the audio fields zero)."""
    return struct.pack("<BBBBHBBB", 7, 5, BULK_EP, 0x02, MAX_PACKET, 0, 0, 0)


def string_descriptor(index):
    if index == 0:
        return struct.pack("<BBH", 4, 3, 0x0409)
    s = STRINGS[index].encode("utf-16-le")
    return struct.pack("<BB", 2 + len(s), 3) + s


def streaming_control(fmt, frame, interval):
    w = FRAMES[(fmt, frame)]
    return struct.pack("<HBBIHHHHHIIIBBBB", 1, fmt, frame, interval, 0, 0, 0, 0, 0,
                       frame_buffer_size(*w), PAYLOAD, 48000000, 3, 1, 1, 1)


def negotiate(data):
    """The device's answer to a PROBE SET_CUR: the nearest format, frame and interval it has, sizes filled
    in (echoing the host's zeros makes uvcvideo's REQBUFS fail)."""
    _, fmt, frame, interval = struct.unpack_from("<HBBI", data.ljust(8, b"\0"))
    if (fmt, frame) not in FRAMES:
        fmt, frame = (fmt, 1) if (fmt, 1) in FRAMES else (1, 1)
    interval = min(INTERVALS, key=lambda i: abs(i - interval)) if interval else INTERVALS[0]
    return streaming_control(fmt, frame, interval)


# --- the scene ----------------------------------------------------------------------------------------------
# 75% bars, BT.601 limited range (Y, U, V): white, yellow, cyan, green, magenta, red, blue, black.
BARS = [(180, 128, 128), (162, 44, 142), (131, 156, 44), (112, 72, 58),
        (84, 184, 198), (65, 100, 212), (35, 212, 114), (16, 128, 128)]
FONT = {  # 5x7
    "0": "01110 10001 10011 10101 11001 10001 01110", "1": "00100 01100 00100 00100 00100 00100 01110",
    "2": "01110 10001 00001 00010 00100 01000 11111", "3": "11111 00010 00100 00010 00001 10001 01110",
    "4": "00010 00110 01010 10010 11111 00010 00010", "5": "11111 10000 11110 00001 00001 10001 01110",
    "6": "00110 01000 10000 11110 10001 10001 01110", "7": "11111 00001 00010 00100 01000 01000 01000",
    "8": "01110 10001 10001 01110 10001 10001 01110", "9": "01110 10001 10001 01111 00001 00010 01100",
}
DIGITS = 6


class Scene:
    """Planar 4:2:2 Y, U, V of the bars at a zoom, with the counter box drawn per frame."""

    def __init__(self, w, h):
        self.w, self.h = w, h
        self.scale = max(2, h // 90)
        self.box_h = 9 * self.scale
        self.box_w = (DIGITS * 6 + 1) * self.scale
        self.box_y = h - self.box_h - h // 20
        self.box_x = (w - self.box_w) // 2
        self.zoom = None

    def bar_at(self, x, zoom):
        cx = self.w / 2.0
        sx = cx + (x + 0.5 - cx) * 100.0 / zoom
        return min(7, max(0, int(sx * 8 / self.w)))

    def set_zoom(self, zoom):
        if zoom == self.zoom:
            return
        self.zoom = zoom
        w, h = self.w, self.h
        bars = [self.bar_at(x, zoom) for x in range(w)]
        yrow = bytes(BARS[b][0] for b in bars)
        urow = bytes(BARS[bars[2 * i]][1] for i in range(w // 2))
        vrow = bytes(BARS[bars[2 * i]][2] for i in range(w // 2))
        self.y0, self.u0, self.v0 = yrow * h, urow * h, vrow * h

    def counter_rows(self, n):
        """The box's Y rows, one per font row plus the margins (each `scale` pixels tall)."""
        s = self.scale
        text = ("%0*d" % (DIGITS, n))[-DIGITS:]
        rows = []
        for r in range(9):
            line = bytearray([16]) * self.box_w
            if 1 <= r <= 7:
                for d, ch in enumerate(text):
                    bits = FONT[ch].split()[r - 1]
                    for c, bit in enumerate(bits):
                        if bit == "1":
                            x = (1 + d * 6 + c) * s
                            line[x:x + s] = b"\xeb" * s
            rows.append(bytes(line))
        return rows

    def planes(self, n, top=0, bottom=None):
        """Rows top..bottom of the frame with counter n drawn in."""
        w, s, x0, bw = self.w, self.scale, self.box_x, self.box_w
        bottom = self.h if bottom is None else bottom
        y = bytearray(self.y0[top * w:bottom * w])
        u = bytearray(self.u0[top * w // 2:bottom * w // 2])
        v = bytearray(self.v0[top * w // 2:bottom * w // 2])
        grey = b"\x80" * (bw // 2)
        for r, row in enumerate(self.counter_rows(n)):
            for k in range(s):
                yy = self.box_y + r * s + k - top
                if not 0 <= yy < bottom - top:
                    continue
                y[yy * w + x0:yy * w + x0 + bw] = row
                c = yy * (w // 2) + x0 // 2
                u[c:c + bw // 2] = grey
                v[c:c + bw // 2] = grey
        return y, u, v

    def yuyv(self, n):
        """The packed frame; only the counter's rows are interleaved anew (the bars' once per zoom)."""
        if getattr(self, "yuyv_zoom", None) != self.zoom:
            self.yuyv_zoom, self.yuyv0 = self.zoom, self._interleave(*self.planes(n))
        top, bottom = self.box_y, self.box_y + self.box_h
        rows = self._interleave(*self.planes(n, top, bottom))
        return self.yuyv0[:top * self.w * 2] + rows + self.yuyv0[bottom * self.w * 2:]

    @staticmethod
    def _interleave(y, u, v):
        out = bytearray(len(y) * 2)
        out[0::4] = y[0::2]
        out[1::4] = u
        out[2::4] = y[1::2]
        out[3::4] = v
        return bytes(out)


class Encoder:
    """TurboJPEG (libturbojpeg, the 2.x API Debian 12 ships), 4:2:2 from planar YUV, one restart interval an
    MCU row (TJ_RESTART). Only the rows around the counter change from frame to frame: those are compressed
    anew and spliced between the bars' rows, compressed once per zoom (a whole 720p frame takes ~250 ms under
    emulation, too slow for 30 fps)."""
    TJSAMP_422 = 1
    MCU_H = 8

    def __init__(self, scene):
        os.environ["TJ_RESTART"] = "1"
        self.tj = ctypes.CDLL("libturbojpeg.so.0")
        self.tj.tjInitCompress.restype = ctypes.c_void_p
        self.tj.tjCompressFromYUVPlanes.argtypes = [
            ctypes.c_void_p, ctypes.POINTER(ctypes.c_char_p), ctypes.c_int, ctypes.c_void_p, ctypes.c_int,
            ctypes.c_int, ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ctypes.c_ulong), ctypes.c_int,
            ctypes.c_int]
        self.tj.tjFree.argtypes = [ctypes.c_void_p]
        self.handle = self.tj.tjInitCompress()
        self.scene = scene
        self.top = scene.box_y // self.MCU_H * self.MCU_H
        self.bottom = min(scene.h, -(-(scene.box_y + scene.box_h) // self.MCU_H) * self.MCU_H)
        self.zoom = None

    def compress(self, w, h, planes, quality=85):
        srcs = (ctypes.c_char_p * 3)(*[bytes(p) for p in planes])
        out = ctypes.c_void_p()
        size = ctypes.c_ulong(0)
        if self.tj.tjCompressFromYUVPlanes(self.handle, srcs, w, None, h, self.TJSAMP_422,
                                           ctypes.byref(out), ctypes.byref(size), quality, 0) != 0:
            raise RuntimeError("tjCompressFromYUVPlanes failed")
        data = ctypes.string_at(out, size.value)
        self.tj.tjFree(out)
        return data

    @staticmethod
    def split(jpeg):
        """(everything up to the entropy-coded data, [each restart interval's data])."""
        sos = jpeg.index(b"\xff\xda")
        start = sos + 2 + struct.unpack_from(">H", jpeg, sos + 2)[0]
        rows, i = [], start
        while True:
            j = jpeg.index(b"\xff", i)
            while jpeg[j + 1] == 0x00 or (jpeg[j + 1] == 0xFF):
                j = jpeg.index(b"\xff", j + 1 if jpeg[j + 1] == 0xFF else j + 2)
            rows.append(jpeg[i:j])
            if jpeg[j + 1] == 0xD9:
                return jpeg[:start], rows
            i = j + 2

    def encode(self, n):
        sc = self.scene
        if self.zoom != sc.zoom:
            self.zoom = sc.zoom
            self.head, self.rows = self.split(self.compress(sc.w, sc.h, sc.planes(n)))
        _, strip = self.split(self.compress(sc.w, self.bottom - self.top, sc.planes(n, self.top, self.bottom)))
        first = self.top // self.MCU_H
        rows = self.rows[:first] + strip + self.rows[first + len(strip):]
        out = bytearray(self.head)
        for i, r in enumerate(rows):
            out += r
            out += bytes([0xFF, 0xD0 + i % 8]) if i + 1 < len(rows) else b"\xff\xd9"
        return bytes(out)


def without_huffman_tables(jpeg):
    """The JPEG with its DHT segments taken out, as webcams send MJPEG (the decoder's defaults apply)."""
    out = bytearray(jpeg[:2])
    i = 2
    while i + 4 <= len(jpeg):
        marker = jpeg[i + 1]
        seglen = struct.unpack_from(">H", jpeg, i + 2)[0]
        if marker == 0xDA:
            out += jpeg[i:]
            return bytes(out)
        if marker != 0xC4:
            out += jpeg[i:i + 2 + seglen]
        i += 2 + seglen
    raise ValueError("no SOS")


def scan_bytes(jpeg):
    """From the SOS marker to EOI: what a still made from this frame must carry unchanged."""
    return jpeg[jpeg.index(b"\xff\xda"):]


# --- the writer ---------------------------------------------------------------------------------------------
# Shared with the writer: zoom (u16 at 0), the next frame counter (u32 at 4), truncate the next frame (u8 at 8).
# (A signal to the writer would interrupt its bulk write and cut a frame short unasked.)
SHARED = mmap.mmap(-1, 64)


def shared_zoom():
    return struct.unpack_from("<H", SHARED, 0)[0]


def writer(fd, ep, fmt, frame, interval):
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGUSR1, signal.SIG_IGN)
    name, w, h = FRAMES[(fmt, frame)]
    scene = Scene(w, h)
    enc = Encoder(scene) if name == "mjpeg" else None
    period = interval / 1e7
    fid = 0
    next_t = time.monotonic()
    while True:
        n = struct.unpack_from("<I", SHARED, 4)[0]
        struct.pack_into("<I", SHARED, 4, n + 1)
        zoom = shared_zoom()
        scene.set_zoom(zoom)
        t, mono = time.time(), time.monotonic()
        pad = 0
        if enc:
            jpeg = without_huffman_tables(enc.encode(n))
            sha, scan = hashlib.sha256(jpeg).hexdigest(), hashlib.sha256(scan_bytes(jpeg)).hexdigest()
            pad = (n * 37) % 509 + 3
            body = jpeg + b"\0" * pad
            if SHARED[8]:
                SHARED[8] = 0
                body = jpeg[:len(jpeg) // 2]
                print("truncated %d" % n, flush=True)
        else:
            body = scene.yuyv(n)
            sha = hashlib.sha256(body).hexdigest()
            scan = "-"
        data = bytearray()
        chunk = PAYLOAD - 2
        for off in range(0, len(body), chunk):
            last = off + chunk >= len(body)
            data += bytes([2, 0x80 | fid | (0x02 if last else 0)]) + body[off:off + chunk]
        fid ^= 1
        flags = RAW_IO_FLAGS_ZERO if len(data) % MAX_PACKET == 0 else 0
        drawn = time.monotonic()
        ioctl(fd, RAW_EP_WRITE, ep_io(ep, bytes(data), flags=flags))
        print("frame %d t=%.6f mono=%.6f %s %dx%d zoom=%d bytes=%d pad=%d draw=%.3f send=%.3f sha=%s scan=%s"
              % (n, t, mono, name, w, h, zoom, len(body) - pad, pad, drawn - mono, time.monotonic() - drawn,
                 sha, scan), flush=True)
        next_t += period
        delay = next_t - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        else:
            next_t = time.monotonic()  # slower than the rate (emulation): as fast as it goes, no catching up


# --- ep0 ----------------------------------------------------------------------------------------------------
class Device:
    def __init__(self, udc):
        self.fd = os.open("/dev/raw-gadget", os.O_RDWR)
        init = ctypes.create_string_buffer(257)
        init[0:9] = b"dummy_udc"
        init[128:128 + len(udc)] = udc.encode()
        init[256] = bytes([USB_SPEED_HIGH])
        ioctl(self.fd, RAW_INIT, init)
        ioctl(self.fd, RAW_RUN)
        self.ep = None
        self.child = None
        self.probe = streaming_control(1, 1, INTERVALS[0])
        self.commit = self.probe
        struct.pack_into("<HI", SHARED, 0, ZOOM_DEF, 0)

    def fetch(self):
        buf = ctypes.create_string_buffer(8 + 8)
        struct.pack_into("<II", buf, 0, 0, 8)
        ioctl(self.fd, RAW_EVENT_FETCH, buf)
        kind, length = struct.unpack_from("<II", buf, 0)
        return kind, buf.raw[8:8 + length]

    def reply(self, data, wlength):
        ioctl(self.fd, RAW_EP0_WRITE, ep_io(0, data[:wlength]))

    def ack(self):
        ioctl(self.fd, RAW_EP0_READ, ep_io(0, length=0))

    def read_data(self, wlength):
        buf = ep_io(0, length=wlength)
        n = ioctl(self.fd, RAW_EP0_READ, buf)
        return buf.raw[8:8 + n]

    def stall(self):
        ioctl(self.fd, RAW_EP0_STALL)

    def stop_writer(self):
        if self.child:
            os.kill(self.child, signal.SIGKILL)  # dequeues its blocked bulk write
            os.waitpid(self.child, 0)
            self.child = None

    def start_writer(self):
        self.stop_writer()
        _, fmt, frame, interval = struct.unpack_from("<HBBI", self.commit)
        name, w, h = FRAMES[(fmt, frame)]
        print("stream %s %dx%d interval %d" % (name, w, h, interval), flush=True)
        pid = os.fork()
        if pid == 0:
            try:
                writer(self.fd, self.ep, fmt, frame, interval)
            except OSError as e:
                print("writer: %s" % e, flush=True)
            os._exit(0)
        self.child = pid

    def standard(self, rtype, req, value, index, wlength):
        if req == 6 and rtype == 0x80:  # GET_DESCRIPTOR
            kind, i = value >> 8, value & 0xFF
            if kind == 1:
                return self.reply(device_descriptor(), wlength)
            if kind == 2:
                return self.reply(config_descriptor(), wlength)
            if kind == 3 and (i == 0 or i in STRINGS):
                return self.reply(string_descriptor(i), wlength)
            if kind == 6:  # device qualifier
                return self.reply(struct.pack("<BBHBBBBBB", 10, 6, 0x0200, 0xEF, 2, 1, 64, 1, 0), wlength)
            return self.stall()
        if req == 9 and rtype == 0x00:  # SET_CONFIGURATION
            if self.ep is None:
                buf = ctypes.create_string_buffer(endpoint_descriptor())
                self.ep = ioctl(self.fd, RAW_EP_ENABLE, buf)
                v = ctypes.c_uint32(250)
                ioctl(self.fd, RAW_VBUS_DRAW, ctypes.byref(v))
                ioctl(self.fd, RAW_CONFIGURE)
            return self.ack()
        if req == 11 and rtype == 0x01:  # SET_INTERFACE
            return self.ack()
        if req == 8 and rtype == 0x80:  # GET_CONFIGURATION
            return self.reply(b"\x01", wlength)
        if req == 10 and rtype == 0x81:  # GET_INTERFACE
            return self.reply(b"\x00", wlength)
        return self.stall()

    def class_request(self, rtype, req, value, index, wlength):
        interface, entity, selector = index & 0xFF, index >> 8, value >> 8
        if interface == 1 and selector in (VS_PROBE, VS_COMMIT):
            if req == SET_CUR:
                if selector == VS_COMMIT:
                    # Before the data stage completes: once it has, the host submits its URBs at once, and a
                    # frame the last stream's writer still has queued would be the new stream's first.
                    self.stop_writer()
                data = self.read_data(wlength)
                if selector == VS_PROBE:
                    self.probe = negotiate(data)
                else:
                    self.commit = negotiate(data)
                    self.start_writer()
                return None
            answers = {GET_CUR: self.probe if selector == VS_PROBE else self.commit,
                       GET_MIN: self.probe, GET_MAX: self.probe, GET_DEF: streaming_control(1, 1, INTERVALS[0]),
                       GET_INFO: b"\x03", GET_LEN: struct.pack("<H", 34)}
            if req in answers:
                return self.reply(answers[req], wlength)
            return self.stall()
        if interface == 0 and entity == CT_ID and selector == CT_ZOOM_ABSOLUTE:
            if req == SET_CUR:
                z = struct.unpack("<H", self.read_data(wlength)[:2])[0]
                z = min(ZOOM_MAX, max(ZOOM_MIN, z))
                struct.pack_into("<H", SHARED, 0, z)
                print("zoom SET_CUR %d" % z, flush=True)
                return None
            answers = {GET_CUR: shared_zoom(), GET_MIN: ZOOM_MIN, GET_MAX: ZOOM_MAX, GET_RES: 1, GET_DEF: ZOOM_DEF}
            if req == GET_INFO:
                return self.reply(b"\x03", wlength)
            if req == GET_LEN:
                return self.reply(struct.pack("<H", 2), wlength)
            if req in answers:
                return self.reply(struct.pack("<H", answers[req]), wlength)
            return self.stall()
        if interface == 0 and entity == 0 and selector == 2 and req == GET_CUR:  # request error code
            return self.reply(b"\x00", wlength)
        return self.stall()

    def serve(self):
        while True:
            kind, data = self.fetch()
            if kind == EVENT_CONNECT:
                print("connected at %.3f" % time.monotonic(), flush=True)
                continue
            if kind != EVENT_CONTROL:
                continue
            rtype, req, value, index, wlength = struct.unpack("<BBHHH", data[:8])
            try:
                if rtype & 0x60 == 0:
                    self.standard(rtype, req, value, index, wlength)
                elif rtype & 0x60 == 0x20:
                    self.class_request(rtype, req, value, index, wlength)
                else:
                    self.stall()
            except OSError as e:
                print("ep0: request %02x %02x %04x %04x: %s" % (rtype, req, value, index, e), flush=True)


def read_counter(ppm, frame_x, frame_y, w, h):
    """The counter of the frame shown 1:1 with its top-left at (frame_x, frame_y) of a binary PPM (P6, a QMP
    screendump), read at the centre of each font cell; None where a cell matches no digit (the picture is not
    a frame of this webcam, or not shown 1:1)."""
    from kioskboard.qmp import read_ppm  # the host's package: only this host-side reader needs it
    width, _, pixels = read_ppm(ppm)
    scene = Scene(w, h)
    s = scene.scale
    patterns = {pattern: digit for digit, pattern in FONT.items()}
    text = ""
    for d in range(DIGITS):
        rows = []
        for r in range(1, 8):
            bits = ""
            for c in range(5):
                x = frame_x + scene.box_x + (1 + d * 6 + c) * s + s // 2
                y = frame_y + scene.box_y + r * s + s // 2
                i = (y * width + x) * 3
                bits += "1" if sum(pixels[i:i + 3]) > 3 * 128 else "0"
            rows.append(bits)
        digit = patterns.get(" ".join(rows))
        if digit is None:
            return None
        text += digit
    return int(text)


def main():
    if len(sys.argv) == 7 and sys.argv[1] == "counter":
        # webcam.py counter SCREEN.ppm FRAME_X FRAME_Y W H: the counter on a screendump (the host's tests).
        n = read_counter(sys.argv[2], *map(int, sys.argv[3:]))
        print("none" if n is None else n)
        return
    udc = "dummy_udc.0"
    if len(sys.argv) == 3 and sys.argv[1] == "--udc":
        udc = sys.argv[2]
    elif len(sys.argv) != 1:
        sys.exit(__doc__.split("\n\n")[1])
    dev = Device(udc)

    def bye(*_):
        dev.stop_writer()
        os._exit(0)  # closing /dev/raw-gadget unbinds the gadget: the host sees the device unplugged
    signal.signal(signal.SIGTERM, bye)
    signal.signal(signal.SIGINT, bye)
    signal.signal(signal.SIGUSR1, lambda *_: SHARED.__setitem__(8, 1))
    print("webcam on %s at %.3f" % (udc, time.monotonic()), flush=True)
    dev.serve()


if __name__ == "__main__":
    main()
