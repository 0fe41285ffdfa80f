"""Starts ts-lsp with tests/lsp/fake_engine.py standing in for `ts_lint.api`.

Used by the protocol tests, whose findings must not depend on the real linter's rules.
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(1, os.path.dirname(os.path.dirname(HERE)))

import fake_engine  # noqa: E402
import ts_lint  # noqa: E402

sys.modules["ts_lint.api"] = fake_engine
ts_lint.api = fake_engine

from ts_lsp.__main__ import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
