"""File writes that never leave a half-written file behind.

Every build step that writes a file others read (assets, vendored files, caches) writes it
through `atomic_file` (or `write_atomic`, for bytes already in memory): the bytes go to a
temporary file in the same folder, which then replaces the target in one `os.replace`, so a
reader (a parallel build, a server, an interrupted run's next run) sees the old file or the
new one, never a mix.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO


@contextmanager
def atomic_file(path: Path, *, mode: int = 0o644) -> Iterator[BinaryIO]:
    """A binary file to write ``path``'s new bytes to; it replaces ``path`` when the block
    ends without an error.

    Creates ``path``'s folder if needed. ``mode`` is the file's permission bits (mkstemp
    makes 0600; the files we write are published). When the block raises (a failed check of
    what was written, say), the temporary file is removed and the error raised: ``path``
    is then unchanged.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            yield fh
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_atomic(path: Path, data: bytes | str, *, mode: int = 0o644) -> None:
    """Write ``data`` (bytes, or str as UTF-8) to ``path`` atomically (`atomic_file`).

    On any error the temporary file is removed and the error raised; ``path`` is then
    unchanged.
    """
    if isinstance(data, str):
        data = data.encode("utf-8")
    with atomic_file(path, mode=mode) as fh:
        fh.write(data)
