"""The plain modules of ts-lsp, without a client: settings, conversion, noqa, debounce,
hover lookup, schedule text."""
from __future__ import annotations

import asyncio
import pathlib

import pytest
from lsprotocol import types
from pygls.workspace.position_codec import PositionCodec

from ts_lsp.convert import Context, LineIndex, to_diagnostic, to_range
from ts_lsp.debounce import KeyedDebouncer
from ts_lsp.features import hover as hv
from ts_lsp.features.code_actions import code_actions
from ts_lsp.features.noqa import add_code_edit, code_at, line_facts
from ts_lsp.features.schedule import kernel_at, schedule_text, task_entries
from ts_lsp.settings import Settings, SettingsStore, merge_raw, parse_settings
from ts_runtime.diagnostics import Diagnostic, Edit, Fix, Related, Severity, TraceStep
from ts_runtime.source import SourceRange

HERE = pathlib.Path(__file__).resolve().parent
SAMPLE = (HERE.parent / "rules" / "sample_program.py").read_text()


# ---------------------------------------------------------------- settings

def test_settings_defaults_and_valid_values():
    s, problems = parse_settings({})
    assert s == Settings() and problems == []
    s, problems = parse_settings({"select": ["ts2", "TS801"], "ignore": "TS201, TS3",
                                  "lintOn": "SAVE", "debounceMs": 50, "docsBaseUrl": "https://x/r.md",
                                  "explainUnknown": True, "checker": False,
                                  "server": {"command": ["python"]}})
    assert problems == []
    assert s.select == ("TS2", "TS801") and s.ignore == ("TS201", "TS3")
    assert (s.lint_on, s.debounce_ms, s.explain_unknown, s.checker) == ("save", 50, True, False)
    assert s.rule_url("TS201") == "https://x/r.md#ts201"


@pytest.mark.parametrize("key,value", [
    ("debounceMs", "soon"), ("debounceMs", -1), ("debounceMs", True), ("lintOn", "always"),
    ("select", ["E501"]), ("select", 3), ("checker", "yes"), ("docsBaseUrl", "not a url"),
])
def test_a_bad_value_keeps_the_default_and_says_why(key, value):
    s, problems = parse_settings({key: value, "checker": False} if key != "checker" else {key: value})
    assert len(problems) == 1 and f"'{key}'" in problems[0] and "default" in problems[0]
    fname = {"debounceMs": "debounce_ms", "lintOn": "lint_on", "select": "select",
             "checker": "checker", "docsBaseUrl": "docs_base_url"}[key]
    assert getattr(s, fname) == getattr(Settings(), fname)
    if key != "checker":
        assert s.checker is False          # the other keys still apply


def test_unknown_keys_and_non_objects_are_reported():
    s, problems = parse_settings({"lint_on": "save", "colour": "red"})
    assert s.lint_on == "save" and len(problems) == 1 and "colour" in problems[0]
    s, problems = parse_settings(["x"])
    assert s == Settings() and problems


def test_layers_merge_key_by_key_and_folders_override():
    store = SettingsStore()
    store.set_initialization({"ts": {"debounceMs": 10, "ignore": ["TS1"]}})
    store.set_configuration({"debounceMs": 20}, {"file:///w/a": {"ignore": ["TS2"]}})
    assert store.get(None)[0].debounce_ms == 20
    assert store.get(None)[0].ignore == ("TS1",)
    a = store.folder_of("file:///w/a/x.py", ["file:///w", "file:///w/a"])
    assert a == "file:///w/a"
    assert store.get(a)[0].ignore == ("TS2",) and store.get(a)[0].debounce_ms == 20
    assert merge_raw({"lint-on": "save"}) == {"lintOn": "save"}


# ---------------------------------------------------------------- conversion

def test_columns_are_code_points_in_the_model_and_utf16_units_on_the_wire():
    text = 'x = "é😀"; bad_call(1)\n'
    col = text.index("bad_call")              # 10 code points
    index = LineIndex(text, PositionCodec(types.PositionEncodingKind.Utf16))
    r = to_range(SourceRange("a.py", 1, col, 1, col + 8), index)
    assert (r.start.line, r.start.character, r.end.character) == (0, col + 1, col + 9)
    assert index.code_point_column(types.Position(0, col + 1)) == (1, col)
    utf8 = LineIndex(text, PositionCodec(types.PositionEncodingKind.Utf8))
    assert to_range(SourceRange("a.py", 1, col), utf8).start.character == col + 1 + 3
    utf32 = LineIndex(text, PositionCodec(types.PositionEncodingKind.Utf32))
    assert to_range(SourceRange("a.py", 1, col), utf32).start.character == col


def test_ranges_are_clamped_and_open_ended_ranges_cover_the_line():
    index = LineIndex("abc\nde\n")
    assert to_range(SourceRange("a.py", 2, 1), index) == types.Range(
        types.Position(1, 1), types.Position(1, 2))
    far = to_range(SourceRange("a.py", 9, 4, 9, 5), index)
    assert far.start == far.end == types.Position(2, 0)
    assert to_range(SourceRange("<unknown>", 1, 0), index).end == types.Position(0, 0)


def test_diagnostic_fields():
    rng = SourceRange("/w/a.py", 2, 0, 2, 5)
    d = Diagnostic("TS802", "aliasing-race", Severity.ERROR, "race", rng,
                   related=(Related(SourceRange("/w/a.py", 1, 0, 1, 3), "other"),),
                   fix=Fix("Do it", (Edit(rng, "x"),), "safe"),
                   trace=(TraceStep("T", "ProducerAcquire(s)", rng), TraceStep("U", "wait", None)))
    ctx = Context("file:///w/a.py", "/w/a.py", LineIndex("abc\nhello\n"),
                  rule_url=lambda c: f"https://d/rules.md#{c.lower()}")
    out = to_diagnostic(d, ctx)
    assert (out.code, out.source, out.severity) == ("TS802", "ts", types.DiagnosticSeverity.Error)
    assert out.code_description.href == "https://d/rules.md#ts802"
    assert [r.message for r in out.related_information] == ["other", "trace 1/2: T: ProducerAcquire(s)"]
    assert out.data["fix"]["applicability"] == "safe"
    ctx.related_support = False
    assert "trace 2/2: U: wait" in to_diagnostic(d, ctx).message


# ---------------------------------------------------------------- noqa

@pytest.mark.parametrize("line,expected", [
    ("x = 1", (5, 5, "  # noqa: TS201")),
    ("x = 1   ", (5, 8, "  # noqa: TS201")),
    ("x = 1  # noqa: E501", (19, 19, ", TS201")),
    ("x = 1  # noqa:E501,TS101", (24, 24, ", TS201")),
    ("x = 1  # noqa: TS201", None),
    ("x = 1  # noqa", None),
    ("x = 1  # keep me", (16, 16, "  # noqa: TS201")),
])
def test_noqa_edit(line, expected):
    assert add_code_edit(line, 1, "TS201", line_facts(line + "\n")) == expected


def test_no_noqa_inside_a_string_or_after_a_backslash():
    src = 's = """a\nb"""\nx = 1 + \\\n    2\n'
    facts = line_facts(src)
    lines = src.splitlines()
    assert add_code_edit(lines[0], 1, "TS201", facts) is None
    assert add_code_edit(lines[2], 3, "TS201", facts) is None
    assert add_code_edit(lines[1], 2, "TS201", facts) == (len(lines[1]), len(lines[1]), "  # noqa: TS201")


def test_code_under_the_cursor():
    line = "x = 1  # noqa: E501, TS201"
    assert code_at(line, 1, line.index("TS201") + 2) == "TS201"
    assert code_at(line, 1, line.index("E501")) == "E501"
    assert code_at(line, 1, 2) is None
    assert code_at('s = "# noqa: TS201"', 1, 14) is None


def test_code_actions_from_data_and_noqa():
    text = "warn_here\nbad_call(1)  # noqa: E501\n"
    index = LineIndex(text)
    fix = {"title": "Rename", "applicability": "unsafe", "edits": [
        {"range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 9}},
         "newText": "x"}]}
    d1 = types.Diagnostic(types.Range(types.Position(0, 0), types.Position(0, 9)), "w",
                          code="TS127", source="ts", data={"fix": fix, "version": 3})
    d2 = types.Diagnostic(types.Range(types.Position(1, 0), types.Position(1, 8)), "e",
                          code="TS101", source="ts")
    other = types.Diagnostic(types.Range(types.Position(1, 0), types.Position(1, 8)), "e",
                             code="E1", source="flake8")
    acts = code_actions("file:///a.py", 4, index, types.CodeActionContext([d1, d2, other]),
                        facts=line_facts(text), document_changes=True)
    titles = [a.title for a in acts]
    assert titles == ["Rename (unsafe)", "Disable TS127 for this line", "Disable TS101 for this line"]
    assert not acts[0].is_preferred
    assert acts[0].edit.document_changes[0].text_document.version == 3
    edit = acts[2].edit.document_changes[0].edits[0]
    assert edit.new_text == ", TS101" and edit.range.start == types.Position(1, 25)


# ---------------------------------------------------------------- debounce

def test_debouncer_coalesces_bursts_and_serialises_a_key():
    async def main():
        d = KeyedDebouncer(max_concurrent=1)
        ran, active, peak = [], [0], [0]

        def job(tag):
            async def run():
                active[0] += 1
                peak[0] = max(peak[0], active[0])
                await asyncio.sleep(0.05)
                ran.append(tag)
                active[0] -= 1
            return run

        for i in range(20):
            d.schedule("a", 0.05, job(f"a{i}"))
        d.schedule("b", 0.0, job("b"))
        await asyncio.sleep(0.08)
        d.schedule("a", 0.0, job("late"))      # the running a19 is not interrupted
        d.schedule("c", 0.01, job("c"))
        d.cancel("c")
        await asyncio.sleep(0.4)
        return ran, peak[0]

    ran, peak = asyncio.run(main())
    assert ran == ["b", "a19", "late"] and peak == 1


# ---------------------------------------------------------------- hover / schedule

@pytest.fixture(scope="module")
def sample_kernels():
    import sys
    sys.path.insert(0, str(HERE))
    import fake_engine
    return fake_engine.analyze_source(SAMPLE, "/w/prog.py").kernels


def _pos(token: str, occurrence: int = 0):
    lines = SAMPLE.splitlines()
    seen = 0
    for i, line in enumerate(lines, 1):
        j = line.find(token)
        if j >= 0:
            if seen == occurrence:
                return i, j + 1
            seen += 1
    raise AssertionError(token)


def test_hover_targets(sample_kernels):
    t = hv.find_target(sample_kernels, *_pos("smem.acquire()"))
    assert t.kind == "step" and t.step.stage.value == "ProducerAcquire" and t.task.name == "LoadTask"
    text = hv.render_target(t)
    assert "ProducerAcquire" in text and "`Smem`" in text and "TmaAsync" in text
    assert "producers: `LoadTask` (warp 4)" in text and "consumers: `StoreTask` (warps 0-3)" in text
    t = hv.find_target(sample_kernels, *_pos("smem.tma_load("))
    assert "work method `tma_load(gmem_idx)`" in hv.render_target(t)
    t = hv.find_target(sample_kernels, *_pos('Smem(name="smem"'))
    assert t.kind == "resource" and "2 stage(s)" in hv.render_target(t)
    line, _ = _pos("    return TaskManager(")
    assert hv.find_target(sample_kernels, line, 12).kind == "kernel"
    assert hv.find_target(sample_kernels, 1, 0) is None
    assert hv.find_target(sample_kernels, 1, 0, word="smem").resource.name == "smem"


def test_show_schedule_text(sample_kernels):
    k = kernel_at(sample_kernels, *_pos("smem.acquire()"))
    assert k is sample_kernels[0]
    assert "StoreTask" in schedule_text(k) and "LoadTask" in schedule_text(k)
    plain = task_entries(k)
    assert "LoadTask: warp 4 schedule load_schedule" in plain
    assert "domain_loop(0, 8, 1):" in plain and "ProducerAcquire" in plain
