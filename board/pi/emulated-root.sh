# The Pi image's configured root run in a throwaway emulated aarch64 machine (sourced by image-package.sh and
# package-test.sh): this host runs no arm64 program by itself (no binfmt_misc), so what must run in the root
# runs there, as its init.
# shellcheck shell=bash

# root_tree ROOT TREE: image-root.sh's configured root (its cache entry's content ROOT) extracted into TREE.
root_tree() {
  mkdir -p "$2"
  tar --extract --file="$1/root.tar" --directory="$2" --numeric-owner --preserve-permissions \
    --xattrs --xattrs-include='*'
}

# run_tree ROOT TREE LOG [OUT_MIB]: boots TREE (with its /kioskcam-configure, which ends by powering off) on
# ROOT's kernel and initramfs (image-root.sh's: busybox mounts the first disk and switches to
# /kioskcam-configure), the machine's console into LOG. TREE is made into an ext4 disk and removed. With OUT_MIB,
# a second disk of that size, $LOG.out, for the script's output (/dev/vdb in the machine). The machine's
# settings and their reasons are image-root.sh's: mitigations off, disks that ignore flushes.
run_tree() {
  local root=$1 tree=$2 log=$3 out_mib=${4:-} size release disks=()
  size=$(du -s --block-size=1M "$tree" | cut -f1)
  mke2fs -q -t ext4 -d "$tree" "$log.img" $((size + size / 4 + 256))M
  rm -rf "$tree"
  disks=(-drive "file=$log.img,if=virtio,format=raw,cache=unsafe")
  if [ -n "$out_mib" ]; then
    truncate -s "${out_mib}M" "$log.out"
    disks+=(-drive "file=$log.out,if=virtio,format=raw,cache=unsafe")
  fi
  release=$(ls "$root/kernel/usr/lib/modules")
  timeout 1200 qemu-system-aarch64 -M virt -cpu cortex-a72 -smp 2 -m 2048 -nographic -no-reboot \
    -kernel "$root/kernel/boot/vmlinuz-$release" -initrd "$root/initramfs.gz" \
    -append "console=ttyAMA0 rw panic=-1 nokaslr kpti=0 mitigations=off" "${disks[@]}" > "$log" 2>&1 || true
  rm -f "$log.img"
}

# The end of every /kioskcam-configure: its writes synced, the machine powered off by sysrq (no systemd here).
# shellcheck disable=SC2034
POWER_OFF='sync
mount -t proc proc /proc 2>/dev/null
echo 1 > /proc/sys/kernel/sysrq
echo o > /proc/sysrq-trigger
sleep 60'
