#!/usr/bin/python3
"""make test's budget report: the total, each step's wall time, and the twelve slowest tests.

usage: test-budget.py PHASES.tsv SWIFT-TEST-LOG...

PHASES.tsv holds a line a step, "name<TAB>seconds", written by make-test.sh; a step run beside another (the
board's boot beside the build) is marked so and left out of the sum; a "wall" line is the whole run's time
from make's start, the total when it is there (the sum of the steps otherwise). The logs are `swift test` output, whose
"Test NAME passed after S seconds." lines give each test's time. Past 20 minutes a warning line says so: a
warning, never a failure, because times on these shared machines are noisy.
"""

import re
import sys

BUDGET = 20 * 60
RESULT = re.compile(r"\bTest (\S+)(?: with \d+ test cases?)? (?:passed|failed) after ([0-9.]+) seconds")


def minutes(seconds):
    return "%d min %02d s" % (seconds // 60, seconds % 60)


def main(argv):
    if len(argv) < 2:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 64
    steps = []
    with open(argv[1]) as f:
        for line in f:
            name, _, seconds = line.rstrip("\n").partition("\t")
            if seconds:
                steps.append((name, float(seconds)))
    tests = []
    for path in argv[2:]:
        try:
            with open(path, errors="replace") as f:
                for line in f:
                    found = RESULT.search(line)
                    if found and "Test run with" not in line:
                        tests.append((float(found.group(2)), found.group(1)))
        except FileNotFoundError:
            pass
    walls = [seconds for name, seconds in steps if name.endswith(", wall")]
    steps = [(name, seconds) for name, seconds in steps if not name.endswith(", wall")]
    total = walls[-1] if walls else sum(seconds for name, seconds in steps if "beside" not in name)
    print("make test's budget: %s in all (%d s)" % (minutes(total), total))
    for name, seconds in steps:
        print("  %7.0f s  %s" % (seconds, name))
    print("the twelve slowest tests:")
    for seconds, name in sorted(tests, reverse=True)[:12]:
        print("  %7.1f s  %s" % (seconds, name))
    if total > BUDGET:
        print("warning: make test took %s, past its %d minutes" % (minutes(total), BUDGET // 60))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
