#!/usr/bin/env bash
# make pi-image-test's package test (issue 53, part 6 for arm64): make deb's arm64 kioskcam package installed,
# upgraded, removed and purged by dpkg in the Pi image's configured trixie root, in the emulated aarch64 machine
# (emulated-root.sh), as on a Debian or Raspberry Pi OS system that runs it: dpkg's own answers and the files
# judge each step. The upgrade is the same package with a higher version (dpkg-deb -R, the version raised,
# dpkg-deb -b), over a conffile edited as a user would. No systemd runs in that machine, so the postinst's
# start and the prerm's stop are skipped as they are in any chroot: the service under systemd, from the
# package's files, is what the SD-card image's boots test (image-test.py), and the amd64 package's start, stop and
# restart are the board's (PackageDeviceTests.swift).
#
# Usage: PI_DIR=... package-test.sh DEB
set -euo pipefail
PI_DIR=${PI_DIR:?set PI_DIR}
DEB=${1:?usage: package-test.sh DEB}
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=board/pi/emulated-root.sh
. "$here/emulated-root.sh"
root=$(readlink -f "$PI_DIR/image")
[ -f "$root/root.tar" ] || { echo "package-test: no configured root at $PI_DIR/image (image-root.sh makes it)" >&2; exit 1; }
work=$PI_DIR/package-test
rm -rf "$work"
mkdir -p "$work"
start=$SECONDS
version=$(dpkg-deb -f "$DEB" Version)

root_tree "$root" "$work/tree"
cp "$DEB" "$work/tree/kioskcam.deb"
dpkg-deb -R "$DEB" "$work/newer"
sed -i "s/^Version: .*/Version: $version+1/" "$work/newer/DEBIAN/control"
# (Uncompressed: xz here and unxz under emulation cost seconds and prove nothing of the package.)
dpkg-deb --root-owner-group -Znone -b "$work/newer" "$work/tree/kioskcam-newer.deb" > /dev/null
rm -rf "$work/newer"
# The machine's script: each check prints "package-test: ok: WHAT" or "package-test: FAILED: WHAT (GOT)"; the host
# reads them off the console. Every check runs, so one failure does not hide the next.
cat > "$work/tree/kioskcam-configure" <<SCRIPT
#!/bin/sh
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
roll=/var/lib/kioskcam/roll
check() {  # check WHAT EXPECTED GOT
  if [ "\$2" = "\$3" ]; then echo "package-test: ok: \$1"; else echo "package-test: FAILED: \$1 (\$3)"; fi
}
state() { dpkg-query -W -f '\${Status} \${Version}' kioskcam 2>/dev/null; }
ok() { if "\$@" > /dev/null 2>&1; then echo yes; else echo no; fi; }

dpkg --install /kioskcam.deb
check "dpkg --install: install ok installed $version" "install ok installed $version" "\$(state)"
check "the accounts kioskcam and camera" "2" "\$(getent passwd kioskcam camera | wc -l)"
check "the roll as tmpfiles.d makes it: 2750 kioskcam camera" "2750 kioskcam camera" "\$(stat -c '%a %U %G' \$roll)"
check "the unit enabled by the postinst" "/usr/lib/systemd/system/kioskcam.service" \\
  "\$(readlink /etc/systemd/system/multi-user.target.wants/kioskcam.service)"
check "kioskcam check-config on the installed configuration" "yes" "\$(ok kioskcam check-config)"
check "kioskcam --version runs" "yes" "\$(ok kioskcam --version)"
echo "package-test: \$(kioskcam --version)"

echo '# edited on this kiosk' >> /etc/kioskcam/kioskcam.conf
mkdir -p \$roll/DCIM/100KIOSK
echo still > \$roll/DCIM/100KIOSK/IMG_0001.JPG
dpkg --install /kioskcam-newer.deb
check "the upgrade: install ok installed $version+1" "install ok installed $version+1" "\$(state)"
check "the edited conffile kept across the upgrade" "# edited on this kiosk" "\$(tail -n 1 /etc/kioskcam/kioskcam.conf)"
check "the roll kept across the upgrade" "still" "\$(cat \$roll/DCIM/100KIOSK/IMG_0001.JPG)"

dpkg --remove kioskcam
check "dpkg --remove: deinstall ok config-files" "deinstall ok config-files $version+1" "\$(state)"
check "the binary removed" "no" "\$(ok test -e /usr/bin/kioskcam)"
check "the configuration kept by the removal" "# edited on this kiosk" "\$(tail -n 1 /etc/kioskcam/kioskcam.conf)"
check "the roll kept by the removal" "still" "\$(cat \$roll/DCIM/100KIOSK/IMG_0001.JPG)"

dpkg --purge kioskcam
check "dpkg --purge: not installed" "" "\$(state | grep -v '^unknown ok not-installed' || true)"
check "/etc/kioskcam removed by the purge" "no" "\$(ok test -e /etc/kioskcam)"
check "the sshd drop-in removed by the purge" "no" "\$(ok test -e /etc/ssh/sshd_config.d/kioskcam-camera.conf)"
check "the roll kept by the purge" "still" "\$(cat \$roll/DCIM/100KIOSK/IMG_0001.JPG)"
check "the accounts kept by the purge (they own the roll)" "2" "\$(getent passwd kioskcam camera | wc -l)"
echo "package-test: done"
$POWER_OFF
SCRIPT
chmod +x "$work/tree/kioskcam-configure"
[ -z "${KIOSKCAM_BOOT_LOG:-}" ] || echo "emulated Pi (the package test)" >> "$KIOSKCAM_BOOT_LOG"
run_tree "$root" "$work/tree" "$work/console.log"
grep "^package-test: " "$work/console.log" || true
if ! grep -q "^package-test: done" "$work/console.log"; then
  echo "package-test: FAILED: the machine did not finish; its console: $work/console.log" >&2
  tail -30 "$work/console.log" >&2
  exit 1
fi
if grep -q "^package-test: FAILED" "$work/console.log"; then
  echo "package-test: FAILED (the machine's console: $work/console.log)" >&2
  exit 1
fi
echo "package-test: passed in $((SECONDS - start)) s: $(basename "$DEB") installed, upgraded to +1 with an edited conffile, removed and purged on trixie arm64; the roll kept"
