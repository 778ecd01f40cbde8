#!/usr/bin/env bash
# make test after the release build: the board boots while the tests compile and the unit and file-format
# tests run (nothing timed runs beside the boot); then the device tests alone on the board, the board
# stopped, the front panel test (its own `make run`), and the budget report (board/virtual/test-budget.py).
# Each step's wall time goes to $KIOSKCAM_BOARD_DIR/phases.tsv for the report.
#
# usage: make-test.sh SKIP [PI_BUTTON_TESTS]
#   SKIP: the suites make test leaves to storage-test, power-cut-test and sound-test, a regex of suite IDs
#   PI_BUTTON_TESTS: make pi-test's button and lamp suite (Lines), a regex, run on the same board after the device tests
#   with the service KIOSKCAM_PI_BUTTONS names (the libgpiod 2 build) when that is set
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
skip=$1
pi_buttons=${2:-}
dir=${KIOSKCAM_BOARD_DIR:?make sets KIOSKCAM_BOARD_DIR}
board=board/virtual/board
phases=$dir/phases.tsv
mkdir -p "$dir"
rm -f "$dir/pi-button-test.log"
now() { date +%s.%N; }
# The install and release build make ran before this script, from make's own start.
printf 'install and release build\t%s\n' "$(echo "$(now) - ${KIOSKCAM_MAKE_START:-$(now)}" | bc)" > "$phases"

phase() {  # phase NAME COMMAND...: runs it, appends its wall time, returns its status
  local name=$1 started status
  shift
  started=$(now)
  "$@"
  status=$?
  printf '%s\t%s\n' "$name" "$(echo "$(now) - $started" | bc)" >> "$phases"
  return $status
}

booting=$(now)
$board start > "$dir/start.log" 2>&1 &
boot=$!
phase "test build" swift build --build-tests
built=$?
units=1
if [ $built -eq 0 ]; then
  phase "unit and file-format tests" bash -c "set -o pipefail; env -u KIOSKCAM_BOARD_DIR swift test --skip-build \
    --skip '^DeviceTests\\.BoardDeviceTests' 2>&1 | tee '$dir/unit-test.log'"
  units=$?
fi
phase "waiting for the board's boot" wait $boot
booted=$?
printf 'board boot (beside the build)\t%s\n' "$(echo "$(now) - $booting" | bc)" >> "$phases"
cat "$dir/start.log"
if [ $built -ne 0 ] || [ $booted -ne 0 ]; then $board stop; exit 1; fi

phase "device tests" bash -c "set -o pipefail; KIOSKCAM_DEVICE_TESTS=required swift test --skip-build \
  --filter '^DeviceTests\\.' --skip '$skip' 2>&1 | tee '$dir/test.log'"
devices=$?
if [ -n "${KIOSKCAM_PI_BUTTONS:-}" ] && [ -n "$pi_buttons" ]; then
  echo "The button tests of the libgpiod 2 build ($KIOSKCAM_PI_BUTTONS), on the same board:"
  phase "libgpiod 2 button tests" bash -c "set -o pipefail; KIOSKCAM_DEVICE_TESTS=required \
    KIOSKCAM_BINARY='$KIOSKCAM_PI_BUTTONS' swift test --skip-build --filter '$pi_buttons' 2>&1 \
    | tee '$dir/pi-button-test.log'"
  buttons=$?
else
  buttons=0
fi
phase "board stop" $board stop

echo "The front panel test (make run in chromium, its pull commands, Ctrl-C):"
phase "front panel test" bash -c "set -o pipefail; board/virtual/front-panel-test.py 2>&1 | tee '$dir/front-panel-test.log'"
panel=$?

printf 'make test, wall\t%s\n' "$(echo "$(now) - ${KIOSKCAM_MAKE_START:-$booting}" | bc)" >> "$phases"
board/virtual/test-budget.py "$phases" "$dir/test.log" "$dir/pi-button-test.log"
[ $units -eq 0 ] && [ $devices -eq 0 ] && [ $buttons -eq 0 ] && [ $panel -eq 0 ]
