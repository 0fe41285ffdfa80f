"""Quick fixes carried by diagnostics: applying the edits removes the finding."""
import pathlib

from ts_runtime.diagnostics import Severity

ROOT = pathlib.Path(__file__).resolve().parents[1]


def apply_edits(text: str, edits) -> str:
    lines = text.splitlines(keepends=True)
    offs = [0]
    for ln in lines:
        offs.append(offs[-1] + len(ln))

    def pos(line, col):
        return offs[line - 1] + col if line - 1 < len(offs) else len(text)
    for e in sorted(edits, key=lambda e: (e.range.line, e.range.column), reverse=True):
        start = pos(e.range.line, e.range.column)
        end = pos(e.range.end_line or e.range.line, e.range.end_column or 0)
        text = text[:start] + e.new_text + text[end:]
    return text


def test_release_before_dma_producer_fix_moves_the_release():
    from ts_lint.api import lint_source
    path = ROOT / "examples" / "bad" / "05_release_before_mma.py"
    text = path.read_text()
    (d,) = [d for d in lint_source(text, str(path)) if d.code == "TS215"]
    assert d.fix is not None and d.fix.applicability == "safe"
    assert "release after" in d.fix.title
    fixed = apply_edits(text, d.fix.edits)
    after = [x for x in lint_source(fixed, str(path)) if x.severity is Severity.ERROR]
    assert after == [], [x.format() for x in after]
    # the release now follows the MMA call, at the MMA's indentation
    lines = fixed.splitlines()
    i = next(n for n, ln in enumerate(lines) if "tmem_acc.mma(" in ln)
    assert lines[i + 1].split("#")[0].strip() == "smem_ab.release()"   # the comment moves with it


def _fix_roundtrip(name, code):
    from ts_lint.api import lint_source
    path = ROOT / "examples" / "bad" / name
    text = path.read_text()
    (d,) = [d for d in lint_source(text, str(path)) if d.code == code]
    assert d.fix is not None and d.fix.applicability == "unsafe"
    fixed = apply_edits(text, d.fix.edits)
    return [x for x in lint_source(fixed, str(path)) if x.severity is Severity.ERROR], fixed


def test_producer_work_before_acquire_fix_inserts_acquire():
    after, fixed = _fix_roundtrip("02_producer_work_before_acquire.py", "TS207")
    assert [x.code for x in after if x.code == "TS207"] == []


def test_read_before_wait_fix_inserts_wait():
    after, fixed = _fix_roundtrip("02_read_before_wait.py", "TS206")
    assert [x.code for x in after if x.code == "TS206"] == []
