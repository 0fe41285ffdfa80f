"""The VS Code extension is packaged to a .vsix with vsce (`npm run package` in
editors/vscode, which `.ci/run` does): the package holds the compiled extension, its
manifest and its runtime dependencies, and none of the sources or build tools.

Skips only where node/npm are not installed. If the .vsix is missing or older than the
extension's sources, the test packages it itself (`npm ci` first when vsce is not
installed), so a failure to package is a failure here.
"""
from __future__ import annotations

import json
import shutil
import subprocess
import zipfile

import pytest

from lsp_helpers import ROOT

VSCODE = ROOT / "editors" / "vscode"
PKG = json.loads((VSCODE / "package.json").read_text())
VSIX = VSCODE / f"{PKG['name']}-{PKG['version']}.vsix"
SOURCES = [VSCODE / "package.json", VSCODE / "package-lock.json", VSCODE / "README.md",
           VSCODE / ".vscodeignore", VSCODE / "tsconfig.json", *sorted((VSCODE / "src").glob("*.ts"))]

pytestmark = pytest.mark.skipif(not (shutil.which("node") and shutil.which("npm")),
                                reason="node/npm not installed (the .vsix is built with vsce)")


def _run(cmd):
    proc = subprocess.run(cmd, cwd=str(VSCODE), capture_output=True, text=True, timeout=420)
    assert proc.returncode == 0, f"{' '.join(cmd)} failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"


def _fresh() -> bool:
    return VSIX.exists() and VSIX.stat().st_mtime >= max(p.stat().st_mtime for p in SOURCES)


@pytest.fixture(scope="module")
def vsix():
    if not _fresh():
        if not (VSCODE / "node_modules" / "@vscode" / "vsce").exists():
            _run(["npm", "ci", "--no-audit", "--no-fund"])
        _run(["npm", "run", "package"])
    assert _fresh(), f"`npm run package` did not produce {VSIX.name}"
    with zipfile.ZipFile(VSIX) as z:
        yield {n: z.read(n) for n in z.namelist()}


def test_vsix_holds_the_compiled_extension_and_its_manifest(vsix):
    manifest = json.loads(vsix["extension/package.json"])
    assert (manifest["name"], manifest["version"], manifest["main"]) == (PKG["name"], PKG["version"], PKG["main"])
    assert manifest["contributes"] == PKG["contributes"]
    main = "extension/" + PKG["main"].removeprefix("./")
    assert main == "extension/out/extension.js"
    js = vsix[main].decode()
    assert "vscode-languageclient" in js and "ts.showSchedule" in js     # compiled from src/extension.ts
    assert b"Microsoft.VisualStudio.Code" in vsix["extension.vsixmanifest"]


def test_vsix_bundles_runtime_dependencies_only(vsix):
    names = list(vsix)
    assert "extension/node_modules/vscode-languageclient/package.json" in names
    assert "extension/node_modules/vscode-jsonrpc/package.json" in names
    for unwanted in ("extension/src/", "extension/test/", "extension/node_modules/typescript/",
                     "extension/node_modules/@vscode/vsce/", "extension/node_modules/@types/"):
        assert not any(n.startswith(unwanted) for n in names), unwanted
    assert not any(n.endswith((".ts", ".map", ".vsix")) and not n.endswith(".d.ts") for n in names)
