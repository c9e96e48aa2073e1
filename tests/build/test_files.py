"""build_scripts/files.py: the one atomic write of the build steps. A reader sees the old
file or the new one; a write that fails (or whose check fails) leaves the old file and no
temporary file behind."""

from __future__ import annotations

import hashlib
import io
import stat

import pytest

from build_scripts.files import atomic_file, write_atomic
from build_scripts.vendor.vendor import VendorError, write_stream_atomic


def test_write_atomic_creates_the_folder_replaces_the_file_and_publishes_it(tmp_path):
    target = tmp_path / "a" / "b" / "x.json"
    write_atomic(target, "{}\n")
    assert target.read_bytes() == b"{}\n"
    write_atomic(target, b"[1]")
    assert target.read_bytes() == b"[1]"
    assert stat.S_IMODE(target.stat().st_mode) == 0o644  # mkstemp's 0600 would hide it
    assert sorted(p.name for p in target.parent.iterdir()) == ["x.json"]


def test_a_block_that_raises_leaves_the_old_file_and_no_temporary_file(tmp_path):
    target = tmp_path / "x.bin"
    target.write_bytes(b"old")
    with pytest.raises(ValueError), atomic_file(target) as fh:
        fh.write(b"half of the new")
        raise ValueError("the check of what was written failed")
    assert target.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["x.bin"]


def test_the_vendor_stream_writer_checks_the_sha256_through_the_same_helper(tmp_path):
    data = b"pinned bytes" * 1000
    good = hashlib.sha256(data).hexdigest()
    target = tmp_path / "lib" / "file.js"
    write_stream_atomic(io.BytesIO(data), target, good, what="lib", member="file.js")
    assert target.read_bytes() == data
    with pytest.raises(VendorError, match="sha256 mismatch"):
        write_stream_atomic(io.BytesIO(b"other"), target, good, what="lib", member="file.js")
    assert target.read_bytes() == data  # the wrong file never lands
    assert [p.name for p in target.parent.iterdir()] == ["file.js"]
