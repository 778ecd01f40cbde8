#!/usr/bin/python3
"""CI's budget table: each stage's time, each build cache entry reused or built, the boots of each emulated
machine, and the total against CI's 90 minutes.

usage: budget.py CI-DIR STARTED   (CI-DIR holds stages.tsv, cache.log and boots.log, as .ci/run writes them;
                                   STARTED is the run's start in seconds since the epoch)
"""

import collections
import os
import sys
import time

BUDGET = 90 * 60


def minutes(seconds):
    return "%d min %02d s" % (seconds // 60, seconds % 60)


def lines(path):
    try:
        with open(path) as f:
            return [line.rstrip("\n") for line in f if line.strip()]
    except FileNotFoundError:
        return []


def main(argv):
    if len(argv) != 3:
        print(__doc__.strip().splitlines()[-2], file=sys.stderr)
        return 64
    ci, started = argv[1], float(argv[2])
    total = time.time() - started
    print()
    print("CI's budget: %s of %d minutes (%d s)" % (minutes(total), BUDGET // 60, total))
    print("stages:")
    for line in lines(os.path.join(ci, "stages.tsv")):
        name, seconds, status = line.split("\t")
        print("  %7s s  %-20s %s" % (seconds, name, "passed" if status == "0" else "FAILED (%s)" % status))
    print("build cache entries (board/cache.sh):")
    # Each entry once, in the order first used: built (and in how long) or reused, and how many uses in all.
    entries = collections.OrderedDict()
    for what, key, seconds in (line.split(" ") for line in lines(os.path.join(ci, "cache.log"))):
        built, uses = entries.get(key, (None, 0))
        entries[key] = (built if what != "built" else int(seconds), uses + 1)
    for key, (built, uses) in entries.items():
        made = "built in %d s" % built if built is not None else "reused"
        print("  %-34s %-16s %d use%s" % (key, made, uses, "" if uses == 1 else "s"))
    if not entries:
        print("  none used")
    boots = collections.Counter(lines(os.path.join(ci, "boots.log")))
    print("boots: " + (", ".join("%d × %s" % (n, machine) for machine, n in sorted(boots.items())) or "none"))
    if total > BUDGET:
        print("warning: past CI's %d minutes" % (BUDGET // 60))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
