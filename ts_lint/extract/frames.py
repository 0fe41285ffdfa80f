"""Control flow of interpreted code (return, break, raise) and call frames."""
from __future__ import annotations

import libcst as cst


class _Return(Exception):
    def __init__(self, value):
        self.value = value


class _Break(Exception):
    pass


class _Continue(Exception):
    pass


class UserRaise(Exception):
    """A `raise` (or failed assert) reached in user code, or a TS call that raises at run time
    (`reported`: its finding was emitted): the root stops here, as in Python."""

    def __init__(self, node, reported: bool = False):
        self.node = node
        self.reported = reported


class _LoopUnknown(Exception):
    """A skipped branch may leave the loop being run: the rest of the loop is unknown."""


class Frame:
    __slots__ = ("func", "scope", "self_val", "maybe_returned", "yields", "yields_unknown")

    def __init__(self, func, scope, self_val=None):
        self.func, self.scope, self.self_val = func, scope, self_val
        self.maybe_returned = False
        self.yields = None            # a generator function's frame: the values it yielded
        self.yields_unknown = False   # a yield was skipped or its values are unknown


def param_list(params: cst.Parameters):
    """[(libcst Param, kind)] in signature order; kind as in inspect."""
    out = []
    for p in params.posonly_params:
        out.append((p, "positional_only"))
    for p in params.params:
        out.append((p, "pos_or_kw"))
    if type(params.star_arg) is cst.Param:
        out.append((params.star_arg, "var_pos"))
    for p in params.kwonly_params:
        out.append((p, "kw_only"))
    if type(params.star_kwarg) is cst.Param:
        out.append((params.star_kwarg, "var_kw"))
    return out
