"""docs/rules.md is generated from the rule docs; a stale page fails here."""
import pathlib

from ts_runtime.rules import load_all
from ts_runtime.rules.base import DOC_SECTIONS
from ts_runtime.rules.docgen import render

ROOT = pathlib.Path(__file__).resolve().parents[1]


def test_rules_md_is_current():
    assert (ROOT / "docs" / "rules.md").read_text() == render(), \
        "docs/rules.md is stale: run `python -m ts_runtime.rules.docgen > docs/rules.md`"


def test_every_rule_documents_its_sections_and_names():
    import re
    for code, rule in load_all().items():
        assert re.fullmatch(r"TS\d{3}", code)
        assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", rule.name), code
        doc = rule.doc()
        for section in DOC_SECTIONS:
            assert f"## {section}" in doc, f"{code} lacks '{section}'"


def test_every_code_of_the_spec_is_catalogued():
    spec = pathlib.Path(ROOT.parent / "shared" / "spec" / "rules.md")
    if not spec.exists():
        import pytest
        pytest.skip("shared/spec not available")
    import re
    codes = set(re.findall(r"^\| (TS\d{3}) \|", spec.read_text(), re.M))
    missing = sorted(codes - set(load_all()))
    assert not missing, f"rules.md codes without a rule object: {missing}"
