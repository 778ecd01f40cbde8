#!/bin/sh
# kioskcam virtual board: the memory card, in the guest (`board run -- sh board/virtual/guest-card.sh CMD`).
#
# The board's disk (/dev/vda, .build/board/card.img, kioskboard/disk.py) is cut by dm-linear into:
#   card-raw     the card's medium (CARD_MB)
#   card-replay  as large: where replay-log-writes.py rebuilds the card as it stood at a point of its log
#   card-log     dm-log-writes' log of every write, flush and FUA to the card while recording
# and /dev/mapper/card, the card the file system is on, is card-raw through one table at a time:
#   linear (healthy), delay (a slow card), flakey (a failing one), error (pulled), log-writes (recorded).
# Tables are swapped under the mounted file system (suspend, load, resume), as xfstests' dmflakey does.
#
# usage: guest-card.sh init | format ext4|vfat | slow MS | fail | fail-tail FILE | heal | remount | pull | back
#                      | record [ext4|vfat] | mark NAME | unrecord
#                      | replay-reset | status
set -eu

CARD_MB=128   # kioskboard/disk.py: CARD_MB, LOG_MB
LOG_MB=512
MOUNT=/run/kioskcam-card
STATE=/run/kioskcam-card.state   # the card's file system type, and fsck's answer at boot

die() { echo "guest-card: $*" >&2; exit 1; }
sectors() { echo $(($1 * 2048)); }
CARD=$(sectors $CARD_MB)

table() {  # swap /dev/mapper/card to the given table (one line)
    dmsetup suspend --nolockfs card
    echo "$1" | dmsetup load card || { dmsetup resume card; die "cannot load: $1"; }
    dmsetup resume card
}
linear() { echo "0 $CARD linear /dev/mapper/card-raw 0"; }
fstype() { sed -n 1p "$STATE" 2>/dev/null || echo ext4; }

check() {  # fsck the card; 0 clean, 1 repaired are both a card that mounts
    rc=0
    case $(fstype) in
        ext4) e2fsck -fy /dev/mapper/card >/dev/null 2>&1 || rc=$? ;;
        vfat) fsck.vfat -a -w /dev/mapper/card >/dev/null 2>&1 || rc=$?
              # fsck.fat 4.2 sometimes leaves what its next run repairs (a directory cut at a free first
              # cluster, left pointing at the root): a second pass when a read-only check still finds anything.
              fsck.vfat -n /dev/mapper/card >/dev/null 2>&1 || fsck.vfat -a -w /dev/mapper/card >/dev/null 2>&1 || true ;;
    esac
    [ "$rc" -le 1 ] || die "fsck of the card exited $rc"
    echo "$rc"
}

mount_card() {
    mkdir -p "$MOUNT"
    case $(fstype) in
        ext4) mount -t ext4 /dev/mapper/card "$MOUNT" ;;
        # Without `flush` (udisks' option for a desktop's automount), as an fstab line or a mount unit mounts
        # the appliance's card: fat then writes an inode back at close, which would hide a missing fsync.
        vfat) mount -t vfat /dev/mapper/card "$MOUNT" ;;
    esac
}

zero() { blkdiscard -z "$1" 2>/dev/null || dd if=/dev/zero of="$1" bs=1M oflag=direct 2>/dev/null || true; }

# Other mount namespaces keep their own copy of the card's mount, and with it the device: the guest's systemd
# (the appliance tests run it under `unshare --mount`) holds one for as long as it runs, so that mkfs says
# "apparently in use by the system" and a pulled card is never let go. Each copy is taken away in its own
# namespace. Arguments: umount's options (-l for a card pulled).
unmount_everywhere() {
    own=$(readlink /proc/self/ns/mnt)
    # One process per mount namespace, found by one `stat` of them all: a fork per process (readlink) took
    # seconds in a loaded guest, and a pulled card's file system goes from every namespace at once.
    stat -c '%N' /proc/[0-9]*/ns/mnt 2>/dev/null |
        awk -v own="$own" '{ pid = $1; gsub(/[^0-9]/, "", pid); ns = $3; gsub(/\047/, "", ns)
                             if (ns != own && !(ns in seen)) { seen[ns] = 1; print pid } }' |
        while read -r pid; do
            grep -qs " $MOUNT " "/proc/$pid/mountinfo" || continue
            nsenter -t "$pid" -m umount "$@" "$MOUNT" 2>/dev/null || true
        done
    ! mountpoint -q "$MOUNT" || umount "$@" "$MOUNT"
}

unmount_card() { unmount_everywhere; }

mkfs_card() {
    # A write error the old file system left on the device is reported to the next opener's fsync once:
    # take it here, not in mkfs.
    dd if=/dev/mapper/card of=/dev/mapper/card bs=4096 count=1 conv=notrunc,fsync 2>/dev/null || true
    case $1 in
        ext4) mkfs.ext4 -q -F -L KIOSKROLL /dev/mapper/card ;;
        vfat) mkfs.vfat -F 32 -n KIOSKROLL /dev/mapper/card >/dev/null ;;
        *) die "no such file system: $1 (ext4, vfat)" ;;
    esac
    echo "$1" > "$STATE"
}

case ${1:-} in
init)
    for m in virtio_blk loop dm-mod dm-delay dm-flakey dm-log-writes dm-snapshot; do modprobe "$m" || die "modprobe $m"; done
    n=0
    while [ ! -b /dev/vda ]; do
        n=$((n + 1)); [ "$n" -lt 100 ] || die "no /dev/vda (the board's disk)"; sleep 0.1
    done
    [ "$(blockdev --getsz /dev/vda)" -ge $((2 * CARD + $(sectors $LOG_MB))) ] || die "/dev/vda is too small"
    echo "0 $CARD linear /dev/vda 0" | dmsetup create card-raw
    echo "0 $CARD linear /dev/vda $CARD" | dmsetup create card-replay
    echo "0 $(sectors $LOG_MB) linear /dev/vda $((2 * CARD))" | dmsetup create card-log
    linear | dmsetup create card
    # The card keeps what it holds across boots (a power cut is a QEMU kill): check it and mount it, as an
    # appliance does at boot; a blank one becomes ext4.
    found=$(blkid -o value -s TYPE /dev/mapper/card || true)
    case $found in
        ext4|vfat) echo "$found" > "$STATE"; fsck=$(check); echo "fsck $fsck" >> "$STATE" ;;
        *) mkfs_card ext4 ;;
    esac
    mount_card
    echo "guest-card: $(fstype) on /dev/mapper/card at $MOUNT"
    ;;
format)
    unmount_card
    table "$(linear)"
    mkfs_card "${2:-ext4}"
    mount_card
    ;;
slow)
    # dm-delay: reads undelayed, writes (and with them flushes and FUA) MS late.
    table "0 $CARD delay /dev/mapper/card-raw 0 0 /dev/mapper/card-raw 0 ${2:?slow MS}"
    ;;
fail)
    # dm-flakey, down for good: every write fails with EIO, reads still work.
    table "0 $CARD flakey /dev/mapper/card-raw 0 0 86400 1 error_writes"
    ;;
fail-tail)
    # dm-flakey under one block only, the one that holds the last byte of FILE (relative to the card's
    # mount): the next append to that file fails (EIO at its fsync), and every other write goes through.
    # Prints the block's first sector and its length.
    file="$MOUNT/$2"
    size=$(stat -c %s "$file")
    block=$(stat -f -c %S "$MOUNT")   # ext4's block, or vfat's cluster
    [ $((size % block)) -ne 0 ] || die "$2 ends on a block boundary: its next append starts a new block"
    sync -f "$file"
    # filefrag -e -b512: extents in 512-byte units, "N: logical..end: physical..end: length:". A block lies
    # whole in one extent; vfat's clusters need not be aligned on the card, so the block is found by its
    # logical start, not by rounding the physical sector.
    first=$(((size - 1) / block * block / 512))
    start=$(filefrag -e -b512 "$file" | awk -F'[:.]+' -v first="$first" '
        $1 ~ /^ *[0-9]+$/ && first >= $2 + 0 && first <= $3 + 0 { print $4 + (first - $2); exit }')
    [ -n "$start" ] || die "no extent of $2 holds its last block"
    per=$((block / 512))
    end=$((start + per))
    table "0 $start linear /dev/mapper/card-raw 0
$start $per flakey /dev/mapper/card-raw $start 0 86400 1 error_writes
$end $((CARD - end)) linear /dev/mapper/card-raw $end"
    echo "$start $per"
    ;;
heal)
    table "$(linear)"
    ;;
pull)
    # The card gone: every I/O fails, and the mount point goes as an automounter takes it away. Prints the
    # guest's clock (CLOCK_MONOTONIC seconds, as the service logs its checks) before and after the swap (the
    # device went between the two), and once the mount is gone from every namespace (what the service hears).
    # `read` is a builtin: forking in a loaded guest took seconds.
    read -r before _ < /proc/uptime
    table "0 $CARD error"
    read -r after _ < /proc/uptime
    unmount_everywhere -l
    read -r unmounted _ < /proc/uptime
    echo "$before $after $unmounted"
    ;;
remount)
    # A failing card made healthy as a user does it: taken out and put back (or the board rebooted). A write
    # error leaves ext4 read-only ("Remounting filesystem read-only") and vfat's cache unlike the card, so the
    # table alone does not heal the file system: it is unmounted, checked and mounted again, as at boot.
    unmount_everywhere -l
    sh "$0" back
    ;;
back)
    # Wait for the detached file system to let go of the device (its last open file closed), then as at boot.
    n=0
    while [ "$(dmsetup info -c --noheadings -o open card)" -gt 0 ]; do
        n=$((n + 1)); [ "$n" -lt 300 ] || die "the old mount still holds the card"; sleep 0.1
    done
    table "$(linear)"
    check >/dev/null
    mount_card
    ;;
record)
    # A fresh file system made through dm-log-writes on a zeroed card, so that the log holds everything from
    # there on and a zeroed replay target (`replay-reset`) rebuilds it exactly.
    unmount_card
    table "$(linear)"
    zero /dev/mapper/card-raw
    dd if=/dev/zero of=/dev/mapper/card-log bs=4096 count=1 oflag=direct 2>/dev/null
    table "0 $CARD log-writes /dev/mapper/card-raw /dev/mapper/card-log"
    mkfs_card "${2:-ext4}"
    # mkfs.vfat does not fsync what it wrote: without this its writes reach the log only at a later flush, and
    # the points just after the mark would be a file system half made (fsck.vfat found them so, on the host).
    sync /dev/mapper/card
    dmsetup message card 0 mark mkfs
    mount_card
    ;;
mark)
    dmsetup message card 0 mark "${2:?mark NAME}"
    ;;
unrecord)
    unmount_card
    table "$(linear)"
    ;;
replay-reset)
    zero /dev/mapper/card-replay
    ;;
status)
    echo "table: $(dmsetup table card)"
    echo "fs: $(fstype)"
    sed -n 2p "$STATE" 2>/dev/null || true
    mountpoint -q "$MOUNT" && echo "mounted at $MOUNT" || echo "not mounted"
    ;;
*)
    die "usage: guest-card.sh init | format ext4|vfat | slow MS | fail | fail-tail FILE | heal | remount | pull | back | record [ext4|vfat] | mark NAME | unrecord | replay-reset | status"
    ;;
esac
