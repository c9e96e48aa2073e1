"""`make wheel`, after pip: the labs wheel as the browser installs it, precompiled.

    python -m build_scripts.vendor.labs_wheel <folder pip wrote the wheel to> <dest folder>
    python -m build_scripts.vendor.labs_wheel --sources-only <from> <dest>   # make serve's

The vendored Pyodide, under Node (as for the stdlib and NumPy: the browser's own CPython
build writes the bytecode), adds to every module of the wheel pip built its unchecked-hash
``.pyc`` in ``__pycache__``, so the browser imports the labs without compiling them.
Unlike NumPy's, the sources stay: readers read the labs' code in the browser ("A real
model in 100 lines" prints ``inspect.getsource`` of the model, and a traceback through a
lab shows the line). The file is named for what it holds (``-0pyc-cp312-none-any``:
bytecode for Pyodide's CPython 3.12). Then, in the same Pyodide, the new wheel is installed
with NumPy and every module of ``attention_labs`` imported: any module Python still had to
compile is an error.

Same sources, same bytes: members sorted, one date, fixed permissions, hash seed 0 (pip's
own wheel carries the files' dates, which do not matter here). The wheel's sha256 is
whatever the sources give; the site checks it as built (hooks/runtime.py), and
tests/build/test_vendor.py rebuilds it and compares.

Beside the wheel, its files as a ``.tar.gz`` of the same name (``write_archive``): what the
browser's worker installs, unpacking it itself as it does NumPy's archive; the wheel is
what Pyodide's ``unpackArchive`` installs where the archive cannot be used.

Beside them, in ``py3/``, the same pip wheel for CPython (``pure_wheel``: pure Python, no
bytecode), rewritten as reproducibly: the companion notebooks' first cell installs it from
the site (build_scripts/hooks/notebooks.py).
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import shutil
import sys
import tempfile
import zipfile
from pathlib import Path

from build_scripts.files import atomic_file, write_atomic
from build_scripts.vendor.precompile_pyodide import tar_gz_bytes
from build_scripts.vendor.vendor import REPO, VendorError, run_in_pyodide

PACKAGE = "attention_labs"
PYODIDE = REPO / "docs" / "vendor" / "pyodide"
WHAT = "labs wheel"
TAG = "cp312"  # Pyodide 0.27.7's CPython 3.12: the bytecode is for it only
PURE = "py3"  # the folder of the pure-Python wheel, under the site's wheel folder
DATE = (1980, 1, 1, 0, 0, 0)  # zip's earliest date, as precompile_pyodide.py writes
ARCHIVE = ".tar.gz"


def numpy_wheel(pyodide: Path = PYODIDE) -> Path:
    """The precompiled NumPy wheel the site ships (docs/vendor/manifest.json)."""
    manifest = pyodide.parent / "manifest.json"
    if not (pyodide / "pyodide.js").is_file() or not manifest.is_file():
        raise VendorError(f"{WHAT}: Pyodide is not vendored in {pyodide}: run 'make vendor'")
    pre = json.loads(manifest.read_text("utf-8"))["precompiled"]
    return pyodide.parent / pre["wheels"]["numpy"]


def compiled_name(wheel: str) -> str:
    """``attention_labs-0.1.0-py3-none-any.whl`` -> ``attention_labs-0.1.0-0pyc-cp312-none-any.whl``
    (a build tag, and the only interpreter its bytecode is for)."""
    name, version = wheel.split("-")[:2]
    return f"{name}-{version}-0pyc-{TAG}-none-any.whl"


def archive_of(wheel: Path) -> Path:
    """The labs' archive beside ``wheel``: its name with ``.tar.gz`` for ``.whl``."""
    return wheel.with_name(wheel.name.removesuffix(".whl") + ARCHIVE)


def write_archive(wheel: Path, level: int = 9) -> Path:
    """The files of ``wheel`` (its RECORD too) as a .tar.gz beside it (``archive_of``; gzip
    ``level``), which the browser's worker unpacks with no Python (pyodide-worker.js
    ``installArchive``), where Pyodide's ``unpackArchive`` of the wheel runs Python's
    zipfile during start-up. Other labs archives there are removed. Returns its path."""
    with zipfile.ZipFile(wheel) as zf:
        members = {n: zf.read(n) for n in zf.namelist() if not n.endswith("/")}
    out = archive_of(wheel)
    for old in wheel.parent.glob(f"{PACKAGE}-*{ARCHIVE}"):
        if old != out:
            old.unlink()
    write_atomic(out, tar_gz_bytes(members, level))
    return out


def pip_wheel(src_dir: Path) -> Path:
    """The one ``attention_labs-*.whl`` pip wrote to ``src_dir``; VendorError otherwise."""
    found = sorted(Path(src_dir).glob(f"{PACKAGE}-*.whl"))
    if len(found) != 1:
        raise VendorError(
            f"{WHAT}: expected one {PACKAGE} wheel in {src_dir}, found {len(found)}: "
            "run 'make wheel'"
        )
    return found[0]


def pure_wheel(src_dir: Path, dest: Path) -> Path:
    """pip's wheel in ``src_dir`` rewritten into ``dest`` (emptied of other wheels) under its
    own name (``attention_labs-0.1.0-py3-none-any.whl``): the same members with the same
    bytes (so its RECORD holds), in sorted order, with one date and fixed permissions.
    Returns its path."""
    src = pip_wheel(src_dir)
    with zipfile.ZipFile(src) as zf:
        members = {n: zf.read(n) for n in zf.namelist() if not n.endswith("/")}
    dest.mkdir(parents=True, exist_ok=True)
    for old in dest.glob("*.whl"):
        old.unlink()
    with atomic_file(dest / src.name) as fh, zipfile.ZipFile(fh, "w") as out:
        for name in sorted(members):
            info = zipfile.ZipInfo(name, DATE)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o100644 << 16
            info.create_system = 3  # Unix, so the permissions are read
            out.writestr(info, members[name], compresslevel=9)
    return dest / src.name


def package_data() -> list[str]:
    """The labs' data files as pyproject.toml's ``[tool.setuptools.package-data]`` lists
    them (glob patterns inside the package: the induction model, the WebAssembly kernels),
    what pip's wheel carries besides the modules."""
    import tomllib

    config = tomllib.loads((REPO / "pyproject.toml").read_text("utf-8"))
    return config["tool"]["setuptools"]["package-data"][PACKAGE]


def dev_wheel(package: Path, dest: Path) -> Path:
    """make serve's wheel after a labs edit, in a few milliseconds: the sources of
    ``package`` (labs_py/attention_labs: its modules and data files) with the metadata of
    the pure-Python wheel in ``dest/py3/`` (which ``make wheel`` wrote), written into
    ``dest`` under that wheel's name (the other wheels there removed). No pip and no
    Pyodide: Python compiles the labs as the browser imports them."""
    import base64
    import hashlib

    (template,) = sorted((dest / PURE).glob(f"{PACKAGE}-*-py3-none-any.whl"))
    with zipfile.ZipFile(template) as zf:
        names = zf.namelist()
        members = {n: zf.read(n) for n in names if ".dist-info/" in n}
    (record,) = [n for n in members if n.endswith(".dist-info/RECORD")]
    del members[record]
    data = package_data()
    for path in sorted(Path(package).rglob("*")):
        rel = path.relative_to(Path(package).parent).as_posix()
        inside = path.relative_to(package).as_posix()
        wanted = path.suffix == ".py" or any(fnmatch.fnmatch(inside, p) for p in data)
        if path.is_file() and "__pycache__" not in path.parts and wanted:
            members[rel] = path.read_bytes()
    lines = []
    for name, body in sorted(members.items()):
        digest = base64.urlsafe_b64encode(hashlib.sha256(body).digest()).rstrip(b"=").decode()
        lines.append(f"{name},sha256={digest},{len(body)}")
    members[record] = ("\n".join([*lines, f"{record},,"]) + "\n").encode()
    for old in dest.glob("*.whl"):
        old.unlink()
    with atomic_file(dest / template.name) as fh, zipfile.ZipFile(fh, "w") as out:
        for name in sorted(members):
            info = zipfile.ZipInfo(name, DATE)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o100644 << 16
            out.writestr(info, members[name], compresslevel=1)
    write_archive(dest / template.name, level=1)
    return dest / template.name


def precompile_labs(src_dir: Path, dest: Path, pyodide: Path = PYODIDE) -> dict:
    """Compile the one ``attention_labs-*.whl`` in ``src_dir`` into ``dest`` (emptied of
    other wheels) as ``compiled_name``. Returns what precompile_pyodide.mjs did."""
    src = pip_wheel(src_dir)
    dest.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=".labs-wheel.", dir=dest) as tmp:
        out = Path(tmp) / compiled_name(src.name)
        job = {
            "labs": {
                "src": str(src.resolve()),
                "out": str(out),
                "package": PACKAGE,
                "numpy": str(numpy_wheel(pyodide)),
            }
        }
        done = run_in_pyodide(pyodide, job, what=WHAT)["labs"]
        if done["check"]["compiled"]:
            raise VendorError(
                f"{WHAT}: Python in Pyodide still compiled {done['check']['compiled']}: "
                "their .pyc is missing or stale"
            )
        for old in dest.glob("*.whl"):
            old.unlink()
        shutil.move(out, dest / out.name)
    write_archive(dest / out.name)
    return done


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("src", type=Path, help="the folder pip wrote the wheel to")
    parser.add_argument("dest", type=Path, help="where the site's wheel goes (docs/vendor/labs)")
    parser.add_argument(
        "--sources-only",
        action="store_true",
        help="make serve after a labs edit: the browser gets the pure-Python wheel too "
        "(no Pyodide run; Python compiles the labs as it imports them), in about a second",
    )
    args = parser.parse_args(argv)
    try:
        if args.sources_only:
            browser = pure_wheel(args.src, args.dest)
            write_archive(browser)
            pure = pure_wheel(args.src, args.dest / PURE)
            print(f"wheel: {browser.name} with sources only (make wheel precompiles it)")
            return 0
        done = precompile_labs(args.src, args.dest)
        pure = pure_wheel(args.src, args.dest / PURE)
    except VendorError as err:
        print(f"wheel: {err}", file=sys.stderr)
        return 1
    print(
        f"wheel: {done['compiled']} modules precompiled in Pyodide; "
        f"{done['check']['modules']} imported there without compiling; "
        f"{pure.relative_to(args.dest.parent)} for CPython (the notebooks)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
