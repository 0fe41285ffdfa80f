"""ts-lint and ts_runtime on the same random single-defect variants (benchmarks/
differential.py's generator and judge, without the reference): the same error codes.

The benchmark also asks the reference (benchmarks/results/differential.md); this keeps the
front-end half of it in CI, on a fixed sample, so that a rule that fires from one front
end only, or a Python error ts-lint stops reporting, fails here with the variant named.
"""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def differential():
    spec = importlib.util.spec_from_file_location("ts_differential", ROOT / "benchmarks" / "differential.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


def test_the_two_front_ends_agree_on_random_variants(differential, tmp_path):
    pytest.importorskip("cutlass")      # the generated GEMM skeletons import the DSL
    variants = differential.make_variants(40, seed=5)
    for i, v in enumerate(variants):
        v["file"] = f"variant_{i:03d}.py"
        (tmp_path / v["file"]).write_text(v["source"])
    lint = differential.lint_verdicts(tmp_path)
    bad = []
    rejected = 0
    for i, v in enumerate(variants):
        v["runtime"] = differential.runtime_verdict(tmp_path / v["file"], f"ts_front_ends_{i}")
        v["lint"] = sorted(lint.get(v["file"], ()))
        v["reference"] = None
        rejected += not v["runtime"]["accepted"]
        if not differential.judge(v)["front ends"]:
            bad.append((v["file"], v["base"], v["edit"], v["runtime"]["exc"], v["runtime"]["codes"], v["lint"]))
    assert not bad, bad
    # the sample has both outcomes (a generator that stopped making defects would pass)
    assert 0 < rejected < len(variants)
