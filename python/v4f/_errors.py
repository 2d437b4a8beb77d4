"""The exceptions of the v4f package.

Every error v4f raises is a :class:`v4f.Error`. Runtime failures carry the
runtime's message and map its status code to a subclass; the ones that
correspond to a built-in exception also derive from it, so ``except
ValueError`` or ``except FileNotFoundError`` work as they would elsewhere.
"""

__all__ = [
    "Error",
    "InvalidArgumentError",
    "NotFoundError",
    "InvalidArtifactError",
    "UnsupportedError",
    "ResourceExhaustedError",
    "KernelError",
    "InternalError",
    "SessionClosedError",
    "CompileError",
]


class Error(Exception):
    """Base class of every v4f error."""


class InvalidArgumentError(Error, ValueError):
    """The caller passed something wrong: a missing or unknown input, a wrong
    dtype or shape, a bad option."""


class NotFoundError(Error, FileNotFoundError):
    """A file (or a symbol in it) does not exist."""


class InvalidArtifactError(Error):
    """The .v4f file is corrupt, truncated or inconsistent."""


class UnsupportedError(Error):
    """A newer artifact format, CPU features this machine lacks, or a dtype
    with no NumPy equivalent."""


class ResourceExhaustedError(Error, MemoryError):
    """An allocation failed."""


class KernelError(Error):
    """A kernel reported a failure while running (e.g. an index out of
    range in a Gather)."""


class InternalError(Error):
    """An operating-system call failed (mmap, threads, dlopen)."""


class SessionClosedError(Error, ValueError):
    """The session was closed with :meth:`Session.close`."""


class CompileError(Error):
    """``v4fc`` refused the model. ``message`` is its error (naming the file,
    node and reason); ``returncode`` and ``stderr`` are the tool's."""

    def __init__(self, message, returncode=None, stderr=""):
        super().__init__(message)
        self.message = message
        self.returncode = returncode
        self.stderr = stderr
