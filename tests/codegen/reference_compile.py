"""The differential check the codegen-time rule tests share: the reference builds every
program on the host (`build()`) and fails compiling (`compile_fake()`) exactly the ones a
rule reports, with the exception the rule expects. Those rules are reported by ts before
the kernel is traced; the reference finds them only while it compiles the kernel."""
from __future__ import annotations

from typing import Callable, Dict, Optional

import pytest


def compile_problems(programs: Dict[str, str], expect: Callable[[str], Optional[Callable]]) -> list:
    """Problems found asking the reference about `programs` (name -> source): each must
    build; `expect(name)` is None where the compile must succeed, else a predicate on the
    compile's Verdict that the failure must satisfy (its exception type and message)."""
    from oracle import reference_available
    from oracle_batch import reference_verdicts
    if not reference_available():
        pytest.skip("reference not installed")
    names = sorted(programs)
    sources = [programs[n] for n in names]
    built = reference_verdicts(sources, entry="build")
    compiled = reference_verdicts(sources, entry="compile_fake")
    problems = []
    for name, b, c in zip(names, built, compiled):
        want = expect(name)
        if not b.accepted:
            problems.append(f"{name}: reference rejected build(): {b.exc_type}: {b.message[:200]}")
        elif want is None and not c.accepted:
            problems.append(f"{name}: reference rejected: {c.exc_type}: {c.message[:200]}")
        elif want is not None and c.accepted:
            problems.append(f"{name}: reference accepted it")
        elif want is not None and not want(c):
            problems.append(f"{name}: another error: {c.exc_type}: {c.message[:200]}")
    return problems
