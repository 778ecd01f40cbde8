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
# Made: $PI_DIR/modules/NAME.ko (PI_DIR defaults to .build/pi). The headers and the source tarball are cached in
# $PI_DIR/modules/cache/RELEASE (only the newest release is kept), and a module is rebuilt only when stale.
set -euo pipefail
die() { echo "pi-modules: $*" >&2; exit 1; }
cd "$(dirname "$0")/../.."
start=$SECONDS
export PI_DIR=${PI_DIR:-$PWD/.build/pi}
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
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
  modules_dir=$(cd "$kernel" && pwd)
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
out=$PI_DIR/modules
cache=$out/cache
mkdir -p "$cache"
# The cache (and the kernel's modules) may lie outside the source tree, which is all the build root sees itself.
in_root() { BIND="$out${modules_dir:+ $modules_dir}" board/pi/in-root.sh "$@"; }

# An apt of its own for trixie's arm64 index (the build root's is amd64), so that the root's is left as it is.
apt_dir=$cache/apt
mkdir -p "$apt_dir/lists/partial" "$apt_dir/archives/partial"
printf 'deb %s %s main\n' "$MIRROR" "$SUITE" > "$apt_dir/sources.list"
: > "$apt_dir/status"
# The downloads go to a cache folder that apt's unprivileged _apt user may not write (it warns, then runs as root);
# the binary caches apt would keep beside the lists are 90 MB for a few queries.
cat > "$apt_dir/apt.conf" <<EOF
Dir::State "$apt_dir";
Dir::State::Lists "$apt_dir/lists";
Dir::State::status "$apt_dir/status";
Dir::Cache "$apt_dir";
Dir::Cache::Archives "$apt_dir/archives";
Dir::Cache::pkgcache "";
Dir::Cache::srcpkgcache "";
Dir::Etc::SourceList "$apt_dir/sources.list";
Dir::Etc::SourceParts "/nonexistent";
APT::Architecture "arm64";
APT::Architectures { "arm64"; };
APT::Sandbox::User "root";
Acquire::Languages "none";
EOF
arm64_apt() { in_root env APT_CONFIG="$apt_dir/apt.conf" "$@"; }

# The index is read when the release is to be found in it or its packages are not cached yet (offline, apt
# warns and keeps the last one: a cached kernel still builds).
if [ -z "$release" ] || [ ! -f "$cache/$release/ready" ]; then
  arm64_apt apt-get -q -q update
fi
if [ -z "$release" ]; then
  release=$(arm64_apt apt-cache show --no-all-versions linux-image-arm64 2>/dev/null | sed -n 's/^Depends: linux-image-\([^ ,]*\).*/\1/p' || true)
  [ -n "$release" ] || die "no linux-image-arm64 in $SUITE's arm64 index"
fi
# ABI and flavour: 6.12.117+deb13 and arm64 (the only flavour the Pi's image installs).
[[ $release == *+deb*-arm64 ]] || die "$release is not a Debian arm64 kernel release (like 6.12.117+deb13-arm64)"
abi=${release%-arm64}
upstream=${abi%%+*}
series=${upstream%.*}
rel_dir=$cache/$release
headers=$rel_dir/tree/usr/src/linux-headers-$release
src_tar=$rel_dir/linux-source-$series.tar.xz

if [ ! -f "$rel_dir/ready" ]; then
  version=$(arm64_apt apt-cache show --no-all-versions "linux-headers-$release" 2>/dev/null | sed -n 's/^Version: //p' || true)
  [ -n "$version" ] || die "$SUITE's index has no linux-headers-$release (it keeps only recent kernels: build for its own, without -k)"
  echo "pi-modules: fetching linux-headers-$release and linux-source-$series $version"
  rm -rf "$rel_dir.new"
  mkdir -p "$rel_dir.new/debs"
  # apt-get download writes to the current folder.
  # shellcheck disable=SC2016
  arm64_apt bash -c 'cd "$1" && shift && exec apt-get -q -q download "$@"' bash "$rel_dir.new/debs" \
    "linux-headers-$release=$version" "linux-headers-$abi-common=$version" "linux-source-$series=$version"
  for deb in "$rel_dir.new"/debs/linux-headers-*.deb; do dpkg-deb -x "$deb" "$rel_dir.new/tree"; done
  # The arm64 folder's Makefile includes the common folder's by its installed path: here that is in the tree.
  sed -i "s|^include /usr/src/|include $rel_dir/tree/usr/src/|" "$rel_dir.new/tree/usr/src/linux-headers-$release/Makefile"
  grep -qx "include $rel_dir/tree/usr/src/linux-headers-$abi-common/Makefile" \
    "$rel_dir.new/tree/usr/src/linux-headers-$release/Makefile" \
    || die "linux-headers-$release's Makefile does not include the common headers as expected"
  # Its scripts and tools link to ../../lib/linux-kbuild-ABI: the build root's (amd64) package of that name.
  mkdir -p "$rel_dir.new/tree/usr/lib"
  ln -s "/usr/lib/linux-kbuild-$abi" "$rel_dir.new/tree/usr/lib/linux-kbuild-$abi"
  dpkg-deb --fsys-tarfile "$rel_dir.new"/debs/linux-source-*.deb \
    | tar -x -O "./usr/src/linux-source-$series.tar.xz" > "$rel_dir.new/linux-source-$series.tar.xz"
  rm -rf "$rel_dir.new/debs"
  echo "$version" > "$rel_dir.new/ready"
  rm -rf "$rel_dir"
  mv "$rel_dir.new" "$rel_dir"
  # An older kernel's cache is 150 MB that nothing reads any more.
  find "$cache" -mindepth 1 -maxdepth 1 ! -name apt ! -name "$release" -exec rm -rf {} +
fi

# The compiler is the one .kernelvariables names ($(CROSS_COMPILE)gcc-14); modinfo reads the result's vermagic.
tools="gcc-14-aarch64-linux-gnu make kmod xz-utils linux-kbuild-$abi"
# shellcheck disable=SC2086,SC2016
missing=$(in_root bash -c 'for p; do dpkg-query -W -f="\${Status}\n" "$p" 2>/dev/null | grep -q "ok installed" || printf "%s " "$p"; done' bash $tools)
if [ -n "$missing" ]; then
  echo "pi-modules: installing in the build root: $missing"
  # shellcheck disable=SC2086
  { in_root apt-get -q update && in_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
      --no-install-recommends $missing; } > "$out/install.log" 2>&1 \
    || { tail -n 20 "$out/install.log" >&2; die "installing in the build root failed (log: $out/install.log)"; }
fi

in_root env KIOSKCAM_BOARD_KVER="$release" KIOSKCAM_BOARD_KBUILD="$headers" KIOSKCAM_BOARD_KSOURCE="$src_tar" \
  ARCH=arm64 CROSS_COMPILE="$CROSS" board/virtual/build-modules.sh "$out" "$@"

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
