"""File writes that never leave a half-written file behind.

Every build step that writes a file others read (assets, vendored files, caches) writes it
through `write_atomic`: the bytes go to a temporary file in the same folder, which then
replaces the target in one `os.replace`, so a reader (a parallel build, a server, an
interrupted run's next run) sees the old file or the new one, never a mix.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def write_atomic(path: Path, data: bytes | str, *, mode: int = 0o644) -> None:
    """Write ``data`` (bytes, or str as UTF-8 with ``\\n`` line ends) to ``path`` atomically.

    Creates ``path``'s folder if needed. ``mode`` is the file's permission bits (mkstemp
    makes 0600; the files we write are published). On any error the temporary file is
    removed and the error raised; ``path`` is then unchanged.
    """
    path = Path(path)
    if isinstance(data, str):
        data = data.encode("utf-8")
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
