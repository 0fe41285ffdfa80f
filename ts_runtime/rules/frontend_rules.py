"""Catalogue entries declared by front ends that live outside ts_runtime.

ts-lint's own codes (TS96x: suppression comments) are declared in `ts_lint/rules_lint.py`;
importing it here makes `load_all()` see them, so the catalogue (docs/rules.md, SARIF rule
lists, code selection) is the same whichever front end is installed. Without ts_lint the
runtime simply lacks those entries.
"""
try:
    import ts_lint.rules_lint  # noqa: F401  (registers TS960)
except ImportError as exc:  # ts_lint not installed: the runtime works without it
    if not (exc.name or "").startswith("ts_lint"):
        raise
