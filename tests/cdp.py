"""A tiny headless-Chromium driver over the DevTools protocol (standard library only).

Enough for the browser tests: open a page, run JavaScript in it, wait for text, click,
take a PNG screenshot.  Chromium is started with its own empty profile, bound to loopback
(``--remote-debugging-port=0`` on 127.0.0.1), and killed when the ``with`` block ends.
"""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
import socket
import struct
import subprocess
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlparse
from urllib.request import urlopen


def chromium_path() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")


class _WebSocket:
    """A minimal RFC 6455 client (text frames, client masking, ping/pong, fragments)."""

    def __init__(self, url: str, timeout: float = 60.0) -> None:
        u = urlparse(url)
        self.sock = socket.create_connection((u.hostname, u.port), timeout=timeout)
        key = base64.b64encode(os.urandom(16)).decode()
        req = (
            f"GET {u.path} HTTP/1.1\r\nHost: {u.hostname}:{u.port}\r\nUpgrade: websocket\r\n"
            f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
        )
        self.sock.sendall(req.encode())
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = self.sock.recv(1)
            if not chunk:
                raise ConnectionError("DevTools closed the connection during the handshake")
            head += chunk
        if b" 101 " not in head.split(b"\r\n", 1)[0]:
            raise ConnectionError(f"DevTools refused the websocket: {head[:200]!r}")

    def send(self, text: str) -> None:
        data = text.encode()
        n = len(data)
        header = bytes([0x81])
        if n < 126:
            header += bytes([0x80 | n])
        elif n < 65536:
            header += bytes([0x80 | 126]) + struct.pack(">H", n)
        else:
            header += bytes([0x80 | 127]) + struct.pack(">Q", n)
        mask = os.urandom(4)
        masked = bytes(b ^ mask[i % 4] for i, b in enumerate(data))
        self.sock.sendall(header + mask + masked)

    def _exact(self, n: int) -> bytes:
        buf = bytearray()
        while len(buf) < n:
            chunk = self.sock.recv(min(1 << 20, n - len(buf)))
            if not chunk:
                raise ConnectionError("DevTools closed the connection")
            buf += chunk
        return bytes(buf)

    def recv(self) -> str:
        parts = []
        while True:
            b0, b1 = self._exact(2)
            op, n = b0 & 0x0F, b1 & 0x7F
            if n == 126:
                n = struct.unpack(">H", self._exact(2))[0]
            elif n == 127:
                n = struct.unpack(">Q", self._exact(8))[0]
            payload = self._exact(n)
            if op == 0x8:
                raise ConnectionError("DevTools closed the websocket")
            if op == 0x9:  # ping -> pong
                self.sock.sendall(bytes([0x8A, 0x80 | len(payload)]) + b"\0\0\0\0" + payload)
                continue
            parts.append(payload)
            if b0 & 0x80:
                return b"".join(parts).decode("utf-8", "replace")

    def close(self) -> None:
        try:
            self.sock.close()
        except OSError:
            pass


class Page:
    """One browser tab driven over DevTools."""

    def __init__(self, ws_url: str) -> None:
        self.ws = _WebSocket(ws_url)
        self._id = 0
        self.call("Page.enable")
        self.call("Runtime.enable")

    def call(self, method: str, **params: Any) -> dict:
        self._id += 1
        my = self._id
        self.ws.send(json.dumps({"id": my, "method": method, "params": params}))
        while True:
            msg = json.loads(self.ws.recv())
            if msg.get("id") == my:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                return msg.get("result", {})

    def js(self, expression: str) -> Any:
        """Evaluate ``expression`` in the page (promises awaited) and return its value."""
        r = self.call("Runtime.evaluate", expression=expression, awaitPromise=True, returnByValue=True)
        if "exceptionDetails" in r:
            raise RuntimeError(f"page JavaScript failed: {r['exceptionDetails'].get('text')} in {expression[:80]}")
        return r.get("result", {}).get("value")

    def goto(self, url: str, settle: float = 0.5) -> None:
        self.call("Page.navigate", url=url)
        self.wait_for("document.readyState === 'complete'", timeout=60)
        time.sleep(settle)

    def wait_for(self, condition_js: str, timeout: float = 60.0, what: str = "") -> Any:
        end = time.monotonic() + timeout
        last = None
        while time.monotonic() < end:
            try:
                last = self.js(condition_js)
            except RuntimeError:
                last = None
            if last:
                return last
            time.sleep(0.25)
        raise TimeoutError(f"waited {timeout:.0f} s for {what or condition_js}; page text: {self.text()[:600]!r}")

    def wait_text(self, needle: str, timeout: float = 60.0) -> None:
        self.wait_for(f"document.body && document.body.innerText.includes({json.dumps(needle)})", timeout, needle)

    def text(self) -> str:
        try:
            return str(self.js("document.body ? document.body.innerText : ''") or "")
        except RuntimeError:
            return ""

    def status(self, path: str) -> int:
        """HTTP status of a same-origin GET made by the page (with its session cookie)."""
        return int(self.js(f"fetch({json.dumps(path)}, {{credentials: 'same-origin'}}).then(r => r.status)"))

    def click_text(self, selector: str, text: str) -> None:
        """Click the first element matching ``selector`` whose text is exactly ``text``."""
        ok = self.js(
            f"""(() => {{
              const els = [...document.querySelectorAll({json.dumps(selector)})];
              const el = els.find(e => e.innerText.trim() === {json.dumps(text)});
              if (!el) return false; el.scrollIntoView(); el.click(); return true; }})()"""
        )
        if not ok:
            raise AssertionError(f"no {selector} with text {text!r} on the page")

    def screenshot(self, path: Path, full_page: bool = True) -> Path:
        params: dict[str, Any] = {"format": "png"}
        if full_page:
            m = self.call("Page.getLayoutMetrics")
            size = m.get("cssContentSize") or m.get("contentSize")
            w, h = int(size["width"]), min(int(size["height"]), 6000)
            params["clip"] = {"x": 0, "y": 0, "width": w, "height": h, "scale": 1}
            params["captureBeyondViewport"] = True
        data = self.call("Page.captureScreenshot", **params)["data"]
        path.write_bytes(base64.b64decode(data))
        return path

    def close(self) -> None:
        self.ws.close()


class Browser:
    """``with Browser(profile_dir) as b: page = b.new_page()`` -- a headless Chromium."""

    def __init__(self, profile: Path, width: int = 1400, height: int = 1000) -> None:
        exe = chromium_path()
        if exe is None:
            raise FileNotFoundError("chromium")
        profile.mkdir(parents=True, exist_ok=True)
        self.proc = subprocess.Popen(
            [
                exe,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-dev-shm-usage",
                "--no-first-run",
                "--no-default-browser-check",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--disable-quic",
                "--remote-debugging-address=127.0.0.1",
                "--remote-debugging-port=0",
                f"--user-data-dir={profile}",
                f"--window-size={width},{height}",
                "about:blank",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.port = self._devtools_port()
        self.pages: list[Page] = []

    def _devtools_port(self, timeout: float = 60.0) -> int:
        end = time.monotonic() + timeout
        assert self.proc.stderr is not None
        seen = []
        while time.monotonic() < end:
            line = self.proc.stderr.readline()
            if not line:
                if self.proc.poll() is not None:
                    break
                continue
            seen.append(line)
            m = re.search(r"DevTools listening on ws://127\.0\.0\.1:(\d+)/", line)
            if m:
                return int(m.group(1))
        self.close()
        raise RuntimeError("chromium did not start DevTools: " + "".join(seen)[-1500:])

    def new_page(self) -> Page:
        with urlopen(f"http://127.0.0.1:{self.port}/json/version", timeout=30) as r:
            browser_ws = json.loads(r.read())["webSocketDebuggerUrl"]
        ws = _WebSocket(browser_ws)
        ws.send(json.dumps({"id": 1, "method": "Target.createTarget", "params": {"url": "about:blank"}}))
        while True:
            msg = json.loads(ws.recv())
            if msg.get("id") == 1:
                target = msg["result"]["targetId"]
                break
        ws.close()
        page = Page(f"ws://127.0.0.1:{self.port}/devtools/page/{target}")
        self.pages.append(page)
        return page

    def close(self) -> None:
        for p in getattr(self, "pages", []):
            p.close()
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
