# shellcheck shell=bash disable=SC2034
# dummy_hcd, the webcam's USB host and device controller: Debian's own module, but with its host controller under
# the PCI host bridge (pci0000:00, which ACPI describes) instead of bare under /sys/devices/platform. libcamera's
# uvcvideo pipeline names a camera after the first ancestor of its USB device that firmware describes
# (firmware_node or of_node), as it does a real controller on PCI or in a device tree, and drops a camera that has
# none ("Can not find controller ID"). Nothing else changes: the module's name, the bus name uvcvideo reports
# (usb-dummy_hcd.0-1), the UDC raw-gadget binds (dummy_udc.0).
module=dummy_hcd
sources="drivers/usb/gadget/udc/dummy_hcd.c"
objects="dummy_hcd.o"

patch_sources() {
    cat > pci-root.c <<'C'
#include <linux/pci.h>

/* The root PCI bus's host bridge, or none (the controller then stays a bare platform device). */
static struct device *kioskcam_pci_root(void)
{
	struct pci_bus *bus = pci_find_bus(0, 0);

	return bus ? bus->bridge : NULL;
}

C
    sed -i '/^static int __init dummy_hcd_init(void)$/e cat pci-root.c' dummy_hcd.c
    sed -i 's/^\t\tretval = platform_device_add(the_hcd_pdev\[i\]);$/\t\tthe_hcd_pdev[i]->dev.parent = kioskcam_pci_root();\n&/' dummy_hcd.c
    [ "$(grep -c 'kioskcam_pci_root(' dummy_hcd.c)" = 2 ] \
        || die "dummy_hcd.c did not take the PCI parent patch (kernel source changed?)"
}
