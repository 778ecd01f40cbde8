#!/bin/sh
# kioskcam virtual board: what a power cut at one point of the card's log leaves, as the next boot finds it.
# Run by replay-log-writes.py at each point (POINT, FLAGS, MARK in the environment) with the card's replay
# target (card-replay) rebuilt as the card stood there. Through a snapshot (its changes in guest memory, gone
# after), so the replay goes on from the untouched target:
#   fsck as at boot (repairs allowed), then fsck again, which must find nothing;
#   mount at the card's mount point, the service started with CONF and stopped once ready (its start-up
#   recovery: hidden leftovers cleared, interrupted recordings published);
#   guest-roll-check.py on the roll.
# One JSON line on stdout; exit 0 when the point is sound.
#
# usage: CONF=<kioskcam.conf with the roll at /run/kioskcam-card> KIOSKCAM=<binary> FS=ext4|vfat guest-cut-check.sh
set -u

here=$(cd "$(dirname "$0")" && pwd)
MOUNT=/run/kioskcam-card
COW=/tmp/kioskcam-cut-cow.img
fail() { printf '{"point":%s,"error":"%s"}\n' "${POINT:-null}" "$1"; cleanup; exit 1; }
cleanup() {
    ! mountpoint -q "$MOUNT" || umount "$MOUNT"
    ! dmsetup info cut >/dev/null 2>&1 || dmsetup remove cut
}

[ -e "$COW" ] || truncate -s 64M "$COW"
loop=$(losetup -j "$COW" | cut -d: -f1 | head -n 1)
[ -n "$loop" ] || loop=$(losetup -f --show "$COW") || fail "no loop device for the snapshot"
size=$(blockdev --getsz /dev/mapper/card-replay)
echo "0 $size snapshot /dev/mapper/card-replay $loop N 8" | dmsetup create cut || fail "cannot make the snapshot"

case ${FS:-ext4} in
    ext4) e2fsck -fy /dev/mapper/cut >/tmp/kioskcam-cut-fsck.log 2>&1; fsck=$?
          e2fsck -fn /dev/mapper/cut >/tmp/kioskcam-cut-fsck2.log 2>&1; again=$? ;;
    vfat) fsck.vfat -a -w /dev/mapper/cut >/tmp/kioskcam-cut-fsck.log 2>&1; fsck=$?
          fsck.vfat -n /dev/mapper/cut >/tmp/kioskcam-cut-fsck2.log 2>&1; again=$? ;;
esac
[ "$fsck" -le 2 ] || fail "fsck exited $fsck: $(tail -n 3 /tmp/kioskcam-cut-fsck.log | tr '\n"' ' _')"
[ "$again" -eq 0 ] || fail "fsck after repair exited $again: $(tail -n 3 /tmp/kioskcam-cut-fsck2.log | tr '\n"' ' _')"
mkdir -p "$MOUNT"
mount -t "${FS:-ext4}" /dev/mapper/cut "$MOUNT" || fail "the repaired card does not mount"

# The service's start: recovery runs before "ready". The camera and lines are free: the session's service is gone.
"$KIOSKCAM" run --config "$CONF" >/tmp/kioskcam-cut-service.log 2>&1 &
pid=$!
n=0
until grep -q "kioskcam: ready" /tmp/kioskcam-cut-service.log; do
    n=$((n + 1))
    if [ "$n" -gt 1200 ] || ! kill -0 "$pid" 2>/dev/null; then
        kill -9 "$pid" 2>/dev/null
        fail "the service did not get ready: $(tail -n 2 /tmp/kioskcam-cut-service.log | tr '\n"' ' _')"
    fi
    sleep 0.1
done
kill -TERM "$pid"; wait "$pid"
recovery=$(grep -E "recovered|interrupted recording|leftover|torn" /tmp/kioskcam-cut-service.log | tr '\n"' ' _')
roll=$(/usr/bin/python3 "$here/guest-roll-check.py" "$MOUNT" /tmp/kioskcam-cut-verdicts) || fail "guest-roll-check.py failed"
cleanup
printf '{"point":%s,"fsck":%s,"recovery":"%s","roll":%s}\n' "$POINT" "$fsck" "$recovery" "$roll"
