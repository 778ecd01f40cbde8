# kioskcam: `make run` boots the virtual board and runs the service on it; `make test` runs every test.
# Both install what they need first (Debian packages as root, virtme-ng from PyPI).

SHELL := /bin/bash
export PATH := $(PATH):/opt/swift/usr/bin

BOARD_DIR ?= $(CURDIR)/.build/board
export KIOSKCAM_BOARD_DIR := $(BOARD_DIR)
BOARD := board/virtual/board
SHARE := $(BOARD_DIR)/share
KIOSKCAM := $(CURDIR)/.build/release/kioskcam
export KIOSKCAM_BINARY := $(KIOSKCAM)
# When make started: make test's budget report counts the installs and the build from here.
MAKE_START := $(shell date +%s.%N)

# Build: the C libraries (libv4l2, libgpiod, TurboJPEG, libdrm), and libyuv for the preview. Board: QEMU, Debian's kernel and its source (for gpio-sim), the drivers' tools.
# Tests: the peers that check our files (exiftool, jpeginfo, djpeg), the unit (systemd-analyze), the scripts
# (shellcheck), the board's Python (pyflakes3) and the sshd drop-in (sshd, rrsync). Bench: the peers it measures against (cjpeg, ffmpeg, libyuv).
# Overlay: the console font it draws with (console-setup-linux), read at run time, and zlib to gunzip it.
# Movies: libx264 for H.264, libavcodec for their AAC sound and review's H.264 decoding, and Debian's chromium,
# which plays them in the tests as a browser would (and drives the front panel in the front panel test).
# libcamera-dev (0.0.3): the libcamera backend's shim library is built against it; libcamera-tools: cam, libcamera's
# own view of the board's webcam in the device tests.
DEBIAN_PACKAGES := pkg-config libv4l-dev libgpiod-dev libturbojpeg0-dev libdrm-dev \
  qemu-system-x86 linux-image-amd64 linux-headers-amd64 linux-source-6.1 busybox-static \
  v4l-utils gpiod libdrm-tests socat xz-utils bc flex bison libelf-dev kmod make gcc \
  libimage-exiftool-perl jpeginfo libjpeg-turbo-progs ffmpeg \
  systemd shellcheck pyflakes3 openssh-server rsync \
  libyuv-dev zlib1g-dev console-setup-linux libavcodec-dev libavutil-dev libx264-dev chromium \
  libasound2-dev alsa-utils libcamera-dev libcamera-tools \
  dmsetup e2fsprogs dosfstools mtools

# The device tests' tiers are the suites nested in BoardDeviceTests (Tests/DeviceTests/BoardDeviceTests.swift), never
# lists of test names, so a renamed test stays in its tier. make test leaves out the long ones: the card's that only
# make storage-test runs (minutes each on the emulated board; make test runs a sample of each kind: the vfat roll and
# failing still, the power cut replayed at two points, the failing and pulled card), the board's power cut (make
# power-cut-test) and the A/V test (make sound-test: ~75 s of a loaded board, the beeps judged to a frame; make test
# has the microphone pulled mid-recording, about 20 s).
DEVICE_SUITE := ^DeviceTests\.BoardDeviceTests
LONG_TESTS := $(DEVICE_SUITE)/(Storage/(Long|BoardPowerCut)|Sound/Long)/
STORAGE_TESTS := $(DEVICE_SUITE)/Storage/
POWER_CUT_TESTS := $(DEVICE_SUITE)/Storage/BoardPowerCut/
SOUND_TESTS := $(DEVICE_SUITE)/Sound/

# The Pi build's host tools: mmdebstrap makes the trixie build root and arm64 sysroot, qemu-user-static runs the
# aarch64 binary and its tests (no binfmt_misc here: called by name); patchelf drops the libcamera shim's needless
# libswiftCore.so.
PI_PACKAGES := mmdebstrap qemu-user-static file binutils util-linux ffmpeg python3 patchelf
# make pi-image-root: trixie's first stage unpacked here, configured in an emulated aarch64 machine.
# make pi-image: its file systems are made from folders (mksquashfs, mke2fs -d, mtools), the card by sfdisk.
PI_IMAGE_PACKAGES := debootstrap qemu-system-arm qemu-user-static e2fsprogs xz-utils cpio gzip curl \
  squashfs-tools dosfstools mtools fdisk
# make deb: debhelper (and dpkg-dev) builds the packages, lintian checks them; patchelf drops the amd64 shim's
# libswiftCore.so and its runpath into the toolchain. (The arm64 packages are built in a trixie root of their own.)
DEB_PACKAGES := debhelper dpkg-dev lintian patchelf
# make pi-test's board step: the device tests that drive buttons and lamps on gpio-sim, run with the libgpiod 2 build.
# PI_BUTTONS=on-test-board (what .ci/run sets): make test runs these on the board it booted anyway, with the libgpiod 2
# build, and make pi-test leaves them out; by default make pi-test boots a board of its own for them.
PI_BUTTONS ?= own-board
PI_BUTTON_TESTS := $(DEVICE_SUITE)/Lines/

.PHONY: all deps pi-deps build release deb deb-amd64 deb-arm64 libcamera-shim docs-check check test storage-test power-cut-test sound-test panel-test unit-test device-test run screenshot board-start board-stop board-lint bench pi pi-test pi-image-root pi-image pi-image-test pi-modules pi-board clean cache-clean cache-test

all: build

## deps: install whatever is missing; quiet and quick when everything is there.
deps:
	@missing=$$(for p in $(DEBIAN_PACKAGES); do dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q 'install ok installed' || echo $$p; done); \
	if [ -n "$$missing" ]; then \
	  echo "Installing Debian packages:" $$missing; \
	  if [ "$$(id -u)" -ne 0 ]; then echo "run as root, or install these yourself" >&2; exit 1; fi; \
	  apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $$missing; \
	fi
	@# Kernel headers must match the kernel the board boots, not the one this host runs.
	@kver=$$(ls /boot/vmlinuz-* | sed 's|/boot/vmlinuz-||' | sort -V | tail -1); \
	if [ ! -d /lib/modules/$$kver/build ]; then \
	  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends linux-headers-$$kver; fi
	@# sshd -t refuses to check a configuration without its privilege separation folder (ssh.service makes it).
	@[ -d /run/sshd ] || install -d -m 0755 /run/sshd 2>/dev/null || echo "no /run/sshd (run make as root): the sshd drop-in test will fail" >&2
	@command -v vng >/dev/null || { echo "Installing virtme-ng"; pip install -q virtme-ng; }
	@command -v swift >/dev/null || { echo "Swift 6 is needed at /opt/swift or on PATH" >&2; exit 1; }

## pi-deps: the Pi build's host tools, installed when missing (as deps does).
pi-deps:
	@missing=$$(for p in $(PI_PACKAGES); do dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q 'install ok installed' || echo $$p; done); \
	if [ -n "$$missing" ]; then \
	  echo "Installing Debian packages:" $$missing; \
	  if [ "$$(id -u)" -ne 0 ]; then echo "run as root, or install these yourself" >&2; exit 1; fi; \
	  apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $$missing; \
	fi

build: deps
	swift build

## release: the binary the board runs (optimised: the guest runs under software emulation), and beside it the
## libcamera backend's shim, libkioskcam-libcamera.so, where kioskcam looks for it first (docs/cameras.md): a
## product of its own, which building the kioskcam product alone leaves out. Swift's standard library is linked
## in, so that the binary the tests run is the one make deb packages (no Debian 12 package holds Swift 6's).
release: deps
	swift build -c release --product kioskcam --static-swift-stdlib
	swift build -c release --product kioskcam-libcamera

## deb: the Debian packages, kioskcam and kioskcam-libcamera, for amd64 (Debian 12, from make release) and arm64
## (trixie, from make pi), built by debhelper from debian/ and checked by lintian, into .build/deb/
## (board/deb/build.sh). Prints each package's size, Depends and Recommends.
deb: deps release pi
	@$(MAKE) --no-print-directory pi-deps PI_PACKAGES="$(DEB_PACKAGES)"
	board/deb/build.sh

## deb-amd64: make deb's amd64 packages alone: make test installs, upgrades, removes and purges kioskcam's on the
## board (Tests/DeviceTests/PackageDeviceTests.swift).
deb-amd64: deps release
	@$(MAKE) --no-print-directory pi-deps PI_PACKAGES="$(DEB_PACKAGES)"
	DEB_ARCHES=amd64 board/deb/build.sh

## deb-arm64: make deb's arm64 packages alone: the SD-card image installs kioskcam's (board/pi/image-package.sh).
deb-arm64: pi
	@$(MAKE) --no-print-directory pi-deps PI_PACKAGES="$(DEB_PACKAGES)"
	DEB_ARCHES=arm64 board/deb/build.sh

board-start: deps
	$(BOARD) start

board-stop:
	-$(BOARD) stop

## board-lint: pyflakes on the board's Python (the kioskboard package, its entry point, the guest's scripts);
## anything it reports fails.
board-lint: deps
	pyflakes3 board/virtual/kioskboard board/virtual/board board/virtual/guest-agent.py board/virtual/sandbox-probe.py \
	  board/virtual/replay-log-writes.py board/virtual/guest-roll-check.py board/virtual/test-budget.py \
	  board/virtual/front-panel-test.py board/virtual/play-movie.py board/virtual/webcam.py board/virtual/guest-beeps.py \
	  board/pi/image-test.py board/debian-index.py .ci/budget.py docs/check-module-table.py

## cache-test: the build cache's own rules (board/cache-test.sh, on a throwaway cache: reuse, a new key for a
## changed input, a damaged entry found and made again, a failed maker leaving nothing; seconds).
cache-test:
	board/cache-test.sh

## docs-check: docs/architecture.md's module tables against Package.swift: every target in a row, each row's
## dependencies exactly the target's (docs/check-module-table.py).
docs-check: deps
	@mkdir -p .build
	swift package dump-package > .build/package.json
	docs/check-module-table.py .build/package.json docs/architecture.md

## check: the tiers that need no board, warm in about a minute: the board's Python and the scripts linted, the
## build cache's own test, architecture.md's module tables against Package.swift, the build, the unit tests and the file-format tests with their real peers (exiftool, jpeginfo, ffprobe,
## ffmpeg, Chromium, sshd, shellcheck). Run it after every change; make test before you land one.
check: deps board-lint cache-test docs-check
	swift build --build-tests
	env -u KIOSKCAM_BOARD_DIR swift test --skip-build --skip '^DeviceTests\.BoardDeviceTests'

## test: every test, one boot (board/virtual/make-test.sh): the board boots while the tests compile and make
## check's tests run, then the device tests alone on the board, then the front panel test (make panel-test);
## last the budget report (the total, each step, the slowest twelve, a warning past 20 minutes). With
## PI_BUTTONS=on-test-board, make pi-test's button tests run on the same board after the device tests, with the
## libgpiod 2 build (make pi-board).
test: deps board-lint cache-test docs-check release deb-amd64 $(if $(filter on-test-board,$(PI_BUTTONS)),pi-board)
	@KIOSKCAM_MAKE_START=$(MAKE_START) \
	  KIOSKCAM_PI_BUTTONS=$(if $(filter on-test-board,$(PI_BUTTONS)),$(CURDIR)/.build/pi/board-kioskcam) \
	  board/virtual/make-test.sh '$(LONG_TESTS)' '$(PI_BUTTON_TESTS)'

## pi-board: the service as the Pi build makes it (trixie's Swift 6.0.3, libgpiod 2.2) but for x86_64, for the
## board's button tests: .build/pi/board-kioskcam (board/pi/board-build.sh).
pi-board: pi-deps
	board/pi/board-build.sh

## storage-test: the card's tests, long ones included (board/virtual/guest-card.sh; the Storage suite): stills
## and a movie on ext4 and vfat, a failing and a slow card (dm-flakey, dm-delay), and the power cut replayed on
## the host at every flush, FUA and mark of a session and 100 random points, on ext4 and vfat (make test runs a
## sample of each kind). The board's own power cut, ten times, is make power-cut-test's.
storage-test: deps board-lint release
	KIOSKCAM_STORAGE_TESTS=full board/virtual/board-tier.sh storage-test.log '$(STORAGE_TESTS)' '$(POWER_CUT_TESTS)'

## power-cut-test: QEMU killed under the appliance ten times (after a press, mid-recording; ext4 and vfat), each
## next boot's fsck and recovery judged (about half an hour).
power-cut-test: deps board-lint release
	KIOSKCAM_STORAGE_TESTS=full board/virtual/board-tier.sh power-cut-test.log '$(POWER_CUT_TESTS)'

## sound-test: the microphone on the board (snd-aloop): five beeps played into the loopback as vivid's pattern
## switches; the movie's AAC-LC stream at 1 kHz, its length the pictures', each beep in step (offsets printed).
sound-test: deps board-lint release
	board/virtual/board-tier.sh sound-test.log '$(SOUND_TESTS)'

## panel-test: `make run` tried as a newcomer would, in chromium and with the sftp, scp and rsync commands it
## prints (board/virtual/front-panel-test.py: it boots the board and Ctrl-Cs it). `make test` runs it too, after
## the device tests, with the machine otherwise idle (its clicks are timed).
panel-test: deps board-lint release
	@mkdir -p $(BOARD_DIR); set -o pipefail; board/virtual/front-panel-test.py 2>&1 | tee $(BOARD_DIR)/front-panel-test.log

## unit-test: the tiers that need no board (device tests skip themselves); make check lints first.
unit-test: deps
	env -u KIOSKCAM_BOARD_DIR swift test

## bench: frame to durable JPEG per stage (copy, planes, encode, EXIF, write, fsync) at three sizes from
## YUYV and NV12, beside cjpeg and ffmpeg's MJPEG encoder on the same frames; then the preview's cost per
## frame beside memcpy, libyuv and ffmpeg; and, when the board is up, the service's peak memory on it.
## Prints ratios, never fails on time. `make bench BENCH=preview` (or `BENCH=review`, `BENCH=zoom`) runs only that part.
bench: deps release
	swift build -c release --product kioskcam-bench
	.build/release/kioskcam-bench $(BENCH)

## run: the appliance on the virtual board (board/virtual/kioskboard/appliance.py): the shipped unit under the
## guest's systemd, sshd for the camera account with a key kept in $(BOARD_DIR)/ssh/, the front panel on
## 127.0.0.1, the commands that pull the roll; then the service's journal. Ctrl-C stops all it started; while
## one runs, another says so and leaves it be.
run: deps release
	@$(BOARD) appliance $(KIOSKCAM)

screenshot:
	$(BOARD) screendump $(BOARD_DIR)/screen.png
	@echo "$(BOARD_DIR)/screen.png"

## libcamera-shim: the libcamera backend's shim alone, built by the C++ compiler against pkg-config's libcamera, on
## a machine without Swift: a Pi on Raspberry Pi OS, whose libcamera is not Debian's (docs/cameras.md). Made:
## .build/libcamera-shim/libkioskcam-libcamera.so, to put beside kioskcam or in /usr/lib/kioskcam.
libcamera-shim:
	mkdir -p .build/libcamera-shim
	$(CXX) -std=c++17 -O2 -shared -fPIC -ISources/LibcameraShim/include -o .build/libcamera-shim/libkioskcam-libcamera.so \
	  Sources/LibcameraShim/*.cpp $$(pkg-config --cflags --libs libcamera)

## pi: kioskcam for a Raspberry Pi (aarch64, Debian 13 / Raspberry Pi OS trixie), from Debian packages only: a
## trixie build root and an arm64 sysroot (entries of the build cache, below, linked from .build/pi),
## trixie's Swift 6.0.3 and libgpiod 2.2; static Swift runtime, stripped (board/pi/build.sh). Prints its time,
## size and the packages it needs on the Pi.
pi: pi-deps
	board/pi/build.sh

## pi-image-root: the Pi image's root file system: Debian 13 arm64 with systemd, sshd, the kernel and kioskcam's
## libraries, its maintainer scripts run inside qemu-system-aarch64 (TCG; this host has no binfmt_misc), as
## .build/pi/image/root.tar. About 20 minutes, then reused from the build cache until this script, its package list
## or a resolved package version changes (board/pi/image-root.sh).
pi-image-root:
	@$(MAKE) --no-print-directory pi-deps PI_PACKAGES="$(PI_IMAGE_PACKAGES)"
	PI_DIR=$(CURDIR)/.build/pi board/pi/image-root.sh

## pi-image: the SD-card image for a Raspberry Pi 4 (or 3, Zero 2 W): boot (vfat), read-only root (squashfs),
## state and roll (ext4) partitions, as .build/pi/kioskcam-pi.img; `make pi-image PI_ROLL=vfat`: the roll is
## FAT32, made at the first boot, as .build/pi/kioskcam-pi-vfat.img (board/pi/image.sh; docs/pi-image.md). Its
## root has the arm64 package installed, in an emulated machine (board/pi/image-package.sh).
pi-image: deb-arm64
	@$(MAKE) --no-print-directory pi-deps PI_PACKAGES="$(PI_IMAGE_PACKAGES)"
	board/pi/image.sh

## pi-image-test: the arm64 package installed, upgraded, removed and purged by dpkg in the image's root in an
## emulated machine (board/pi/package-test.sh); then boots both images in turn under qemu-system-aarch64 -M virt
## with vivid and gpio-sim (built for the image's arm64 kernel): kioskcam under systemd, a still from the button
## pulled by sftp, a power cut and the next boot's recovery, the root unchanged (board/pi/image-test.py); before
## them, the vfat roll's maker on files: the cases the boots do not reach (board/pi/make-vfat-roll-test.sh).
pi-image-test: deb-arm64 deps
	@$(MAKE) --no-print-directory pi-deps PI_PACKAGES="$(PI_IMAGE_PACKAGES)"
	PI_ROLL=ext4 board/pi/image.sh
	PI_ROLL=vfat board/pi/image.sh
	PI_DIR=$(CURDIR)/.build/pi board/pi/package-test.sh .build/deb/kioskcam_*_arm64.deb
	PI_DIR=$(CURDIR)/.build/pi board/pi/build-modules.sh -k $(CURDIR)/.build/pi/image/kernel/usr/lib/modules
	board/pi/make-vfat-roll-test.sh
	board/pi/image-test.py ext4
	board/pi/image-test.py vfat

## pi-modules: the kernel modules the Pi's image needs that trixie's arm64 kernel does not build (gpio-sim.ko),
## cross-built out of tree in the build root for that kernel (its headers, so vermagic and modversions CRCs are
## its own), into .build/pi/modules, from the build cache (board/pi/build-modules.sh). The kernel is the one trixie's
## linux-image-arm64 names, or PI_KERNEL=RELEASE, or PI_KERNEL=<a lib/modules folder>.
pi-modules: pi-deps
	PI_DIR=$(CURDIR)/.build/pi board/pi/build-modules.sh $(if $(PI_KERNEL),-k $(PI_KERNEL))

## pi-test: the aarch64 binary and unit tests under qemu-aarch64 (board/pi/test.sh), then the board's button
## and lamp tests on gpio-sim with the service built by 6.0.3 against libgpiod 2 (board/pi/board-build.sh), on a
## board of their own; with PI_BUTTONS=on-test-board make test ran them on its board, and they are left out here.
pi-test: pi-deps deps board-lint
	PI_TESTS=1 board/pi/build.sh
	board/pi/test.sh
ifeq ($(PI_BUTTONS),on-test-board)
	@echo "pi-test: the button tests of the libgpiod 2 build are left to make test's board (PI_BUTTONS=on-test-board)"
else
	board/pi/board-build.sh
	KIOSKCAM_BINARY=$(CURDIR)/.build/pi/board-kioskcam board/virtual/board-tier.sh pi-button-test.log '$(PI_BUTTON_TESTS)'
endif

clean:
	-$(BOARD) stop
	rm -rf .build

## cache-clean: empties the build cache outside the checkout ($$KIOSKCAM_CACHE, /var/cache/kioskcam by default;
## board/cache.sh): the trixie build root and sysroot, the Pi image's configured root, the kernel modules, the
## fetched packages and indexes, each an entry keyed by a hash of everything that makes it. Swift's build folders
## are never in it (make clean empties those).
cache-clean:
	rm -rf "$${KIOSKCAM_CACHE:-/var/cache/kioskcam}"
