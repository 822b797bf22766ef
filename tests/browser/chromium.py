"""Headless Chromium driven over the Chrome DevTools Protocol: open a page, run script in it, record every request
it makes and take screenshots. The browser is Debian's ``chromium``; the protocol's WebSocket is websocket-client's.
"""
from __future__ import annotations

import base64
import json
import shutil
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest

#: Flags that start Chromium headless on a machine without a display, GPU, sandbox or network.
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-dev-shm-usage", "--window-size=1000,700")


def chromium_path() -> str:
    """The Chromium program, or a skip saying how to install it."""
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if path := shutil.which(name):
            return path
    pytest.skip("no Chromium here: apt-get install -y chromium (.ci/run does)")


class Browser:
    """One headless Chromium with one page; ``requests`` holds the URL of every request the page made."""

    def __init__(self, program: str, timeout: float = 60.0) -> None:
        websocket = pytest.importorskip("websocket", reason="the DevTools client needs websocket-client")
        self.profile = tempfile.mkdtemp(prefix="seqlab_chromium_")
        self.process = subprocess.Popen([program, *FLAGS, f"--user-data-dir={self.profile}",
                                         "--remote-debugging-port=0", "about:blank"],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        port = self._port(timeout)
        targets = json.loads(urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=10).read())
        page = next(t for t in targets if t["type"] == "page")
        self.socket = websocket.create_connection(page["webSocketDebuggerUrl"], timeout=timeout, suppress_origin=True)
        self.next_id, self.requests, self.events = 0, [], []
        for domain in ("Page", "Network", "Runtime"):
            self.call(f"{domain}.enable")

    def _port(self, timeout: float) -> int:
        """The DevTools port Chromium chose, from the file it writes into its profile."""
        marker = Path(self.profile) / "DevToolsActivePort"
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                self.close()
                pytest.skip(f"Chromium could not start (exit status {self.process.returncode})")
            if marker.is_file() and (lines := marker.read_text().split()):
                return int(lines[0])
            time.sleep(0.1)
        self.close()
        pytest.skip(f"Chromium did not open its DevTools port in {timeout:.0f} s")

    def call(self, method: str, **params: Any) -> dict[str, Any]:
        """Send one DevTools command and return its result, recording the events that arrive meanwhile."""
        self.next_id += 1
        self.socket.send(json.dumps({"id": self.next_id, "method": method, "params": params}))
        while True:
            message = json.loads(self.socket.recv())
            if message.get("id") == self.next_id:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message.get("result", {})
            self.events.append(message.get("method"))
            if message.get("method") == "Network.requestWillBeSent":
                self.requests.append(message["params"]["request"]["url"])

    def open(self, url: str, timeout: float = 30.0) -> None:
        """Navigate to ``url`` and wait until its document has loaded."""
        self.call("Page.navigate", url=url)
        self.wait_for("document.readyState === 'complete'", timeout)

    def evaluate(self, expression: str) -> Any:
        """The value of a JavaScript expression in the page (awaited when it is a promise)."""
        answer = self.call("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in answer:
            raise RuntimeError(f"{expression}: {answer['exceptionDetails']}")
        return answer["result"].get("value")

    def wait_for(self, condition: str, timeout: float = 30.0) -> None:
        """Wait until the JavaScript ``condition`` holds in the page."""
        deadline = time.monotonic() + timeout
        while not self.evaluate(f"Boolean({condition})"):
            if time.monotonic() > deadline:
                raise TimeoutError(f"{condition}: not true after {timeout:.0f} s")
            time.sleep(0.1)

    def ask_demo(self, text: str) -> None:
        """Type ``text`` into seqlab serve's demo page, press its button and wait for the answer to be drawn."""
        self.type_into("#text", text)
        self.evaluate("document.getElementById('go').click()")
        self.wait_for("document.getElementById('status').textContent === 'done'")

    def type_into(self, selector: str, text: str) -> None:
        """Focus the element at ``selector`` and type ``text`` as key presses would insert it."""
        self.evaluate(f"document.querySelector({json.dumps(selector)}).focus()")
        self.call("Input.insertText", text=text)

    def screenshot(self, path: Path, *, whole: bool = True) -> Path:
        """A PNG of the whole page (or, not ``whole``, of the window) at ``path``."""
        data = self.call("Page.captureScreenshot", format="png", captureBeyondViewport=whole)["data"]
        path.write_bytes(base64.b64decode(data))
        return path

    def close(self) -> None:
        if getattr(self, "socket", None) is not None:
            self.socket.close()
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        shutil.rmtree(self.profile, ignore_errors=True)
