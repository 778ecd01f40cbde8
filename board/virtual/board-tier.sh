#!/usr/bin/env bash
# One tier of device tests on a board of its own (make storage-test, power-cut-test, sound-test and pi-test's
# button tests): the board boots while the tests compile, the tests run alone on it, the board stops whatever
# they did, and the run's time on the board is printed. (make test's own run, with its unit tests beside the
# boot and its budget, is make-test.sh.)
#
# usage: board-tier.sh LOG FILTER [SKIP]
#   LOG: the run's log, a name in $KIOSKCAM_BOARD_DIR
#   FILTER, SKIP: swift test's --filter and --skip, the Makefile's suite patterns
# The environment passes through to the tests: KIOSKCAM_BINARY (the service tested), KIOSKCAM_STORAGE_TESTS.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
log=$1
filter=$2
skip=${3:-^$}
dir=${KIOSKCAM_BOARD_DIR:?make sets KIOSKCAM_BOARD_DIR}
board=board/virtual/board
mkdir -p "$dir"

$board start > "$dir/start.log" 2>&1 &
boot=$!
swift build --build-tests
built=$?
wait $boot
booted=$?
cat "$dir/start.log"
if [ $built -ne 0 ] || [ $booted -ne 0 ]; then
  $board stop
  exit 1
fi

start=$(date +%s)
KIOSKCAM_DEVICE_TESTS=required swift test --skip-build --filter "$filter" --skip "$skip" 2>&1 | tee "$dir/$log"
status=$?
$board stop
echo "$log: $(($(date +%s) - start)) s on the board"
exit $status
