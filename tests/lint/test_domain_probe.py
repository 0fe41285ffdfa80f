"""The dynamic-domain probe (get_domain at tile (0, 0, 0)) happens in both front ends, so
the checkers explore the same loop length from ts-lint as at run time."""
import pathlib

import pytest

from ts_lint.api import analyze_source

ROOT = pathlib.Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "04_copy_varlen.py"


def test_lint_probes_the_dynamic_domain_like_the_runtime():
    a = analyze_source(EXAMPLE.read_text(), str(EXAMPLE))
    (kernel,) = a.kernels
    (task,) = kernel.tasks
    assert task.lowered.dynamic_domain
    lint_probe = task.lowered.domain_probe
    assert lint_probe == 300          # offsets[1] - offsets[0] of build()'s defaults
    pytest.importorskip("cutlass")
    from ts_runtime.testing import run_program  # noqa: F401  (same program, run for real)
    import importlib.util
    spec = importlib.util.spec_from_file_location("_varlen_probe", EXAMPLE)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    tm = mod.build()
    assert tm.kernel.tasks[0].lowered.domain_probe == lint_probe
