"""A mistake in how a command was called (exit code 2), found after argparse has parsed it."""


class UsageError(Exception):
    pass
