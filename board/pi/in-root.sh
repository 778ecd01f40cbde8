#!/usr/bin/env bash
# Runs a command inside the trixie build root ($PI_DIR/root) with the source tree at the same path as
# outside it (what is built there names its sources and libraries by paths that hold on the host and in the
# guest too): in a mount namespace of its own, so /proc, /dev and the source are unmounted by the kernel
# when the command ends, however it ends. Usage: in-root.sh COMMAND...
# BIND="DIR..." mounts more folders at their own paths too (a cache under a $PI_DIR outside the source tree).
set -euo pipefail
PI_DIR=${PI_DIR:?set PI_DIR}
SRC=${SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
root=$PI_DIR/root
mkdir -p "$root$SRC"
# The script in single quotes is expanded by the inner shell, from its own arguments.
# shellcheck disable=SC2016
exec unshare --mount --propagation private -- /bin/bash -c '
  set -e
  root=$1; src=$2; bind=$3; shift 3
  mount --rbind /dev "$root/dev"
  mount -t proc proc "$root/proc"
  mount --rbind /sys "$root/sys"
  mount --bind "$src" "$root$src"
  for dir in $bind; do mkdir -p "$root$dir"; mount --bind "$dir" "$root$dir"; done
  cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
  exec chroot "$root" /usr/bin/env -i HOME=/root PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin LANG=C.UTF-8 \
    ${PKG_CONFIG_SYSROOT_DIR:+PKG_CONFIG_SYSROOT_DIR=$PKG_CONFIG_SYSROOT_DIR} ${PKG_CONFIG_LIBDIR:+PKG_CONFIG_LIBDIR=$PKG_CONFIG_LIBDIR} \
    /bin/bash -c "cd \"$src\" && exec \"\$@\"" bash "$@"
' bash "$root" "$SRC" "${BIND:-}" "$@"
