#!/usr/bin/python3
"""A movie played by Debian's chromium (headless) from a local page, as someone who pulled it opens it.

Copies MOVIE next to a page holding one <video>, loads the page in chromium, and reports as JSON on stdout:
what chromium says it can play (canPlayType of the file's MIME type), the duration at `loadedmetadata`,
whether playing from the start reached `ended` and how long that took, the RGB of a frame drawn to a canvas
at each PROBE_X fraction of its width on the row at PROBE_Y, after a seek to the middle, and where that seek
landed, what chromium says of an MP4 with AAC sound, and how many bytes of sound it decoded while playing
(webkitAudioDecodedByteCount). The caller judges the figures; a page error is {"error": ...}. Exits 0 when chromium answered.

usage: play-movie.py MOVIE [PROBE_Y] [PROBE_X,...]
"""

import json
import os
import shutil
import sys
import tempfile

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.realpath(__file__)))
from kioskboard.chromium import Chromium  # noqa: E402

PAGE = """<!doctype html><meta charset="utf-8"><title>movie</title>
<video id="v" src="%s" muted playsinline preload="auto"></video><canvas id="c"></canvas>"""

# Each step is a promise in the page; a movie that never answers fails on the timeout, not by hanging.
SCRIPT = """(async () => {
  const v = document.getElementById("v");
  const within = (ms, what, p) => Promise.race([p, new Promise((_, no) => setTimeout(() => no(what), ms))]);
  const once = (name) => new Promise((yes, no) => {
    v.addEventListener(name, () => yes(), {once: true});
    v.addEventListener("error", () => no("media error " + (v.error && v.error.code) + ": " + (v.error && v.error.message)), {once: true});
  });
  const result = {canPlay: v.canPlayType(%(mime)s), canPlaySound: v.canPlayType(%(sound_mime)s)};
  if (v.readyState < 1) await within(20000, "no loadedmetadata", once("loadedmetadata"));
  result.duration = v.duration;
  result.width = v.videoWidth;
  result.height = v.videoHeight;
  const started = performance.now();
  const ended = once("ended");
  await v.play();
  await within(20000 + 2000 * v.duration, "never ended", ended);
  result.ended = v.ended;
  // Chromium's count of the sound it decoded while playing: 0 for a silent movie (muted, it still decodes).
  result.audioBytes = v.webkitAudioDecodedByteCount;
  result.playedSeconds = (performance.now() - started) / 1000;
  const seeked = once("seeked");
  v.currentTime = v.duration / 2;
  await within(20000, "no seeked", seeked);
  result.seekedTo = v.currentTime;
  const c = document.getElementById("c");
  c.width = v.videoWidth;
  c.height = v.videoHeight;
  const g = c.getContext("2d");
  g.drawImage(v, 0, 0);
  const y = Math.floor(%(probe_y)s * v.videoHeight);
  result.samples = %(probe_x)s.map((fx) => Array.from(g.getImageData(Math.floor(fx * v.videoWidth), y, 1, 1).data.slice(0, 3)));
  return result;
})().catch((e) => ({error: String(e)}))"""

MIME = {".MP4": 'video/mp4; codecs="avc1.64001f"', ".MOV": "video/quicktime"}
# An MP4 with AAC-LC sound beside its H.264.
SOUND_MIME = 'video/mp4; codecs="avc1.64001f, mp4a.40.2"'


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    movie = sys.argv[1]
    probe_y = float(sys.argv[2]) if len(sys.argv) > 2 else 0.33
    probe_x = [float(x) for x in sys.argv[3].split(",")] if len(sys.argv) > 3 else [(i + 0.5) / 8 for i in range(8)]
    work = tempfile.mkdtemp(prefix="kioskcam-play-")
    try:
        name = "movie" + os.path.splitext(movie)[1]
        shutil.copyfile(movie, os.path.join(work, name))
        with open(os.path.join(work, "index.html"), "w") as f:
            f.write(PAGE % name)
        with open(os.path.join(work, "chromium.log"), "w") as log:
            # A file page may read its own folder's pixels: without the flag the canvas counts as cross-origin.
            page = Chromium(os.path.join(work, "profile"), log, flags=["--allow-file-access-from-files"])
            try:
                page.call("Page.enable", page=True)
                page.call("Page.navigate", {"url": "file://" + os.path.join(work, "index.html")}, page=True)
                # The document is there once its body answers; the video loads on its own.
                for _ in range(200):
                    if page.evaluate("document.readyState") == "complete":
                        break
                script = SCRIPT % {"mime": json.dumps(MIME.get(os.path.splitext(movie)[1].upper(), "")),
                                   "sound_mime": json.dumps(SOUND_MIME),
                                   "probe_y": json.dumps(probe_y), "probe_x": json.dumps(probe_x)}
                print(json.dumps(page.evaluate(script)))
            finally:
                page.close()
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
