"""Runs INSIDE Pyodide (under Node, started by precompile_pyodide.mjs), never in CPython
(except ``tar_gz_bytes``, which labs_wheel.py also uses for the labs' archive).

Bytecode is only valid for the exact interpreter that reads it, so the ``.pyc`` files the
browser will load are written by the browser's own CPython build (Pyodide 0.27.7's 3.12).

    precompile_stdlib(src, out)   python_stdlib.zip -> the same modules as unchecked-hash
                                  .pyc only (sourceless; zipimport looks for .pyc first),
                                  in two zips; the second also takes a wheel's deferred
                                  subpackages (``deferred``: NumPy's ma, polynomial, testing)
    precompile_wheel(src, out)    a wheel -> the same wheel with every .py as a sourceless
                                  .pyc, C headers and type stubs left out (and, with
                                  ``archive``, the same files as a .tar.gz the browser's
                                  worker unpacks itself)
    check_imports(wheel, package) install the wheel, import every module of ``package``
                                  and list those Python had to compile (none is the aim)

Reproducible: members in sorted order, one fixed date, fixed permissions, this build's zlib,
and the hash seed fixed by the caller (PYTHONHASHSEED=0: frozenset constants are marshalled
in hash order). Unchecked-hash pyc: the importer never stats or hashes the source.
"""

from __future__ import annotations

import base64
import hashlib
import importlib.util
import io
import marshal
import sys
import zipfile

DATE = (1980, 1, 1, 0, 0, 0)
STDLIB_PREFIX = f"/lib/python{sys.version_info[0]}{sys.version_info[1]}.zip/"
SITE_PACKAGES = f"/lib/python{sys.version_info[0]}.{sys.version_info[1]}/site-packages/"
TAG = sys.implementation.cache_tag  # cpython-312


def pyc_bytes(source: bytes, filename: str) -> bytes:
    """An unchecked-hash pyc (PEP 552, flags 0b01) of ``source`` compiled as ``filename``."""
    code = compile(source, filename, "exec", dont_inherit=True)
    flags = 0b01  # hash-based, check_source off
    header = importlib.util.MAGIC_NUMBER + flags.to_bytes(4, "little")
    return header + importlib.util.source_hash(source) + marshal.dumps(code)


def _info(name: str, data: bytes, compress: int) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name, DATE)
    info.compress_type = compress
    info.external_attr = (0o40755 << 16 | 0x10) if name.endswith("/") else (0o100644 << 16)
    info.create_system = 3
    return info


def _write(members: dict[str, bytes], out: str, compress: int) -> None:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name in sorted(members):
            zf.writestr(_info(name, members[name], compress), members[name], compresslevel=9)
    with open(out, "wb") as f:
        f.write(buf.getvalue())


def tar_gz_bytes(members: dict[str, bytes], level: int = 9) -> bytes:
    """``members`` as a gzip-compressed ustar archive (sorted, one fixed date, no owner;
    gzip ``level``):
    the worker unpacks it with one native gunzip and no Python (pyodide-worker.js
    ``installArchive``), where a wheel's per-file deflate costs Python's zipfile."""
    import gzip
    import tarfile

    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.USTAR_FORMAT) as tf:
        for name in sorted(members):
            info = tarfile.TarInfo(name)
            info.size, info.mode, info.mtime = len(members[name]), 0o644, 315532800  # 1980
            tf.addfile(info, io.BytesIO(members[name]))
    return gzip.compress(buf.getvalue(), compresslevel=level, mtime=0)


def write_tar_gz(members: dict[str, bytes], out: str) -> None:
    """``tar_gz_bytes(members)`` written to ``out``."""
    with open(out, "wb") as f:
        f.write(tar_gz_bytes(members))


def used_members(keep: list[str]) -> set[str]:
    """The stdlib zip members of every module loaded now (start-up, NumPy if the caller
    loaded it) and after importing each of ``keep`` (names that are not there are ignored),
    with the ``__init__`` of each package above them."""
    for name in keep:
        try:
            importlib.import_module(name)
        except Exception:  # not in the stdlib (the labs, torch...) or not for a browser
            pass
    used = set()
    for module in list(sys.modules.values()):
        origin = getattr(getattr(module, "__spec__", None), "origin", None) or ""
        if origin.startswith(STDLIB_PREFIX):
            member = origin[len(STDLIB_PREFIX) :]
            used.add(member)
            parts = member.split("/")[:-1]
            used.update("/".join(parts[: i + 1]) + "/__init__.py" for i in range(len(parts)))
    return used


def _skipped(name: str, drop: tuple[str, ...]) -> bool:
    """A folder, another interpreter's ``__pycache__``, or a member one of ``drop`` names
    ("folder/" drops a folder, anything else is a file-name ending)."""
    if name.endswith("/") or "/__pycache__/" in f"/{name}":
        return True
    return any(name.startswith(d) if d.endswith("/") else name.endswith(d) for d in drop)


def precompile_stdlib(
    src: str,
    out: str,
    more: str,
    keep: list[str],
    finder: str,
    compress: int = zipfile.ZIP_DEFLATED,
    deferred: tuple = (),
) -> dict:
    """The stdlib zip ``src`` as two zips of sourceless .pyc: ``out`` with what start-up,
    NumPy and ``keep`` import (and the finder module ``_stdlib_more``, from the source
    ``finder``), ``more`` with the rest, which that finder downloads on first import.
    Other files go with their folder's modules. ``deferred``: [wheel, folders, drop] items,
    each wheel's members under those folders (less what ``drop`` names) also go into
    ``more``, compiled as in ``precompile_wheel``: the subpackages a wheel leaves out of
    start-up, found there on their first import. Returns counts for the log."""
    used = used_members(keep)
    core: dict[str, bytes] = {}
    rest: dict[str, bytes] = {}
    with zipfile.ZipFile(src) as zf:
        names = [n for n in zf.namelist() if not n.endswith("/")]
        for name in names:
            data = zf.read(name)
            if name.endswith(".py"):
                pyc = pyc_bytes(data, STDLIB_PREFIX + name)
                (core if name in used else rest)[name[:-3] + ".pyc"] = pyc
            else:
                core[name] = data
    deferred_count = 0
    for wheel, folders, drop in deferred:
        with zipfile.ZipFile(wheel) as zf:
            for name in sorted(zf.namelist()):
                if not name.startswith(tuple(folders)) or _skipped(name, tuple(drop)):
                    continue
                data = zf.read(name)
                if name.endswith(".py"):
                    rest[name[:-3] + ".pyc"] = pyc_bytes(data, SITE_PACKAGES + name)
                    deferred_count += 1
                else:
                    rest[name] = data
    modules = sorted(
        n[:-4].replace("/", ".").removesuffix(".__init__") for n in rest if n.endswith(".pyc")
    )
    text = finder.replace(
        "MODULES: frozenset = frozenset()  # replaced at vendor time",
        f"MODULES = frozenset({modules!r})",
    )
    core["_stdlib_more.pyc"] = pyc_bytes(text.encode(), STDLIB_PREFIX + "_stdlib_more.py")
    _write(core, out, compress)
    _write(rest, more, compress)
    return {
        "compiled": len(core) + len(rest),
        "core": len(core),
        "more": len(rest),
        "deferred": deferred_count,
    }


def precompile_wheel(
    src: str,
    out: str,
    drop: tuple[str, ...] = (),
    compress: int = zipfile.ZIP_DEFLATED,
    keep_sources: bool = False,
    archive: str | None = None,
) -> dict:
    """``src`` with every .py replaced by its sourceless .pyc (``mod.pyc`` beside where
    ``mod.py`` was: SourcelessFileLoader, as Pyodide's own compiled wheels) and the files
    ending with one of ``drop`` (C headers, type stubs: nothing the browser runs) left
    out (a pattern ending with "/" drops that folder); the RECORD lists what is there.
    With ``keep_sources`` the .py stays and its unchecked-hash .pyc goes where Python looks
    for it (``__pycache__/mod.cpython-312.pyc``), so ``inspect.getsource`` and tracebacks
    show the code. A ``__pycache__`` in ``src`` (another interpreter's) is left out.
    ``archive``: also write the same files (RECORD included) as a .tar.gz there."""
    members: dict[str, bytes] = {}
    compiled = dropped = 0
    with zipfile.ZipFile(src) as zf:
        for name in zf.namelist():
            if name.endswith("/") or "/__pycache__/" in f"/{name}":
                continue
            if _skipped(name, tuple(drop)):
                dropped += 1
                continue
            data = zf.read(name)
            if name.endswith(".py") and keep_sources:
                folder, _, file = name.rpartition("/")
                cached = f"{folder}/__pycache__/{file[:-3]}.{TAG}.pyc".lstrip("/")
                members[name] = data
                members[cached] = pyc_bytes(data, SITE_PACKAGES + name)
                compiled += 1
            elif name.endswith(".py"):
                members[name[:-3] + ".pyc"] = pyc_bytes(data, SITE_PACKAGES + name)
                compiled += 1
            else:
                members[name] = data
    (record,) = [n for n in members if n.endswith(".dist-info/RECORD")]
    lines = []
    for name in sorted(members):
        if name == record:
            continue
        digest = base64.urlsafe_b64encode(hashlib.sha256(members[name]).digest()).rstrip(b"=")
        lines.append(f"{name},sha256={digest.decode()},{len(members[name])}\n")
    members[record] = ("".join(lines) + f"{record},,\n").encode()
    _write(members, out, compress)
    if archive:
        write_tar_gz(members, archive)
    return {"compiled": compiled, "dropped": dropped, "members": len(members)}


def check_imports(wheel: str, package: str, keep_sources: bool = False) -> dict:
    """Install ``wheel`` into site-packages, import every module of ``package`` and return
    {"modules": how many, "compiled": the ones Python compiled from source or could (a
    module not loaded from a sourceless .pyc; with ``keep_sources``, one whose source
    Python compiled instead of reading its cached .pyc)}."""
    import importlib.machinery
    import pkgutil

    with zipfile.ZipFile(wheel) as zf:
        zf.extractall(SITE_PACKAGES)
    importlib.invalidate_caches()
    compiled = []
    loader = importlib.machinery.SourceFileLoader
    real = loader.source_to_code

    def recording(self, data, path, *, _optimize=-1):
        compiled.append(str(path))
        return real(self, data, path, _optimize=_optimize)

    loader.source_to_code = recording
    try:
        top = importlib.import_module(package)
        names = [package] + [m.name for m in pkgutil.walk_packages(top.__path__, f"{package}.")]
        for name in names:
            module = importlib.import_module(name)
            if keep_sources:
                continue  # source_to_code above records any module compiled from its .py
            if not isinstance(module.__spec__.loader, importlib.machinery.SourcelessFileLoader):
                compiled.append(name)
    finally:
        loader.source_to_code = real
    return {"modules": len(names), "compiled": sorted(set(compiled))}
