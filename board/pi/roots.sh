#!/usr/bin/env bash
# The two trees the Pi build needs, from Debian 13 ("trixie") packages only, linked from $PI_DIR:
#   root/     a trixie amd64 build root: trixie's swiftlang 6.0.3 (its swift-frontend needs glibc 2.38, so it
#             does not run on bookworm itself) and the project's -dev packages, for native 6.0.3 and libgpiod 2
#             builds and for the cross build's compiler;
#   sysroot/  the arm64 headers, libraries and Swift stdlib the aarch64 binary is built against (extracted,
#             never configured: arm64 maintainer scripts cannot run here, and a sysroot needs none).
# Each is an entry of the build cache (board/cache.sh), keyed by this script, its package list and the exact
# versions of those packages and everything they pull, as trixie's index resolves them now: a point release or
# an edit here makes it again. $PI_DIR/root and $PI_DIR/sysroot are links to the entries, which are only read:
# in-root.sh lays an overlay of the checkout's own over the root.
set -euo pipefail
PI_DIR=${PI_DIR:?set PI_DIR}
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
export DEBIAN_MIRROR=$MIRROR
SUITE=trixie
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=board/cache.sh
. "$here/../cache.sh"

# The libraries the Package.swift system-library targets link; libcamera (0.4.0 in trixie): the libcamera
# backend's shim library is built against it (Package.swift).
LINKED_DEVS="libv4l-dev libgpiod-dev libturbojpeg0-dev libdrm-dev zlib1g-dev libyuv-dev libx264-dev libasound2-dev"
LINKED_DEVS="$LINKED_DEVS libcamera-dev"
# libavcodec and libavutil are opened at run time, not linked (Sources/CAVCodec/shim.h): headers only.
DEVS="$LINKED_DEVS libavcodec-dev libavutil-dev"
# The Pi image's out-of-tree kernel modules (build-modules.sh) are cross-built here by the arm64 kernel's own
# compiler (gcc 14) with the amd64 kbuild tools of that kernel's ABI: the one trixie's linux-image-arm64 names.
kernel=$("$here/../debian-index.py" --suite "$SUITE" --arch arm64 field linux-image-arm64 Depends \
  | sed -n 's/^linux-image-\([^ ,]*\)-arm64 .*/\1/p')
[ -n "$kernel" ] || { echo "pi: no linux-image-arm64 in $SUITE's arm64 index" >&2; exit 1; }
KERNEL_TOOLS="gcc-14-aarch64-linux-gnu make kmod xz-utils linux-kbuild-$kernel"
# swiftlang does not pull libc6-dev (the link fails on Scrt1.o without it); strip for aarch64 comes from binutils.
ROOT_PACKAGES="swiftlang libc6-dev libstdc++-14-dev pkgconf binutils-aarch64-linux-gnu file ca-certificates $DEVS $KERNEL_TOOLS"
SYSROOT_PACKAGES="libc6-dev libgcc-14-dev libstdc++-14-dev swiftlang libswiftlang $DEVS"
# make deb's arm64 packages (board/deb/build.sh): debhelper and lintian, with the linked libraries installed for
# arm64 beside them (multiarch), so that dpkg-shlibdeps finds each library's package and its symbols file in a
# dpkg database, as a cross build on Debian does; binutils-aarch64-linux-gnu for its objdump and dh_strip.
DEBROOT_PACKAGES="debhelper lintian binutils-aarch64-linux-gnu"
DEBROOT_FOREIGN="libstdc++-14-dev $LINKED_DEVS"

# make_tree NAME VARIANT ARCH PACKAGES [FOREIGN_PACKAGES]: the tree as $PI_DIR/NAME, a link to its cache entry;
# FOREIGN_PACKAGES are installed for arm64 beside ARCH's.
make_tree() {
  local name=$1 variant=$2 arch=$3 packages=$4 foreign=${5:-} required='' include
  # A minbase root also holds every Essential and required package; an extracted tree only what is named.
  [ "$variant" = extract ] || required=--required
  local inputs=("file:$here/roots.sh" "text:$SUITE $variant $arch $packages"
    "cmd:board/debian-index.py --suite $SUITE --arch $arch versions $required $packages" "cmd:dpkg-query -W mmdebstrap")
  include=$packages
  if [ -n "$foreign" ]; then
    inputs+=("text:arm64 $foreign" "cmd:board/debian-index.py --suite $SUITE --arch arm64 versions $foreign")
    include+=" ${foreign// /:arm64 }:arm64"
  fi
  cache_key "pi-$name" "${inputs[@]}"
  TREE_VARIANT=$variant TREE_ARCH=$arch${foreign:+,arm64} TREE_PACKAGES=$include cache_use make_one_tree
  [ ! -e "$PI_DIR/$name" ] || [ -L "$PI_DIR/$name" ] || rm -rf "${PI_DIR:?}/$name"
  ln -sfn "$CACHE_DIR" "$PI_DIR/$name"
}

make_one_tree() {
  local dir=$1
  echo "pi: making $CACHE_KEY ($SUITE $TREE_ARCH, $TREE_VARIANT) from $MIRROR"
  mmdebstrap --quiet --variant="$TREE_VARIANT" --architectures="$TREE_ARCH" --include="${TREE_PACKAGES// /,}" \
    "$SUITE" "$dir" "$MIRROR" || return 1
  if [ "$TREE_VARIANT" = extract ]; then
    # The extract variant installs no base-files: the merged-/usr links that libc's linker script and the ELF
    # interpreter (/lib/ld-linux-aarch64.so.1) resolve through are made here.
    for link in lib bin sbin; do
      [ -e "$dir/$link" ] || ln -s "usr/$link" "$dir/$link"
    done
    # swift-driver reads an SDK's version from SDKSettings.json (a Darwin SDK's file) and warns on every compile
    # without one: a Linux sysroot has no version to give, so it is given an empty one.
    echo '{ "Version": "0.0", "CanonicalName": "debian-trixie-arm64" }' > "$dir/SDKSettings.json"
  fi
  echo "pi: $CACHE_KEY is $(du -sh "$dir" | cut -f1)"
}

mkdir -p "$PI_DIR"
make_tree root minbase amd64 "$ROOT_PACKAGES"
make_tree sysroot extract arm64 "$SYSROOT_PACKAGES"
[ -z "${PI_DEBROOT:-}" ] || make_tree debroot minbase amd64 "$DEBROOT_PACKAGES" "$DEBROOT_FOREIGN"
