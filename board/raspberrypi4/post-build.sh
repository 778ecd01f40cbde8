#!/bin/sh
# Post-build for kioskcam images: runs after Buildroot's own raspberrypi4-64 post-build, with the target
# folder as $1 (Buildroot exports BR2_CONFIG and BUILD_DIR). Written for Buildroot; not run here yet.
set -eu

TARGET_DIR=$1

# Buildroot's sshd_config is upstream's, which has no Include: without this the drop-in is never read.
# First, because in sshd the first value obtained wins.
if ! grep -q '^Include /etc/ssh/sshd_config.d/\*.conf' "$TARGET_DIR/etc/ssh/sshd_config"; then
	sed -i '1i Include /etc/ssh/sshd_config.d/*.conf' "$TARGET_DIR/etc/ssh/sshd_config"
fi

# rrsync ships in rsync's source (support/rrsync) but Buildroot's rsync package does not install it.
for rrsync in "$BUILD_DIR"/rsync-*/support/rrsync; do
	[ -f "$rrsync" ] && install -D -m 0755 "$rrsync" "$TARGET_DIR/usr/bin/rrsync"
done
if [ ! -x "$TARGET_DIR/usr/bin/rrsync" ]; then
	echo "post-build: rrsync not found under $BUILD_DIR/rsync-*/support: rsync pulls will be refused" >&2
fi

# The keys that may pull the roll, when the builder gives them; otherwise the folder stays empty and
# nobody can log in as camera until an operator adds /etc/kioskcam/ssh/authorized_keys.
if [ -n "${KIOSKCAM_AUTHORIZED_KEYS:-}" ]; then
	install -D -m 0644 "$KIOSKCAM_AUTHORIZED_KEYS" "$TARGET_DIR/etc/kioskcam/ssh/authorized_keys"
fi

if grep -q '^BR2_INIT_SYSTEMD=y' "$BR2_CONFIG"; then
	mkdir -p "$TARGET_DIR/etc/systemd/system/multi-user.target.wants"
	ln -sf /usr/lib/systemd/system/kioskcam.service \
		"$TARGET_DIR/etc/systemd/system/multi-user.target.wants/kioskcam.service"
elif [ -f "$TARGET_DIR/etc/mdev.conf" ]; then
	# BusyBox mdev instead of udev: the same rule as 60-kioskcam-gpio.rules.
	if ! grep -q '^gpiochip' "$TARGET_DIR/etc/mdev.conf"; then
		echo 'gpiochip[0-9]* root:gpio 0660' >>"$TARGET_DIR/etc/mdev.conf"
	fi
fi
