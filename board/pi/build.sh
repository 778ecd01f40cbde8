#!/usr/bin/env bash
# make pi: kioskcam for a Raspberry Pi (aarch64, Debian 13 / Raspberry Pi OS trixie), cross-built by trixie's
# Swift 6.0.3 in the build root against the arm64 sysroot (board/pi/roots.sh makes both), stripped, into
# .build/pi/kioskcam. Prints how long it took, its size, and the Debian packages it needs on the Pi.
# PI_TESTS=1 builds the unit tests for aarch64 too (make pi-test runs them under qemu-aarch64): optimised, as the
# binary that ships, with testing enabled, in a build folder of their own (.build/pi/arm64-tests), so that the
# shipped binary's build never takes their flags.
set -euo pipefail
cd "$(dirname "$0")/../.."
start=$SECONDS
export PI_DIR=$PWD/.build/pi
board/pi/roots.sh
board/pi/fresh-scratch.sh .build/pi/arm64 .build/pi/arm64-tests

# A Swift SDK bundle (SE-0387) over the sysroot: SwiftPM's --triple/--sdk alone give clang the sysroot but
# not swiftc (missing SwiftGlibc). Paths are as the build root sees the source tree (the same path as outside it).
sdk=$PI_DIR/sdk/kioskcam-trixie-arm64.artifactbundle
mkdir -p "$sdk/trixie-arm64"
ln -sfn "$PI_DIR/sysroot" "$sdk/trixie-arm64/sysroot"
cat > "$sdk/info.json" <<'JSON'
{
  "schemaVersion": "1.0",
  "artifacts": {
    "kioskcam-trixie-arm64": {
      "type": "swiftSDK",
      "version": "1",
      "variants": [{ "path": "trixie-arm64", "supportedTriples": ["x86_64-unknown-linux-gnu", "x86_64-pc-linux-gnu"] }]
    }
  }
}
JSON
cat > "$sdk/trixie-arm64/swift-sdk.json" <<'JSON'
{
  "schemaVersion": "4.0",
  "targetTriples": {
    "aarch64-unknown-linux-gnu": {
      "sdkRootPath": "sysroot",
      "swiftResourcesPath": "sysroot/usr/libexec/swift/lib/swift",
      "swiftStaticResourcesPath": "sysroot/usr/libexec/swift/lib/swift_static",
      "toolsetPaths": ["toolset.json"]
    }
  }
}
JSON
# lld, the toolchain's own; no rpath into the build root's toolchain (the static stdlib needs none on the Pi).
cat > "$sdk/trixie-arm64/toolset.json" <<'JSON'
{
  "schemaVersion": "1.0",
  "swiftCompiler": { "extraCLIOptions": ["-use-ld=lld", "-no-toolchain-stdlib-rpath"] }
}
JSON

# pkg-config (Package.swift's libgpiod question too) answers from the sysroot.
cross() {
  PKG_CONFIG_SYSROOT_DIR=$PI_DIR/sysroot \
  PKG_CONFIG_LIBDIR=$PI_DIR/sysroot/usr/lib/aarch64-linux-gnu/pkgconfig:$PI_DIR/sysroot/usr/share/pkgconfig \
    board/pi/in-root.sh swift build --scratch-path "${SCRATCH:-.build/pi/arm64}" \
      --swift-sdks-path .build/pi/sdk --swift-sdk kioskcam-trixie-arm64 "$@"
}
echo "pi: building kioskcam for aarch64 (Swift 6.0.3, trixie)"
cross -c release --static-swift-stdlib --product kioskcam
# The libcamera backend's shim: a library of its own, opened by kioskcam at first use from beside itself.
echo "pi: building libkioskcam-libcamera.so for aarch64 (against trixie's libcamera)"
cross -c release --product kioskcam-libcamera
if [ -n "${PI_TESTS:-}" ]; then
  # Under qemu-aarch64 the debug build's tests took 621 s and these 65 s side by side on a loaded host (369 s and
  # 50 s on quiet ones).
  echo "pi: building the unit tests for aarch64 (release, -enable-testing)"
  SCRATCH=.build/pi/arm64-tests cross -c release --build-tests -Xswiftc -enable-testing
fi
release=.build/pi/arm64/aarch64-unknown-linux-gnu/release
board/pi/in-root.sh aarch64-linux-gnu-strip -o .build/pi/kioskcam $release/kioskcam
board/pi/in-root.sh aarch64-linux-gnu-strip -o .build/pi/libkioskcam-libcamera.so $release/libkioskcam-libcamera.so
# swiftc names libswiftCore.so in every library it links, though the shim (C++, linked without Swift's startup
# object: Package.swift) uses nothing of it; the static kioskcam's Pi has no libswiftlang to give it.
patchelf --remove-needed libswiftCore.so .build/pi/libkioskcam-libcamera.so
if nm -D --undefined-only .build/pi/libkioskcam-libcamera.so | grep -q ' swift_'; then
  echo "pi: libkioskcam-libcamera.so calls into the Swift runtime" >&2
  exit 1
fi
echo "pi: built in $((SECONDS - start)) s: .build/pi/kioskcam"
file -b .build/pi/kioskcam | cut -d, -f1-2
echo "pi: $(du -h .build/pi/kioskcam | cut -f1) stripped; on the Pi it needs:"
# The packages that hold an ELF file's libraries: trixie's names are the same for amd64, whose packages the root has.
packages_for() {
  local patterns=()
  # (The ELF interpreter, ld-linux-aarch64.so.1, is named by libc6's arm64 package only: it is libc6 too.)
  for soname in $(readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | grep -v '^ld-linux'); do
    patterns+=("*/$soname")
  done
  # (The build root's cross compiler, for the image's kernel modules, brings *-arm64-cross copies of libc and
  # libstdc++: not what the Pi installs.)
  board/pi/in-root.sh dpkg -S "${patterns[@]}" | cut -d: -f1 | grep -v -- '-cross$' | sort -u | tr '\n' ' '
}
packages_for .build/pi/kioskcam
echo
echo "pi: $(du -h .build/pi/libkioskcam-libcamera.so | cut -f1) libkioskcam-libcamera.so; for Camera Modules (libcamera), beside kioskcam, with:"
packages_for .build/pi/libkioskcam-libcamera.so
echo
# libavcodec and libavutil are opened at run time, not linked (Sources/CAVCodec/shim.h): by the major versions
# of the headers built against.
opened_list=$(board/pi/opened-libraries.sh "$PI_DIR/sysroot/usr/include/aarch64-linux-gnu")
mapfile -t opened <<< "$opened_list"
echo -n "pi: and, for a movie's sound and for H.264 in review: "
board/pi/in-root.sh dpkg -S "${opened[@]}" | cut -d: -f1 | sort -u | tr '\n' ' '
echo
