"""The `ts-lsp` command: --version, --help, stdio protection, and a session over --tcp."""
from __future__ import annotations

import asyncio
import socket
import subprocess
import sys
import time

import pytest
from lsprotocol import types

from lsp_helpers import FAKE_SERVER, ROOT, make_client, open_doc, published_for, push_caps, wait_for


def test_version_and_help():
    out = subprocess.run([sys.executable, "-m", "ts_lsp", "--version"], capture_output=True,
                         text=True, timeout=60)
    assert out.returncode == 0 and out.stdout.startswith("ts-lsp ")
    out = subprocess.run([sys.executable, "-m", "ts_lsp", "--tcp", "nonsense"], capture_output=True,
                         text=True, timeout=60)
    assert out.returncode == 2 and "HOST:PORT" in out.stderr


def test_importing_ts_lsp_is_light():
    code = ("import sys, ts_lsp; heavy = [m for m in ('pygls', 'libcst', 'ts_lint.api') "
            "if m in sys.modules]; print(heavy); sys.exit(1 if heavy else 0)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stdout + out.stderr


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.asyncio
async def test_a_session_over_tcp(tmp_path):
    port = _free_port()
    proc = subprocess.Popen(FAKE_SERVER + ["--tcp", f"127.0.0.1:{port}"], cwd=str(ROOT),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        client = make_client()
        deadline = time.monotonic() + 60
        while True:
            try:
                await client.start_tcp("127.0.0.1", port)
                break
            except OSError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise
                await asyncio.sleep(0.2)
        await client.initialize_session(types.InitializeParams(
            capabilities=push_caps(), root_uri=tmp_path.as_uri()))
        uri = (tmp_path / "a.py").as_uri()
        open_doc(client, uri, "bad_call(1)\n")
        pub = await wait_for(lambda: published_for(client, uri), timeout=60)
        assert [d.code for d in pub[0].diagnostics] == ["TS101"]
        await client.shutdown_async(None)
        client.exit(None)
        await client.stop()
    finally:
        proc.kill()
        proc.communicate(timeout=30)      # reaps it and closes its pipes
