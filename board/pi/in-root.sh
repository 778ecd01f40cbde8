#!/usr/bin/env bash
# Runs a command inside the trixie build root ($PI_DIR/root) with the source tree at the same path as
# outside it (what is built there names its sources and libraries by paths that hold on the host and in the
# guest too): in a mount namespace of its own, so /proc, /dev and the source are unmounted by the kernel
# when the command ends, however it ends. Usage: in-root.sh COMMAND...
# The root is a build cache entry (roots.sh), which nothing may change: the command sees it through an overlay
# whose writes go to this checkout's $PI_DIR/root-overlay (thrown away when the root under it changes: another
# entry, or the same one made again), and the cache's folder is mounted read-only at its own path (the sysroot's
# link points there).
# BIND="DIR..." mounts more folders at their own paths too (a $PI_DIR outside the source tree, a kernel's modules).
# IN_ROOT=debroot runs it in make deb's packaging root ($PI_DIR/debroot, roots.sh too) instead.
set -euo pipefail
PI_DIR=${PI_DIR:?set PI_DIR}
SRC=${SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
KIOSKCAM_CACHE=${KIOSKCAM_CACHE:-/var/cache/kioskcam}
name=${IN_ROOT:-root}
lower=$(readlink -f "$PI_DIR/$name")
[ -d "$lower/usr" ] || { echo "in-root: no build root at $PI_DIR/$name (board/pi/roots.sh makes it)" >&2; exit 1; }
overlay=$PI_DIR/$name-overlay
under="$lower $(stat -c %i "$lower")"
if [ "$(cat "$overlay/lower" 2>/dev/null)" != "$under" ]; then
  rm -rf "$overlay"
  mkdir -p "$overlay/upper" "$overlay/work" "$overlay/merged"
  echo "$under" > "$overlay/lower"
fi
# The script in single quotes is expanded by the inner shell, from its own arguments.
# shellcheck disable=SC2016
exec unshare --mount --propagation private -- /bin/bash -c '
  set -e
  lower=$1; overlay=$2; src=$3; cache=$4; bind=$5; shift 5
  root=$overlay/merged
  mount -t overlay overlay -o "lowerdir=$lower,upperdir=$overlay/upper,workdir=$overlay/work" "$root"
  mount --rbind /dev "$root/dev"
  mount -t proc proc "$root/proc"
  mount --rbind /sys "$root/sys"
  mkdir -p "$root$src"
  mount --bind "$src" "$root$src"
  if [ -d "$cache" ]; then
    mkdir -p "$root$cache"
    mount --bind -o ro "$cache" "$root$cache"
  fi
  for dir in $bind; do mkdir -p "$root$dir"; mount --bind "$dir" "$root$dir"; done
  cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
  exec chroot "$root" /usr/bin/env -i HOME=/root PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin LANG=C.UTF-8 \
    ${PKG_CONFIG_SYSROOT_DIR:+PKG_CONFIG_SYSROOT_DIR=$PKG_CONFIG_SYSROOT_DIR} ${PKG_CONFIG_LIBDIR:+PKG_CONFIG_LIBDIR=$PKG_CONFIG_LIBDIR} \
    /bin/bash -c "cd \"$src\" && exec \"\$@\"" bash "$@"
' bash "$lower" "$overlay" "$SRC" "$KIOSKCAM_CACHE" "${BIND:-}" "$@"
