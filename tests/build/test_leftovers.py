"""`make lint` fails on a committed merge or patch leftover (build_scripts/gates/leftovers.py):
a real git repository, a real commit of an .orig and a .rej file."""

from __future__ import annotations

import subprocess

from helpers import ROOT

from build_scripts.gates import leftovers


def git(repo, *args):
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", *args],
        cwd=repo,
        check=True,
        capture_output=True,
    )


def test_a_committed_orig_or_rej_file_fails_naming_it(tmp_path, capsys):
    git(tmp_path, "init", "-q")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "mod.py").write_text("x = 1\n")
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-qm", "clean")
    assert leftovers.leftovers(tmp_path) == []
    assert leftovers.main([str(tmp_path)]) == 0

    (tmp_path / "pkg" / "mod.py.orig").write_text("x = 0\n")
    (tmp_path / "notes.rej").write_text("@@ -1 +1 @@\n")
    (tmp_path / "origin.py").write_text("")  # not a leftover: the suffix is what counts
    assert leftovers.leftovers(tmp_path) == []  # untracked: not committed (yet)
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-qm", "with leftovers")
    assert leftovers.leftovers(tmp_path) == ["notes.rej", "pkg/mod.py.orig"]
    capsys.readouterr()
    assert leftovers.main([str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert "pkg/mod.py.orig" in err and "notes.rej" in err and "git rm" in err


def test_the_repository_has_none_and_make_lint_runs_the_check():
    assert leftovers.leftovers(ROOT) == []
    lint = (ROOT / "Makefile").read_text("utf-8").split("\nlint:", 1)[1].split("\n\n", 1)[0]
    assert "build_scripts.gates.leftovers" in lint


def test_outside_a_git_work_tree_it_fails_saying_so(tmp_path, capsys):
    assert leftovers.main([str(tmp_path)]) == 1
    assert "is not a git work tree" in capsys.readouterr().err
