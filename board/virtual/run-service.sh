#!/usr/bin/env bash
# `make run`: start kioskcam on the (already booted) virtual board and follow its log.
# Ctrl-C stops the service, then powers the board off.
#
# usage: run-service.sh KIOSKCAM_BINARY
set -euo pipefail

binary=$1
here=$(cd "$(dirname "$0")" && pwd)
board="$here/board"
state=${KIOSKCAM_BOARD_DIR:-$(cd "$here/../.." && pwd)/.build/board}
share="$state/share"

mkdir -p "$share/roll"
sed "s|@ROLL@|$share/roll|" "$here/kioskcam.conf" > "$share/kioskcam.conf"

cleanup() {
    "$board" kill kioskcam --wait 10 >/dev/null 2>&1 || true
    "$board" stop
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# A service left running by an earlier `make run` would hold the camera and the buttons.
"$board" kill kioskcam --wait 10 >/dev/null 2>&1 || true
"$board" spawn kioskcam -- "$binary" run --config "$share/kioskcam.conf"

cat <<TEXT

kioskcam is running on the virtual board; its log follows. Ctrl-C stops the service and the board.
  press the shutter:   $board click shutter
  see the display:     make screenshot        (writes $state/screen.png)
  the camera roll:     $share/roll/DCIM/
  the hardware:        $board run -- $binary probe

TEXT
"$board" logs -f kioskcam
