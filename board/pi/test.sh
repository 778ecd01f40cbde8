#!/usr/bin/env bash
# make pi-test: the aarch64 build (make pi) run under qemu-aarch64, user mode (bookworm's qemu-user-static;
# this machine has no binfmt_misc, so qemu is called by name), against the arm64 sysroot's libraries:
# the command line a technician uses on the Pi, judged by exit status and by Python's JSON parser and the
# file system, never by the service's own log; then the unit tests, cross-built the same way.
# KIOSKCAM_FUZZ_INPUTS samples the configuration fuzzer under emulation (the first N of its fixed sequence).
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
PI_DIR=$PWD/.build/pi
export PI_DIR
start=$SECONDS
failures=0
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The Pi 4's own core. QEMU's default, max, has pointer authentication, which trixie's arm64 libraries use in
# every function they call (branch protection) and which QEMU computes in software: the same tests took 1.4 to
# 3 times as long under it.
export QEMU_CPU=cortex-a72
on_pi() { qemu-aarch64-static -L "$PI_DIR/sysroot" -E LD_LIBRARY_PATH=/usr/libexec/swift/lib/swift/linux "$@"; }
pass() { echo "pi-test: ok    $1"; }
fail() { echo "pi-test: FAIL  $1"; failures=$((failures + 1)); }
check() { local name=$1; shift; if "$@"; then pass "$name"; else fail "$name"; fi; }
not() { ! "$@"; }

kioskcam=$PI_DIR/kioskcam
[ -x "$kioskcam" ] || { echo "pi-test: no $kioskcam (make pi builds it)" >&2; exit 1; }
file -b "$kioskcam" | grep -q "ARM aarch64" || { echo "pi-test: $kioskcam is not an aarch64 binary" >&2; exit 1; }

# --version: the architecture, the compiler and the GPIO library this binary was built with and runs with.
version=$(on_pi "$kioskcam" --version)
check "--version: $version" grep -q "^kioskcam .* (aarch64, Swift 6.0, libgpiod 2\." <<< "$version"

# check-config on the shipped file, and on a broken one: exit 78 (EX_CONFIG) naming FILE:LINE.
check "check-config on the shipped configuration exits 0" \
  on_pi "$kioskcam" check-config --config rootfs-overlay/etc/kioskcam/kioskcam.conf
printf '[camera]\n# a comment\nsize = big\n' > "$work/broken.conf"
on_pi "$kioskcam" check-config --config "$work/broken.conf" > "$work/out" 2> "$work/err"
status=$?
check "check-config on a broken file exits 78 (got $status)" test "$status" -eq 78
check "check-config names $work/broken.conf:3" grep -q "$work/broken.conf:3" "$work/err"

# probe --json: valid JSON, and the H.264 encoder verdict from trixie's arm64 libx264 (a real encode).
on_pi "$kioskcam" probe --json --config rootfs-overlay/etc/kioskcam/kioskcam.conf > "$work/probe.json" 2> "$work/err"
check "probe --json is JSON with an H.264 encoder verdict that passed" python3 - "$work/probe.json" <<'PY'
import json, sys
capabilities = {c["name"]: c for c in json.load(open(sys.argv[1]))["capabilities"]}
encoder = capabilities["h264-encoder"]
print("pi-test:       h264-encoder:", encoder["evidence"][:120])
sys.exit(0 if encoder["passed"] and "libx264" in encoder["evidence"] else 1)
PY
# The libcamera backend's shim, beside kioskcam as make pi leaves it: it loads trixie's libcamera 0.4.0, which
# lists no camera here (issue 40).
check "probe --json: libcamera 0.4 through the shim beside kioskcam, no camera" python3 - "$work/probe.json" <<'PY'
import json, sys
libcamera = json.load(open(sys.argv[1]))["libcamera"]
print("pi-test:       libcamera:", libcamera)
sys.exit(0 if libcamera.get("version", "").startswith("v0.4.") and libcamera["cameras"] == []
         and libcamera["library"].endswith("/.build/pi/libkioskcam-libcamera.so") else 1)
PY
# A configuration that asks for libcamera's camera where there is none: run stops with 69 (EX_UNAVAILABLE),
# naming libcamera's own answer.
sed 's/^backend = v4l2$/backend = libcamera/' rootfs-overlay/etc/kioskcam/kioskcam.conf > "$work/libcamera.conf"
check "the libcamera configuration differs from the shipped one" \
  not cmp -s rootfs-overlay/etc/kioskcam/kioskcam.conf "$work/libcamera.conf"
# (A host with a camera libcamera drives would start the kiosk: the timeout ends it, and the check fails.)
timeout 60 qemu-aarch64-static -L "$PI_DIR/sysroot" -E LD_LIBRARY_PATH=/usr/libexec/swift/lib/swift/linux \
  "$kioskcam" run --config "$work/libcamera.conf" > "$work/out" 2> "$work/err"
status=$?
check "run with backend = libcamera and no camera exits 69 (got $status)" test "$status" -eq 69
check "run names libcamera's answer for still-camera: $(grep -m1 still-camera "$work/err")" \
  grep -q "still-camera.*libcamera v0\.4\.[0-9]*.*lists no camera" "$work/err"

# roll list --json on a roll made here: a still and a movie by ffmpeg, and a hidden partial that is not listed.
mkdir -p "$work/roll/DCIM/100KIOSK"
ffmpeg -v error -f lavfi -i testsrc=size=320x240 -frames:v 1 "$work/roll/DCIM/100KIOSK/IMG_0001.JPG"
ffmpeg -v error -f lavfi -i testsrc=size=320x240:rate=10 -t 1 -c:v mjpeg "$work/roll/DCIM/100KIOSK/IMG_0002.MOV"
: > "$work/roll/DCIM/100KIOSK/.rec-1234.MOV"
printf '[roll]\npath = %s\n' "$work/roll" > "$work/roll.conf"
on_pi "$kioskcam" roll list --json --config "$work/roll.conf" > "$work/roll.json" 2> "$work/err"
check "roll list --json lists the roll's two files with their sizes" python3 - "$work/roll.json" "$work/roll" <<'PY'
import json, os, sys
listed = {item["file"]: item["bytes"] for item in json.load(open(sys.argv[1]))}
wanted = {name: os.path.getsize(os.path.join(sys.argv[2], name))
          for name in ("DCIM/100KIOSK/IMG_0001.JPG", "DCIM/100KIOSK/IMG_0002.MOV")}
print("pi-test:       listed", listed)
sys.exit(0 if listed == wanted else 1)
PY
echo "pi-test: the command line took $((SECONDS - start)) s under qemu-aarch64"

# The unit tests (make check's, without the board's device tests), cross-built for aarch64 (optimised, with
# testing enabled: board/pi/build.sh).
tests=$PI_DIR/arm64-tests/aarch64-unknown-linux-gnu/release/kioskcamPackageTests.xctest
if [ -x "$tests" ]; then
  unit_start=$SECONDS
  # Plain text: swift-testing colours its lines even into a pipe.
  KIOSKCAM_FUZZ_INPUTS=${KIOSKCAM_FUZZ_INPUTS:-5000} on_pi "$tests" --testing-library swift-testing \
    --skip '^DeviceTests\.BoardDeviceTests' 2>&1 | sed 's/\x1b\[[0-9;]*m//g' > "$PI_DIR/pi-test-unit.log"
  grep -E "^✘|Test run with" "$PI_DIR/pi-test-unit.log"
  check "unit tests under qemu-aarch64 ($((SECONDS - unit_start)) s)" grep -q "^✔ Test run with [0-9]* tests passed" "$PI_DIR/pi-test-unit.log"
else
  fail "no unit tests at $tests (make pi-test builds them)"
fi

echo "pi-test: $failures failed, $((SECONDS - start)) s in all"
[ "$failures" -eq 0 ]
