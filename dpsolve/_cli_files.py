"""The files the command line reads and writes: each checked before any work (a regular file
to read; a writable file or folder to write, never a named pipe), and a write that fails after
the work reported as one line naming its option. Imports nothing of dpsolve's but the
checks of :mod:`dpsolve._validation`."""
import contextlib
import os
import stat
import sys
from pathlib import Path


class _CommandError(Exception):
    """Bad input found after argument parsing (a file that cannot be read or written); the
    message names the option. :func:`main` prints it as ``dpsolve: error: ...``, status 2."""


def _fail(message):
    """Report bad input found after argument parsing, as argparse does: exit status 2."""
    print(f"dpsolve: error: {message}", file=sys.stderr)
    return 2


def _reason(exc):
    """An OSError's reason in words (``No space left on device``)."""
    return getattr(exc, "strerror", None) or str(exc)


def _input_file(path, option):
    """Check, before anything opens it, that ``path`` (given with ``option``) is an existing
    regular file; a named pipe, whose open would block, a directory or a device is refused
    (:func:`dpsolve._validation.check_input_file`). Raises :class:`_CommandError`."""
    from ._validation import check_input_file
    check_input_file(path, f"{option} {path}", _CommandError)


def _check_output(path, option):
    """Check, before any work, that ``path`` (given with ``option``) can be written as a new or
    replaced file, so that a result is never computed and then lost.

    The folder must exist and be writable; an existing path must be a writable regular file or
    a character device (``/dev/null``, a terminal). A named pipe is refused: writing to it
    would block until a reader came. What fails only when written (no space left on the device)
    is reported by :func:`_writing`. Raises :class:`_CommandError`.
    """
    from ._validation import file_kind

    path = Path(path)
    what = f"{option} {path}"
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        mode = None
    except (OSError, ValueError) as exc:        # permission, a name too long, a NUL byte
        raise _CommandError(f"{what}: {_reason(exc)}") from None
    if mode is not None:
        if stat.S_ISDIR(mode):
            raise _CommandError(f"{what}: {path} is a directory")
        if not (stat.S_ISREG(mode) or stat.S_ISCHR(mode)):
            raise _CommandError(f"{what}: is {file_kind(mode)}, not a regular file")
        if not os.access(path, os.W_OK):
            raise _CommandError(f"{what}: {path} is not writable")
        return
    _check_folder(path.parent, what)


def _check_output_dir(path, option):
    """Check, before any work, that ``path`` (given with ``option``) is a writable folder, or
    can be made one in a folder that exists. Raises :class:`_CommandError`."""
    path = Path(path)
    what = f"{option} {path}"
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        _check_folder(path.parent, what)
        return
    except (OSError, ValueError) as exc:
        raise _CommandError(f"{what}: {_reason(exc)}") from None
    if not stat.S_ISDIR(mode):
        raise _CommandError(f"{what}: exists and is not a directory")
    if not os.access(path, os.W_OK | os.X_OK):
        raise _CommandError(f"{what}: the folder is not writable")


def _check_folder(folder, what):
    """The folder a new output goes into: it must exist and be writable."""
    if not folder.is_dir():
        raise _CommandError(f"{what}: the folder {folder} does not exist")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise _CommandError(f"{what}: the folder {folder} is not writable")


def _write_error(option, path, exc):
    """The message of an OSError raised writing ``path`` (given with ``option``), naming the
    file it was about when that is another (a figure in the ``--plots`` folder)."""
    other = exc.filename is not None and str(exc.filename) != str(path)
    return f"{option} {path}: cannot write{f' {exc.filename}' if other else ''}: {_reason(exc)}"


@contextlib.contextmanager
def _writing(option, path):
    """The block writes the output ``path`` (given with ``option``): an OSError there (no space
    left on the device, a folder removed since it was checked, permission) becomes the
    command's one-line error (:class:`_CommandError`)."""
    try:
        yield
    except OSError as exc:
        raise _CommandError(_write_error(option, path, exc)) from None
