#!/usr/bin/env bash
# Usage: opened-libraries.sh INCLUDE_DIR: a dpkg -S pattern a line for each library kioskcam opens at run time
# rather than links (Sources/CAVCodec/shim.h opens libavcodec.so.MAJOR and libavutil.so.MAJOR), by the major
# version the headers in INCLUDE_DIR say: what build.sh prints and make deb recommends.
set -euo pipefail
for library in libavcodec libavutil; do
  header=$1/$library/version_major.h
  [ -f "$header" ] || header=$1/$library/version.h
  major=$(sed -n "s/^#define LIB${library#lib}_VERSION_MAJOR *\([0-9]*\).*/\1/ip" "$header")
  [ -n "$major" ] || { echo "opened-libraries: no $library major version in $header" >&2; exit 1; }
  echo "*/$library.so.$major"
done
