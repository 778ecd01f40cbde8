#!/usr/bin/python3
"""Replays a dm-log-writes log onto a device, stopping at chosen points to check what a power cut there leaves.

The log's format is the kernel's (Documentation/admin-guide/device-mapper/log-writes.rst, and the structs of
drivers/md/dm-log-writes.c): one `sectorsize` block of super (le64 magic 0x6a736677736872, le64 version 1,
le64 nr_entries, le32 sectorsize), then nr_entries entries, each one `sectorsize` block of header (le64 sector,
le64 nr_sectors, le64 flags, le64 data_len; a mark's text follows the header in the same block) and, unless it
is a discard or a mark, nr_sectors blocks of the data written (METADATA only labels a file system's own
blocks, REQ_META). Sectors count in `sectorsize`. Writes are in the
log in the order they reached the medium: a write is logged at the flush after it completed, a FUA write at
once. So the device as it stood after entry N is entries 0..N applied in order, and a power cut can leave any
such prefix (what was not yet flushed is the cache's, and a cut may lose it).

usage:
  replay-log-writes.py entries LOG                    one line an entry: index, flags, sector, count, mark
  replay-log-writes.py replay LOG TARGET [options]    rebuild TARGET at each point and run --check there
LOG may be FILE@OFFSET: the log starts OFFSET bytes into FILE (the board's card.img, read on the host).
    --start-mark NAME    points only after this mark (the file system made: "mkfs")
    --points flushes     every entry flagged FLUSH or FUA, and every mark
    --points random:N    N entries chosen at random (--seed) among the writes after --start-mark
    --points all         both of the above (the default: flushes,random:100)
    --limit N            at most N points, spread evenly over the chosen ones (a sample)
    --check CMD          run at each point with POINT=<index> FLAGS=<...> MARK=<last mark> in its environment;
                         its stdout line is printed after the point's description, its exit status noted
    --copies DIR         give each check a copy of TARGET as it stood at the point (IMAGE=DIR/point-N.img,
                         sparse, the check's to delete) instead of TARGET itself, so that checks run beside
                         the replay and each other
    --jobs N             checks at once (with --copies; default 1)
TARGET must start as the logged device did (zeroed, like the card before `guest-card.sh record`). A check on
TARGET itself must leave it as it found it (guest-cut-check.sh writes through a snapshot).
"""

import concurrent.futures
import fcntl
import json
import os
import random
import struct
import subprocess
import sys

MAGIC = 0x6a736677736872
FLAGS = {1: "FLUSH", 2: "FUA", 4: "DISCARD", 8: "MARK", 16: "METADATA"}
HEADER = struct.Struct("<QQQQ")
BLKZEROOUT = 0x127F  # _IO(0x12, 127), linux/fs.h


class Log:
    def __init__(self, path):
        path, _, base = path.partition("@")
        self.base = int(base or 0)
        self.fd = os.open(path, os.O_RDONLY)
        magic, version, count = struct.unpack("<QQQ", os.pread(self.fd, 24, self.base))
        (self.sectorsize,) = struct.unpack("<I", os.pread(self.fd, 4, self.base + 24))
        if magic != MAGIC or version != 1:
            sys.exit("%s: not a dm-log-writes log (magic %#x, version %d)" % (path, magic, version))
        self.entries = []  # (offset of data, sector, nr_sectors, flags, mark)
        offset = self.base + self.sectorsize
        for _ in range(count):
            block = os.pread(self.fd, self.sectorsize, offset)
            sector, nr, flags, data_len = HEADER.unpack_from(block)
            mark = block[HEADER.size:HEADER.size + data_len].decode(errors="replace") if flags & 8 else None
            if data_len and not flags & 8:
                # Inline data (dm-log-writes' DAX path): the card is no DAX device, so it never logs any.
                sys.exit("entry %d: inline data, which this tool does not replay" % len(self.entries))
            self.entries.append((offset + self.sectorsize, sector, nr, flags, mark))
            offset += self.sectorsize * (1 + (0 if flags & (4 | 8) else nr))

    def apply(self, target, first, last):
        """Entries first..last (inclusive) onto the open target."""
        zeros = b"\0" * (1 << 20)
        for data, sector, nr, flags, _ in self.entries[first:last + 1]:
            at, size = sector * self.sectorsize, nr * self.sectorsize
            if flags & 8:
                continue
            if flags & 4:
                # A discarded range reads back as zeros on the card: BLKZEROOUT (the board's virtio disk does
                # write-zeroes at once), or zeros written.
                try:
                    fcntl.ioctl(target, BLKZEROOUT, struct.pack("QQ", at, size))
                    continue
                except OSError:
                    pass
                while size:
                    n = min(size, len(zeros))
                    os.pwrite(target, zeros[:n], at)
                    at, size = at + n, size - n
                continue
            while size:
                n = min(size, 1 << 20)
                os.pwrite(target, os.pread(self.fd, n, data), at)
                data, at, size = data + n, at + n, size - n


def describe(flags):
    return "|".join(name for bit, name in FLAGS.items() if flags & bit) or "WRITE"


def choose(log, spec, start, seed, limit):
    writes = range(start, len(log.entries))
    chosen = set()
    for part in spec.split(","):
        if part == "flushes":
            chosen |= {i for i in writes if log.entries[i][3] & (1 | 2 | 8)}
        elif part.startswith("random:"):
            rng = random.Random(seed)
            chosen |= set(rng.sample(list(writes), min(int(part[7:]), len(writes))))
        else:
            sys.exit("--points: flushes, random:N or all")
    points = sorted(chosen)
    if limit and len(points) > limit:
        points = [points[round(k * (len(points) - 1) / (limit - 1))] for k in range(limit)] if limit > 1 else points[-1:]
    return points


def main(argv):
    if len(argv) >= 2 and argv[0] == "entries":
        log = Log(argv[1])
        for i, (_, sector, nr, flags, mark) in enumerate(log.entries):
            print(json.dumps({"index": i, "flags": describe(flags), "sector": sector, "count": nr, "mark": mark}))
        return 0
    if len(argv) < 3 or argv[0] != "replay":
        sys.exit(__doc__)
    log_path, target_path, rest = argv[1], argv[2], argv[3:]
    opts = {"--start-mark": None, "--points": "all", "--seed": "17", "--limit": "0", "--check": None,
            "--copies": None, "--jobs": "1"}
    while rest:
        if rest[0] not in opts or len(rest) < 2:
            sys.exit("unknown or incomplete option %s" % rest[0])
        opts[rest[0]] = rest[1]
        rest = rest[2:]
    spec = "flushes,random:100" if opts["--points"] == "all" else opts["--points"]
    log = Log(log_path)
    start = 0
    if opts["--start-mark"]:
        marks = [i for i, e in enumerate(log.entries) if e[4] == opts["--start-mark"]]
        if not marks:
            sys.exit("no mark %r in the log" % opts["--start-mark"])
        start = marks[0] + 1
    points = choose(log, spec, start, int(opts["--seed"]), int(opts["--limit"]))
    print(json.dumps({"entries": len(log.entries), "sectorsize": log.sectorsize, "start": start,
                      "points": len(points)}), flush=True)
    target = os.open(target_path, os.O_WRONLY)
    done = -1
    failures = 0
    mark = None
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=int(opts["--jobs"]))
    pending = []

    def check(result, image):
        env = dict(os.environ, POINT=str(result["point"]), FLAGS=result["flags"], MARK=result["mark"] or "")
        if image:
            env["IMAGE"] = image
        r = subprocess.run(opts["--check"], shell=True, env=env, stdout=subprocess.PIPE, text=True)
        result["status"] = r.returncode
        try:
            result["check"] = json.loads(r.stdout.strip().splitlines()[-1])
        except (ValueError, IndexError):
            result["check"] = r.stdout.strip()[-2000:]
        return result

    def report(result):
        print(json.dumps(result, sort_keys=True), flush=True)
        return result.get("status", 0) != 0

    for point in points:
        for _, _, _, _, m in log.entries[done + 1:point + 1]:
            mark = m or mark
        log.apply(target, done + 1, point)
        os.fsync(target)
        done = point
        result = {"point": point, "flags": describe(log.entries[point][3]), "mark": mark}
        if not opts["--check"]:
            report(result)
        elif opts["--copies"]:
            # The copy costs what the card holds, not its size (sparse); the check runs beside the replay.
            image = os.path.join(opts["--copies"], "point-%d.img" % point)
            subprocess.run(["cp", "--sparse=always", "--reflink=auto", target_path, image], check=True)
            pending.append(pool.submit(check, result, image))
            # In point order; and never more copies waiting than the checks can take, or they fill the disk.
            while pending and (pending[0].done() or len(pending) > 2 * int(opts["--jobs"])):
                failures += report(pending.pop(0).result())
        else:
            failures += report(check(result, None))
    for future in pending:
        failures += report(future.result())
    pool.shutdown()
    os.close(target)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
