"""ts-lsp with the real ts_lint engine: the editor shows what `ts-lint` prints, hovers and
the schedule command work on the examples, and `# noqa` from the code action suppresses."""
from __future__ import annotations

import pathlib
import shutil

import pytest
from lsprotocol import types

from lsp_helpers import ROOT, change_full, needs_real_engine, open_doc, published_for, pull, pull_caps, \
    session, wait_for

pytestmark = [pytest.mark.asyncio, needs_real_engine]

BAD = ["02_missing_release.py", "06_read_before_pdl_wait.py", "05_release_before_mma.py"]


def cli_diagnostics(path: pathlib.Path):
    from ts_lint.cli import check_source
    from ts_lint.config import ConfigResolver
    settings = ConfigResolver(default_root=path.parent).settings(path)
    return check_source(path.read_text(), str(path), settings).diagnostics


def cli_findings(path: pathlib.Path):
    return sorted((d.code, d.range.line - 1, d.range.column) for d in cli_diagnostics(path))


async def test_the_editor_shows_what_ts_lint_prints(tmp_path):
    for name in BAD:
        shutil.copy(ROOT / "examples" / "bad" / name, tmp_path / name)
    async with session(root=tmp_path, real=True, init={"debounceMs": 0}) as client:
        for name in BAD:
            path = tmp_path / name
            open_doc(client, path.as_uri(), path.read_text())
        for name in BAD:
            path = tmp_path / name
            pub = await wait_for(lambda: published_for(client, path.as_uri()), timeout=120)
            got = sorted((d.code, d.range.start.line, d.range.start.character)
                         for d in pub[-1].diagnostics)
            assert got == cli_findings(path), name
            assert got, name
            for d in pub[-1].diagnostics:
                assert d.source == "ts" and d.code_description.href.endswith("#" + d.code.lower())
        # related ranges and counterexample steps all arrive as relatedInformation
        for name in BAD:
            path = tmp_path / name
            want = {(d.code, d.range.line - 1): len(d.related) + len(d.trace)
                    for d in cli_diagnostics(path)}
            for d in published_for(client, path.as_uri())[-1].diagnostics:
                assert len(d.related_information or ()) == want[(d.code, d.range.start.line)]


async def test_hover_schedule_and_noqa_on_an_example(tmp_path):
    src = (ROOT / "examples" / "02_copy_tma.py").read_text()
    bad = (ROOT / "examples" / "bad" / "02_missing_release.py").read_text()
    async with session(pull_caps(), root=tmp_path, real=True, init={"debounceMs": 0}) as client:
        uri = (tmp_path / "copy_tma.py").as_uri()
        open_doc(client, uri, src)
        assert not (await pull(client, uri)).items
        lines = src.splitlines()
        line = next(i for i, l in enumerate(lines) if ".acquire()" in l)
        col = lines[line].index(".acquire()") - 1
        h = await client.text_document_hover_async(types.HoverParams(
            types.TextDocumentIdentifier(uri), types.Position(line, col)))
        assert "**ProducerAcquire** of" in h.contents.value and "pipeline: `TmaAsync`" in h.contents.value
        table = await client.workspace_execute_command_async(types.ExecuteCommandParams(
            command="ts.showSchedule", arguments=[uri, {"line": line, "character": col}]))
        assert "Full (Head + Loop + Tail)" in table

        uri2 = (tmp_path / "missing_release.py").as_uri()
        open_doc(client, uri2, bad)
        report = await pull(client, uri2)
        target = report.items[0]
        actions = await client.text_document_code_action_async(types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri2), range=target.range,
            context=types.CodeActionContext(diagnostics=[target])))
        (noqa,) = [a for a in actions if a.title == f"Disable {target.code} for this line"]
        edit = noqa.edit.document_changes[0].edits[0]
        blines = bad.splitlines(True)
        ln = blines[edit.range.start.line]
        blines[edit.range.start.line] = ln[:edit.range.start.character] + edit.new_text + \
            ln[edit.range.end.character:]
        change_full(client, uri2, 2, "".join(blines))
        after = await pull(client, uri2)
        assert (target.code, target.range.start.line) not in \
            {(d.code, d.range.start.line) for d in after.items}
        assert len(after.items) == len(report.items) - 1


async def test_release_before_dma_fix_is_offered_as_preferred_quick_fix(tmp_path):
    """TS215 from the real engine carries a safe fix; the editor offers it as preferred."""
    name = "05_release_before_mma.py"
    path = tmp_path / name
    shutil.copy(ROOT / "examples" / "bad" / name, path)
    async with session(root=tmp_path, real=True, init={"debounceMs": 0}) as client:
        open_doc(client, path.as_uri(), path.read_text())
        pub = await wait_for(lambda: published_for(client, path.as_uri()), timeout=120)
        (diag,) = [d for d in pub[-1].diagnostics if d.code == "TS215"]
        actions = await client.text_document_code_action_async(types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(path.as_uri()), range=diag.range,
            context=types.CodeActionContext(diagnostics=[diag]))) or []
        fixes = [a for a in actions if isinstance(a, types.CodeAction) and "release after" in a.title]
        assert len(fixes) == 1 and fixes[0].is_preferred
        edit = fixes[0].edit
        edits = list(edit.document_changes[0].edits) if edit.document_changes else list(edit.changes[path.as_uri()])
        assert len(edits) == 2                       # delete the early release, insert it after the MMA
        assert any(e.new_text.strip().startswith("smem_ab.release()") for e in edits)


async def test_findings_in_an_imported_module_stay_out_of_the_document(tmp_path):
    # main.py builds the kernel of a module of its own project; the defect ts-lint finds is
    # in that module's schedule (its path and lines), so it is not drawn on main.py's lines
    shutil.copy(ROOT / "examples" / "bad" / "02_missing_release.py", tmp_path / "kernels.py")
    main = tmp_path / "main.py"
    main.write_text("from kernels import build\nfrom ts_runtime.task_manager import TaskManager\n\n"
                    "manager: TaskManager = build()\n")
    foreign = [d for d in cli_diagnostics(main) if d.range.path != str(main)]
    assert foreign and all(d.range.path == str(tmp_path / "kernels.py") for d in foreign)
    async with session(root=tmp_path, real=True, init={"debounceMs": 0}) as client:
        open_doc(client, main.as_uri(), main.read_text())
        pub = await wait_for(lambda: published_for(client, main.as_uri()), timeout=120)
        assert not [d for d in pub[-1].diagnostics if d.code in {f.code for f in foreign}]
