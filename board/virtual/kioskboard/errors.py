"""The board's expected failures: reported by the CLI as one line, no traceback."""


class BoardError(Exception):
    """An expected failure: reported as one line, no traceback."""


class BoardDown(BoardError):
    def __init__(self, msg=None):
        super().__init__(msg or "board is not running (start it with: board start)")
