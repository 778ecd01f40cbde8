#!/bin/bash
# Build the kernel modules the virtual board needs and Debian does not ship, out of tree, from Debian's
# kernel source, for the Debian kernel that the board boots.
#
# usage: build-modules.sh OUTDIR [RECIPE...]
#
# One recipe per module in modules/NAME.sh beside this script (all of them by default). A recipe sets
#   module=NAME            the module built: OUTDIR/NAME.ko (and its stamp, OUTDIR/NAME.stamp)
#   sources="PATH..."      files of the kernel source tarball, copied side by side into the build folder
#   objects="OBJ.o..."     what NAME.ko is linked from
# and may define patch_sources(), run in the build folder before make (call die to refuse a source that
# changed). Adding a module is adding a recipe.
#
# The kernel version is taken from /boot/vmlinuz-* (the newest one), never from `uname -r` (that is the
# host's kernel, not the one booted under QEMU). Override with KIOSKCAM_BOARD_KVER=<version>.
# Another kernel's headers and source (another architecture's: the Pi's, board/pi/build-modules.sh) are given
# by KIOSKCAM_BOARD_KBUILD=<headers folder> and KIOSKCAM_BOARD_KSOURCE=<linux-source-*.tar.xz>, with kbuild's
# own ARCH and CROSS_COMPILE in the environment.
# For the host's kernel the modules come from the build cache (below); otherwise a module is rebuilt only when
# its stamp (kernel, source tarball, recipe, this script) is stale; the stale ones share one pass over the
# tarball (decompressing it is most of the time).
set -euo pipefail

die() { echo "build-modules: $*" >&2; exit 1; }

[ $# -ge 1 ] || die "usage: $0 OUTDIR [RECIPE...]"
mkdir -p "$1"
outdir=$(cd "$1" && pwd)  # absolute: kbuild's M= is taken from the kernel's folder
shift
here=$(cd "$(dirname "$0")" && pwd)
if [ $# -eq 0 ]; then
    recipes=("$here"/modules/*.sh)
else
    recipes=()
    for r in "$@"; do recipes+=("$here/modules/$r.sh"); done
fi

kver=${KIOSKCAM_BOARD_KVER:-}
if [ -z "$kver" ]; then
    newest=$(find /boot -maxdepth 1 -name 'vmlinuz-*' -printf '%f\n' | sort -V | tail -n 1)
    [ -n "$newest" ] || die "no /boot/vmlinuz-* found (apt-get install linux-image-amd64)"
    kver=${newest#vmlinuz-}
fi

kbuild=${KIOSKCAM_BOARD_KBUILD:-/lib/modules/$kver/build}
[ -d "$kbuild" ] || die "no kernel headers for $kver at $kbuild (apt-get install linux-headers-$kver)"

src_tar=${KIOSKCAM_BOARD_KSOURCE:-$(find /usr/src -maxdepth 1 -name 'linux-source-*.tar.xz' | sort -V | tail -n 1)}
[ -f "$src_tar" ] || die "no kernel source ${src_tar:-/usr/src/linux-source-*.tar.xz} (apt-get install linux-source-6.1)"
src_top=$(basename "$src_tar" .tar.xz)
self_sum=$(sha256sum "$0" | cut -d' ' -f1)

# Read a recipe in a subshell (its variables and function must not leak into the next one).
recipe_field() {
    # shellcheck source=/dev/null
    (module='' sources='' objects=''; . "$1"; eval "echo \"\$$2\"")
}

# The host's own kernel: the modules are an entry of the build cache (board/cache.sh), keyed by this script, the
# recipes, the kernel release and the packages of its headers, its source and the compiler; this script then
# runs again uncached to make the entry. (Another kernel's build, the Pi's, is cached by its caller.)
if [ -z "${KIOSKCAM_BOARD_KSOURCE:-}" ] && [ -z "${KIOSKCAM_MODULES_UNCACHED:-}" ]; then
    # shellcheck source=board/cache.sh
    . "$here/../cache.sh"
    inputs=()
    for r in "${recipes[@]}"; do inputs+=("file:$r"); done
    cache_key board-modules "file:$here/build-modules.sh" "${inputs[@]}" "text:$kver" \
        "cmd:dpkg -S '$(readlink -f "$kbuild/Makefile")' '$src_tar' \$(readlink -f \$(command -v gcc)) | cut -d: -f1 | sort -u | xargs dpkg-query -W"
    # shellcheck disable=SC2317  # called by cache_use
    make_modules() {
        local r names=()
        for r in "${recipes[@]}"; do names+=("$(basename "$r" .sh)"); done
        KIOSKCAM_MODULES_UNCACHED=1 "$here/build-modules.sh" "$1" "${names[@]}"
        rm -rf "$1/modules-build"
    }
    cache_use make_modules
    cp "$CACHE_DIR"/* "$outdir/"
    exit 0
fi

stale=()
for r in "${recipes[@]}"; do
    [ -f "$r" ] || die "no recipe $r"
    name=$(recipe_field "$r" module)
    [ -n "$name" ] || die "$r sets no module"
    want="kver=$kver src=$src_tar recipe=$(sha256sum "$r" | cut -d' ' -f1) script=$self_sum"
    ko=$outdir/$name.ko
    if [ -f "$ko" ] && [ -f "$outdir/$name.stamp" ] && [ "$(cat "$outdir/$name.stamp")" = "$want" ] \
            && [ "$ko" -nt "$src_tar" ] && [ "$ko" -nt "$kbuild/Makefile" ]; then
        echo "$name.ko is up to date for $kver"
    else
        stale+=("$r")
    fi
done
[ ${#stale[@]} -gt 0 ] || exit 0

work=$outdir/modules-build
rm -rf "$work"
mkdir -p "$work/src"
members=()
for r in "${stale[@]}"; do
    for s in $(recipe_field "$r" sources); do members+=("$src_top/$s"); done
done
echo "extracting ${#members[@]} files from $src_tar"
tar -xJf "$src_tar" -C "$work/src" "${members[@]}"

for r in "${stale[@]}"; do
    (
        module='' sources='' objects=''
        # shellcheck source=/dev/null
        . "$r"
        dir=$work/$module
        mkdir -p "$dir"
        for s in $sources; do cp "$work/src/$src_top/$s" "$dir/"; done
        cd "$dir"
        if declare -F patch_sources >/dev/null; then patch_sources; fi
        if [ "$objects" = "$module.o" ]; then
            printf 'obj-m += %s.o\n' "$module" > Kbuild
        else
            printf 'obj-m += %s.o\n%s-y := %s\n' "$module" "$module" "$objects" > Kbuild
        fi
        echo "building $module.ko for $kver"
        make -C "$kbuild" M="$dir" modules > build.log 2>&1 \
            || { tail -n 30 build.log >&2; die "$module: build failed (log: $dir/build.log)"; }
        vermagic=$(modinfo -F vermagic "$module.ko" | cut -d' ' -f1)
        [ "$vermagic" = "$kver" ] || die "$module.ko has vermagic '$vermagic', expected '$kver'"
        ko=$outdir/$module.ko
        cp "$module.ko" "$ko.tmp"
        mv "$ko.tmp" "$ko"
        echo "kver=$kver src=$src_tar recipe=$(sha256sum "$r" | cut -d' ' -f1) script=$self_sum" \
            > "$outdir/$module.stamp"
        echo "built $ko"
    )
done
