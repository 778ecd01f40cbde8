#!/usr/bin/env bash
# make pi-image: the SD-card image of a Raspberry Pi 4 (or 3, or Zero 2 W) running kioskcam, from Debian 13
# packages only, as $PI_DIR/kioskcam-pi.img. Its four partitions (board/pi/sdcard/root/etc/fstab says what
# each holds):
#   1 KIOSKBOOT   vfat      Debian's raspi-firmware, Debian's arm64 kernel and initramfs with the upstream
#                           device trees, config.txt and cmdline.txt, and kioskcam/ (the config and the SSH
#                           keys a user edits on a PC)
#   2             squashfs  the root: image-root.sh's configured trixie with make deb's arm64 kioskcam package
#                           installed (image-package.sh), and board/pi/sdcard/root/; mounted read-only
#   3 KIOSKSTATE  ext4      the card's SSH host keys (made at its first boot)
#   4 KIOSKROLL   ext4      the roll, 256 MiB here, grown to the card at its first boot; with PI_ROLL=vfat a
#                 or vfat   FAT32 roll a PC reads, made at the first boot at the card's size, as
#                           $PI_DIR/kioskcam-pi-vfat.img
# Every file system is made here from a folder (mksquashfs, mke2fs -d, mtools): nothing is mounted.
set -euo pipefail
cd "$(dirname "$0")/../.."
PI_DIR=${PI_DIR:-$PWD/.build/pi}
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
# The image's MBR disk identifier: partition N is PARTUUID=6b696f73-0N ("kios"), in cmdline.txt and fstab.
DISK_ID=6b696f73
BOOT_MIB=256
STATE_MIB=32
ROLL_MIB=256
PI_ROLL=${PI_ROLL:-ext4}
case $PI_ROLL in
  ext4) image=$PI_DIR/kioskcam-pi.img ;;
  vfat) image=$PI_DIR/kioskcam-pi-vfat.img ;;
  *) echo "pi-image: PI_ROLL is ext4 or vfat, not '$PI_ROLL'" >&2; exit 1 ;;
esac
start=$SECONDS

# The package make deb built (board/deb/build.sh keeps one a architecture).
debs=(.build/deb/kioskcam_*_arm64.deb)
deb=${debs[-1]}
[ -f "$deb" ] || { echo "pi-image: no .build/deb/kioskcam_*_arm64.deb (make deb-arm64 builds it)" >&2; exit 1; }
PI_DIR=$PI_DIR board/pi/image-root.sh
PI_DIR=$PI_DIR board/pi/image-package.sh "$deb"
out=$PI_DIR/sdcard
rm -rf "$out"
mkdir -p "$out"
tree=$out/root

# The configured root with the package installed, as the emulated machine's tar wrote it (owners, modes and
# extended attributes kept): the binary, the unit (enabled by its postinst), the accounts, the udev rule, the
# sshd drop-in and the configuration, all the package's.
echo "pi-image: the root"
mkdir -p "$tree"
tar --extract --file="$PI_DIR/image-package/root.tar" --directory="$tree" --numeric-owner --preserve-permissions \
  --xattrs --xattrs-include='*'
release=$(ls "$tree/usr/lib/modules")
installed=$(dpkg-query --admindir="$tree/var/lib/dpkg" -W -f '${Status} ${Version}' kioskcam)
[ "$installed" = "install ok installed $(dpkg-deb -f "$deb" Version)" ] \
  || { echo "pi-image: the root's kioskcam package is '$installed', not $deb's" >&2; exit 1; }
echo "pi-image: kioskcam $installed"
[ -L "$tree/etc/systemd/system/multi-user.target.wants/kioskcam.service" ] \
  || { echo "pi-image: the package's postinst did not enable kioskcam.service" >&2; exit 1; }

# The image's own files.
# Usage: install_files FOLDER [find tests]: its files into the root at the same paths, with their modes.
install_files() {
  local from=$1
  shift
  (cd "$from" && find . -type f "$@") | while read -r file; do
    install -D -m "$(stat -c %a "$from/$file")" "$from/$file" "$tree/$file"
  done
}
install_files board/pi/sdcard/root
# The config and the pulling keys are on the boot partition, which a user edits on any PC: the package's
# configuration goes there (below), and /etc/kioskcam points there. (dpkg knows kioskcam.conf as a conffile at
# that path: on the card it is one the user edited.)
cp "$tree/etc/kioskcam/kioskcam.conf" "$out/kioskcam.conf"
rm -rf "$tree/etc/kioskcam"
ln -s /boot/firmware/kioskcam "$tree/etc/kioskcam"
mkdir -p "$tree/boot/firmware" "$tree/var/lib/kioskcam-state"
echo kioskcam > "$tree/etc/hostname"
printf '127.0.0.1\tlocalhost\n127.0.1.1\tkioskcam\n::1\t\tlocalhost ip6-localhost ip6-loopback\n' > "$tree/etc/hosts"
# Each card has its own machine ID, made at each boot in memory: one written here would be every card's.
: > "$tree/etc/machine-id"
# The image's units are enabled here, since /etc cannot be written on the card (the package's postinst made the
# accounts and enabled kioskcam.service). The root's own systemctl does it, run by qemu-aarch64 by name (no
# binfmt_misc here): it works on a root given to it without running it.
# (systemd warns that /proc is not procfs: under -L, /proc is the root's empty folder. Nothing here reads it.)
in_root() {
  qemu-aarch64-static -L "$tree" "$tree$1" "${@:2}" 2> >(grep -v -e 'is not mounted. This is not a supported' \
    -e 'your invocation environment to mount' -e '^Your mileage may vary' >&2)
}
account() {
  local id
  id=$(awk -F: -v name="$2" '$1 == name { print $3 }' "$tree/etc/$1")
  [ -n "$id" ] || { echo "pi-image: no $2 in the root's /etc/$1" >&2; exit 1; }
  echo "$id"
}
if [ "$PI_ROLL" = vfat ]; then
  # FAT keeps no owners or modes: the mount gives every file the service's account and the camera account's
  # group, read-only for it, as the roll folder's set-group-ID and the service's umask do on ext4.
  uid=$(account passwd kioskcam)
  gid=$(account group camera)
  options=noatime,nosuid,nodev,noexec,uid=$uid,gid=$gid,dmask=0027,fmask=0137
  # quiet: tmpfiles' chown and chmod of the mount point succeed without changing what FAT cannot keep. tz=UTC:
  # the card's clock. The roll is mounted only after kioskcam-grow-roll made it; nofail as for ext4 (fstab).
  options+=,quiet,tz=UTC,x-systemd.requires=kioskcam-grow-roll.service,nofail
  [ "$(grep -c '^PARTUUID=6b696f73-04 ' "$tree/etc/fstab")" = 1 ] || { echo "pi-image: no roll line in fstab" >&2; exit 1; }
  sed -i "s|^PARTUUID=6b696f73-04 .*|PARTUUID=6b696f73-04  /var/lib/kioskcam/roll   vfat   $options  0 2|" "$tree/etc/fstab"
fi
in_root /usr/bin/systemctl --root="$tree" --quiet enable kioskcam-host-keys.service kioskcam-grow-roll.service \
  systemd-networkd.service systemd-resolved.service systemd-timesyncd.service
# Debian's first-boot key maker writes /etc/ssh (its condition skips it on a read-only root; masked to say so),
# the first-boot wizard would wait at the console of a card whose machine ID is made each boot, and apt's and
# dpkg's timers keep a package database that no one updates on this card.
in_root /usr/bin/systemctl --root="$tree" --quiet mask sshd-keygen.service systemd-firstboot.service \
  apt-daily.timer apt-daily-upgrade.timer dpkg-db-backup.timer
# The kernel and initramfs boot from the boot partition, not from here.
mkdir -p "$out/boot"
mv "$tree/boot/vmlinuz-$release" "$out/boot/vmlinuz"
mv "$tree/boot/initrd.img-$release" "$out/boot/initrd.img"
rm -f "$tree/boot/"*"-$release"

# /etc is as up to date as /usr: without this the units that refresh /etc after an update of /usr
# (ConditionNeedsUpdate=/etc: ldconfig, systemd-update-done) would try to write it at every boot.
touch "$tree/etc/.updated"

echo "pi-image: the boot partition"
boot=$out/boot
# raspi-firmware (non-free-firmware): the GPU's boot firmware for every Pi that boots from SD.
# Fetched by the index's SHA-256 and kept in the build cache's debs/ (board/debian-index.py).
DEBIAN_MIRROR=$MIRROR board/debian-index.py --arch arm64 --component non-free-firmware fetch raspi-firmware "$out/debs"
dpkg-deb -x "$out"/debs/raspi-firmware_*.deb "$out/raspi-firmware"
cp -r "$out/raspi-firmware/usr/lib/raspi-firmware/." "$boot/"
# Every Broadcom device tree the kernel ships, as Debian's raspi-firmware hook copies them: bcm2711-* (Pi 4,
# 400, CM4) and bcm2837-* (Pi 3, Zero 2 W, CM3), which the firmware loads under upstream_kernel=1.
cp "$tree/usr/lib/linux-image-$release/broadcom/"bcm*.dtb "$boot/"
cp board/pi/sdcard/boot/config.txt board/pi/sdcard/boot/cmdline.txt "$boot/"
cp -r board/pi/sdcard/boot/kioskcam "$boot/"
# Usage: change_lines FILE "LINE:NEW LINE"...: each LINE must be a whole line of FILE exactly once, so that a
# changed file fails here rather than ship unchanged.
change_lines() {
  local file=$1 change from
  shift
  for change in "$@"; do
    from=${change%%:*}
    [ "$(grep -c "^$from\$" "$file")" = 1 ] || { echo "pi-image: '$from' is not once in ${file##*/}" >&2; exit 1; }
    sed -i "s/^$from\$/${change#*:}/" "$file"
  done
}
# The shipped configuration (its shutter on GPIO17: the upstream device trees name the header's lines GPIO17 and
# so on) with the rest of the header wired as config.txt says. The roll is the card's own partition, by the label
# only a whole roll file system carries (a vfat roll gets it when it is made): a roll that did not mount leaves
# /var's tmpfs, which `separate` would take, and the shipped `any` the root.
config=$boot/kioskcam/kioskcam.conf
mv "$out/kioskcam.conf" "$config"
change_lines "$config" "mount = any:mount = label:KIOSKROLL" "mode = none:mode = GPIO27" "cancel = none:cancel = GPIO22" \
  "ready = none:ready = GPIO23" "tally = none:tally = GPIO24"
[ "$PI_ROLL" = ext4 ] || change_lines "$boot/kioskcam/README.txt" \
  "KIOSKROLL is ext4, which a PC does not read.*:KIOSKROLL is FAT32: with the camera off, any PC reads its DCIM folder, as a camera's card."
rm -f "$out/boot.img"
mkfs.vfat -F 32 -n KIOSKBOOT -C "$out/boot.img" $((BOOT_MIB * 1024)) > /dev/null
mcopy -s -i "$out/boot.img" "$boot"/* ::/

echo "pi-image: the root's squashfs"
# (mksquashfs names the POSIX ACLs it cannot keep: systemd's on /var/log/journal, which /var's tmpfs hides.)
mksquashfs "$tree" "$out/root.sqfs" -comp zstd -noappend -quiet -no-progress > /dev/null
echo "pi-image: the state and roll partitions"
mke2fs -q -t ext4 -L KIOSKSTATE "$out/state.img" ${STATE_MIB}M
if [ "$PI_ROLL" = ext4 ]; then
  # The roll: no blocks reserved for root (the service is not root), and room to grow a thousandfold.
  mke2fs -q -t ext4 -L KIOSKROLL -m 0 "$out/roll.img" ${ROLL_MIB}M
else
  # The mark kioskcam-grow-roll makes a vfat roll on: zeros, no file system that could be mounted unmade.
  truncate -s ${ROLL_MIB}M "$out/roll.img"
  printf KIOSKCAM-ROLL-UNMADE | dd of="$out/roll.img" conv=notrunc status=none
fi

# The card: 4 MiB before the first partition and every partition on a 4 MiB boundary (an SD card's
# erase blocks).
mib() {
  local blocks
  blocks=$(( ($(stat -c %s "$1") + 4194303) / 4194304 ))
  echo $((blocks * 4))
}
root_mib=$(mib "$out/root.sqfs")
rm -f "$image"
offset=4
layout=""
# The roll's type: Linux, or FAT32 (LBA) for a vfat roll, which Windows mounts only by its type.
roll_type=$([ "$PI_ROLL" = vfat ] && echo c || echo 83)
for part in "boot.img:$BOOT_MIB:c" "root.sqfs:$root_mib:83" "state.img:$STATE_MIB:83" "roll.img:$ROLL_MIB:$roll_type"; do
  IFS=: read -r file size type <<< "$part"
  dd if="$out/$file" of="$image" bs=1M seek="$offset" conv=notrunc,sparse status=none
  layout+="start=$((offset * 2048)), size=$((size * 2048)), type=$type"$'\n'
  offset=$((offset + size))
done
truncate -s "${offset}M" "$image"
printf 'label: dos\nlabel-id: 0x%s\n%s' "$DISK_ID" "$layout" | sfdisk --quiet --wipe never "$image"
rm -rf "$out"
echo "pi-image: made in $((SECONDS - start)) s: $image, $offset MiB (root $root_mib MiB, squashfs zstd; roll $PI_ROLL; kernel $release)"
