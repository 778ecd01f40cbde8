"""kioskcam virtual board, host side: the package behind board/virtual/board (see README.md beside it).

    errors     BoardError, BoardDown
    state      the state dir's paths, the kernel to boot, supervisor pid, lock, boot info
    client     requests to the supervisor's ctl.sock, answered by the guest agent
    hub        the supervisor: runs vng, holds the agent's socket, serves ctl.sock
    lifecycle  start, stop, status
    guest      run, spawn, kill, procs, log_path, forwarded_port
    gpio       press, release, click, value (gpio-sim lines)
    qmp        QEMU's monitor: qmp, screendump
    panel      the front panel: a web page with the display, buttons, lamps, status and roll
    appliance  make run: the appliance's unit, sshd and key, the panel, the pull commands
    cli        main: the `board` command line

Python 3 standard library only.
"""

from .cli import main
from .client import TERMINAL, ping, request
from .errors import BoardDown, BoardError
from .gpio import click, gpio, press, release
from .guest import forwarded_port, kill, log_path, procs, run, spawn
from .hub import GUEST_ADDRESS, GUEST_PORTS, Hub, supervise
from .lifecycle import start, status, stop
from .qmp import qmp, screendump
from .state import BOOT_TIMEOUT, HERE, REPO, Paths, kernel_image, state_dir

__all__ = [
    "BOOT_TIMEOUT", "GUEST_ADDRESS", "GUEST_PORTS", "HERE", "REPO", "TERMINAL",
    "BoardDown", "BoardError", "Hub", "Paths",
    "click", "forwarded_port", "gpio", "kernel_image", "kill", "log_path", "main", "ping", "press", "procs",
    "qmp", "release", "request", "run", "screendump", "spawn", "start", "state_dir", "status", "stop",
    "supervise",
]
