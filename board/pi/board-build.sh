#!/usr/bin/env bash
# The service as the Pi build makes it (trixie's Swift 6.0.3, libgpiod 2.2, trixie's libraries) but for x86_64,
# so that the virtual board's button tests run it against gpio-sim: .build/pi/board-kioskcam. The guest sees
# the host's file system, so the binary names the build root's own loader and library folder by their host
# paths (DT_RPATH, which also covers the libraries' own dependencies) and runs there beside bookworm's: a copy in
# this checkout (.build/pi/board-libs), since the build root lies in the build cache under /var/cache, which the
# guest does not see (virtme-ng mounts a tmpfs of its own there).
set -euo pipefail
cd "$(dirname "$0")/../.."
export PI_DIR=$PWD/.build/pi
board/pi/roots.sh
board/pi/fresh-scratch.sh .build/pi/amd64
libs=$PI_DIR/board-libs
rm -rf "$libs"
cp -a "$PI_DIR/root/usr/lib/x86_64-linux-gnu" "$libs"
board/pi/in-root.sh swift build -c release --scratch-path .build/pi/amd64 --static-swift-stdlib --product kioskcam \
  -Xlinker --dynamic-linker="$libs/ld-linux-x86-64.so.2" -Xlinker -rpath="$libs" -Xlinker --disable-new-dtags
cp .build/pi/amd64/release/kioskcam .build/pi/board-kioskcam
echo "pi: .build/pi/board-kioskcam: $(.build/pi/board-kioskcam --version) against $(readlink -f "$libs/libgpiod.so.3" | sed 's|.*/||')"
