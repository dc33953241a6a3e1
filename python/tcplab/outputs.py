"""Output directories: checked before anything runs; OS errors reported in one line.

Every command that writes (``run --out``, ``sweep``, ``study``, ``report``) calls
:func:`check_output_dir` after validating its input and before running anything: the
directory must exist as a writable directory or be creatable. The check creates the
missing directories and a probe file, then removes everything it created, so a refused
run leaves nothing behind. A failure is an :class:`OutputError` (exit 2: bad input).

An OS error while writing later (permission denied, disk full, read-only file system)
is reported by :func:`describe_os_error` as one line with the path and the reason (exit
1); sweeps and studies write each finished run atomically, so a re-run resumes.

Example:
    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp()) / "a" / "b"
    >>> check_output_dir(d); d.exists()
    False
    >>> check_output_dir("/proc/tcplab-out")
    Traceback (most recent call last):
    ...
    tcplab.outputs.OutputError: --out /proc/tcplab-out: cannot create the directory: No such file or directory
"""

from __future__ import annotations

import errno
import os
import tempfile
from pathlib import Path

__all__ = ["OutputError", "check_output_dir", "describe_os_error"]


class OutputError(ValueError):
    """An output location that cannot be written; the message names it and why."""


def describe_os_error(e: OSError) -> str:
    """One line for an OS error: the path(s) and the reason.

    Example:
        >>> describe_os_error(PermissionError(13, "Permission denied", "/x/flows.parquet"))
        '/x/flows.parquet: Permission denied'
    """
    reason = e.strerror or (errno.errorcode.get(e.errno, "") if e.errno else "") or str(e)
    if e.filename is not None and e.filename2 is not None:
        return f"{e.filename} -> {e.filename2}: {reason}"
    if e.filename is not None:
        return f"{e.filename}: {reason}"
    return reason


def check_output_dir(path: str | Path, option: str = "--out") -> None:
    """Raises :class:`OutputError` unless ``path`` is (or can become) a writable directory.

    Nothing is left behind: directories the check creates are removed again.
    """
    target = Path(path)
    created: list[Path] = []
    try:
        if target.exists() and not target.is_dir():
            raise OutputError(f"{option} {target}: exists and is not a directory")
        missing = []
        probe = target
        while not probe.exists():
            missing.append(probe)
            if probe.parent == probe:
                break
            probe = probe.parent
        for d in reversed(missing):
            try:
                d.mkdir()
            except FileExistsError:
                if not d.is_dir():
                    raise OutputError(f"{option} {target}: {d} exists and is not a directory") from None
                continue
            except OSError as e:
                raise OutputError(f"{option} {target}: cannot create the directory: {e.strerror or e}") from None
            created.append(d)
        try:
            fd, tmp = tempfile.mkstemp(prefix=".tcplab-probe-", dir=target)
        except OSError as e:
            raise OutputError(f"{option} {target}: cannot write in the directory: {e.strerror or e}") from None
        os.close(fd)
        os.unlink(tmp)
    finally:
        for d in reversed(created):
            try:
                d.rmdir()
            except OSError:
                pass
