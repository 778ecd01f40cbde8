#!/bin/sh
# kioskcam virtual board: a real systemd (the guest's, Debian's) as PID 1 of its own PID, mount and cgroup
# namespaces, so that the shipped kioskcam.service runs as systemd runs it: its sandbox, its watchdog and its
# restarts are systemd's own. The guest's PID 1 is virtme-ng's init, which cannot be replaced without booting
# the whole guest under systemd; this is the container way (systemd knows it through $container).
# Run in the guest as root, in the background (board spawn); systemd logs to its journal (journalctl, through
# `exec` below). It stops with its namespace: `guest-systemd.sh exec systemctl exit`, or `board kill systemd KILL`
# (unshare ignores TERM, and TERM makes systemd re-execute itself).
#
# usage: guest-systemd.sh               start it (in the background: board spawn systemd -- sh guest-systemd.sh)
#        guest-systemd.sh exec CMD...   run CMD in systemd's PID and mount namespaces, e.g. `systemctl show
#                                       kioskcam`: systemd answers on its private socket only to a client whose
#                                       PID it can see, so systemctl from the guest outside is refused
#
# systemd loads units only from $units below (SYSTEMD_UNIT_PATH): the shipped kioskcam.service as installed
# in /usr/lib/systemd/system, the journal's units, and the board's sysinit.target (guest-init.sh did the
# system's initialisation) and kioskcam-board.target (what it starts: the journal only). Drop-ins go to
# $units/kioskcam.service.d/. /run is the guest's own: systemctl and journalctl work from the guest as usual,
# and the service's control socket folder (RuntimeDirectory) is where `kioskcam shutter` looks.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
self=$here/guest-systemd.sh
units=/run/kioskcam-board/systemd

case ${1:-} in
    exec)
        shift
        [ -f "$units.unshare-pid" ] || { echo "guest-systemd: not started" >&2; exit 1; }
        outside=$(cat "$units.unshare-pid")
        manager=$(cat "/proc/$outside/task/$outside/children" 2>/dev/null) || true
        [ -n "$manager" ] || { echo "guest-systemd: not running" >&2; exit 1; }
        exec nsenter --target "${manager% }" --mount --pid "$@"
        ;;
    # Stage 2, PID 1 of the new PID and mount namespaces: into the cgroup, then a cgroup namespace rooted there.
    --in-pid-namespace)
        echo $$ > "$2/cgroup.procs"
        exec unshare --cgroup "$self" --in-cgroup-namespace
        ;;
    # Stage 3: the cgroup file system as systemd must see it (its subtree as the root), then systemd itself.
    --in-cgroup-namespace)
        umount /sys/fs/cgroup && mount -t cgroup2 cgroup2 /sys/fs/cgroup
        exec env -i container=kioskcam-board PATH=/usr/sbin:/usr/bin:/sbin:/bin \
            SYSTEMD_UNIT_PATH="$units" SYSTEMD_GENERATOR_PATH="$units.generators" \
            SYSTEMD_ENVIRONMENT_GENERATOR_PATH="$units.generators" \
            /lib/systemd/systemd --unit=kioskcam-board.target --log-target=journal-or-kmsg --show-status=no
        ;;
esac

if [ -f "$units.unshare-pid" ] && [ -d "/proc/$(cat "$units.unshare-pid")" ]; then
    echo "guest-systemd: already running" >&2
    exit 1
fi

mkdir -p "$units" "$units/kioskcam.service.d" "$units.generators"
ln -sf /usr/lib/systemd/system/kioskcam.service "$units/kioskcam.service"
for unit in systemd-journald.service systemd-journald.socket systemd-journald-dev-log.socket \
    exit.target systemd-exit.service shutdown.target umount.target final.target; do
    ln -sf "/lib/systemd/system/$unit" "$units/$unit"
done
install -m 0644 "$here/systemd/sysinit.target" "$here/systemd/kioskcam-board.target" "$units/"
# systemd manages the cgroup subtree it is started in: a fresh one that holds systemd alone (unshare, which
# waits outside, stays where it is); one per start, as a killed systemd leaves its subtree behind.
cgroup=/sys/fs/cgroup/kioskcam-board-$$
mkdir "$cgroup"

echo $$ > "$units.unshare-pid"
# Stage 1. Slave propagation: mounts made later in the guest (the roll's tmpfs) show in systemd's namespace.
exec unshare --pid --fork --kill-child --mount --propagation slave --mount-proc "$self" --in-pid-namespace "$cgroup"
