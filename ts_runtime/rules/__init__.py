"""The rule catalogue (TS000-TS999): one Rule object per check, shared by every front end."""
from .base import Rule, DOC_SECTIONS
from .registry import RULES, get, load_all, make_diagnostic, manager_rules, register, select

__all__ = ["Rule", "DOC_SECTIONS", "RULES", "get", "load_all", "make_diagnostic",
           "manager_rules", "register", "select"]
