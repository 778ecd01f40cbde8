#!/usr/bin/env bash
# The Pi image's root with kioskcam's arm64 package installed (issue 53, part 5): image-root.sh's configured
# trixie root, and in it `dpkg --install` of the package make deb built, its maintainer scripts run as on any
# Debian system (the accounts made by systemd-sysusers, the folders by systemd-tmpfiles, the unit enabled by
# deb-systemd-helper), inside the emulated aarch64 machine image-root.sh configures the root in (this host has
# no binfmt_misc: no arm64 program runs here). dpkg refuses a package whose Depends the root does not hold, so
# image-root.sh's package list is checked against the binary's needs as dpkg-shlibdeps computed them.
#
# A layer on top of the root's cache entry: an entry of its own, keyed by this script, that entry's key and the
# package's bytes, so that a change to kioskcam installs it again (about two minutes under TCG) without
# configuring the root again (about fifteen), and the ext4 and vfat images of one build share it.
#
# Usage: PI_DIR=... image-package.sh DEB. Made (the entry's content, linked as $PI_DIR/image-package): root.tar
# (written by the emulated machine's GNU tar, as image-root.sh's), install.log (the machine's console).
set -euo pipefail
PI_DIR=${PI_DIR:?set PI_DIR}
DEB=${1:?usage: image-package.sh DEB}
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=board/cache.sh
. "$here/../cache.sh"

root=$(readlink -f "$PI_DIR/image")
[ -f "$root/root.tar" ] || { echo "pi-image: no configured root at $PI_DIR/image (image-root.sh makes it)" >&2; exit 1; }
# The root's entry is named by its key (a hash of everything that makes it): the folder above its content.
cache_key pi-image-package "file:$here/image-package.sh" "text:$(basename "$(dirname "$root")")" "file:$DEB" \
  "cmd:dpkg-query -W e2fsprogs qemu-system-arm tar"

# install_package DIR: the entry's content. (Not indented: its here-document is the machine's script.)
install_package() {
OUT=$1
start=$SECONDS
tree=$OUT/tree
mkdir -p "$tree"
tar --extract --file="$root/root.tar" --directory="$tree" --numeric-owner --preserve-permissions \
  --xattrs --xattrs-include='*'
cp "$DEB" "$tree/kioskcam.deb"
# Run once as the root's init (the configuring initramfs switches to /kioskcam-configure): the package
# installed, the root as a tar on the second disk, power off. force-unsafe-io as in image-root.sh: the machine
# syncs once before the tar, and a root that fails is thrown away; the setting is not archived.
cat > "$tree/kioskcam-configure" <<'EOF'
#!/bin/sh
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
echo force-unsafe-io > /etc/dpkg/dpkg.cfg.d/kioskcam-configure
if dpkg --install /kioskcam.deb && dpkg-query -W -f '${Status} ${Version}\n' kioskcam; then
  rm -f /etc/dpkg/dpkg.cfg.d/kioskcam-configure /kioskcam.deb /kioskcam-configure
  # (--one-file-system keeps their folders, not their contents; but tar says sysfs's changed as it read it, and
  # fails. /dev stays: the tar goes to a node there.)
  umount /sys /proc
  if tar --create --file=/dev/vdb --one-file-system --numeric-owner --xattrs --xattrs-include='*' \
      --directory=/ .; then
    echo "pi-image: package installed"
  fi
fi
sync
mount -t proc proc /proc 2>/dev/null
echo 1 > /proc/sys/kernel/sysrq
echo o > /proc/sysrq-trigger
sleep 60
EOF
chmod +x "$tree/kioskcam-configure"
size=$(du -s --block-size=1M "$tree" | cut -f1)
mke2fs -q -t ext4 -d "$tree" "$OUT/root.img" $((size + size / 4 + 256))M
rm -rf "$tree"
truncate -s $((size + size / 4 + 256))M "$OUT/root.tar"
release=$(ls "$root/kernel/usr/lib/modules")
echo "pi-image: installing $(basename "$DEB") in qemu-system-aarch64 (TCG)"
installing=$SECONDS
[ -z "${KIOSKCAM_BOOT_LOG:-}" ] || echo "emulated Pi (installing the package into the image's root)" >> "$KIOSKCAM_BOOT_LOG"
# The same throwaway machine as image-root.sh's, with its settings and their reasons.
timeout 1200 qemu-system-aarch64 -M virt -cpu cortex-a72 -smp 2 -m 2048 -nographic -no-reboot \
  -kernel "$root/kernel/boot/vmlinuz-$release" -initrd "$root/initramfs.gz" \
  -append "console=ttyAMA0 rw panic=-1 nokaslr kpti=0 mitigations=off" \
  -drive "file=$OUT/root.img,if=virtio,format=raw,cache=unsafe" -drive "file=$OUT/root.tar,if=virtio,format=raw,cache=unsafe" \
  > "$OUT/install.log" 2>&1 || true
if ! grep -q "^pi-image: package installed" "$OUT/install.log"; then
  echo "pi-image: installing the package failed; the end of the machine's console:" >&2
  tail -30 "$OUT/install.log" >&2
  cp "$OUT/install.log" "$PI_DIR/image-package-install.log"
  return 1
fi
grep -E "^(Setting up|Unpacking|install ok installed) " "$OUT/install.log" | sed 's/^/pi-image:   /'
size=$(tar --list --file="$OUT/root.tar" --totals 2>&1 >/dev/null | sed -n 's/^Total bytes read: \([0-9]*\).*/\1/p')
truncate -s "$size" "$OUT/root.tar"
rm -f "$OUT/root.img"
echo "pi-image: the package installed in $((SECONDS - installing)) s, $((SECONDS - start)) s in all"
}

cache_use install_package
[ ! -e "$PI_DIR/image-package" ] || [ -L "$PI_DIR/image-package" ] || rm -rf "${PI_DIR:?}/image-package"
ln -sfn "$CACHE_DIR" "$PI_DIR/image-package"
