"""examples/ against the reference: valid programs pass, every bad variant is rejected.

Each valid example is checked twice: `build()` (host-side validation with plain ints)
and `compile_fake()` (the kernel traced and compiled for sm_100a with fake tensors, which
validates again inside the kernel). Each `examples/bad/*.py` file states in its header
the exception the reference raises (`# reference: Type: fragment`) and marks the line a
checker should point at (`# expect: TSxxx`); the header is checked here.
"""
import difflib
import re
from pathlib import Path

import pytest

try:
    from oracle import reference_verdict_file
except ImportError:                    # tests/ imported as a package
    from tests.oracle import reference_verdict_file

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
VALID = sorted(EXAMPLES.glob("[0-9]*.py"))
BAD = sorted((EXAMPLES / "bad").glob("*.py"))
HEADER = re.compile(r"^# Single-defect variant of examples/(\S+\.py): .+\n"
                    r"# reference: (\w+): (.+)$", re.M)
EXPECT = re.compile(r"#\s*expect:\s*(TS\d{3})\b")

pytestmark = pytest.mark.reference


def _ids(paths):
    return [p.stem for p in paths]


def test_examples_are_present():
    assert len(VALID) >= 7 and len(BAD) >= 15


@pytest.mark.parametrize("path", VALID, ids=_ids(VALID))
def test_valid_example_builds(path):
    v = reference_verdict_file(path, entry="build")
    assert v.accepted, v.traceback
    assert v.warnings == []


@pytest.mark.parametrize("path", VALID, ids=_ids(VALID))
def test_valid_example_kernel_compiles(path):
    v = reference_verdict_file(path, entry="compile_fake", timeout=300)
    assert v.accepted, v.traceback
    assert v.warnings == []


@pytest.mark.parametrize("path", BAD, ids=_ids(BAD))
def test_bad_example_is_single_defect(path):
    """Header names the base example; one `# expect:` marker; few lines changed."""
    text = path.read_text()
    header = HEADER.search(text)
    assert header, "missing '# Single-defect variant of ...' / '# reference: ...' header"
    assert len(EXPECT.findall(text)) == 1
    base = (EXAMPLES / header.group(1)).read_text().splitlines()
    body = text.splitlines()[2:]
    diff = [ln for ln in difflib.unified_diff(base, body, lineterm="", n=0)
            if not ln.startswith(("+++", "---"))]
    added = sum(ln.startswith("+") for ln in diff)
    removed = sum(ln.startswith("-") for ln in diff)
    assert 0 < max(added, removed) <= 8, diff


@pytest.mark.parametrize("path", BAD, ids=_ids(BAD))
def test_bad_example_rejected(path):
    exc_type, fragment = HEADER.search(path.read_text()).group(2, 3)
    v = reference_verdict_file(path, entry="build")
    assert not v.accepted, "the reference accepted a bad example"
    assert v.exc_type == exc_type, v.traceback
    assert fragment in v.message
