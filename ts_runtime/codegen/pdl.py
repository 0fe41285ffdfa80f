"""Programmatic Dependent Launch (sm_90+): the two PDL barrier works."""
from __future__ import annotations

import cutlass.cute as cute


def wait_griddep():
    """`griddepcontrol.wait`: blocks until the previous grid's writes are visible."""
    cute.arch.griddepcontrol_wait()


def launch_griddep():
    """`griddepcontrol.launch_dependents`: lets the next grid in the stream start."""
    cute.arch.griddepcontrol_launch_dependents()
