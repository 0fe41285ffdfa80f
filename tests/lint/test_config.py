"""[tool.ts-lint] (ts_lint.config): selection by prefix, layers, globs, validation."""
import textwrap
from pathlib import Path

import pytest

from ts_lint.config import (
    CliOverrides, ConfigError, ConfigResolver, Layer, Settings, load_pyproject, parse_selectors,
    path_matches,
)

DEFAULT = Layer(select=("TS",))


def enabled(*layers, codes=("TS101", "TS201", "TS202", "TS210", "TS301", "TS960")):
    s = Settings(layers=(DEFAULT,) + layers)
    return [c for c in codes if s.selected(c)]


def test_default_selects_every_ts_code():
    assert enabled() == ["TS101", "TS201", "TS202", "TS210", "TS301", "TS960"]


def test_longest_prefix_wins_and_ignore_wins_a_tie():
    assert enabled(Layer(select=("TS2",))) == ["TS201", "TS202", "TS210"]
    assert enabled(Layer(select=("TS2",), ignore=("TS20",))) == ["TS210"]
    assert enabled(Layer(select=("TS201",), ignore=("TS2",))) == ["TS201"]
    assert enabled(Layer(select=("TS2",), ignore=("TS2",))) == []
    assert enabled(Layer(ignore=("TS2",), extend_select=("TS202",))) == [
        "TS101", "TS202", "TS301", "TS960"]
    assert enabled(Layer(select=("",), ignore=("TS1", "TS3"))) == [
        "TS201", "TS202", "TS210", "TS960"]  # "" is ALL


def test_later_layers_override_earlier_ones():
    config = Layer(select=("TS1", "TS2"), ignore=("TS20",))
    assert enabled(config) == ["TS101", "TS210"]
    assert enabled(config, Layer(extend_select=("TS201",))) == ["TS101", "TS201", "TS210"]
    assert enabled(config, Layer(select=("TS3",))) == ["TS301"]
    assert enabled(config, Layer(ignore=("TS1",))) == ["TS210"]
    assert enabled(Layer(ignore=("TS2",)), Layer(extend_select=("TS2",))) == [
        "TS101", "TS201", "TS202", "TS210", "TS301", "TS960"]


def test_per_file_ignores_and_switches():
    s = Settings(per_file_ignores=("TS2",), explain_unknown=False, checker=False)
    assert s.selected("TS201") and not s.enabled("TS201") and s.enabled("TS301")
    assert not s.produced("TS951") and not s.produced("TS801") and s.produced("TS201")
    s = Settings(explain_unknown=True, checker=True)
    assert s.produced("TS951") and s.produced("TS801")


def test_parse_selectors():
    assert parse_selectors(["TS", "ts2", " TS201 ", "ALL", "all"], "x") == (
        "TS", "TS2", "TS201", "", "")
    for bad in ("TS2010", "E501", "TSX", "", "TS-1"):
        with pytest.raises(ConfigError) as e:
            parse_selectors([bad], "--select")
        assert str(e.value) == (f"--select: invalid rule selector {bad!r} (expected 'TS' "
                                "followed by up to three digits, or 'ALL')")


@pytest.mark.parametrize("pattern,path,prefixes,expected", [
    ("gen_*.py", "a/b/gen_x.py", False, True),
    ("gen_*.py", "a/gen_x/c.py", False, False),
    ("gen_*", "a/gen_x/c.py", True, True),
    ("tests/*.py", "tests/a.py", False, True),
    ("tests/*.py", "tests/sub/a.py", False, False),
    ("tests/**/*.py", "tests/sub/deep/a.py", False, True),
    ("tests/**/*.py", "tests/a.py", False, True),
    ("/tests", "tests/a.py", True, True),
    ("./tests/", "tests/a.py", True, True),
    ("tests/", "tests", False, False),
    ("src/tests", "tests/a.py", True, False),
    ("**/fixtures", "x/y/fixtures/a.py", True, True),
    ("k[0-9].py", "k7.py", False, True),
    ("k[!0-9].py", "k7.py", False, False),
    ("k?.py", "k77.py", False, False),
])
def test_globs(pattern, path, prefixes, expected):
    assert path_matches(pattern, path, prefixes=prefixes) is expected


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))
    return path


def test_load_a_full_table(tmp_path):
    p = write(tmp_path / "pyproject.toml", """\
        [project]
        name = "x"

        [tool.ts-lint]
        select = ["TS1", "ts2"]
        extend-select = ["TS960"]
        ignore = ["TS20"]
        exclude = ["generated", "legacy/*.py"]
        per-file-ignores = { "tests/**" = ["TS3"], "conftest.py" = ["ALL"] }
        explain-unknown = true
        checker = false
    """)
    cfg = load_pyproject(p)
    assert cfg.root == tmp_path and cfg.path == p
    assert cfg.layer == Layer(select=("TS1", "TS2"), extend_select=("TS960",), ignore=("TS20",))
    assert cfg.exclude == ("generated", "legacy/*.py")
    assert cfg.per_file_ignores == (("tests/**", ("TS3",)), ("conftest.py", ("",)))
    assert (cfg.explain_unknown, cfg.checker) == (True, False)
    assert cfg.is_excluded(tmp_path / "a" / "generated" / "k.py")
    assert cfg.is_excluded(tmp_path / "legacy" / "k.py")
    assert not cfg.is_excluded(tmp_path / "legacy" / "sub" / "k.py")
    assert not cfg.is_excluded(tmp_path / "k.py")
    assert cfg.ignored_codes(tmp_path / "tests" / "a" / "t.py") == ("TS3",)
    assert cfg.ignored_codes(tmp_path / "sub" / "conftest.py") == ("",)
    assert cfg.ignored_codes(tmp_path / "k.py") == ()


def test_a_pyproject_without_the_table_is_passed_over(tmp_path):
    write(tmp_path / "pyproject.toml", "[tool.ts-lint]\nignore = ['TS2']\n")
    write(tmp_path / "pkg" / "pyproject.toml", "[project]\nname = 'pkg'\n")
    write(tmp_path / "pkg" / "inner" / "pyproject.toml", "[tool.ts-lint]\nselect = ['TS3']\n")
    r = ConfigResolver()
    assert r.for_file(tmp_path / "pkg" / "m.py").path == tmp_path / "pyproject.toml"
    assert r.for_file(tmp_path / "pkg" / "inner" / "d" / "m.py").path == \
        tmp_path / "pkg" / "inner" / "pyproject.toml"
    s = r.settings(tmp_path / "pkg" / "m.py")
    assert not s.enabled("TS201") and s.enabled("TS301")
    s = r.settings(tmp_path / "pkg" / "inner" / "m.py")
    assert s.enabled("TS301") and not s.enabled("TS101")  # nearest wins, no merging


def test_cli_overrides_the_file(tmp_path):
    write(tmp_path / "pyproject.toml", """\
        [tool.ts-lint]
        select = ["TS2"]
        explain-unknown = false
        checker = false
        per-file-ignores = { "t_*.py" = ["TS201"] }
    """)
    r = ConfigResolver(CliOverrides(select=("TS1", "TS201"), explain_unknown=True))
    s = r.settings(tmp_path / "m.py")
    assert [c for c in ("TS101", "TS201", "TS202") if s.enabled(c)] == ["TS101", "TS201"]
    assert (s.explain_unknown, s.checker) == (True, False)
    assert not r.settings(tmp_path / "t_x.py").enabled("TS201")  # per-file-ignores still apply
    s = ConfigResolver(CliOverrides(no_checker=True), isolated=True).settings(tmp_path / "m.py")
    assert s.enabled("TS101") and not s.checker and s.config_path is None


@pytest.mark.parametrize("body,message", [
    ("selct = ['TS1']", "unknown option 'selct'; valid options: select, extend-select, ignore, "
                        "exclude, per-file-ignores, explain-unknown, checker"),
    ("extend_select = ['TS1']", "unknown option 'extend_select' (did you mean 'extend-select'?); "
                                "valid options: select, extend-select, ignore, exclude, "
                                "per-file-ignores, explain-unknown, checker"),
    ("select = 'TS1'", "'select' must be a list of strings, got a string"),
    ("ignore = [1]", "'ignore' must be a list of strings, got [1]"),
    ("select = ['E501']", "'select': invalid rule selector 'E501' (expected 'TS' followed by up "
                          "to three digits, or 'ALL')"),
    ("checker = 'no'", "'checker' must be true or false, got a string"),
    ("explain-unknown = 1", "'explain-unknown' must be true or false, got an integer"),
    ("per-file-ignores = ['x']", "'per-file-ignores' must be a table of glob = [codes], got a list"),
    ("per-file-ignores = { 'x' = 'TS1' }", "'per-file-ignores' entry 'x' must be a list of "
                                           "strings, got a string"),
    ("per-file-ignores = { 'x' = ['F401'] }", "'per-file-ignores' 'x': invalid rule selector "
                                              "'F401' (expected 'TS' followed by up to three "
                                              "digits, or 'ALL')"),
])
def test_invalid_tables(tmp_path, monkeypatch, body, message):
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "pyproject.toml", f"[tool.ts-lint]\n{body}\n")
    with pytest.raises(ConfigError) as e:
        load_pyproject(tmp_path / "pyproject.toml")
    assert str(e.value) == f"pyproject.toml: {message}"


def test_invalid_toml(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "pyproject.toml", "[tool.ts-lint\nselect = 1\n")
    with pytest.raises(ConfigError) as e:
        ConfigResolver().for_file(tmp_path / "m.py")
    assert str(e.value).startswith("pyproject.toml: invalid TOML: ")
    write(tmp_path / "pyproject.toml", "[tool]\nts-lint = 3\n")
    with pytest.raises(ConfigError) as e:
        load_pyproject(tmp_path / "pyproject.toml")
    assert str(e.value) == "pyproject.toml: [tool.ts-lint] must be a table"
