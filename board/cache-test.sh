#!/usr/bin/env bash
# The build cache's own rules (board/cache.sh), on a throwaway cache and a maker of a few small files: an entry
# made once is reused; a changed input makes a new entry; a truncated, a changed, an extra or a missing file, a
# missing manifest, and the temporary folder of a maker that was killed are each found and made again, never
# reused; a maker that fails leaves no entry; a key never names the checkout's path. Seconds; make check runs it.
# The damage below is written in single quotes: it is expanded when it is run.
# shellcheck disable=SC2016
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export KIOSKCAM_CACHE=$work/cache KIOSKCAM_CACHE_LOG=$work/uses.log
# shellcheck source=board/cache.sh
. board/cache.sh
CACHE_CHECKED=$work/checked
passed=0 failed=0
check() {
  local name=$1
  shift
  if "$@"; then passed=$((passed + 1)); echo "cache-test: ok    $name"; else failed=$((failed + 1)); echo "cache-test: FAIL  $name"; fi
}
last_use() { tail -n 1 "$KIOSKCAM_CACHE_LOG" | cut -d' ' -f1; }
made() { wc -l < "$work/makes"; }
# use TEXT [MAKER]: the entry of the recipe and TEXT, through cache_use in a shell of its own with errexit and
# pipefail, as the build scripts run it; CACHE_KEY and CACHE_DIR come back, and its status.
use() {
  bash -euo pipefail -c '
    work=$1
    . board/cache.sh
    CACHE_CHECKED=$work/checked
    make_product() {
      echo "made $(cat "$work/recipe")" > "$1/product"
      mkdir "$1/sub"
      head -c 100000 /dev/urandom > "$1/sub/data"
      ln -s product "$1/link"
      echo made >> "$work/makes"
    }
    make_nothing() { echo half > "$1/product"; false; echo never; }
    cache_key test "file:$work/recipe" "text:$2"
    echo "$CACHE_KEY" > "$work/key"
    cache_use "$3"
    echo "$CACHE_DIR" > "$work/dir"' bash "$work" "$1" "${2:-make_product}" > "$work/out" 2>&1
  local status=$?
  CACHE_KEY=$(cat "$work/key")
  CACHE_DIR=$(cat "$work/dir" 2>/dev/null)
  rm -f "$work/dir"
  return $status
}

echo one > "$work/recipe"
: > "$work/makes"
use a
check "an empty cache makes the entry" test "$(last_use) $(made)" = "built 1"
first=$CACHE_KEY
check "the entry holds what the maker made" grep -qx "made one" "$CACHE_DIR/product"
use a
check "the same inputs reuse it" test "$(last_use) $(made)" = "reused 1"
echo two > "$work/recipe"
use a
check "a changed input file makes a new entry" test "$(last_use) $(made) $([ "$CACHE_KEY" != "$first" ] && echo new)" = "built 2 new"
use b
check "a changed input text makes a new entry" test "$(last_use) $(made)" = "built 3"
echo one > "$work/recipe"
use a
check "the first inputs find the first entry again" test "$(last_use) $(made) $CACHE_KEY" = "reused 3 $first"

# damage HOW [fresh]: the first entry damaged so, then used again: it must be made again. The listing is checked
# at every use; every file's hash at a checkout's first use of the entry (fresh: this checkout had not hashed it).
damage() {
  use a
  eval "$1"
  [ -z "${2:-}" ] || rm -rf "$CACHE_CHECKED"
  use a
  [ "$(last_use)" = built ] && grep -q "is not whole" "$work/out" && [ "$(wc -c < "$CACHE_DIR/sub/data")" = 100000 ]
}
check "a truncated file is found and the entry made again" damage 'truncate -s 5000 "$CACHE_DIR/sub/data"'
check "an extra file is found" damage 'touch "$CACHE_DIR/sub/stray"'
check "a missing file is found" damage 'rm "$CACHE_DIR/product"'
check "a missing manifest is found" damage 'rm "$CACHE_DIR/../manifest"'
check "a changed link is found" damage 'ln -sfn elsewhere "$CACHE_DIR/link"'
check "a file changed in place, same size, is found by a checkout's first use" \
  damage 'printf X | dd of="$CACHE_DIR/sub/data" conv=notrunc status=none' fresh

# A maker killed before its rename leaves a temporary folder: it is never an entry, and the next use clears it.
cache_key test "file:$work/recipe" "text:killed"
mkdir -p "$KIOSKCAM_CACHE/.$CACHE_KEY.AbCdEf/content"
use killed
check "a killed maker's folder is no entry and is cleared" \
  test "$(last_use) $(find "$KIOSKCAM_CACHE" -maxdepth 1 -name ".$CACHE_KEY.??????" | wc -l)" = "built 0"
# Another key's, left by a maker killed before it: cleared by the next use of any key, unless its maker still
# runs (holds its lock).
mkdir -p "$KIOSKCAM_CACHE/.test-0123456789abcdef.GhIjKl/content" "$KIOSKCAM_CACHE/.test-fedcba9876543210.MnOpQr/content"
exec 8> "$KIOSKCAM_CACHE/.test-fedcba9876543210.lock"
flock 8
use another
status=$?
check "another key's leftover is cleared, a running maker's is not, and the use goes on (status $status)" \
  test "$status $(last_use) $([ -e "$KIOSKCAM_CACHE/.test-0123456789abcdef.GhIjKl" ] || echo cleared) \
$([ -e "$KIOSKCAM_CACHE/.test-fedcba9876543210.MnOpQr" ] && echo kept)" = "0 built cleared kept"
exec 8>&-

use failing make_nothing
status=$?
check "a maker that fails leaves no entry (status $status)" \
  test "$status $(find "$KIOSKCAM_CACHE" -mindepth 1 -maxdepth 1 -name "$CACHE_KEY*" | wc -l)" = "1 0"

# Entries nobody has used for days go when another of the name is made; one used lately stays.
use stale
stale=$KIOSKCAM_CACHE/$CACHE_KEY
touch -d '5 days ago' "$stale/used"
use recent
recent=$KIOSKCAM_CACHE/$CACHE_KEY
use newest
check "an entry unused for 5 days goes, one used now stays" test "$([ -e "$stale" ] || echo gone) $([ -e "$recent" ] && echo kept)" = "gone kept"

# A file named by a relative path or an absolute one is the same input.
cache_key test "file:board/cache.sh"
relative=$CACHE_KEY
cache_key test "file:$PWD/board/cache.sh"
check "a file's relative and absolute names give one key" test "$relative" = "$CACHE_KEY"

# A clone elsewhere computes the same key: no input names the checkout's path.
cache_key test "file:$PWD/board/cache.sh" "cmd:echo hello"
here_key=$CACHE_KEY
mkdir -p "$work/clone/board"
cp board/cache.sh "$work/clone/board/"
other_key=$(cd "$work/clone" && bash -c '. board/cache.sh && cache_key test "file:$PWD/board/cache.sh" "cmd:echo hello" && echo "$CACHE_KEY"')
check "another clone's key is the same ($here_key)" test "$here_key" = "$other_key"

echo "cache-test: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
