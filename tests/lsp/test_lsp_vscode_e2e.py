"""The packaged VS Code extension in a real VS Code (code-server 4.100 in headless Chromium).

Heavy to set up (see /work/shared/editors.md), so it runs only when these are given:
TS_CODE_SERVER (a built code-server package folder), TS_PLAYWRIGHT (a folder whose
node_modules has playwright-core) and a packaged extension (TS_VSIX, default
editors/vscode/ts-lsp-0.1.0.vsix from `npm run package`); editors/vscode/test/setup-code-server.sh
builds the first two (see docs/ts-lsp.md, Development).
"""
from __future__ import annotations

import json
import os
import pathlib
import shutil
import subprocess
import sys

import pytest

from lsp_helpers import ROOT

VSCODE = ROOT / "editors" / "vscode"
CODE_SERVER = os.environ.get("TS_CODE_SERVER", "")
PLAYWRIGHT = os.environ.get("TS_PLAYWRIGHT", "")
VSIX = pathlib.Path(os.environ.get("TS_VSIX", VSCODE / "ts-lsp-0.1.0.vsix"))
CHROMIUM = os.environ.get("TS_CHROMIUM", shutil.which("chromium") or "/usr/bin/chromium")

ready = (CODE_SERVER and (pathlib.Path(CODE_SERVER) / "out" / "node" / "entry.js").exists()
         and PLAYWRIGHT and (pathlib.Path(PLAYWRIGHT) / "node_modules" / "playwright-core").exists()
         and VSIX.exists() and os.path.exists(CHROMIUM) and shutil.which("node"))


@pytest.mark.skipif(not ready, reason="set TS_CODE_SERVER, TS_PLAYWRIGHT (and build the .vsix)")
def test_vscode_shows_diagnostics_quick_fixes_and_hovers(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    prog = ws / "missing_release.py"
    shutil.copy(ROOT / "examples" / "bad" / "02_missing_release.py", prog)
    proc = subprocess.run(
        ["node", str(VSCODE / "test" / "e2e.mjs"), "--code-server", CODE_SERVER, "--vsix", str(VSIX),
         "--python", sys.executable, "--file", str(prog), "--out", str(tmp_path / "shots"),
         "--playwright", PLAYWRIGHT, "--chromium", CHROMIUM],
        capture_output=True, text=True, timeout=560, cwd=str(ROOT))
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["ok"], result
    assert any(" ts TS" in p for p in result["problems"]), result["problems"]
    assert any(a.startswith("Disable TS") for a in result["actions"]), result["actions"]
    assert "resource smem" in result["hover"] and "pipeline: TmaAsync" in result["hover"]
