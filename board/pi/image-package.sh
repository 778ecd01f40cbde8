#!/usr/bin/env bash
# The Pi image's root with kioskcam's arm64 package installed (issue 53, part 5): image-root.sh's configured
# trixie root, and in it `dpkg --install` of the package make deb built, its maintainer scripts run as on any
# Debian system (the accounts made by systemd-sysusers, the folders by systemd-tmpfiles, the unit enabled by
# deb-systemd-helper), inside the emulated aarch64 machine image-root.sh configures the root in
# (emulated-root.sh). dpkg refuses a package whose Depends the root does not hold, so image-root.sh's package
# list is checked against the binary's needs as dpkg-shlibdeps computed them.
#
# A layer on top of the root's cache entry: an entry of its own, keyed by this script, that entry's key and the
# package's bytes, so that a change to kioskcam installs it again (about a minute under TCG) without
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
# shellcheck source=board/pi/emulated-root.sh
. "$here/emulated-root.sh"

root=$(readlink -f "$PI_DIR/image")
[ -f "$root/root.tar" ] || { echo "pi-image: no configured root at $PI_DIR/image (image-root.sh makes it)" >&2; exit 1; }
# The root's entry is named by its key (a hash of everything that makes it): the folder above its content.
cache_key pi-image-package "file:$here/image-package.sh" "file:$here/emulated-root.sh" \
  "text:$(basename "$(dirname "$root")")" "file:$DEB" "cmd:dpkg-query -W e2fsprogs qemu-system-arm tar"

# install_package DIR: the entry's content.
install_package() {
  local out=$1 start=$SECONDS size
  root_tree "$root" "$out/tree"
  cp "$DEB" "$out/tree/kioskcam.deb"
  # Run once as the root's init: the package installed, the root as a tar on the second disk, power off.
  # force-unsafe-io as in image-root.sh: the machine syncs once before the tar, and a root that fails is thrown
  # away; the setting is not archived. (tar's --one-file-system keeps /proc's and /sys's folders, not their
  # contents, but says sysfs's changed as it read it, and fails: they are unmounted first. /dev stays: the tar
  # goes to a node there.)
  cat > "$out/tree/kioskcam-configure" <<SCRIPT
#!/bin/sh
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
echo force-unsafe-io > /etc/dpkg/dpkg.cfg.d/kioskcam-configure
if dpkg --install /kioskcam.deb && dpkg-query -W -f '\${Status} \${Version}\n' kioskcam; then
  rm -f /etc/dpkg/dpkg.cfg.d/kioskcam-configure /kioskcam.deb /kioskcam-configure
  umount /sys /proc
  if tar --create --file=/dev/vdb --one-file-system --numeric-owner --xattrs --xattrs-include='*' --directory=/ .
  then
    echo "pi-image: package installed"
  fi
fi
$POWER_OFF
SCRIPT
  chmod +x "$out/tree/kioskcam-configure"
  echo "pi-image: installing $(basename "$DEB") in qemu-system-aarch64 (TCG)"
  [ -z "${KIOSKCAM_BOOT_LOG:-}" ] || echo "emulated Pi (installing the package into the image's root)" >> "$KIOSKCAM_BOOT_LOG"
  run_tree "$root" "$out/tree" "$out/install.log" 4096
  if ! grep -q "^pi-image: package installed" "$out/install.log"; then
    echo "pi-image: installing the package failed; the end of the machine's console:" >&2
    tail -30 "$out/install.log" >&2
    cp "$out/install.log" "$PI_DIR/image-package-install.log"
    return 1
  fi
  grep -E "^(Unpacking|Setting up|install ok installed) " "$out/install.log" | sed 's/^/pi-image:   /'
  # The tar's end: GNU tar pads its archive with zeros, and the rest of the disk is zeros too.
  size=$(tar --list --file="$out/install.log.out" --totals 2>&1 >/dev/null | sed -n 's/^Total bytes read: \([0-9]*\).*/\1/p')
  truncate -s "$size" "$out/install.log.out"
  mv "$out/install.log.out" "$out/root.tar"
  echo "pi-image: the package installed in $((SECONDS - start)) s"
}

cache_use install_package
[ ! -e "$PI_DIR/image-package" ] || [ -L "$PI_DIR/image-package" ] || rm -rf "${PI_DIR:?}/image-package"
ln -sfn "$CACHE_DIR" "$PI_DIR/image-package"
