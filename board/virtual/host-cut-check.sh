#!/bin/sh
# kioskcam virtual board: what a power cut at one point of the card's log leaves, checked on the host (no
# guest, no mount): run by replay-log-writes.py --copies at each point, on IMAGE, a copy of the card as it
# stood there, which this deletes.
#   fsck as at boot (repairs allowed), then fsck again, which must find nothing (e2fsck, fsck.vfat);
#   the card's files read out without a mount (debugfs rdump for ext4, mtools for vfat);
#   `kioskcam roll recover` on them, the service's own start-up recovery;
#   guest-roll-check.py on the roll.
# One JSON line on stdout, as guest-cut-check.sh prints; exit 0 when the point is sound.
#
# usage: IMAGE=<copy> POINT=<index> KIOSKCAM=<binary> FS=ext4|vfat [VERDICTS=<dir>] host-cut-check.sh
set -u

here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/kioskcam-cut.XXXXXX")
cleanup() { rm -rf "$work" "$IMAGE"; }
fail() { printf '{"point":%s,"error":"%s"}\n' "${POINT:-null}" "$1"; cleanup; exit 1; }

case ${FS:-ext4} in
    ext4) e2fsck -fy "$IMAGE" >"$work/fsck.log" 2>&1; fsck=$?
          e2fsck -fn "$IMAGE" >"$work/fsck2.log" 2>&1; again=$? ;;
    vfat) fsck.vfat -a -w "$IMAGE" >"$work/fsck.log" 2>&1; fsck=$?
          fsck.vfat -n "$IMAGE" >"$work/fsck2.log" 2>&1; again=$?
          # fsck.fat 4.2 sometimes needs a second pass: a directory whose first cluster it found free is cut
          # there ("Assuming EOF") and left pointing at the root, which its next run deletes. The board's boot
          # check (guest-card.sh) does the same second pass; the first pass's answer is the one reported.
          if [ "$again" -ne 0 ]; then
              fsck.vfat -a -w "$IMAGE" >>"$work/fsck.log" 2>&1
              fsck.vfat -n "$IMAGE" >"$work/fsck2.log" 2>&1; again=$?
              passes=2
          fi ;;
    *) fail "FS: ext4 or vfat" ;;
esac
[ "$fsck" -le 2 ] || fail "fsck exited $fsck: $(tail -n 3 "$work/fsck.log" | tr '\n"' ' _')"
[ "$again" -eq 0 ] || fail "fsck after repair exited $again: $(tail -n 3 "$work/fsck2.log" | tr '\n"' ' _')"

mkdir "$work/roll"
case ${FS:-ext4} in
    ext4) debugfs -R "rdump / $work/roll" "$IMAGE" >"$work/read.log" 2>&1 ;;
    vfat) MTOOLS_SKIP_CHECK=1 mcopy -s -n -i "$IMAGE" '::/*' "$work/roll/" >"$work/read.log" 2>&1 ;;
esac || fail "the repaired card cannot be read: $(tail -n 2 "$work/read.log" | tr '\n"' ' _')"
[ -d "$work/roll/DCIM" ] || mkdir "$work/roll/DCIM"

# The service's start-up recovery, as the command gives it to an operator; its lines are what it did.
"$KIOSKCAM" roll recover --path "$work/roll" >"$work/recover.log" 2>&1 || fail "roll recover: $(tail -n 2 "$work/recover.log" | tr '\n"' ' _')"
recovery=$(grep -v "nothing to recover" "$work/recover.log" | tr '\n"' ' _')
roll=$(/usr/bin/python3 "$here/guest-roll-check.py" "$work/roll" "${VERDICTS:-$work/verdicts}") || fail "guest-roll-check.py failed"
cleanup
printf '{"point":%s,"fsck":%s,"fsck_passes":%s,"recovery":"%s","roll":%s}\n' "$POINT" "$fsck" "${passes:-1}" "$recovery" "$roll"
