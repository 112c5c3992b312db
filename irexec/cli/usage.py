"""A mistake in how a command was called (exit code 2), found after argparse has parsed it: a bad
option, or a bad environment variable (the library raises the same class)."""

from irexec.errors import UsageError

__all__ = ["UsageError"]
