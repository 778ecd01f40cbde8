#!/bin/sh
# kioskcam virtual board: first (and only) command run in the QEMU guest.
# Started by `board start` through vng; when it exits the guest powers off.
#
# usage: guest-init.sh SHARE_DIR GPIO_SIM_MODULE
#
# Brings up the board's devices with their real kernel drivers, then runs the
# agent that the host CLI talks to:
#   /dev/video0      vivid, video capture node (75% colour bars, OSD off)
#   /dev/video2-4    vicodec: FWHT stateful encoder, stateful decoder, stateless decoder (memory to memory)
#   /dev/gpiochip0   gpio-sim, one bank of 8 named lines (label kioskcam-gpio)
#   /dev/dri/card0   bochs-drm on QEMU's bochs-display
#   /dev/mapper/card the card (virtio-blk /dev/vda under device-mapper), mounted at /run/kioskcam-card
set -eu

share=$1
module=$2
here=$(cd "$(dirname "$0")" && pwd)

log() { echo "guest-init: $*"; }
fail() { echo "guest-init: ERROR: $*" >&2; exit 1; }

# A repo under /tmp or /var/tmp (the guest's own, empty) comes as an extra 9p
# device: mount it read-only at its host path, then put the shared folder,
# which may lie inside it, back on top.
if [ -n "${KIOSKCAM_BOARD_REPO:-}" ]; then
    repo=$KIOSKCAM_BOARD_REPO
    mkdir -p /run/kioskcam-share
    mount --make-rprivate / 2>/dev/null || true
    mount --move "$share" /run/kioskcam-share || fail "cannot move $share aside"
    mkdir -p "$repo"
    mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000,ro kioskcam.repo "$repo" \
        || fail "cannot mount the repo at $repo"
    mkdir -p "$share" 2>/dev/null || true
    [ -d "$share" ] || fail "$share is missing in the repo mount"
    mount --move /run/kioskcam-share "$share" || fail "cannot put $share back"
    log "repo mounted read-only at $repo"
fi

[ -d "$share" ] || fail "shared folder $share is not visible in the guest"
[ -f "$module" ] || fail "gpio-sim module $module is not visible in the guest"

# --- configfs -------------------------------------------------------------
if ! grep -q ' /sys/kernel/config ' /proc/mounts; then
    modprobe configfs || true
    mount -t configfs none /sys/kernel/config || fail "cannot mount configfs"
fi

# --- camera: vivid ----------------------------------------------------------
# Two instances, each only a video capture node: /dev/video0 (the camera every
# test uses) and /dev/video1 (a second camera for the camera button). Inputs are
# vivid's defaults (webcam, TV, S-Video, HDMI).
modprobe vivid n_devs=2 node_types=0x1,0x1 vid_cap_nr=0,1 || fail "modprobe vivid failed"

# --- codec: vicodec ------------------------------------------------------------------
# The kernel's virtual FWHT codec (built out of tree with the mem2mem framework), on the multi-planar API as
# a Pi's bcm2835-codec speaks it: three memory-to-memory nodes (stateful encoder, stateful decoder,
# stateless decoder) after the cameras. vivid has already loaded videodev, videobuf2 and mc.
insmod "$(dirname "$module")/vicodec.ko" multiplanar=1 || fail "insmod vicodec.ko failed"

# --- buttons: gpio-sim --------------------------------------------------------
insmod "$module" || fail "insmod $module failed"
cfg=/sys/kernel/config/gpio-sim/kioskcam
mkdir "$cfg" "$cfg/bank0"
echo kioskcam-gpio > "$cfg/bank0/label"
echo 8 > "$cfg/bank0/num_lines"
i=0
for name in shutter mode cancel zoom-in zoom-out flash tally ready; do
    mkdir "$cfg/bank0/line$i"
    echo "$name" > "$cfg/bank0/line$i/name"
    i=$((i + 1))
done
echo 1 > "$cfg/live"
dev_name=$(cat "$cfg/dev_name")
chip=$(cat "$cfg/bank0/chip_name")
# Buttons are active-low with a pull-up: idle (released) = line high. Done
# before any consumer can request the lines.
for i in 0 1 2 3 4; do
    echo pull-up > "/sys/devices/platform/$dev_name/$chip/sim_gpio$i/pull"
done
log "gpio-sim $dev_name: $chip label $(cat "$cfg/bank0/label")"

# --- display: bochs-drm -----------------------------------------------------------
modprobe bochs || fail "modprobe bochs failed"

# --- network: the board's user-mode NIC (QEMU SLIRP) -------------------------------
# A static address in SLIRP's default network: no DHCP client to wait for. The host reaches guest ports 22
# and 2222 through the forwards `board start` picked (boot.json, `board port 22`).
modprobe virtio_net 2>/dev/null || true
ip link set lo up
n=0
nic=
while [ -z "$nic" ]; do
    for dev in /sys/class/net/*; do
        [ "$(readlink "$dev/device/driver" 2>/dev/null | sed 's|.*/||')" = virtio_net ] && nic=${dev##*/}
    done
    [ -n "$nic" ] && break
    n=$((n + 1))
    [ "$n" -lt 100 ] || fail "no virtio network interface appeared"
    sleep 0.1
done
ip link set "$nic" up || fail "cannot bring $nic up"
ip addr add 10.0.2.15/24 dev "$nic" || fail "cannot address $nic"
ip route add default via 10.0.2.2 dev "$nic" || fail "cannot route through $nic"
log "network: $nic 10.0.2.15/24"

n=0
while [ ! -e /dev/video0 ] || [ ! -e /dev/video1 ] || [ ! -e /dev/dri/card0 ] || [ ! -e "/dev/$chip" ]; do
    n=$((n + 1))
    [ "$n" -lt 100 ] || fail "device nodes did not appear (video0, video1, dri/card0, $chip)"
    sleep 0.1
done

# A stable picture: no OSD text (it carries a changing time stamp and counters).
v4l2-ctl -d /dev/video0 -c osd_text_mode=2 || fail "cannot turn vivid's OSD off"
v4l2-ctl -d /dev/video1 -c osd_text_mode=2 || fail "cannot turn vivid's OSD off on video1"

# --- storage: the card (virtio-blk, device-mapper), ext4 at /run/kioskcam-card ----------------
sh "$here/guest-card.sh" init || fail "the card did not come up (guest-card.sh init)"

log "devices ready: /dev/video0 /dev/video1 /dev/dri/card0 /dev/$chip"
exec /usr/bin/python3 "$here/guest-agent.py" "$share" "$cfg"
