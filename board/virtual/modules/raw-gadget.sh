# shellcheck shell=bash disable=SC2034
# raw-gadget: userspace is the whole USB device (the board's webcam, on dummy_hcd). Debian leaves
# CONFIG_USB_RAW_GADGET unset; its uapi header is in Debian's kernel headers already.
module=raw_gadget
sources="drivers/usb/gadget/legacy/raw_gadget.c"
objects="raw_gadget.o"
