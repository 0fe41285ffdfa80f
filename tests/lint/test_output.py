"""Exact output of every format (ts_lint.output), on hand-made findings."""
import json

from ts_runtime.diagnostics import Diagnostic, Edit, Fix, Related, Severity, TraceStep
from ts_runtime.source import SourceRange

from ts_lint import output

A = Diagnostic("TS201", "producer-role", Severity.ERROR, "smem is acquired but never committed",
               SourceRange("k.py", 12, 4, 14, 9),
               related=(Related(SourceRange("k.py", 20, 8, 20, 18), "acquired here"),),
               fix=Fix("Add `smem.commit()`", (Edit(SourceRange("k.py", 15, 0, 15, 0),
                                                    "        smem.commit()\n"),), "unsafe"),
               trace=(TraceStep("LoadTask", "ProducerAcquire smem", SourceRange("k.py", 30, 8)),
                      TraceStep("StoreTask", "ConsumerWait smem")))
B = Diagnostic("TS301", "route, with: comma", Severity.WARNING, "50% done\nsecond line",
               SourceRange("sub/m.py", 3, 0))
C = Diagnostic("TS951", "unknown-value", Severity.INFO, "cannot resolve `n`",
               SourceRange("k.py", 2, 7, 2, 8))


def test_text():
    assert output.format_text([A, B, C]) == (
        "k.py:12:5: TS201 [producer-role] smem is acquired but never committed\n"
        "  k.py:20:9: acquired here\n"
        "  counterexample:\n"
        "    1. LoadTask: ProducerAcquire smem (k.py:30:9)\n"
        "    2. StoreTask: ConsumerWait smem\n"
        "  fix (unsafe): Add `smem.commit()`\n"
        "sub/m.py:3:1: TS301 [route, with: comma] 50% done\n"
        "    second line\n"
        "k.py:2:8: TS951 [unknown-value] cannot resolve `n`\n")


def test_render_text_and_concise_end_with_a_summary():
    assert output.render("text", [C]) == (
        "k.py:2:8: TS951 [unknown-value] cannot resolve `n`\n\n"
        "Found 1 finding (0 errors, 0 warnings, 1 info).\n")
    assert output.render("text", []) == "All checks passed!\n"
    assert output.render("concise", [A, C]) == (
        "k.py:12:5: TS201 smem is acquired but never committed\n"
        "k.py:2:8: TS951 cannot resolve `n`\n"
        "Found 2 findings (1 error, 0 warnings, 1 info).\n")
    assert output.format_concise([B]) == "sub/m.py:3:1: TS301 50% done second line\n"
    assert output.summary_line([A, A, B]) == "Found 3 findings (2 errors, 1 warning, 0 info)."


def test_json():
    data = json.loads(output.format_json([A, B]))
    assert data == [
        {"code": "TS201", "name": "producer-role", "severity": "error",
         "message": "smem is acquired but never committed", "filename": "k.py",
         "range": {"start": {"line": 12, "column": 5}, "end": {"line": 14, "column": 10}},
         "related": [{"filename": "k.py", "message": "acquired here",
                      "range": {"start": {"line": 20, "column": 9},
                                "end": {"line": 20, "column": 19}}}],
         "fix": {"title": "Add `smem.commit()`", "applicability": "unsafe",
                 "edits": [{"range": {"start": {"line": 15, "column": 1},
                                      "end": {"line": 15, "column": 1}},
                            "content": "        smem.commit()\n"}]},
         "trace": [{"task": "LoadTask", "step": "ProducerAcquire smem", "filename": "k.py",
                    "range": {"start": {"line": 30, "column": 9},
                              "end": {"line": 30, "column": 9}}},
                   {"task": "StoreTask", "step": "ConsumerWait smem", "filename": None,
                    "range": None}]},
        {"code": "TS301", "name": "route, with: comma", "severity": "warning",
         "message": "50% done\nsecond line", "filename": "sub/m.py",
         "range": {"start": {"line": 3, "column": 1}, "end": {"line": 3, "column": 1}},
         "related": [], "fix": None, "trace": []},
    ]
    assert output.format_json([]) == "[]\n"
    assert list(data[0]) == ["code", "name", "severity", "message", "filename", "range",
                             "related", "fix", "trace"]


def test_github_escapes_properties_and_data():
    assert output.format_github([A, B, C]) == (
        "::error file=k.py,line=12,col=5,title=TS201::smem is acquired but never committed\n"
        "::warning file=sub/m.py,line=3,col=1,title=TS301::50%25 done%0Asecond line\n"
        "::notice file=k.py,line=2,col=8,title=TS951::cannot resolve `n`\n")
    odd = Diagnostic("TS201", "x", Severity.ERROR, "m", SourceRange("a,b:c.py", 1, 0))
    assert output.format_github([odd]) == "::error file=a%2Cb%3Ac.py,line=1,col=1,title=TS201::m\n"


class _Rule:
    def __init__(self, code, name, severity, phase="manager"):
        self.code, self.name, self.severity, self.phase = code, name, severity, phase

    def doc(self):
        return f"Summary of {self.code}.\n\n## What it does\nIt checks."

    def summary(self):
        return f"Summary of {self.code}."


def test_sarif():
    rules = {"TS201": _Rule("TS201", "producer-role", Severity.ERROR),
             "TS100": _Rule("TS100", "other", Severity.INFO, "capture")}
    doc = json.loads(output.format_sarif([A, B], version="9.9", rules=rules))
    assert doc["$schema"] == "https://json.schemastore.org/sarif-2.1.0.json"
    assert doc["version"] == "2.1.0"
    (run,) = doc["runs"]
    assert run["columnKind"] == "unicodeCodePoints"
    driver = run["tool"]["driver"]
    assert (driver["name"], driver["version"]) == ("ts-lint", "9.9")
    assert [r["id"] for r in driver["rules"]] == ["TS100", "TS201", "TS301"]
    assert driver["rules"][1] == {
        "id": "TS201", "name": "producer-role",
        "shortDescription": {"text": "Summary of TS201."},
        "fullDescription": {"text": "Summary of TS201.\n\n## What it does\nIt checks."},
        "help": {"text": "Summary of TS201.\n\n## What it does\nIt checks.",
                 "markdown": "Summary of TS201.\n\n## What it does\nIt checks."},
        "helpUri": "docs/rules.md#ts201",
        "defaultConfiguration": {"level": "error"},
        "properties": {"phase": "manager"}}
    assert driver["rules"][0]["defaultConfiguration"] == {"level": "note"}
    assert driver["rules"][2] == {"id": "TS301", "helpUri": "docs/rules.md#ts301"}
    first, second = run["results"]
    assert first == {
        "ruleId": "TS201", "ruleIndex": 1, "level": "error",
        "message": {"text": "smem is acquired but never committed"},
        "locations": [{"physicalLocation": {
            "artifactLocation": {"uri": "k.py"},
            "region": {"startLine": 12, "startColumn": 5, "endLine": 14, "endColumn": 10}}}],
        "relatedLocations": [{"id": 0, "message": {"text": "acquired here"}, "physicalLocation": {
            "artifactLocation": {"uri": "k.py"},
            "region": {"startLine": 20, "startColumn": 9, "endLine": 20, "endColumn": 19}}}],
        "fixes": [{"description": {"text": "Add `smem.commit()`"}, "artifactChanges": [{
            "artifactLocation": {"uri": "k.py"},
            "replacements": [{"deletedRegion": {"startLine": 15, "startColumn": 1,
                                                "endLine": 15, "endColumn": 1},
                              "insertedContent": {"text": "        smem.commit()\n"}}]}]}],
    }
    assert (second["ruleIndex"], second["level"]) == (2, "warning")
    assert "relatedLocations" not in second and "fixes" not in second


def test_sarif_uses_the_catalogue_by_default():
    from ts_runtime.rules import load_all
    doc = json.loads(output.format_sarif([]))
    ids = [r["id"] for r in doc["runs"][0]["tool"]["driver"]["rules"]]
    assert ids == sorted(load_all()) and "TS960" in ids
    assert doc["runs"][0]["results"] == []


def test_sarif_absolute_paths_become_file_uris():
    d = Diagnostic("TS201", "x", Severity.ERROR, "m", SourceRange("/abs/dir/k.py", 1, 0))
    doc = json.loads(output.format_sarif([d], rules={}))
    loc = doc["runs"][0]["results"][0]["locations"][0]["physicalLocation"]
    assert loc["artifactLocation"] == {"uri": "file:///abs/dir/k.py"}


def test_statistics():
    diags = [B, A, C, A, B, B]
    assert output.format_statistics(diags) == (
        "3\tTS301\troute, with: comma\n"
        "2\tTS201\tproducer-role\n"
        "1\tTS951\tunknown-value\n")
    assert json.loads(output.format_statistics(diags, "json")) == [
        {"code": "TS301", "name": "route, with: comma", "count": 3},
        {"code": "TS201", "name": "producer-role", "count": 2},
        {"code": "TS951", "name": "unknown-value", "count": 1}]
    assert output.format_statistics([]) == ""
    many = [A] * 12 + [C]
    assert output.format_statistics(many) == "12\tTS201\tproducer-role\n 1\tTS951\tunknown-value\n"
