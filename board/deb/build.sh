#!/usr/bin/env bash
# make deb: kioskcam's Debian packages, kioskcam and kioskcam-libcamera, for amd64 and arm64, into .build/deb/.
# debhelper builds them from debian/ (a copy of it, so that nothing is written into the checkout) with the
# binaries make built:
#   amd64  .build/release/kioskcam (Swift's standard library linked in) and its libcamera shim, on this
#          machine: Debian 12's libraries, so the Depends are Debian 12's;
#   arm64  make pi's .build/pi/kioskcam and shim, in the packaging root (roots.sh's debroot: trixie, with the
#          libraries kioskcam links installed for arm64 beside its tools), so the Depends are trixie's.
# dpkg-shlibdeps computes Depends from each binary. The libraries kioskcam opens at run time (libavcodec and
# libavutil, by the major version of the headers it was built against) are Recommends: a movie's sound and
# review's H.264 need them, nothing else does. lintian checks each package; an error fails the build.
set -euo pipefail
cd "$(dirname "$0")/../.."
PI_DIR=${PI_DIR:-$PWD/.build/pi}
export PI_DIR
out=$PWD/.build/deb
start=$SECONDS

# The version: the changelog's, then the commit's time and name, so that each commit's package upgrades the
# one before it.
base=$(dpkg-parsechangelog -S Version)
release=$(sed -n 's/^ *static let release = "\(.*\)"$/\1/p' Sources/KioskService/BuildInfo.swift)
[ "$base" = "$release" ] || { echo "deb: debian/changelog says $base, kioskcam --version $release" >&2; exit 1; }
if commit=$(TZ=UTC git log -1 --format='%cd.%h' --date=format-local:%Y%m%d%H%M%S 2>/dev/null); then
  version=$base+git$commit
else
  version=$base
fi

# package ARCH BINARY SHIM RECOMMENDS RUN...: builds ARCH's two packages, RUN... running each command (in the
# packaging folder, given as its first argument) where that architecture's libraries are.
package() {
  local arch=$1 binary=$2 shim=$3 recommends=$4
  shift 4
  local work=$out/$arch
  rm -rf "$work" "$out"/*_"$arch".deb
  mkdir -p "$work/src"
  cp -r --dereference debian "$work/src/debian"
  cp docs/kioskcam.1 "$work/src/"
  # The shim needs nothing of Swift's (Package.swift: -nostartfiles), yet swiftc names libswiftCore.so, which
  # no Debian package holds for this build; build.sh does the same for make pi's copy.
  install -m 0644 "$shim" "$work/libkioskcam-libcamera.so"
  # (Nor does it need the runpath into this machine's Swift toolchain that swiftc gives it.)
  if readelf -d "$work/libkioskcam-libcamera.so" | grep -q 'NEEDED.*\[libswiftCore.so\]'; then
    patchelf --remove-needed libswiftCore.so --remove-rpath "$work/libkioskcam-libcamera.so"
  fi
  echo "deb: $arch, version $version"
  "$@" "$work/src" env KIOSKCAM_SOURCE="$PWD" KIOSKCAM_BINARY="$binary" KIOSKCAM_SHIM="$work/libkioskcam-libcamera.so" \
    KIOSKCAM_RECOMMENDS="$recommends" KIOSKCAM_VERSION="$version" dpkg-architecture -a"$arch" -c debian/rules binary \
    > "$work/build.log" 2>&1 || { cat "$work/build.log"; echo "deb: $arch: debian/rules binary failed" >&2; return 1; }
  local deb
  for deb in "$work"/*.deb; do
    echo "deb: lintian $(basename "$deb")"
    "$@" "$work" lintian --fail-on error "$deb" || { echo "deb: lintian found errors in $deb" >&2; return 1; }
    mv "$deb" "$out/"
  done
}

here() { (cd "$1" && shift && "$@"); }
# (The inner shell expands its own arguments.)
# shellcheck disable=SC2016
in_debroot() { IN_ROOT=debroot board/pi/in-root.sh bash -c 'cd "$1" && shift && exec "$@"' in-debroot "$@"; }

# DEB_ARCHES="amd64" (or "arm64") builds one architecture's packages only.
arches=${DEB_ARCHES:-amd64 arm64}
mkdir -p "$out"
if [[ " $arches " == *" amd64 "* ]]; then
  [ -x .build/release/kioskcam ] || { echo "deb: no .build/release/kioskcam (make release builds it)" >&2; exit 1; }
  # shellcheck disable=SC2046  # one pattern a word
  opened=$(dpkg -S $(board/pi/opened-libraries.sh /usr/include/x86_64-linux-gnu) | cut -d: -f1 | sort -u | paste -sd, | sed 's/,/, /g')
  package amd64 "$PWD/.build/release/kioskcam" "$PWD/.build/release/libkioskcam-libcamera.so" "$opened" here
fi
if [[ " $arches " == *" arm64 "* ]]; then
  [ -x "$PI_DIR/kioskcam" ] || { echo "deb: no $PI_DIR/kioskcam (make pi builds it)" >&2; exit 1; }
  PI_DEBROOT=1 board/pi/roots.sh
  # The package names are the same for amd64, whose -dev packages the build root holds (build.sh asks it too).
  # shellcheck disable=SC2046
  opened=$(board/pi/in-root.sh dpkg -S $(board/pi/opened-libraries.sh "$PI_DIR/sysroot/usr/include/aarch64-linux-gnu") \
    | cut -d: -f1 | sort -u | paste -sd, | sed 's/,/, /g')
  package arm64 "$PI_DIR/kioskcam" "$PI_DIR/libkioskcam-libcamera.so" "$opened" in_debroot
fi

for deb in "$out"/*.deb; do
  [[ " $arches " == *" $(dpkg-deb -f "$deb" Architecture) "* ]] || continue
  echo "$(basename "$deb"): $(du -h "$deb" | cut -f1)"
  echo "  Depends: $(dpkg-deb -f "$deb" Depends)"
  recommends=$(dpkg-deb -f "$deb" Recommends)
  [ -z "$recommends" ] || echo "  Recommends: $recommends"
done
echo "deb: built in $((SECONDS - start)) s"
