"""TS961: importing the module certainly raises (an `assert` that fails, a `raise` that is
reached and not caught), judged only on the import itself with statically known values."""
import textwrap

from ts_lint.api import analyze_source, lint_source


def findings(src, **kw):
    src = textwrap.dedent(src)
    return [(d.code, d.range.line, d.message) for d in lint_source(src, "m.py", **kw) if d.code.startswith("TS96")
            or d.code == "TS953"]


def test_a_failing_module_level_assert():
    got = findings('''
        WARPS = {"store": 4, "load": 1, "mma": 2}
        TOTAL = sum(WARPS.values())
        assert TOTAL == 8, f"expected 8 warps, got {TOTAL}"
    ''')
    assert got == [("TS961", 4, "importing this module raises AssertionError: `assert TOTAL == 8` is false "
                                "with the values the module computes")]


def test_a_raise_in_a_function_the_import_calls():
    got = findings('''
        def stages(budget, per_stage):
            n = budget // per_stage
            if n < 2:
                raise ValueError(f"only {n} stage(s) fit")
            return n

        STAGES = stages(96 * 1024, 64 * 1024)
    ''')
    assert got == [("TS961", 5, "importing this module raises ValueError: this `raise` is reached with the "
                                "values the module computes")]


def test_what_python_would_not_raise_is_not_reported():
    assert findings('''
        import os
        WARPS = 8
        assert WARPS % 4 == 0
        try:
            assert WARPS == 4
        except AssertionError:
            WARPS = 4
        if os.environ.get("TS_STRICT"):     # unknown: not judged
            raise RuntimeError("strict")
        assert int(os.environ["N"]) > 0     # unknown: not judged

        def never_called_at_import(n=0):
            if n == 0:
                raise ValueError("n")
    ''') == []


def test_the_main_block_only_stops_the_analysis():
    # it depends on the command line: an info (--explain-unknown), not an error
    got = findings('''
        import argparse

        if __name__ == "__main__":
            p = argparse.ArgumentParser()
            p.add_argument("--n", type=int, default=3)
            args = p.parse_args()
            assert args.n % 2 == 0
    ''', explain_unknown=True)
    assert [(c, line) for c, line, _ in got] == [("TS953", 8)]
