#!/usr/bin/env bash
# The first step of the Pi's SD-card image (issue 38): its root file system, Debian 13 ("trixie") arm64 with
# every package's maintainer scripts run, as an entry of the build cache (board/cache.sh) linked as $PI_DIR/image:
# keyed by this script, the package list and the exact arm64 versions trixie's index resolves for it now (an
# edit here, a package added or a point release makes it again).
#
# This host has no binfmt_misc, so no arm64 program runs in a chroot here. The packages are unpacked here
# (debootstrap's first stage) and configured inside an emulated aarch64 machine (qemu-system-aarch64 -M virt,
# TCG) that boots trixie's own arm64 kernel from the same download with a small initramfs of busybox and the
# modules an ext4 root on virtio needs. proot's qemu mode, the usual way round, does not work with trixie's
# libc: tried with trixie's proot 5.4 and qemu-user, the guest's stat calls were answered from the host's
# tree (it saw the host's /usr/bin/true and not its own /debootstrap).
#
# Made (the entry's content): root.tar (the configured root, written by the emulated machine's own GNU tar, so that
# owners, set-user-ID bits, hard links and extended attributes are kept as dpkg made them; SSH host keys are not
# kept: each card makes its own at first boot), $PI_DIR/image/kernel/ (the arm64 kernel and modules it booted
# with), configure.log.
set -euo pipefail
PI_DIR=${PI_DIR:?set PI_DIR}
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
export DEBIAN_MIRROR=$MIRROR
SUITE=trixie
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=board/cache.sh
. "$here/../cache.sh"

# What kioskcam links on trixie (make pi prints the same list), and the appliance around it.
# libavcodec61 is opened at run time, for a movie's sound (AAC) and H.264 in review; console-setup-linux has the
# overlay's font.
RUNTIME="libgpiod3 libv4l-0t64 libx264-164 libyuv0 libturbojpeg0 libdrm2 libasound2t64 zlib1g libstdc++6
 libavcodec61 console-setup-linux"
# The appliance: systemd, Ethernet by DHCP and the name kioskcam.local (networkd, resolved's mDNS), the clock
# from NTP (a Pi has no RTC, and stills carry their time), the pull (sshd, rsync's rrsync, a Python program:
# rsync only recommends python3, and without it the rsync port answered "rrsync: not found"), the card's
# checks and its roll grown to the card at first boot (e2fsprogs, dosfstools, fdisk's sfdisk). debootstrap
# does not choose among a virtual package's providers: resolved's system bus is named (dbus).
SYSTEM="systemd systemd-sysv udev kmod linux-image-arm64 dbus systemd-resolved systemd-timesyncd
 openssh-server rsync python3 e2fsprogs dosfstools fdisk"
# busybox-static: the configuring boot's initramfs is made from it.
# One line, one space between names (the lists' line breaks go).
# shellcheck disable=SC2086,SC2116
PACKAGES=$(echo $SYSTEM $RUNTIME busybox-static)
# The modules an ext4 root on virtio-blk needs, dependencies first (Debian builds them as modules, and the
# package has no modules.dep: depmod makes it at install).
MODULES="lib/crc16 fs/mbcache fs/jbd2/jbd2 crypto/crc32c_generic fs/ext4/ext4 drivers/block/virtio_blk"

# What makes the root besides this script and the packages: the tools that unpack it and the machine that
# configures it.
cache_key pi-image-root "file:$here/image-root.sh" "text:$SUITE arm64 $PACKAGES" \
  "cmd:board/debian-index.py --suite $SUITE --arch arm64 versions --required $PACKAGES" \
  "cmd:dpkg-query -W debootstrap qemu-system-arm e2fsprogs"

# make_root DIR: the entry's content. (Its body is not indented: its here-documents are the machine's scripts.)
make_root() {
OUT=$1
start=$SECONDS
tree=$OUT/tree
echo "pi-image: unpacking trixie arm64 into $tree"
debootstrap --foreign --arch=arm64 --variant=minbase --include="${PACKAGES// /,}" "$SUITE" "$tree" "$MIRROR" \
  > "$OUT/unpack.log" 2>&1 || { tail -20 "$OUT/unpack.log"; return 1; }
# debootstrap points /proc at the host's for a chroot; the emulated machine mounts its own there.
rm -f "$tree/proc"
mkdir -p "$tree/proc"

echo "pi-image: the configuring boot's kernel and initramfs"
kernel=$OUT/kernel
mkdir -p "$kernel"
for deb in "$tree"/var/cache/apt/archives/linux-image-*-arm64_*.deb "$tree"/var/cache/apt/archives/busybox-static_*.deb; do
  dpkg-deb -x "$deb" "$kernel"
done
release=$(ls "$kernel/usr/lib/modules")
initramfs=$OUT/initramfs
mkdir -p "$initramfs/bin" "$initramfs/modules" "$initramfs/root" "$initramfs/proc" "$initramfs/dev"
cp "$kernel/usr/bin/busybox" "$initramfs/bin/"
names=()
for module in $MODULES; do
  # busybox's insmod takes the module itself, not xz.
  xz -dc "$kernel/usr/lib/modules/$release/kernel/$module.ko.xz" > "$initramfs/modules/${module##*/}.ko"
  names+=("${module##*/}")
done
cat > "$initramfs/init" <<EOF
#!/bin/busybox sh
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t devtmpfs devtmpfs /dev
for module in ${names[*]}; do insmod /modules/\$module.ko || echo "pi-image: insmod \$module failed"; done
mount -t ext4 /dev/vda /root || { echo "pi-image: no root on /dev/vda"; poweroff -f; }
umount /proc /dev
exec switch_root /root /kioskcam-configure
EOF
chmod +x "$initramfs/init"
(cd "$initramfs" && find . | cpio --quiet -o -H newc | gzip -1) > "$OUT/initramfs.gz"
rm -rf "$initramfs"

# In the root, run once as its init: the second stage (every package's maintainer scripts), then what an image
# must not carry from here, then the root as a tar on the second disk, then power off.
# What makes it slow under TCG, measured by the marks it prints (a quiet host, before these settings): dpkg
# unpacking the base system 954 s, the kernel's postinst making an initramfs 318 s, and initramfs-tools' trigger
# making it again at the end 272 s, of 1,970 s. So: the kernel's own hook is told not to (INITRD=No, the
# switch Debian's kernel hooks read; the trigger then finds no initramfs to update), and the one initramfs is
# made after every package is configured. dpkg does not fsync each file it unpacks (force-unsafe-io: the
# machine syncs once before the tar, and a root that fails is thrown away); the setting is not archived.
cat > "$tree/kioskcam-configure" <<'EOF'
#!/bin/sh
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
(while sleep 30; do echo "pi-image: at $(cut -d' ' -f1 /proc/uptime) s"; done) &
echo force-unsafe-io > /etc/dpkg/dpkg.cfg.d/kioskcam-configure
# The second stage unmounts the /proc it used; update-initramfs reads it.
if INITRD=No /debootstrap/debootstrap --second-stage && mount -t proc proc /proc && update-initramfs -c -k all; then
  rm -f /etc/dpkg/dpkg.cfg.d/kioskcam-configure
  apt-get clean
  rm -f /etc/ssh/ssh_host_*
  rm -f /kioskcam-configure
  # /proc, /sys and /dev are other file systems: their folders are kept, not their contents.
  if tar --create --file=/dev/vdb --one-file-system --numeric-owner --xattrs --xattrs-include='*' \
      --directory=/ .; then
    echo "pi-image: configured"
  fi
fi
sync
# The second stage unmounts the /proc it used.
mount -t proc proc /proc 2>/dev/null
echo 1 > /proc/sys/kernel/sysrq
echo o > /proc/sysrq-trigger
sleep 60
EOF
chmod +x "$tree/kioskcam-configure"
mke2fs -q -t ext4 -L kioskcam-root -d "$tree" "$OUT/root.img" 3G
rm -rf "$tree"
truncate -s 3G "$OUT/root.tar"
echo "pi-image: unpacked in $((SECONDS - start)) s; configuring in qemu-system-aarch64 (TCG, about 20 minutes)"
configure=$SECONDS
[ -z "${KIOSKCAM_BOOT_LOG:-}" ] || echo "emulated Pi (configuring the image's root)" >> "$KIOSKCAM_BOOT_LOG"
# The kernel's mitigations are off in this throwaway machine: with KASLR, trixie's kernel forces page table
# isolation, and under TCG each switch of the translation table's ASID (twice a system call) empties QEMU's
# whole TLB. Its disks ignore flushes (cache=unsafe): tar's output is read only after QEMU has exited. With
# force-unsafe-io, these took the unpack from 954 s to 843 s; the initramfs made once saved the most.
timeout 3600 qemu-system-aarch64 -M virt -cpu cortex-a72 -smp 2 -m 2048 -nographic -no-reboot \
  -kernel "$kernel/boot/vmlinuz-$release" -initrd "$OUT/initramfs.gz" -append "console=ttyAMA0 rw panic=-1 nokaslr kpti=0 mitigations=off" \
  -drive "file=$OUT/root.img,if=virtio,format=raw,cache=unsafe" -drive "file=$OUT/root.tar,if=virtio,format=raw,cache=unsafe" \
  > "$OUT/configure.log" 2>&1 || true
if ! grep -q "^pi-image: configured" "$OUT/configure.log"; then
  echo "pi-image: configuring failed; the end of its configure.log:" >&2
  tail -30 "$OUT/configure.log" >&2
  cp "$OUT/configure.log" "$PI_DIR/image-root-configure.log"
  return 1
fi
# The tar's end: GNU tar pads its archive with zeros, and the rest of the disk is zeros too.
size=$(tar --list --file="$OUT/root.tar" --totals 2>&1 >/dev/null | sed -n 's/^Total bytes read: \([0-9]*\).*/\1/p')
truncate -s "$size" "$OUT/root.tar"
rm -f "$OUT/root.img"
echo "pi-image: configured in $((SECONDS - configure)) s, $((SECONDS - start)) s in all: root.tar ($((size / 1048576)) MiB)"
}

mkdir -p "$PI_DIR"
cache_use make_root
[ ! -e "$PI_DIR/image" ] || [ -L "$PI_DIR/image" ] || rm -rf "${PI_DIR:?}/image"
ln -sfn "$CACHE_DIR" "$PI_DIR/image"
