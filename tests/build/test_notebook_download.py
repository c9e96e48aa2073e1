"""A downloaded companion notebook runs outside the repository (issue 24): in a fresh venv
that has only Jupyter's kernel (ipykernel, from PyPI), the notebook's first cell installs
what it needs from the site that served it (the labs' pure-Python wheel at site_url, and
Matplotlib and NumPy from PyPI), and every cell runs. Lesson 3's notebook (Matplotlib) and
lesson 12's (the labs' packaged model data) are run; every other download's first cell is
the same line.

The site is a build of a copy of the project (no notebook executed: the downloads carry no
outputs) for the address of a local server, which then serves it. Needs docs/vendor
(``make build``) and PyPI (ipykernel, Matplotlib, NumPy); about a minute."""

import json
import os
import socket
import subprocess
import sys
import threading
import urllib.request

import nbformat
import pytest
from helpers import mkdocs_build, project_copy
from nbclient import NotebookClient

from build_scripts.serve import make_server

RUN = ["03-attention-pattern", "12-real-heads"]


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """(base URL, site folder) of a build for its own local address, being served."""
    tmp = tmp_path_factory.mktemp("download")
    with socket.socket() as probe:  # a free port, for the build's site_url
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    base = f"http://127.0.0.1:{port}/"
    proc, output = mkdocs_build(tmp / "site", project_copy(tmp), env={"SITE_URL": base})
    assert proc.returncode == 0, output
    httpd = make_server(tmp / "site", port, site_url=base)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield base, tmp / "site"
    httpd.shutdown()


@pytest.fixture(scope="module")
def fresh_kernel(tmp_path_factory):
    """The name of a kernel of a new venv with ipykernel only, for JUPYTER_PATH's folder."""
    tmp = tmp_path_factory.mktemp("fresh")
    venv, python = tmp / "venv", str(tmp / "venv" / "bin" / "python")
    run = dict(check=True, capture_output=True, text=True, timeout=600)
    subprocess.run([sys.executable, "-m", "venv", str(venv)], **run)
    subprocess.run([python, "-m", "pip", "install", "-q", "ipykernel"], **run)
    probe = subprocess.run([python, "-c", "import numpy"], capture_output=True)
    assert probe.returncode != 0  # nothing but the kernel: the first cell installs the rest
    subprocess.run(
        [python, "-m", "ipykernel", "install", "--prefix", str(tmp / "jupyter"), "--name", "fresh"],
        **run,
    )
    return "fresh", tmp / "jupyter" / "share" / "jupyter"


def download(base, name) -> nbformat.NotebookNode:
    with urllib.request.urlopen(f"{base}notebooks/{name}.ipynb") as response:
        return nbformat.reads(response.read().decode("utf-8"), as_version=4)


@pytest.mark.parametrize("name", RUN)
def test_download_runs_in_a_fresh_venv(served, fresh_kernel, name, tmp_path, monkeypatch):
    base, _ = served
    kernel, jupyter = fresh_kernel
    monkeypatch.setenv("JUPYTER_PATH", str(jupyter))
    notebook = download(base, name)
    assert f"%pip install matplotlib {base}vendor/labs/py3/" in notebook.cells[0].source
    # the kernel sees neither the repository nor this test's Python
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    client = NotebookClient(
        notebook, kernel_name=kernel, timeout=600, resources={"metadata": {"path": str(tmp_path)}}
    )
    client.execute(env=env)  # raises CellExecutionError naming the cell that failed
    printed = "".join(o.get("text", "") for c in notebook.cells[1:] for o in c.get("outputs", []))
    assert {"03-attention-pattern": "weights:", "12-real-heads": "induction score"}[name] in printed
    installed = "".join(o.get("text", "") for o in notebook.cells[0].outputs)
    assert "attention_labs" in installed.replace("-", "_"), installed


def test_every_downloads_first_cell_is_the_same_install_line(served):
    base, site = served
    names = sorted(p.stem for p in (site / "notebooks").glob("*.ipynb"))
    assert len(names) > 10 and set(RUN) <= set(names)
    firsts = {name: download(base, name).cells[0] for name in names}
    assert {cell.cell_type for cell in firsts.values()} == {"code"}
    assert len({cell.source for cell in firsts.values()}) == 1, json.dumps(
        {n: c.source for n, c in firsts.items()}, indent=1
    )
