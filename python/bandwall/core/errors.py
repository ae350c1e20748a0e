"""The typed errors of bandwall. The CLI turns each into one line on stderr and an exit code."""


class BandwallError(Exception):
    """Base of every expected error; exit_code is what the command returns."""

    exit_code = 1


class UsageError(BandwallError):
    """Bad usage or input: sizes, CPU lists, words, files (exit 2)."""

    exit_code = 2


class RunFailed(BandwallError):
    """A run that started but failed: validation, a crashed kernel, a command that failed (exit 1)."""

    exit_code = 1


class StoreError(BandwallError):
    """A database that cannot be opened, is not bandwall's, or is of another version (exit 2)."""

    exit_code = 2


class Unavailable(BandwallError):
    """An optional part that is absent here (no PMU, no DSA, one NUMA node); soft: callers report it."""

    exit_code = 1
