"""locate.find_call: the call at a position, from the file's calls indexed once per parse
(the same answer as a walk over the whole tree)."""
import ast
import textwrap

from ts_runtime import locate
from ts_runtime.source import SourceRange

SRC = textwrap.dedent('''\
    def build(a, b):
        x = make(a,
                 inner(b, k=1),
                 key=other(2))
        y = [f(i) for i in range(3)]; z = g(h(1))
        return x
''')


def _walk(tree, line, col):
    """The original look-up: exact position first, else the shortest call on the line."""
    best = None
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and node.lineno == line and node.col_offset == col:
            return node
        if isinstance(node, ast.Call) and node.lineno <= line <= (node.end_lineno or node.lineno):
            if best is None or (node.end_lineno or 0) - node.lineno <= (best.end_lineno or 0) - best.lineno:
                best = node
    return best


def test_every_position_gives_the_call_a_walk_finds(tmp_path, monkeypatch):
    path = tmp_path / "m.py"
    path.write_text(SRC)
    tree = ast.parse(SRC)
    monkeypatch.setattr(locate, "_tree", lambda p: tree)
    lines = SRC.splitlines()
    for line in range(1, len(lines) + 1):
        for col in range(len(lines[line - 1]) + 1):
            got = locate.find_call(SourceRange(str(path), line, col))
            want = _walk(tree, line, col)
            assert got is want, (line, col)
    # a call found by its exact position: its keyword argument's range
    args = locate.call_arguments(SourceRange(str(path), 2, 8))
    assert (args["key"].line, args["key"].column) == (4, 17)
