#!/usr/bin/python3
"""Beeps into the sound loopback and picture changes on vivid, together, for the A/V sync test (in the guest).

Plays silence into PCM (snd-aloop's playback end, e.g. hw:Loopback,1,0) at 48 kHz mono, and at each of
MOMENTS seconds after its start a BEEP_MS 1 kHz beep; as each beep leaves the buffer for the loopback (the
frames still queued ahead of it counted out by snd_pcm_delay) it switches vivid's test pattern on every
VIDEO device, alternately to 100% white and 100% blue. Prints one JSON line per beep with the
CLOCK_MONOTONIC times at which its first frame was due to play and at which the pattern switched. libasound through ctypes: the Python 3 standard library only.

usage: guest-beeps.py PCM MOMENTS(a,b,...) BEEP_MS VIDEO...
"""

import ctypes
import fcntl
import json
import math
import os
import struct
import sys
import time

RATE = 48000
VIDIOC_S_CTRL = 0xC008561C  # _IOWR('V', 28, struct v4l2_control)
VIDIOC_QUERYCTRL = 0xC0445624  # _IOWR('V', 36, struct v4l2_queryctrl)
PATTERNS = (6, 9)  # vivid's "100% White", "100% Blue"


def test_pattern_id(fd):
    """vivid's Test Pattern control is its own (V4L2_CID_USER_BASE class, vivid's range): found by name."""
    next_ctrl = 0x80000000
    ctrl_id = 0
    while True:
        query = struct.pack("=II32siiiiI8x", ctrl_id | next_ctrl, 0, b"", 0, 0, 0, 0, 0)
        try:
            answer = fcntl.ioctl(fd, VIDIOC_QUERYCTRL, query)
        except OSError:
            return None
        ctrl_id = struct.unpack_from("=I", answer)[0]
        name = struct.unpack_from("=32s", answer, 8)[0].split(b"\0")[0]
        if name == b"Test Pattern":
            return ctrl_id


def main():
    if len(sys.argv) < 5:
        sys.exit(__doc__)
    pcm_name, moments, beep_ms, videos = sys.argv[1], [float(m) for m in sys.argv[2].split(",")], int(sys.argv[3]), sys.argv[4:]
    controls = []
    for path in videos:
        fd = os.open(path, os.O_RDWR)
        ctrl = test_pattern_id(fd)
        if ctrl is None:
            sys.exit("%s has no Test Pattern control" % path)
        controls.append((fd, ctrl))

    asound = ctypes.CDLL("libasound.so.2")
    pcm = ctypes.c_void_p()
    if asound.snd_pcm_open(ctypes.byref(pcm), pcm_name.encode(), 0, 0) < 0:  # playback, blocking
        sys.exit("snd_pcm_open %s failed" % pcm_name)
    # The whole signal is rendered and handed over at once, into a buffer that holds it all: the kernel
    # plays it in real time whatever this script's share of a loaded guest (a 20 ms buffer fed live
    # underran there, and beeps came late or not at all). S16_LE (2), RW interleaved (3), mono, 48 kHz.
    total = int((moments[-1] + beep_ms / 1000 + 0.5) * RATE)
    if asound.snd_pcm_set_params(pcm, 2, 3, 1, RATE, 1, int(total * 1e6 / RATE) + 100000) < 0:
        sys.exit("snd_pcm_set_params failed")
    signal = [0] * total
    beep_frames = RATE * beep_ms // 1000
    starts = [int(moment * RATE) for moment in moments]
    for start in starts:
        for i in range(beep_frames):
            signal[start + i] = int(16000 * math.sin(2 * math.pi * 1000 * i / RATE))
    data = struct.pack("<%dh" % total, *signal)
    asound.snd_pcm_writei.restype = ctypes.c_long
    wrote = asound.snd_pcm_writei(pcm, data, total)
    if wrote != total:
        sys.exit("snd_pcm_writei wrote %d of %d frames" % (wrote, total))
    asound.snd_pcm_start(pcm)
    delay = ctypes.c_long()
    for number, start in enumerate(starts):
        # Frame k leaves the buffer `k - played` frames from now; the picture switches then.
        while True:
            asound.snd_pcm_delay(pcm, ctypes.byref(delay))
            now = time.clock_gettime(time.CLOCK_MONOTONIC)
            due = now + (start - (total - delay.value)) / RATE
            if due - now < 0.05:
                break
            time.sleep(min(0.5, due - now - 0.04))
        time.sleep(max(0.0, due - time.clock_gettime(time.CLOCK_MONOTONIC)))
        switched = time.clock_gettime(time.CLOCK_MONOTONIC)
        for fd, ctrl in controls:
            fcntl.ioctl(fd, VIDIOC_S_CTRL, struct.pack("=Ii", ctrl, PATTERNS[number % 2]))
        print(json.dumps({"beep": number, "played": due, "switched": switched}), flush=True)
    asound.snd_pcm_drain(pcm)
    asound.snd_pcm_close(pcm)


if __name__ == "__main__":
    main()
