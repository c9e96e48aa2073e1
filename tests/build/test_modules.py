"""The site's own ES modules (docs/javascripts/), read by a JavaScript parser: esbuild, a
development tool of package.json (make lint and make test install it). No module awaits at
its top level (a lesson's head imports every widget statically: build_scripts/hooks/
preload.py); the preload hook's import graph is the parser's; no lab reaches into explorer/
(both read maps through maps.js); d3 is one module imported by name, never a global."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path, PurePosixPath

import pytest
from helpers import ROOT

from build_scripts.hooks import preload

ESBUILD = ROOT / "node_modules" / ".bin" / "esbuild"
DOCS = ROOT / "docs"
JS = DOCS / "javascripts"
MODULES = sorted(JS.rglob("*.js"))


def esbuild(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    if not ESBUILD.is_file():
        pytest.fail(f"{ESBUILD} is missing: run `make lint` (npm ci installs package.json's tools)")
    return subprocess.run(
        [str(ESBUILD), *args], cwd=cwd, capture_output=True, text=True, timeout=300
    )


def no_top_level_await(files: list[Path], tmp: Path) -> subprocess.CompletedProcess:
    """esbuild refuses a top-level await (``await``, ``for await``) in CommonJS output: the
    parser's own answer, whatever the line breaks."""
    return esbuild(
        [*map(str, files), "--format=cjs", f"--outdir={tmp}", "--log-level=error"], cwd=ROOT
    )


@pytest.fixture(scope="module")
def graph(tmp_path_factory) -> dict[str, list[dict]]:
    """esbuild's metafile for every module as an entry: path -> its imports (kind, path),
    paths relative to docs/. An import esbuild leaves external (a lab's widget found by
    name, ``import(`./labs/${name}.js`)``) is no edge of the graph."""
    out = tmp_path_factory.mktemp("esbuild")
    proc = esbuild(
        [
            *(str(m.relative_to(ROOT)) for m in MODULES),
            "--bundle",
            "--format=esm",
            f"--outdir={out / 'bundle'}",
            "--outbase=docs",
            f"--metafile={out / 'meta.json'}",
            "--log-level=error",
        ],
        cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stderr
    inputs = json.loads((out / "meta.json").read_text("utf-8"))["inputs"]
    return {
        path.removeprefix("docs/"): [
            {"kind": i["kind"], "path": i["path"].removeprefix("docs/")}
            for i in data["imports"]
            if not i.get("external")
        ]
        for path, data in inputs.items()
    }


def closure(graph: dict[str, list[dict]], start: str, kinds: set[str]) -> set[str]:
    seen, todo = set(), [start]
    while todo:
        path = todo.pop()
        if path in seen:
            continue
        seen.add(path)
        todo += [i["path"] for i in graph.get(path, []) if i["kind"] in kinds]
    return seen


def test_no_site_module_awaits_at_its_top_level(tmp_path):
    assert len(MODULES) > 40
    proc = no_top_level_await(MODULES, tmp_path / "out")
    assert proc.returncode == 0, proc.stderr
    # the check sees one, wherever it is written
    for i, body in enumerate(
        [
            "export const x = await Promise.resolve(1);",
            "const m = 1;\nif (m) {\n  await import('./x.js');\n}",
            "for await (const x of []) {}",
        ]
    ):
        bad = tmp_path / f"bad{i}.js"
        bad.write_text(body + "\n", "utf-8")
        proc = no_top_level_await([bad], tmp_path / "bad")
        assert proc.returncode != 0 and "Top-level await" in proc.stderr, body
    fine = tmp_path / "fine.js"
    fine.write_text("export async function f() {\n  await 1;\n  for await (const x of []) {}\n}\n")
    assert no_top_level_await([fine], tmp_path / "fine").returncode == 0


def test_the_preload_hooks_import_graph_is_the_parsers(graph):
    """build_scripts/hooks/preload.py reads static imports with a pattern; for every module
    it finds what esbuild's parse finds, no more, no less (dynamic import() excluded)."""
    for module in MODULES:
        rel = module.relative_to(DOCS).as_posix()
        ours = {p.as_posix() for p in preload.static_imports(DOCS, PurePosixPath(rel))}
        assert ours == closure(graph, rel, {"import-statement"}), rel


def test_no_lab_module_reaches_into_the_explorer(graph):
    """A lab widget, and everything it imports statically or dynamically, stays out of
    explorer/: labs read attention maps through maps.js, as the explorer does."""
    labs = sorted((JS / "labs").glob("*.js"))
    assert len(labs) > 20
    both = {"import-statement", "dynamic-import"}
    for lab in labs:
        rel = lab.relative_to(DOCS).as_posix()
        reached = closure(graph, rel, both)
        assert not [p for p in reached if p.startswith("javascripts/explorer/")], rel
    real_head = closure(graph, "javascripts/labs/real_head.js", {"import-statement"})
    assert "javascripts/maps.js" in real_head
    for user in ("explorer/head-cache.js", "explorer/map.js"):
        assert "javascripts/maps.js" in closure(graph, f"javascripts/{user}", {"import-statement"})


def test_d3_is_one_module_imported_by_name_never_a_global():
    d3 = "vendor/d3/d3.min.js"
    users = []
    for module in MODULES:
        text = module.read_text("utf-8")
        code = text.replace(d3, "")  # the module's own address is no use of a global
        assert not re.search(r"\bd3\.\w|globalThis\.d3|window\.d3", code), module
        if d3 in text:
            users.append(module.relative_to(JS).as_posix())
            assert re.search(
                r'^import \{[^}]+\} from "(\.\./)+vendor/d3/d3\.min\.js";$', text, re.M
            )
    assert {"renderers/heatmap.js", "renderers/line_chart.js", "explorer/grid.js"} <= set(users)
    assert "d3" not in json.loads((ROOT / "biome.json").read_text())["javascript"]["globals"]
    assert "vendor/d3/" not in (ROOT / "mkdocs.yml").read_text("utf-8")


def test_every_data_table_is_built_by_the_one_module():
    """Captions, header scopes and the focusable scroll region come from ui/data-table.js."""
    for module in MODULES:
        if module.name == "data-table.js":
            continue
        text = module.read_text("utf-8")
        for made_by_hand in ('el("table"', 'createElement("table")', ".scope =", "createCaption"):
            assert made_by_hand not in text, (module, made_by_hand)


def test_the_inline_classic_scripts_import_nothing_and_nothing_imports_them(graph):
    """runtime/start-worker.js and runtime/search-hold.js go into a lab page's head as the
    text of classic scripts (hooks/preload.py: INLINE): no import or export of their own
    (a classic script has none), and no module of the site imports them (they are not
    published as files: tests/build/test_build.py)."""
    inline = {p.as_posix() for p in preload.INLINE}
    assert inline == {"javascripts/runtime/start-worker.js", "javascripts/runtime/search-hold.js"}
    for path in inline:
        assert graph[path] == [], path
        text = (DOCS / path).read_text("utf-8")
        assert not re.search(r"^\s*(import|export)\b", text, re.M), path
    for path, imports in graph.items():
        assert not [i for i in imports if i["path"] in inline], path
