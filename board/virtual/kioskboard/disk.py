"""The board's memory card: one raw disk image under the state dir, attached to the guest as virtio-blk.

cache=writeback: what the guest flushed (fsync, a journal commit, FUA) is in the image file; what it did not is
in the guest's page cache only, so SIGKILL of QEMU is the guest losing power. guest-card.sh cuts the disk into
the card itself, a replay target and a write log (dm-linear), and lays the faults over the card (device-mapper).
"""

import os

from .errors import BoardError

# guest-card.sh's regions, in MiB: the card, the replay target (as large), and dm-log-writes' log.
CARD_MB = 128
LOG_MB = 512
DISK_MB = 2 * CARD_MB + LOG_MB


def image_path(paths):
    return os.path.join(paths.state, "card.img")


def drive_option(paths):
    """QEMU's -drive for the card, made (sparse, zeroed) when missing or of another size."""
    image = image_path(paths)
    if any(ch in image for ch in " ,\t\n'\""):
        raise BoardError("state dir path must not contain spaces, commas or quotes: %s" % paths.state)
    try:
        size = os.path.getsize(image)
    except OSError:
        size = None
    if size != DISK_MB << 20:
        with open(image, "wb") as f:
            f.truncate(DISK_MB << 20)
    return "-drive file=%s,if=virtio,format=raw,cache=writeback" % image
