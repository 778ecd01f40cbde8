#!/usr/bin/env bash
# The two trees the Pi build needs, from Debian 13 ("trixie") packages only, cached under $PI_DIR:
#   root/     a trixie amd64 build root: trixie's swiftlang 6.0.3 (its swift-frontend needs glibc 2.38, so it
#             does not run on bookworm itself) and the project's -dev packages, for native 6.0.3 and libgpiod 2
#             builds and for the cross build's compiler;
#   sysroot/  the arm64 headers, libraries and Swift stdlib the aarch64 binary is built against (extracted,
#             never configured: arm64 maintainer scripts cannot run here, and a sysroot needs none).
# Each is rebuilt only when its package list changes (the list is kept beside it).
set -euo pipefail
PI_DIR=${PI_DIR:?set PI_DIR}
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
SUITE=trixie

# The libraries the Package.swift system-library targets link.
DEVS="libv4l-dev libgpiod-dev libturbojpeg0-dev libdrm-dev zlib1g-dev libyuv-dev libavcodec-dev libavutil-dev"
DEVS="$DEVS libx264-dev libasound2-dev"
# libcamera (0.4.0 in trixie): the libcamera backend's shim library is built against it (Package.swift).
DEVS="$DEVS libcamera-dev"
# swiftlang does not pull libc6-dev (the link fails on Scrt1.o without it); strip for aarch64 comes from binutils.
ROOT_PACKAGES="swiftlang libc6-dev libstdc++-14-dev pkgconf binutils-aarch64-linux-gnu file ca-certificates $DEVS"
SYSROOT_PACKAGES="libc6-dev libgcc-14-dev libstdc++-14-dev swiftlang libswiftlang $DEVS"

# make_tree DIR VARIANT ARCH PACKAGES
make_tree() {
  local dir=$1 variant=$2 arch=$3 packages=$4
  local wanted="$SUITE $variant $arch $packages"
  if [ -f "$dir/.kioskcam-packages" ] && [ "$(cat "$dir/.kioskcam-packages")" = "$wanted" ]; then
    echo "pi: $dir is current"
    return
  fi
  echo "pi: making $dir ($SUITE $arch, $variant) from $MIRROR"
  local start=$SECONDS
  rm -rf "$dir" "$dir.new"
  mmdebstrap --quiet --variant="$variant" --architectures="$arch" --include="${packages// /,}" \
    "$SUITE" "$dir.new" "$MIRROR"
  printf '%s' "$wanted" > "$dir.new/.kioskcam-packages"
  mv "$dir.new" "$dir"
  echo "pi: $dir made in $((SECONDS - start)) s ($(du -sh "$dir" | cut -f1))"
}

mkdir -p "$PI_DIR"
make_tree "$PI_DIR/root" minbase amd64 "$ROOT_PACKAGES"
make_tree "$PI_DIR/sysroot" extract arm64 "$SYSROOT_PACKAGES"
# The extract variant installs no base-files: the merged-/usr links that libc's linker script and the ELF
# interpreter (/lib/ld-linux-aarch64.so.1) resolve through are made here.
for link in lib bin sbin; do
  [ -e "$PI_DIR/sysroot/$link" ] || ln -s "usr/$link" "$PI_DIR/sysroot/$link"
done
