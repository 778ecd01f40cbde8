################################################################################
#
# kioskcam
#
################################################################################

# The source is this repository (the external tree is its board/ folder); the binary is prebuilt,
# because Buildroot has no Swift cross-compiler. The source is still taken so that legal-info and
# the rootfs overlay come from the same revision as the binary.
KIOSKCAM_VERSION = 1.0
KIOSKCAM_SITE = $(BR2_EXTERNAL_KIOSKCAM_PATH)/..
KIOSKCAM_SITE_METHOD = local
KIOSKCAM_DEPENDENCIES = libv4l libgpiod jpeg libdrm
KIOSKCAM_BINARY = $(call qstrip,$(BR2_PACKAGE_KIOSKCAM_BINARY))

define KIOSKCAM_BUILD_CMDS
	@test -x "$(KIOSKCAM_BINARY)" || { \
		echo "kioskcam: BR2_PACKAGE_KIOSKCAM_BINARY must name a built kioskcam (board/README.md)"; \
		exit 1; }
endef

define KIOSKCAM_INSTALL_TARGET_CMDS
	$(INSTALL) -D -m 0755 $(KIOSKCAM_BINARY) $(TARGET_DIR)/usr/bin/kioskcam
	$(INSTALL) -D -m 0644 $(@D)/rootfs-overlay/etc/kioskcam/kioskcam.conf \
		$(TARGET_DIR)/etc/kioskcam/kioskcam.conf
	$(INSTALL) -D -m 0644 $(@D)/rootfs-overlay/etc/ssh/sshd_config.d/kioskcam-camera.conf \
		$(TARGET_DIR)/etc/ssh/sshd_config.d/kioskcam-camera.conf
	$(INSTALL) -D -m 0644 $(@D)/rootfs-overlay/etc/kioskcam/ssh/README \
		$(TARGET_DIR)/etc/kioskcam/ssh/README
endef

define KIOSKCAM_INSTALL_INIT_SYSTEMD
	$(INSTALL) -D -m 0644 $(@D)/rootfs-overlay/usr/lib/systemd/system/kioskcam.service \
		$(TARGET_DIR)/usr/lib/systemd/system/kioskcam.service
	$(INSTALL) -D -m 0644 $(@D)/rootfs-overlay/usr/lib/sysusers.d/kioskcam.conf \
		$(TARGET_DIR)/usr/lib/sysusers.d/kioskcam.conf
	$(INSTALL) -D -m 0644 $(@D)/rootfs-overlay/usr/lib/tmpfiles.d/kioskcam.conf \
		$(TARGET_DIR)/usr/lib/tmpfiles.d/kioskcam.conf
	$(INSTALL) -D -m 0644 $(@D)/rootfs-overlay/usr/lib/udev/rules.d/60-kioskcam-gpio.rules \
		$(TARGET_DIR)/usr/lib/udev/rules.d/60-kioskcam-gpio.rules
endef

define KIOSKCAM_INSTALL_INIT_SYSV
	$(INSTALL) -D -m 0755 $(@D)/rootfs-overlay/etc/init.d/S90kioskcam \
		$(TARGET_DIR)/etc/init.d/S90kioskcam
endef

# The accounts for images without systemd-sysusers (BusyBox init); the same as sysusers.d says.
define KIOSKCAM_USERS
	kioskcam 950 kioskcam 950 * /var/lib/kioskcam /bin/false video,gpio kioskcam camera service
	camera 951 camera 951 * / /bin/sh - camera roll, read-only over SSH
endef

define KIOSKCAM_PERMISSIONS
	/var/lib/kioskcam d 755 0 0 - - - - -
	/var/lib/kioskcam/roll d 2750 950 951 - - - - -
endef

$(eval $(generic-package))
