"""The buttons: gpio-sim lines pulled low (press) and high (release) by the guest agent."""

from .client import request


def gpio(action, line, hold_ms=100, paths=None):
    req = {"op": "gpio", "action": action, "line": str(line), "hold_ms": int(hold_ms)}
    return request(req, paths, timeout=30 + hold_ms / 1000.0)


def press(line, paths=None):
    return gpio("press", line, paths=paths)


def release(line, paths=None):
    return gpio("release", line, paths=paths)


def click(line, hold_ms=100, paths=None):
    return gpio("click", line, hold_ms=hold_ms, paths=paths)
