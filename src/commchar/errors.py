"""The project's exception root.

Every failure a user can cause is raised as a CommcharError subclass and turned
into one line on stderr and a non-zero exit code by `commchar.cli.main`, never a
traceback.
"""


class CommcharError(Exception):
    """Base of every error commchar reports to a user."""

    exit_code = 1


class UsageError(CommcharError):
    """A bad flag, option value, size list, operation name or expression."""

    exit_code = 2


class InputError(CommcharError):
    """A file that cannot be read or does not have the expected content."""

    exit_code = 2


class ModelError(CommcharError):
    """A model file that is malformed, unsafe, or lacks what was asked of it."""

    exit_code = 2


class MeasurementError(CommcharError):
    """A measurement that could not be made (no MPI library, a build that failed)."""

    exit_code = 3


class Interrupted(CommcharError):
    """The user stopped the work (Ctrl-C); what was measured is kept."""

    exit_code = 130
