#!/bin/bash
# Build gpio-sim (and the irq_sim helper it needs) as one out-of-tree module,
# gpio-sim-mod.ko, for the Debian kernel that the virtual board boots.
#
# usage: build-gpio-sim.sh OUTDIR
#
# The kernel version is taken from /boot/vmlinuz-* (the newest one), never from
# `uname -r` (that is the host's kernel, not the one booted under QEMU).
# Override with KIOSKCAM_BOARD_KVER=<version>.
# Skips the build when OUTDIR/gpio-sim-mod.ko is already up to date.
set -euo pipefail

die() { echo "build-gpio-sim: $*" >&2; exit 1; }

[ $# -eq 1 ] || die "usage: $0 OUTDIR"
outdir=$1

kver=${KIOSKCAM_BOARD_KVER:-}
if [ -z "$kver" ]; then
    newest=$(find /boot -maxdepth 1 -name 'vmlinuz-*' -printf '%f\n' | sort -V | tail -n 1)
    [ -n "$newest" ] || die "no /boot/vmlinuz-* found (apt-get install linux-image-amd64)"
    kver=${newest#vmlinuz-}
fi

kbuild=/lib/modules/$kver/build
[ -d "$kbuild" ] || die "no kernel headers for $kver at $kbuild (apt-get install linux-headers-$kver)"

src_tar=$(find /usr/src -maxdepth 1 -name 'linux-source-*.tar.xz' | sort -V | tail -n 1)
[ -n "$src_tar" ] || die "no /usr/src/linux-source-*.tar.xz (apt-get install linux-source-6.1)"
src_top=$(basename "$src_tar" .tar.xz)

ko=$outdir/gpio-sim-mod.ko
stamp=$outdir/gpio-sim-mod.stamp
self_sum=$(sha256sum "$0" | cut -d' ' -f1)
want_stamp="kver=$kver src=$src_tar script=$self_sum"

if [ -f "$ko" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want_stamp" ] \
        && [ "$ko" -nt "$src_tar" ] && [ "$ko" -nt "$kbuild/Makefile" ]; then
    echo "gpio-sim-mod.ko is up to date for $kver"
    exit 0
fi

mkdir -p "$outdir"
work=$outdir/gpio-sim-build
rm -rf "$work"
mkdir -p "$work"

echo "building gpio-sim-mod.ko for $kver from $src_tar"
tar -xJf "$src_tar" -C "$work" --strip-components=3 \
    "$src_top/drivers/gpio/gpio-sim.c" "$src_top/drivers/gpio/gpiolib.h"
tar -xJf "$src_tar" -C "$work" --strip-components=3 "$src_top/kernel/irq/irq_sim.c"

# irq_to_desc() is not exported to modules; generic_handle_irq() does the same here.
sed -i 's/handle_simple_irq(irq_to_desc(irqnum));/generic_handle_irq(irqnum);/' "$work/irq_sim.c"
grep -q 'generic_handle_irq(irqnum);' "$work/irq_sim.c" \
    || die "irq_sim.c did not take the generic_handle_irq patch (kernel source changed?)"

printf 'obj-m += gpio-sim-mod.o\ngpio-sim-mod-y := gpio-sim.o irq_sim.o\n' > "$work/Kbuild"

make -C "$kbuild" M="$(cd "$work" && pwd)" modules > "$work/build.log" 2>&1 \
    || { tail -n 30 "$work/build.log" >&2; die "module build failed (log: $work/build.log)"; }

vermagic=$(modinfo -F vermagic "$work/gpio-sim-mod.ko" | cut -d' ' -f1)
[ "$vermagic" = "$kver" ] || die "built module has vermagic '$vermagic', expected '$kver'"

cp "$work/gpio-sim-mod.ko" "$ko.tmp"
mv "$ko.tmp" "$ko"
echo "$want_stamp" > "$stamp"
echo "built $ko"
