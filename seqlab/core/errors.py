"""User-facing errors.

Every error that bad input can cause is a :class:`SeqlabError`: the CLI prints its
message (which names the file, the line and what was expected) and exits with
status 2, without a traceback.
"""
from __future__ import annotations


class SeqlabError(Exception):
    """An error caused by user input (a file, a config, a flag), reported without traceback."""


class DataFormatError(SeqlabError):
    """A malformed line in an input file."""

    def __init__(self, path: str, line: int, message: str) -> None:
        self.path = path
        self.line = line
        super().__init__(f"{path}:{line}: {message}")


class ConfigError(SeqlabError):
    """A config key that is unknown, missing or has the wrong type."""
