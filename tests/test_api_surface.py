"""ts_runtime's TS classes and enums have the reference's public attributes.

TS963 (ts-lint) reports `PipelineConfig.<name>` or `<TS enum>.<name>` where ts_runtime's
class has no such attribute, as Python's AttributeError under the reference: that is only
right while every public attribute of the reference's class exists in ts_runtime's too.
ts_runtime may have more (the Hopper additions, e.g. `create_tma_wgmma_pipeline_cfg`).
"""
import enum
import importlib
import json
import subprocess

import pytest

from oracle import reference_available, reference_python

pytestmark = pytest.mark.reference

# (module, class): what TS963 judges (ts_lint/extract/tsapi.py, pybuiltins.py)
JUDGED = [("resources", "PipelineConfig"), ("resources", "TaskLocalVariable"),
          ("resources", "TileSchedulerConfig")]
_ENUMS = importlib.import_module("ts_runtime.enums")
ENUMS = sorted(n for n, v in vars(_ENUMS).items()
               if isinstance(v, type) and issubclass(v, enum.Enum) and v.__module__ == _ENUMS.__name__)

_SCRIPT = r'''
import importlib, json, sys
out = {}
for mod, cls in json.loads(sys.argv[1]):
    try:
        k = getattr(importlib.import_module("cutlass.experimental.task_scheduling." + mod), cls)
    except (ImportError, AttributeError):
        out[f"{mod}.{cls}"] = None
        continue
    out[f"{mod}.{cls}"] = sorted(n for n in dir(k) if not n.startswith("_"))
print("@@" + json.dumps(out))
'''


@pytest.mark.skipif(not reference_available(), reason="reference not installed")
def test_every_public_attribute_of_the_reference_exists_in_ts_runtime():
    pairs = JUDGED + [("enums", e) for e in ENUMS]
    p = subprocess.run([reference_python(), "-c", _SCRIPT, json.dumps(pairs)], capture_output=True, text=True,
                       timeout=300)
    line = next(x for x in p.stdout.splitlines() if x.startswith("@@"))
    ref = json.loads(line[2:])
    assert ref["resources.PipelineConfig"], "the reference's PipelineConfig was found"
    missing = {}
    for mod, cls in pairs:
        names = ref[f"{mod}.{cls}"]
        if names is None:          # a ts-only enum (InterleaveStride helpers, Hopper): nothing to match
            continue
        ours = getattr(importlib.import_module(f"ts_runtime.{mod}"), cls)
        lacking = [n for n in names if not hasattr(ours, n)]
        if lacking:
            missing[f"{mod}.{cls}"] = lacking
    assert not missing, missing


_RESOURCE_SCRIPT = r'''
import dataclasses, json
import cutlass.experimental.task_scheduling.resources as R
out = {"stage_info": sorted(set(f.name for f in dataclasses.fields(R.StageInfo)) | set(dir(R.StageInfo)))}
# `__getattribute__` / `__setattr__` of MemoryResource only guard the variables and then
# delegate to object's; a `__getattr__` (or `__slots__`) would change what a missing name does
hooks = ("__getattr__", "__slots__")
for name in ("MemoryResource", "PdlWaitBarrier", "PdlLaunchBarrier", "WorkQueue"):
    k = getattr(R, name)
    out[name] = {"names": sorted(dir(k)),
                 "hooks": sorted(h for c in k.__mro__ if c is not object for h in hooks if h in vars(c))}
m = R.MemoryResource(name="x")
out["instance"] = sorted(vars(m))
try:
    m.no_such_attribute_zz
    out["missing"] = "no error"
except AttributeError as exc:
    out["missing"] = "AttributeError"
print("@@" + json.dumps(out))
'''


@pytest.mark.skipif(not reference_available(), reason="reference not installed")
def test_what_ts_lint_knows_of_stage_info_and_the_resource_bases():
    """TS963 on `stage_info.<name>` needs every StageInfo attribute of the reference in
    ts_runtime's StageInfo; TS966 on `self.<name>` needs the reference's resource base
    classes to have no attribute hooks, and every attribute they have (class and instance,
    also on the resources of a kernel the reference has compiled) among the names ts-lint
    takes from ts_runtime (ts_lint/extract/workbody.py `base_attribute_names`). Observed on
    live objects of the reference only."""
    from ts_lint.extract.workbody import base_attribute_names, stage_info_names
    p = subprocess.run([reference_python(), "-c", _RESOURCE_SCRIPT], capture_output=True, text=True, timeout=300)
    line = next(x for x in p.stdout.splitlines() if x.startswith("@@"))
    ref = json.loads(line[2:])
    assert set(ref["stage_info"]) <= stage_info_names()
    names = base_attribute_names()
    for k in ("MemoryResource", "PdlWaitBarrier", "PdlLaunchBarrier", "WorkQueue"):
        assert ref[k]["hooks"] == [], k
        lacking = [n for n in ref[k]["names"] if not n.startswith("__") and n not in names]
        assert not lacking, (k, lacking)
    assert not [n for n in ref["instance"] if n not in names]
    assert ref["missing"] == "AttributeError"


def test_resources_of_a_compiled_kernel_have_no_attribute_ts_lint_does_not_know(tmp_path):
    """The same for the resource objects after the reference has compiled a kernel with
    them (its setup and run may set attributes on them): tests/codegen/rule_programs.py's
    one-task kernel, its resources recorded by the program, their `vars()` read after
    `compile_fake()`."""
    if not reference_available():
        pytest.skip("reference not installed")
    from codegen.rule_programs import simple
    from oracle import translate
    from ts_lint.extract.workbody import base_attribute_names
    src = simple().replace("    return TaskManager(tasks=[task], resource_dependency_graph={dst: [src]})",
                           "    SEEN.extend([src, dst])\n"
                           "    return TaskManager(tasks=[task], resource_dependency_graph={dst: [src]})", 1)
    assert "SEEN.extend" in src
    prog = tmp_path / "prog.py"
    prog.write_text("SEEN = []\n" + translate(src))
    script = ("import importlib.util, json, sys\n"
              f"spec = importlib.util.spec_from_file_location('prog', {str(prog)!r})\n"
              "m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)\n"
              "m.compile_fake()\n"
              "print('@@' + json.dumps(sorted({n for r in m.SEEN for n in vars(r)})))\n")
    p = subprocess.run([reference_python(), "-c", script], capture_output=True, text=True, timeout=300,
                       env={**__import__("os").environ, "CUTE_DSL_ARCH": "sm_100a"})
    line = next((x for x in p.stdout.splitlines() if x.startswith("@@")), None)
    assert line is not None, p.stderr[-2000:]
    seen = json.loads(line[2:])
    assert len(seen) > 3
    lacking = [n for n in seen if n not in base_attribute_names()]
    assert not lacking, " ".join(lacking)

@pytest.mark.skipif(not reference_available(), reason="reference not installed")
def test_the_resource_names_ts963_takes_from_the_reference():
    """TS963 on a resource object itself (ts_lint/extract/tsapi.py `_resource_lacks`) takes
    a MemoryResource's names from ts_runtime's class, its fields and
    `reference_resource_names()`: every name the reference's class and a built resource
    have is among them, so a name the reference's objects have is never reported."""
    import dataclasses as dc
    from ts_lint.extract.tsapi import reference_resource_names
    from ts_runtime.resources import MemoryResource
    p = subprocess.run([reference_python(), "-c", _RESOURCE_SCRIPT], capture_output=True, text=True, timeout=300)
    line = next(x for x in p.stdout.splitlines() if x.startswith("@@"))
    ref = json.loads(line[2:])
    ours = set(dir(MemoryResource)) | {f.name for f in dc.fields(MemoryResource)} | reference_resource_names()
    lacking = [n for n in ref["MemoryResource"]["names"] + ref["instance"] if not n.startswith("_") and n not in ours]
    assert not lacking, lacking
