# The build cache outside the checkout (sourced by the board's and the Pi's build scripts): one folder an entry,
# $KIOSKCAM_CACHE/KEY, where KEY is the product's name and a hash of everything that makes it (the recipe
# scripts, the package lists, the exact package versions resolved from the suite's index, the versions of the
# host's tools that go into it). An entry holds content/ (the product), inputs (what was hashed, to read or
# diff), manifest (every file's type, mode, owner, size and link target) and sums (every file's SHA-256). It is
# made under a temporary name and renamed when whole; before a checkout uses it, its content is checked against
# its manifest and sums, and a missing, partial or unreadable entry is removed and made again, never trusted.
# Entries are never written once made: a checkout reads them where they are (the build root through an overlay
# of its own, board/pi/in-root.sh). Swift's build folders are never cached: an incremental build can hide what
# a clean one shows.
#
#   cache_key NAME INPUT...      sets CACHE_KEY (NAME-hash) and CACHE_INPUTS; an INPUT is file:PATH (its content
#                                counts), text:STRING, or cmd:COMMAND (its output counts; run in the checkout's
#                                top folder). No input may name the checkout's own path: clones share entries.
#   cache_get                    0 and CACHE_DIR=the entry's content when a whole entry for CACHE_KEY is there
#   cache_build FUNCTION         runs FUNCTION DIR to make the entry's content in DIR, then keeps it; CACHE_DIR
#   cache_use FUNCTION           cache_get, or cache_build when that fails
#
# Each use prints "cache: reused KEY" or "cache: built KEY in N s", and appends "reused|built KEY SECONDS" to
# $KIOSKCAM_CACHE_LOG when that is set (.ci/run's budget table reads it). `make cache-clean` empties the cache.
# shellcheck shell=bash

# CACHE_DIR, CACHE_KEY and CACHE_INPUTS are for the scripts that source this.
# shellcheck disable=SC2034
# /var/cache/kioskcam unless set; a user who may not write there gets one in their own cache folder.
if [ -z "${KIOSKCAM_CACHE:-}" ]; then
  KIOSKCAM_CACHE=/var/cache/kioskcam
  if ! mkdir -p "$KIOSKCAM_CACHE" 2>/dev/null || [ ! -w "$KIOSKCAM_CACHE" ]; then
    KIOSKCAM_CACHE=${XDG_CACHE_HOME:-$HOME/.cache}/kioskcam
  fi
fi
case $KIOSKCAM_CACHE in
  /*) ;;
  *) echo "cache: KIOSKCAM_CACHE must be an absolute path, not '$KIOSKCAM_CACHE'" >&2; return 1 ;;
esac
export KIOSKCAM_CACHE
CACHE_REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# The entry's layout (its files beside content/ and what they say): made anew when this changes.
CACHE_LAYOUT=1
# Entries of one name that no checkout has used for this many days go when another of that name is made (a
# checkout reads its entries in place, for as long as it builds).
CACHE_UNUSED_DAYS=3
# Where this checkout notes the entries whose every file it has hashed.
CACHE_CHECKED=$CACHE_REPO/.build/cache-checked

cache_key() {
  local name=$1 input digest
  shift
  CACHE_INPUTS="layout $CACHE_LAYOUT"$'\n'
  for input in "$@"; do
    case $input in
      file:*)
        local path=${input#file:}
        digest=$(sha256sum "$path" | cut -d' ' -f1) || return 1
        CACHE_INPUTS+="file ${path#"$CACHE_REPO"/} $digest"$'\n' ;;
      text:*) CACHE_INPUTS+="text ${input#text:}"$'\n' ;;
      cmd:*)
        local out
        out=$(cd "$CACHE_REPO" && bash -o pipefail -c "${input#cmd:}") || { echo "cache: '${input#cmd:}' failed" >&2; return 1; }
        CACHE_INPUTS+="cmd ${input#cmd:}"$'\n'"$out"$'\n' ;;
      *) echo "cache: an input is file:, text: or cmd:, not '$input'" >&2; return 1 ;;
    esac
  done
  CACHE_KEY=$name-$(printf '%s' "$CACHE_INPUTS" | sha256sum | cut -c1-16)
}

# The manifest of a content folder: every entry's type, mode, owner, size, path and link target (its sums: every
# file's SHA-256).
cache_manifest() {
  (cd "$1" && LC_ALL=C find . -printf '%y %m %U:%G %s %p %l\n' | LC_ALL=C sort)
}
cache_sums() {
  (cd "$1" && LC_ALL=C find . -type f -print0 | xargs -0 -r -P 2 -n 256 sha256sum | LC_ALL=C sort -k2)
}

cache_log() {
  echo "cache: $1 $CACHE_KEY${2:+ in $2 s}"
  if [ -n "${KIOSKCAM_CACHE_LOG:-}" ]; then
    mkdir -p "$(dirname "$KIOSKCAM_CACHE_LOG")"
    printf '%s %s %s\n' "$1" "$CACHE_KEY" "${2:-0}" >> "$KIOSKCAM_CACHE_LOG"
  fi
}

cache_get() {
  local entry=$KIOSKCAM_CACHE/$CACHE_KEY checked
  [ -e "$entry" ] || return 1
  # Every file's hash is read once a checkout (seconds a gigabyte); after that, on each use, the listing: an entry
  # is never written once renamed, so only its removal (and another made in its place) could change it.
  checked=$CACHE_CHECKED/$CACHE_KEY
  if [ -d "$entry/content" ] && [ -f "$entry/manifest" ] && [ -f "$entry/sums" ] \
      && cache_manifest "$entry/content" | cmp -s - "$entry/manifest" \
      && { [ "$(cat "$checked" 2>/dev/null)" = "$(stat -c %i "$entry")" ] \
           || { cache_sums "$entry/content" | cmp -s - "$entry/sums" && mkdir -p "$CACHE_CHECKED" \
                && stat -c %i "$entry" > "$checked"; }; }; then
    CACHE_DIR=$entry/content
    touch "$entry/used"
    cache_log reused
    return 0
  fi
  echo "cache: $CACHE_KEY is not whole (its content differs from its manifest): made again" >&2
  rm -rf "$entry"
  return 1
}

cache_build() {
  local make=$1 entry=$KIOSKCAM_CACHE/$CACHE_KEY started=$SECONDS tmp status
  mkdir -p "$KIOSKCAM_CACHE"
  tmp=$(mktemp -d "$KIOSKCAM_CACHE/.$CACHE_KEY.XXXXXX")
  mkdir "$tmp/content"
  # The maker runs in a shell of its own with errexit in force: called from a condition, a function would run
  # with errexit ignored, and a failed step could leave an entry that looks whole.
  local errexit=$-
  set +e
  # (Without the lock's descriptor: a process the maker leaves running must not hold it.)
  (set -eo pipefail; exec {CACHE_LOCK}>&-; "$make" "$tmp/content")
  status=$?
  [[ $errexit != *e* ]] || set -e
  if [ $status -ne 0 ]; then
    rm -rf "$tmp"
    echo "cache: making $CACHE_KEY failed" >&2
    return 1
  fi
  printf '%s' "$CACHE_INPUTS" > "$tmp/inputs"
  cache_manifest "$tmp/content" > "$tmp/manifest"
  cache_sums "$tmp/content" > "$tmp/sums"
  sync -f "$tmp/manifest"
  rm -rf "$entry"
  mv -T "$tmp" "$entry"
  CACHE_DIR=$entry/content
  touch "$entry/used"
  # Just hashed as it was made: this checkout need not read it again.
  mkdir -p "$CACHE_CHECKED"
  stat -c %i "$entry" > "$CACHE_CHECKED/$CACHE_KEY"
  cache_log built $((SECONDS - started))
  # Older entries of this name that no checkout has used for days.
  local old
  for old in "$KIOSKCAM_CACHE/${CACHE_KEY%-*}"-????????????????; do
    if [ "$old" = "$entry" ] || [ ! -d "$old" ]; then continue; fi
    [ -n "$(find "$old/used" -newermt "-$CACHE_UNUSED_DAYS days" 2>/dev/null)" ] || rm -rf "$old"
  done
}

# One maker at a time for a key: a second checkout waits for the first and then reuses what it made.
cache_use() {
  mkdir -p "$KIOSKCAM_CACHE"
  local status=0
  exec {CACHE_LOCK}> "$KIOSKCAM_CACHE/.$CACHE_KEY.lock"
  flock "$CACHE_LOCK"
  # What makers killed before their rename left: this key's (no maker of it runs while the lock is held) and any
  # other key's whose lock is free.
  rm -rf "$KIOSKCAM_CACHE/.$CACHE_KEY".??????
  local left key
  for left in "$KIOSKCAM_CACHE"/.*-????????????????.??????; do
    [ -d "$left" ] || continue
    key=${left##*/.}
    key=${key%.*}
    (flock -n 9 && rm -rf "$left") 9> "$KIOSKCAM_CACHE/.$key.lock" || true
  done
  if ! cache_get; then
    cache_build "$1"
    status=$?
  fi
  exec {CACHE_LOCK}>&-
  return $status
}
