"""The browser helper: without Chromium the browser tests skip, saying how to install it."""
from __future__ import annotations

import pytest

from tests.browser import chromium


def test_no_chromium_is_a_skip_that_says_how_to_install_it(monkeypatch):
    monkeypatch.setattr(chromium.shutil, "which", lambda name: None)
    with pytest.raises(pytest.skip.Exception, match=r"no Chromium here: apt-get install -y chromium"):
        chromium.chromium_path()


def test_a_browser_that_cannot_start_is_a_skip(tmp_path):
    pytest.importorskip("websocket")
    program = tmp_path / "chromium"
    program.write_text("#!/bin/sh\nexit 3\n")
    program.chmod(0o755)
    with pytest.raises(pytest.skip.Exception, match=r"Chromium could not start \(exit status 3\)"):
        chromium.Browser(str(program), timeout=10)
