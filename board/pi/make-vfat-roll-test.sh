#!/usr/bin/env bash
# The vfat roll's maker (board/pi/sdcard/root/usr/lib/kioskcam/make-vfat-roll), run on files standing for the
# roll's partition, judged by fsck.vfat, blkid and mtools: it makes the roll on the image's mark and over a
# format a power cut left half made, labels again a roll a power cut left half labelled, and leaves every other
# partition byte for byte as it was (a roll it made, run again at the next boot; a roll in use; a card formatted
# on a PC; ext4; zeros). make pi-image-test runs it before it boots the images: the boots show the mark's case
# only.
set -euo pipefail
cd "$(dirname "$0")/../.."
maker=$PWD/board/pi/sdcard/root/usr/lib/kioskcam/make-vfat-roll
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failed=0
fail() {
  echo "make-vfat-roll-test: FAILED: $*" >&2
  failed=1
}

# Usage: partition NAME: a 64 MiB file for the partition.
partition() {
  rm -f "$work/$1.img"
  truncate -s 64M "$work/$1.img"
  echo "$work/$1.img"
}

# Usage: made NAME FILE: the maker made a whole roll of the file's size there.
made() {
  local result
  result=$("$maker" "$2")
  [ "$(blkid -p -o value -s LABEL "$2")" = KIOSKROLL ] || fail "$1: the roll is not labelled KIOSKROLL"
  fsck.vfat -n "$2" > "$work/fsck.txt" 2>&1 || fail "$1: fsck.vfat -n: $(cat "$work/fsck.txt")"
  # mtools reads the FAT as a PC would; the file system spans the partition (less than a cluster short).
  local sectors
  sectors=$(minfo -i "$2" :: | awk '/^big size:/ { print $3 }')
  [ $((64 * 2048 - sectors)) -lt 64 ] || fail "$1: the roll has $sectors sectors of the partition's $((64 * 2048))"
  [ -z "$(mdir -b -i "$2" :: 2>/dev/null)" ] || fail "$1: the new roll is not empty"
  echo "make-vfat-roll-test: $1: made ($result; fsck.vfat clean, $sectors sectors, label KIOSKROLL)"
  # The next boot finds the roll it made and leaves it.
  untouched "$1, at the next boot" "$2"
}

# Usage: untouched NAME FILE: the maker left the file as it was.
untouched() {
  local before
  before=$(sha256sum < "$2")
  "$maker" "$2" > /dev/null
  [ "$(sha256sum < "$2")" = "$before" ] || fail "$1: the maker changed it"
  echo "make-vfat-roll-test: $1: left as it was"
}

# As the image ships: the mark at the start, zeros after it.
part=$(partition mark)
printf KIOSKCAM-ROLL-UNMADE | dd of="$part" conv=notrunc status=none
made "the image's mark" "$part"

# A power cut while it was made: the boot sector with the interim label, the FATs half written.
part=$(partition interrupted)
mkfs.vfat -F 32 -n KIOSKFMT "$part" > /dev/null
dd if=/dev/urandom of="$part" bs=1k seek=64 count=512 conv=notrunc status=none
if fsck.vfat -n "$part" > /dev/null 2>&1; then fail "the half-made roll stands for no damage: fsck.vfat finds it clean"; fi
made "a format cut short" "$part"

# A power cut inside fatlabel: the boot sector says KIOSKROLL, the root folder's label entry (blkid's) KIOSKFMT.
part=$(partition relabel)
mkfs.vfat -F 32 -n KIOSKFMT "$part" > /dev/null
printf 'KIOSKROLL  ' | dd of="$part" bs=1 seek=71 conv=notrunc status=none
[ "$(blkid -p -o value -s LABEL "$part")" = KIOSKFMT ] || fail "the half-labelled roll stands for nothing: blkid says KIOSKROLL already"
made "a label cut short" "$part"

# A roll in use, with a picture on it.
part=$(partition roll)
mkfs.vfat -F 32 -n KIOSKROLL "$part" > /dev/null
mmd -i "$part" ::DCIM
head -c 30000 /dev/urandom > "$work/IMG_0001.JPG"
mcopy -i "$part" "$work/IMG_0001.JPG" ::DCIM/
untouched "a roll in use" "$part"

# The card formatted on a PC (no label, FAT32), with a file on it.
part=$(partition pc)
mkfs.vfat -F 32 "$part" > /dev/null
mcopy -i "$part" "$work/IMG_0001.JPG" ::
untouched "a card formatted on a PC" "$part"

# ext4, and zeros (a card written without the image's roll partition, or a flasher that skipped it).
part=$(partition ext4)
mke2fs -q -t ext4 -L KIOSKROLL "$part"
untouched "ext4" "$part"
part=$(partition zeros)
untouched "zeros, no mark" "$part"

[ "$failed" = 0 ] || exit 1
echo "make-vfat-roll-test: passed"
