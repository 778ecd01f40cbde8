#!/usr/bin/python3
"""The camera roll's invariants, checked in the guest where the card is: one JSON object on stdout.

usage: guest-roll-check.py ROLL [CACHE]

CACHE: a folder of the peers' verdicts by the file's SHA-256, so that a replay checking the same files at point
after point runs ffmpeg once a file.

- every visible file under DCIM is whole by a peer: `jpeginfo -c` for a still, `ffmpeg -v error` decoding every
  frame of a movie (silent), and ffprobe's frame count;
- no number twice (folder and file number: IMG_0003.JPG and IMG_0003.MOV are one number used twice);
- the records (`.kioskcam-items.jsonl`) agree with the files: each names a visible file of its size, none twice;
  files without a record are listed (a cut between the rename and the record loses only the record).
Hidden names are listed, not judged: they are the service's to clear at its next start.
"""

import hashlib
import json
import os
import re
import subprocess
import sys

NAME = re.compile(r"^IMG_(\d{4})\.(JPG|MOV|MP4)$")
FOLDER = re.compile(r"^(\d{3})[A-Z0-9_]{5}$")


def peer(path, kind):
    if kind == "JPG":
        r = subprocess.run(["jpeginfo", "-c", path], capture_output=True, text=True)
        words = r.stdout.split()
        return None if r.returncode == 0 and words and words[-1] == "OK" else (r.stdout + r.stderr).strip()
    r = subprocess.run(["ffmpeg", "-nostdin", "-v", "error", "-i", path, "-f", "null", "-"],
                       capture_output=True, text=True)
    if r.returncode != 0 or r.stderr.strip():
        return ("ffmpeg exit %d: %s" % (r.returncode, r.stderr.strip()))[:400]
    return None


def frames(path):
    r = subprocess.run(["ffprobe", "-v", "error", "-count_frames", "-select_streams", "v:0", "-show_entries",
                        "stream=nb_read_frames", "-of", "csv=p=0", path], capture_output=True, text=True)
    try:
        return int(r.stdout.strip())
    except ValueError:
        return None


def judged(path, kind, cache):
    """(problem or None, frames or None), from the cache when these bytes were judged before."""
    if cache:
        with open(path, "rb") as f:
            key = os.path.join(cache, hashlib.sha256(f.read()).hexdigest())
        try:
            with open(key) as f:
                return tuple(json.load(f))
        except (OSError, ValueError):
            pass
    verdict = (peer(path, kind), None if kind == "JPG" else frames(path))
    if cache:
        # Whole or not at all: checks of several points may share the cache at once (host-cut-check.sh).
        os.makedirs(cache, exist_ok=True)
        with open("%s.%d" % (key, os.getpid()), "w") as f:
            json.dump(verdict, f)
        os.replace("%s.%d" % (key, os.getpid()), key)
    return verdict


def main(roll, cache=None):
    out = {"visible": [], "hidden": [], "problems": [], "numbers": [], "unrecorded": [], "records": 0}
    dcim = os.path.join(roll, "DCIM")
    seen = {}
    sizes = {}
    for folder in sorted(os.listdir(dcim)) if os.path.isdir(dcim) else []:
        fm = FOLDER.match(folder)
        for name in sorted(os.listdir(os.path.join(dcim, folder))):
            rel = "DCIM/%s/%s" % (folder, name)
            if name.startswith("."):
                out["hidden"].append(rel)
                continue
            m = NAME.match(name)
            if not fm or not m:
                out["problems"].append("%s: not a DCF name" % rel)
                continue
            number = "%s-%s" % (fm.group(1), m.group(1))
            if number in seen:
                out["problems"].append("%s: number %s also %s" % (rel, number, seen[number]))
            seen[number] = rel
            path = os.path.join(dcim, folder, name)
            sizes[rel] = os.path.getsize(path)
            verdict, count = judged(path, m.group(2), cache)
            item = {"file": rel, "bytes": sizes[rel]}
            if m.group(2) != "JPG":
                item["frames"] = count
            out["visible"].append(item)
            if verdict:
                out["problems"].append("%s: %s" % (rel, verdict))
    out["numbers"] = sorted(seen)
    recorded = set()
    try:
        with open(os.path.join(roll, ".kioskcam-items.jsonl"), errors="replace") as f:
            lines = f.read().split("\n")
    except FileNotFoundError:
        lines = []
    for i, line in enumerate(lines):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError:
            # A torn last line is closed at the next start and skipped; one anywhere else is damage.
            if i != len(lines) - 1 and any(x.strip() for x in lines[i + 1:]):
                out["problems"].append("records: line %d is not JSON" % (i + 1))
            continue
        out["records"] += 1
        f = record.get("file")
        if f in recorded:
            out["problems"].append("records: %s twice" % f)
        recorded.add(f)
        if f not in sizes:
            out["problems"].append("records: %s has no file" % f)
        elif record.get("bytes") != sizes[f]:
            out["problems"].append("records: %s is %s bytes, the file %d" % (f, record.get("bytes"), sizes[f]))
        elif record.get("mediaType") == "movie":
            found = next(v.get("frames") for v in out["visible"] if v["file"] == f)
            if record.get("frames") != found:
                out["problems"].append("records: %s has %s frames, ffprobe counts %s" % (f, record.get("frames"), found))
    out["unrecorded"] = sorted(set(sizes) - recorded)
    json.dump(out, sys.stdout, sort_keys=True)
    print()


if __name__ == "__main__":
    if len(sys.argv) not in (2, 3):
        sys.exit("usage: guest-roll-check.py ROLL [CACHE]")
    if len(sys.argv) == 3:
        os.makedirs(sys.argv[2], exist_ok=True)
    main(*sys.argv[1:])
