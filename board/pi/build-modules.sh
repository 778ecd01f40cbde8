#!/usr/bin/env bash
# The kernel modules the Pi's image needs and Debian does not build (trixie's arm64 kernel has
# `# CONFIG_GPIO_SIM is not set`), built out of tree for exactly the kernel the image installs. The virtual
# board's builder and recipes do the work (board/virtual/build-modules.sh, board/virtual/modules/*.sh); this
# gives them that kernel, cross-compiled in the trixie build root: the kernel's own arm64 headers (its .config
# and Module.symvers, so vermagic and every modversions CRC are the kernel's), the source files from
# linux-source of the same version, trixie's aarch64 gcc 14 (the kernel's compiler) and the amd64 fixdep and
# modpost of linux-kbuild (this host runs no arm64 program).
#
# usage: build-modules.sh [-k RELEASE|MODULES_DIR] [RECIPE...]
#   -k 6.12.117+deb13-arm64   that kernel release
#   -k DIR                    the release whose modules are in DIR, a lib/modules folder holding one release
#                             (e.g. .build/pi/image/kernel/usr/lib/modules) or one release's folder; the built
#                             modules' vermagic is then checked against one of its modules too
#   neither                   the release linux-image-arm64 depends on in trixie's index now (what a new image gets)
# RECIPE: names in board/virtual/modules (gpio-sim by default: the board's buttons and lamps).
# Made: $PI_DIR/modules/NAME.ko (PI_DIR defaults to .build/pi), copied from an entry of the build cache
# (board/cache.sh) keyed by these scripts, the recipes, the kernel release and its headers' version in trixie's
# index, and the build root's entry. The headers and source packages are fetched by the index's hashes
# (board/debian-index.py) and kept in the cache's debs/.
set -euo pipefail
die() { echo "pi-modules: $*" >&2; exit 1; }
cd "$(dirname "$0")/../.."
start=$SECONDS
export PI_DIR=${PI_DIR:-$PWD/.build/pi}
export DEBIAN_MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
SUITE=trixie
CROSS=aarch64-linux-gnu-

kernel=''
if [ "${1:-}" = -k ]; then
  [ $# -ge 2 ] || die "usage: $0 [-k RELEASE|MODULES_DIR] [RECIPE...]"
  kernel=$2
  shift 2
fi
[ $# -gt 0 ] || set -- gpio-sim

modules_dir='' release=''
if [ -d "$kernel" ]; then
  modules_dir=$(cd "$kernel" && pwd -P)
  if [ ! -d "$modules_dir/kernel" ]; then
    releases=("$modules_dir"/*/)
    if [ ${#releases[@]} -ne 1 ] || [ ! -d "${releases[0]}kernel" ]; then
      die "$kernel does not hold exactly one kernel's modules"
    fi
    modules_dir=${releases[0]%/}
  fi
  release=${modules_dir##*/}
elif [ -n "$kernel" ]; then
  release=$kernel
fi

board/pi/roots.sh
# shellcheck source=board/cache.sh
. board/cache.sh
index() { board/debian-index.py --suite "$SUITE" --arch arm64 "$@"; }
out=$PI_DIR/modules
mkdir -p "$out"
# The kernel's headers (and the source of the same version) may lie outside the source tree, which is all the
# build root sees of the host besides the cache.
in_root() { BIND="$out${modules_dir:+ $modules_dir}" board/pi/in-root.sh "$@"; }

if [ -z "$release" ]; then
  release=$(index field linux-image-arm64 Depends | sed -n 's/^linux-image-\([^ ,]*\) .*/\1/p')
  [ -n "$release" ] || die "no linux-image-arm64 in $SUITE's arm64 index"
fi
# ABI and flavour: 6.12.117+deb13 and arm64 (the only flavour the Pi's image installs).
[[ $release == *+deb*-arm64 ]] || die "$release is not a Debian arm64 kernel release (like 6.12.117+deb13-arm64)"
abi=${release%-arm64}
upstream=${abi%%+*}
series=${upstream%.*}
version=$(index field "linux-headers-$release" Version 2>/dev/null) \
  || die "$SUITE's index has no linux-headers-$release (it keeps only recent kernels: build for its own, without -k)"

recipes=()
for recipe in "$@"; do recipes+=("file:board/virtual/modules/$recipe.sh"); done
# The modules are made by the build root's compiler and that kernel's headers and source: the root's entry
# (its name is its key) and the headers' version stand for them.
cache_key pi-modules "file:board/pi/build-modules.sh" "file:board/virtual/build-modules.sh" "${recipes[@]}" \
  "text:$release $version $*" "text:root $(basename "$(dirname "$(readlink -f "$PI_DIR/root")")")"

build() {
  local into=$1 work=$out/build
  echo "pi-modules: fetching linux-headers-$release and linux-source-$series $version"
  rm -rf "$work"
  mkdir -p "$work/debs" "$work/tree" "$work/ko"
  index fetch "linux-headers-$release=$version" "linux-headers-$abi-common=$version" \
    "linux-source-$series=$version" "$work/debs"
  for deb in "$work"/debs/linux-headers-*.deb; do dpkg-deb -x "$deb" "$work/tree"; done
  # The arm64 folder's Makefile includes the common folder's by its installed path: here that is in the tree.
  local headers=$work/tree/usr/src/linux-headers-$release
  sed -i "s|^include /usr/src/|include $work/tree/usr/src/|" "$headers/Makefile"
  grep -qx "include $work/tree/usr/src/linux-headers-$abi-common/Makefile" "$headers/Makefile" \
    || die "linux-headers-$release's Makefile does not include the common headers as expected"
  # Its scripts and tools link to ../../lib/linux-kbuild-ABI: the build root's (amd64) package of that name.
  mkdir -p "$work/tree/usr/lib"
  ln -s "/usr/lib/linux-kbuild-$abi" "$work/tree/usr/lib/linux-kbuild-$abi"
  local src_tar=$work/linux-source-$series.tar.xz
  dpkg-deb --fsys-tarfile "$work"/debs/linux-source-*.deb | tar -x -O "./usr/src/linux-source-$series.tar.xz" > "$src_tar"
  rm -rf "$work/debs"

  # The compiler is the one .kernelvariables names ($(CROSS_COMPILE)gcc-14); roots.sh installs it and the kbuild
  # tools of the kernel trixie's index names. Another kernel's (-k) are added to this checkout's overlay.
  local tools="gcc-14-aarch64-linux-gnu make kmod xz-utils linux-kbuild-$abi" missing
  # shellcheck disable=SC2086,SC2016
  missing=$(in_root bash -c 'for p; do dpkg-query -W -f="\${Status}\n" "$p" 2>/dev/null | grep -q "ok installed" || printf "%s " "$p"; done' bash $tools)
  if [ -n "$missing" ]; then
    echo "pi-modules: installing in the build root's overlay: $missing"
    # shellcheck disable=SC2086
    { in_root apt-get -q update && in_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
        --no-install-recommends $missing; } > "$out/install.log" 2>&1 \
      || { tail -n 20 "$out/install.log" >&2; die "installing in the build root failed (log: $out/install.log)"; }
  fi
  in_root env KIOSKCAM_BOARD_KVER="$release" KIOSKCAM_BOARD_KBUILD="$headers" KIOSKCAM_BOARD_KSOURCE="$src_tar" \
    ARCH=arm64 CROSS_COMPILE="$CROSS" board/virtual/build-modules.sh "$work/ko" "${recipes_named[@]}"
  cp "$work"/ko/*.ko "$into/"
  rm -rf "$work"
}
recipes_named=("$@")
cache_use build
cp "$CACHE_DIR"/*.ko "$out/"

if [ -n "$modules_dir" ]; then
  reference=$(find "$modules_dir/kernel" -name '*.ko*' -print -quit)
  want=$(in_root modinfo -F vermagic "$reference")
  for recipe in "$@"; do
    # shellcheck source=/dev/null
    name=$(module=''; . "board/virtual/modules/$recipe.sh"; echo "$module")
    got=$(in_root modinfo -F vermagic "$out/$name.ko")
    [ "$got" = "$want" ] || die "$name.ko has vermagic '$got', the kernel's ${reference##*/} '$want'"
  done
  echo "pi-modules: vermagic '$want', as the kernel's ${reference##*/}"
fi
echo "pi-modules: $release, $* in $((SECONDS - start)) s: $out"
