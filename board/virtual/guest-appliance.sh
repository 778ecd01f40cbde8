#!/bin/sh
# kioskcam virtual board: makes the guest look like the appliance's operating system, from the files that
# ship in rootfs-overlay/, so that the SSH pull and the service's account are tested as they ship.
# Run in the guest as root (board run), once per boot; running it again is harmless.
#
# usage: guest-appliance.sh KIOSKCAM_BINARY KEY_DIR
#   KEY_DIR holds ssh_host_ed25519_key (the guest sshd's host key) and authorized_keys (the keys allowed to
#   pull as `camera`), made per run by whoever pulls; they are copied to where the appliance keeps them.
#
# What it does, each step as the appliance's image would have it:
#   accounts   systemd-sysusers with the shipped sysusers.d file (kioskcam, camera, gpio)
#   roll       a tmpfs of its own at /var/lib/kioskcam/roll ([roll] mount = separate), folders and modes by
#              systemd-tmpfiles with the shipped tmpfiles.d file (run again after mounting, as at boot)
#   devices    the shipped udev rule, through the guest's udevd (virtme starts one), for the gpiochips
#   service    the binary at /usr/bin/kioskcam, the configuration at /etc/kioskcam/kioskcam.conf, as the unit
#              names them, and the unit itself in /usr/lib/systemd/system (guest-systemd.sh's systemd runs it)
#   sshd       the shipped drop-in in /etc/ssh/sshd_config.d/ beside Debian's sshd_config, the key files
#              (root-owned, as docs/appliance.md says); sshd itself is started by the caller (board spawn).
# The guest's /etc, /usr and /var are virtme's in-memory overlays: nothing here touches the host.
set -eu

binary=$1
keys=$2
repo=$(cd "$(dirname "$0")/../.." && pwd)
overlay=$repo/rootfs-overlay

# virtme bind-mounts a scratch file over /etc/shadow; sysusers replaces the file by renaming onto it.
if mountpoint -q /etc/shadow; then umount /etc/shadow; fi
systemd-sysusers "$overlay/usr/lib/sysusers.d/kioskcam.conf"

systemd-tmpfiles --create "$overlay/usr/lib/tmpfiles.d/kioskcam.conf"
if ! mountpoint -q /var/lib/kioskcam/roll; then
    mount -t tmpfs -o size=256m,nosuid,nodev,noexec kioskcam-roll /var/lib/kioskcam/roll
fi
systemd-tmpfiles --create "$overlay/usr/lib/tmpfiles.d/kioskcam.conf"

install -m 0644 "$overlay/usr/lib/udev/rules.d/60-kioskcam-gpio.rules" /etc/udev/rules.d/
udevadm control --reload
udevadm trigger --action=add --subsystem-match=gpio
udevadm settle

install -m 0755 "$binary" /usr/bin/kioskcam
# The libcamera backend's shim, where an installed kioskcam looks for it; make release leaves it beside the binary.
shim=$(dirname "$binary")/libkioskcam-libcamera.so
if [ -f "$shim" ]; then install -D -m 0644 "$shim" /usr/lib/kioskcam/libkioskcam-libcamera.so; fi
install -m 0644 "$overlay/usr/lib/systemd/system/kioskcam.service" /usr/lib/systemd/system/
install -d -m 0755 /etc/kioskcam /etc/kioskcam/ssh
sed -e 's|@ROLL@|/var/lib/kioskcam/roll|' "$repo/board/virtual/kioskcam.conf" > /etc/kioskcam/kioskcam.conf
chmod 0644 /etc/kioskcam/kioskcam.conf

install -m 0644 "$overlay/etc/ssh/sshd_config.d/kioskcam-camera.conf" /etc/ssh/sshd_config.d/
# Debian's sshd_config reads the drop-ins first, and the first HostKey seen wins over its defaults.
install -m 0600 "$keys/ssh_host_ed25519_key" /etc/ssh/board_host_ed25519_key
echo "HostKey /etc/ssh/board_host_ed25519_key" > /etc/ssh/sshd_config.d/00-board-hostkey.conf
install -o root -g root -m 0644 "$keys/authorized_keys" /etc/kioskcam/ssh/authorized_keys
# sshd's privilege separation folder (ssh.service makes it), and no boot-time nologin: pam_nologin would
# turn away every account but root.
install -d -m 0755 /run/sshd
rm -f /run/nologin /etc/nologin
/usr/sbin/sshd -t
