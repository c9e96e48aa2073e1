"""The project's static server (build_scripts/serve.py) on a dropped connection: a browser
that leaves a page or cancels a download mid-answer is normal and prints nothing; any other
error in a handler is still printed."""

from __future__ import annotations

import pytest

from build_scripts.serve import make_server


@pytest.fixture
def httpd(tmp_path):
    (tmp_path / "index.html").write_text("<!doctype html><title>t</title>", "utf-8")
    server = make_server(tmp_path, 0)
    yield server
    server.server_close()


@pytest.mark.parametrize("error", [ConnectionResetError, BrokenPipeError, ConnectionAbortedError])
def test_a_connection_the_browser_dropped_prints_nothing(httpd, capsys, error):
    try:
        raise error("the peer went away")
    except OSError:
        httpd.handle_error(None, ("127.0.0.1", 50000))
    assert capsys.readouterr().err == ""


def test_any_other_error_in_a_handler_is_still_printed(httpd, capsys):
    try:
        raise ValueError("a bug in the handler")
    except ValueError:
        httpd.handle_error(None, ("127.0.0.1", 50000))
    err = capsys.readouterr().err
    assert "ValueError: a bug in the handler" in err and "127.0.0.1" in err
