"""Reading a module in pieces, parse caches and incremental analysis give the results of a
whole-file analysis (ts_lint.extract.source, ts_lint.incremental)."""
import importlib.util
import pathlib
import random
import re

import pytest

from ts_lint import api
from ts_lint.extract import source as source_mod
from ts_lint.incremental import AnalysisCache, partition

ROOT = pathlib.Path(__file__).resolve().parents[2]
EXAMPLES = sorted(p for p in (ROOT / "examples").rglob("*.py"))


def _bench_lsp():
    spec = importlib.util.spec_from_file_location("_bench_lsp_for_tests", ROOT / "benchmarks" / "lsp.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _result(a):
    return (a.diagnostics, a.unknowns, len(a.kernels))


def _whole(text, path="m.py", **kw):
    """The reference: the file read in one piece, no parse reused from another call."""
    old = source_mod.SEGMENTED
    source_mod.SEGMENTED = False
    try:
        source_mod.clear_cache()
        return api.analyze_source(text, path, **kw)
    finally:
        source_mod.SEGMENTED = old
        source_mod.clear_cache()


def _rule_programs():
    from ts_runtime.rules import load_all
    out = []
    for code, rule in sorted(load_all().items()):
        for kind, progs in (("valid", rule.VALID), ("invalid", rule.INVALID)):
            out.extend((f"{code}-{kind}-{i}", src) for i, src in enumerate(progs))
    return out


@pytest.fixture(scope="module")
def generated():
    return _bench_lsp().generate_module(1000)


# ---------------------------------------------------------------- reading in pieces

@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: str(p.relative_to(ROOT / "examples")))
def test_pieces_and_caches_match_a_whole_file_read(path):
    text = path.read_text()
    ref = _result(_whole(text, explain_unknown=True))
    assert _result(api.analyze_source(text, "m.py", explain_unknown=True)) == ref
    # a second time, every statement's parse comes from the cache
    assert _result(api.analyze_source(text + "\n# again\n", "m.py", explain_unknown=True)) == ref
    # the same statements at other lines: the cached parses are placed at their new lines
    shifted = "# one\n\n# two\n" + text
    ref2 = _result(_whole(shifted, explain_unknown=True))
    api.analyze_source(text, "m.py", explain_unknown=True)
    assert _result(api.analyze_source(shifted, "m.py", explain_unknown=True)) == ref2


def test_rule_examples_read_in_pieces_match():
    progs = _rule_programs()
    ref = {}
    old = source_mod.SEGMENTED
    source_mod.SEGMENTED = False
    try:
        source_mod.clear_cache()
        for name, src in progs:
            ref[name] = _result(api.analyze_source(src, "program.py"))
    finally:
        source_mod.SEGMENTED = old
        source_mod.clear_cache()
    bad = [name for name, src in progs if _result(api.analyze_source(src, "program.py")) != ref[name]]
    assert not bad


def test_generated_module_in_pieces(generated):
    ref = _result(_whole(generated))
    assert ref[2] >= 6
    assert _result(api.analyze_source(generated, "m.py")) == ref
    assert _result(api.analyze_source(generated, "m.py")) == ref


def test_identical_statements_get_their_own_nodes():
    """The same function text twice in one file: each copy is its own statement (node
    identity matters to the interpreter), so both are analysed."""
    text = (ROOT / "examples" / "bad" / "02_missing_release.py").read_text()
    lines = text.splitlines(True)
    twice = text + "\n\n" + "".join(lines[lines.index(next(l for l in lines if l.startswith("def build("))):])
    assert _result(api.analyze_source(twice, "m.py")) == _result(_whole(twice))


def test_chunks_are_whole_statements():
    text = ('x = """\ny = 1\n"""\n'            # a column-0 line inside a string
            "f(\n1)\n"                          # and inside brackets
            "if x:\n    pass\nelse:\n    pass\n"
            "@dec\ndef g():\n    return 1\n"
            "z = 2; w = 3\n")
    chunks = source_mod.split_chunks(text)
    starts = [off + 1 for off, _c, _t in chunks]
    assert starts == [1, 4, 6, 10, 13]
    sf = source_mod.SourceFile(text, "m.py")
    assert [(s.first, s.last) for s in sf.segments] == [(1, 3), (4, 5), (6, 9), (10, 12), (13, 13)]


def test_syntax_error_is_reported_like_before():
    text = "x = 1\ndef f(:\n    pass\ny = 2\n"
    assert _result(api.analyze_source(text, "m.py")) == _result(_whole(text))
    assert api.lint_source(text, "m.py")[0].code == "TS000"


# ---------------------------------------------------------------- incremental analysis

def test_partition_of_the_generated_module(generated):
    sf = source_mod.SourceFile(generated, "m.py")
    imports, comps = partition(sf)
    assert imports and len(comps) >= 6      # one per copied example (and the loose statements)
    seen = sorted(i for c in comps for i in c) + imports
    assert sorted(seen) == list(range(len(sf.segments)))


def test_dynamic_name_access_analyses_the_whole_module():
    text = "X = 1\ndef f():\n    return globals()['X']\nY = 2\n"
    assert partition(source_mod.SourceFile(text, "m.py")) is None


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: str(p.relative_to(ROOT / "examples")))
def test_incremental_matches_full_on_examples(path):
    text = path.read_text()
    cache = AnalysisCache()
    for t in (text, "# a comment\n" + text, text.replace("\n\n\n", "\n\n# x\n\n", 1)):
        full = _result(api.analyze_source(t, "m.py", explain_unknown=True))
        inc = api.analyze_source(t, "m.py", explain_unknown=True, cache=cache)
        assert inc.diagnostics == full[0] and inc.unknowns == full[1]


def test_incremental_matches_full_on_rule_examples():
    cache = AnalysisCache()
    bad = []
    for name, src in _rule_programs():
        full = api.analyze_source(src, "program.py")
        inc = api.analyze_source(src, "program.py", cache=cache)
        if inc.diagnostics != full.diagnostics or inc.unknowns != full.unknowns:
            bad.append(name)
    assert not bad


def _edit(rng, lines):
    i = rng.randrange(len(lines))
    kind = rng.choice(["comment", "delete", "duplicate", "number", "blank", "indent"])
    if kind == "comment":
        lines.insert(i, "# edited\n")
    elif kind == "delete":
        del lines[i]
    elif kind == "duplicate":
        lines.insert(i, lines[i])
    elif kind == "number":
        nums = list(re.finditer(r"\b\d+\b", lines[i]))
        if nums:
            m = rng.choice(nums)
            lines[i] = lines[i][:m.start()] + str(rng.choice([0, 1, 2, 3, 4, 8, 64])) + lines[i][m.end():]
    elif kind == "blank":
        lines.insert(i, "\n")
    else:
        lines[i] = "    " + lines[i]
    return lines


@pytest.mark.parametrize("seed", range(3))
def test_incremental_matches_full_on_random_edits(generated, seed):
    rng = random.Random(seed)
    lines = generated.splitlines(True)
    cache = AnalysisCache()
    api.analyze_source(generated, "m.py", cache=cache)
    for step in range(8):
        lines = _edit(rng, lines)
        text = "".join(lines)
        full = api.analyze_source(text, "m.py")
        inc = api.analyze_source(text, "m.py", cache=cache)
        assert inc.diagnostics == full.diagnostics, (seed, step)
        assert inc.unknowns == full.unknowns, (seed, step)
        if not inc.kernels_stale:
            assert len(inc.kernels) == len(full.kernels)
    assert cache.hits > 0


def test_reused_findings_move_with_their_statements():
    """A finding of an unchanged program is reused, at its statement's new line."""
    bad = (ROOT / "examples" / "bad" / "02_missing_release.py").read_text()
    good = (ROOT / "examples" / "01_copy_grid_stride.py").read_text()
    lsp = _bench_lsp()
    h1, b1 = lsp._split(good)
    h2, b2 = lsp._split(bad)
    b1 = lsp._rename(b1, lsp._top_level_names(b1), "_a")
    text = "\n".join(dict.fromkeys(h1 + h2)) + "\n\n" + "\n".join(b1) + "\n" + "\n".join(b2) + "\n"
    cache = AnalysisCache()
    first = api.analyze_source(text, "m.py", cache=cache)
    assert [d.code for d in first.diagnostics] == ["TS812"]
    lines = text.splitlines(True)
    edited = "".join(lines[:40] + ["# a new line\n"] * 3 + lines[40:])   # inside program 1
    misses = cache.misses
    again = api.analyze_source(edited, "m.py", cache=cache)
    assert cache.misses - misses == 1       # only the edited program ran again
    full = api.analyze_source(edited, "m.py")
    assert again.diagnostics == full.diagnostics
    assert again.diagnostics[0].range.line == first.diagnostics[0].range.line + 3
    assert again.kernels_stale


def test_schedule_in_a_helper_function_elsewhere_is_found():
    """The schedule with the defect lives in a top-level helper at the end of the file,
    after an unrelated program: the helper belongs to its caller's component."""
    lsp = _bench_lsp()
    h2, b2 = lsp._split((ROOT / "examples" / "bad" / "02_missing_release.py").read_text())
    bad = [l + "\n" for l in b2]
    i = next(k for k, l in enumerate(bad) if "def store_schedule(" in l) - 1
    j = next(k for k in range(i + 2, len(bad)) if bad[k].strip() == "@schedule")
    block = bad[i:j]
    assert block[0].strip() == "@schedule"
    main = bad[:i] + ["    store_schedule = store_schedule_helper(num_rows)\n", "\n"] + bad[j:]
    h1, b1 = lsp._split((ROOT / "examples" / "01_copy_grid_stride.py").read_text())
    b1 = lsp._rename(b1, lsp._top_level_names(b1), "_other")
    text = ("\n".join(dict.fromkeys(h2 + h1)) + "\n\n" + "".join(main).rstrip("\n") + "\n\n\n"
            + "\n".join(b1) + "\n\n"
            "def store_schedule_helper(num_rows):\n" + "".join(block) + "    return store_schedule\n")
    full = api.analyze_source(text, "m.py")
    assert [d.code for d in full.diagnostics] == ["TS812"]
    sf = source_mod.SourceFile(text, "m.py")
    _imports, comps = partition(sf)
    where = {i: k for k, c in enumerate(comps) for i in c}
    helper = next(i for i, s in enumerate(sf.segments) if "store_schedule_helper" in
                  "".join(sf.lines[s.first - 1:s.first]) and sf.lines[s.first - 1].startswith("def"))
    caller = next(i for i, s in enumerate(sf.segments) if sf.lines[s.first - 1].startswith("def make_task_manager("))
    assert where[helper] == where[caller]
    cache = AnalysisCache()
    assert api.analyze_source(text, "m.py", cache=cache).diagnostics == full.diagnostics
    edited = text.replace("return store_schedule\n", "return store_schedule  # edited\n")
    assert api.analyze_source(edited, "m.py", cache=cache).diagnostics == \
        api.analyze_source(edited, "m.py").diagnostics


def test_lsp_engine_reuses_per_document_cache(tmp_path):
    from ts_lsp.engine import Engine
    from ts_lsp.settings import Settings
    text = (ROOT / "examples" / "bad" / "02_missing_release.py").read_text()
    eng = Engine()
    path = str(tmp_path / "m.py")
    r1 = eng.lint(text, path, Settings(), str(tmp_path))
    r2 = eng.lint("# top\n" + text, path, Settings(), str(tmp_path))
    assert [d.range.line + 1 for d in r1.diagnostics] == [d.range.line for d in r2.diagnostics]
    assert eng.analysis_cache(path) is eng.analysis_cache(path)


def test_closing_a_document_drops_its_engine_cache(tmp_path):
    """didClose -> TsLanguageServer.forget -> Engine.forget: the document's incremental
    cache goes (a fresh one is made if it is opened again)."""
    from ts_lsp.engine import Engine
    from ts_lsp.server import create_server
    from ts_lsp.settings import Settings
    eng = Engine()
    server = create_server(engine=eng)
    path = tmp_path / "m.py"
    eng.lint((ROOT / "examples" / "02_copy_tma.py").read_text(), str(path), Settings(), str(tmp_path))
    cache = eng.analysis_cache(str(path))
    other = eng.analysis_cache(str(tmp_path / "other.py"))
    server.forget(path.as_uri())
    assert eng.analysis_cache(str(path)) is not cache
    assert eng.analysis_cache(str(tmp_path / "other.py")) is other


def test_statements_after_the_main_guard_stay_with_it():
    text = ("import os\n"
            "def a():\n    return 1\n"
            "if __name__ == '__main__':\n    a()\n"
            "def b():\n    return 2\n"
            "import sys\n")
    sf = source_mod.SourceFile(text, "m.py")
    imports, comps = partition(sf)
    assert imports == [0]
    assert [2, 3, 4] in comps or any({2, 3, 4} <= set(c) for c in comps)


def test_method_names_link_components():
    """roots.root_order relates functions by method names too: a method name of one
    component written in another's text puts both in one component."""
    from ts_lint.incremental import _method_links, _run_components
    text = ("class Runner:\n    def go_fast(self):\n        return 1\n\n"
            "def other():\n    return thing.go_fast\n")
    sf = source_mod.SourceFile(text, "m.py")
    imports, comps = partition(sf)
    assert len(comps) == 2
    results, _stale = _run_components(sf, "m.py", False, True, AnalysisCache(), imports, comps)
    assert _method_links(sf, comps, results, set(imports))
    full = api.analyze_source(text, "m.py")
    assert api.analyze_source(text, "m.py", cache=AnalysisCache()).diagnostics == full.diagnostics
