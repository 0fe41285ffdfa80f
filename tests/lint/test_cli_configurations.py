"""The `__main__` block's other command-line configurations (ts_lint.extract.configurations):
a defect only an argparse `choices=` value builds is shown as a warning naming the
option; the default run's own findings stay errors, reported once."""
from ts_runtime.diagnostics import Severity

from ts_lint.api import analyze_source

from test_extract import COPY

MAIN = '''

MODES = {"narrow": 128, "wide": %(wide)d}

if __name__ == "__main__":
    import argparse
    ap = argparse.ArgumentParser()
    ap.add_argument("--mode", choices=%(choices)s, default="%(default)s")
    args = ap.parse_args()
    build(consumer=MODES[args.mode])
'''


# build() needs an argument, so the `__main__` block is the module's own run
BUILD = COPY.replace("def build(stages=2, consumer=128):", "def build(stages=2, *, consumer):")


def _program(wide=96, choices="MODES.keys()", default="narrow"):
    return BUILD + MAIN % {"wide": wide, "choices": choices, "default": default}


def _line(src, text):
    return src[:src.index(text)].count("\n") + 1


def _findings(src):
    return [(d.code, d.severity, d.range.line, d.message) for d in analyze_source(src, "p.py").diagnostics]


def test_a_defect_of_another_choice_is_a_warning_naming_it():
    src = _program()
    found = _findings(src)
    line = _line(src, "consumer_group=CooperativeGroup(Agent.Thread, consumer)")
    assert [(c, s, ln) for c, s, ln, _ in found] == [("TS430", Severity.WARNING, line)]
    assert "found in the configuration `--mode wide`" in found[0][3]


def test_choices_as_a_list_literal():
    src = _program(choices='["narrow", "wide"]')
    assert [(c, s) for c, s, _, _ in _findings(src)] == [("TS430", Severity.WARNING)]


def test_the_default_runs_defect_stays_one_error():
    # the default is the defective mode: an error, and the other choice adds nothing
    src = _program(default="wide")
    found = _findings(src)
    assert [(c, s) for c, s, _, _ in found] == [("TS430", Severity.ERROR)]
    assert "configuration" not in found[0][3]


def test_every_choice_valid_means_no_finding():
    # 4 consumer arrivals (one per warp) is the other valid TmaAsync group size
    a = analyze_source(_program(wide=4), "p.py")
    assert a.diagnostics == []
    # the default run's kernels come first; the re-run's kernel is labelled by its option
    assert a.kernel_roots == ["__main__", "__main__ (--mode wide)"]
    # a re-run that builds the same kernel again adds none
    assert analyze_source(_program(wide=128), "p.py").kernel_roots == ["__main__"]


def test_a_rerun_starts_from_the_imported_module():
    # the default run rebinds a module name; the `--mode wide` run must not see it
    src = BUILD + '''

CONSUMER = 128

if __name__ == "__main__":
    import argparse
    ap = argparse.ArgumentParser()
    ap.add_argument("--mode", choices=["narrow", "wide"], default="narrow")
    args = ap.parse_args()
    if args.mode == "narrow":
        globals()["CONSUMER"] = 96
    build(consumer=CONSUMER)
'''
    found = _findings(src)
    # default run: 96 (an error); the wide run: 128 from the import, no finding
    assert [(c, s) for c, s, _, _ in found] == [("TS430", Severity.ERROR)]


def test_the_editor_path_reports_the_same():
    from ts_lint.incremental import AnalysisCache
    src = _program()
    whole = _findings(src)
    cache = AnalysisCache()
    for text in (src, src + "\n# edited\n"):
        inc = analyze_source(text, "p.py", cache=cache).diagnostics
        assert [(d.code, d.severity, d.range.line, d.message) for d in inc] == whole


def test_show_schedule_names_the_configuration(tmp_path, capsys, monkeypatch):
    from ts_lint import cli
    (tmp_path / "p.py").write_text(_program(wide=4))
    monkeypatch.chdir(tmp_path)
    assert cli.main(["--show-schedule", "--format", "concise", "p.py"]) == 0
    heads = [ln for ln in capsys.readouterr().out.splitlines() if "TaskManager schedule" in ln]
    line = _line(_program(), "return TaskManager(")
    assert heads == [f"p.py:{line}: TaskManager schedule",
                     f"p.py:{line}: TaskManager schedule (configuration --mode wide)"]


def test_a_value_the_program_refuses_builds_nothing():
    # `parser.error(...)` exits: the `--mode wide` run stops there, with no finding
    src = BUILD + MAIN % {"wide": 96, "choices": "MODES.keys()", "default": "narrow"}
    refused = src.replace("    args = ap.parse_args()\n",
                          "    args = ap.parse_args()\n    if args.mode == 'wide':\n"
                          "        ap.error('--mode wide needs a wider GPU')\n", 1)
    assert refused != src
    assert _findings(refused) == []
    a = analyze_source(refused, "p.py")
    assert a.kernel_roots == ["__main__"]


FLAG_MAIN = '''

if __name__ == "__main__":
    import argparse
    ap = argparse.ArgumentParser()
    ap.add_argument("--wide", action="store_true")
    ap.add_argument("--debug", action="store_true")
    args = ap.parse_args()
    if args.debug and not args.wide:
        ap.error("--debug needs --wide")
    build(consumer=96 if args.wide else 128)
'''


def test_an_on_off_option_is_a_configuration_too():
    src = BUILD + FLAG_MAIN
    found = _findings(src)
    line = _line(src, "consumer_group=CooperativeGroup(Agent.Thread, consumer)")
    assert [(c, s, ln) for c, s, ln, _ in found] == [("TS430", Severity.WARNING, line)]
    assert "found in the configuration `--wide`" in found[0][3]
    # `--debug` alone is refused by the program (parser.error): no kernel, no finding
    assert analyze_source(src, "p.py").kernel_roots == ["__main__", "__main__ (--wide)"]


def test_an_option_is_not_blamed_for_the_main_blocks_own_defaults():
    # build() (an entry point, analysed first) and the `__main__` block's defaults build
    # different kernels; `--verbose` changes nothing: no warning names it
    src = COPY + '''

if __name__ == "__main__":
    import argparse
    ap = argparse.ArgumentParser()
    ap.add_argument("--consumer", type=int, default=96)
    ap.add_argument("--verbose", action="store_true")
    args = ap.parse_args()
    build(consumer=args.consumer)
'''
    assert _findings(src) == []


def test_an_internal_failure_in_a_rerun_keeps_the_default_findings(monkeypatch):
    from ts_lint.extract.interpreter import Interpreter
    run = Interpreter.run_module

    def failing(self, main=False):
        if self.ctx.config_label:
            raise RuntimeError("boom")
        return run(self, main)
    monkeypatch.setattr(Interpreter, "run_module", failing)
    src = _program(default="wide")
    assert [(c, s) for c, s, _, _ in _findings(src)] == [("TS430", Severity.ERROR)]
    assert analyze_source(src, "p.py").kernel_roots == ["__main__"]
