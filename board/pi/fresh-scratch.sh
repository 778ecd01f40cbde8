#!/usr/bin/env bash
# Usage: fresh-scratch.sh FOLDER...: empties each Swift build folder made against other trees than
# $PI_DIR/root and $PI_DIR/sysroot link to now. A folder built against an older entry holds clang modules of
# its headers, which clash with the new entry's ("module '_Builtin_stddef' is defined in both ..."): it starts
# over, as a clean clone's would. (build.sh and board-build.sh run it after roots.sh.)
set -euo pipefail
PI_DIR=${PI_DIR:?set PI_DIR}
trees="$(readlink -f "$PI_DIR/root") $(readlink -f "$PI_DIR/sysroot")"
for folder in "$@"; do
  if [ -d "$folder" ] && [ "$(cat "$folder.trees" 2>/dev/null)" != "$trees" ]; then
    echo "pi: $folder was built against other trees: building it again"
    rm -rf "$folder"
  fi
  echo "$trees" > "$folder.trees"
done
