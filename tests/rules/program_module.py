"""Runs a generated TS program as a real module (so tracebacks and `locate` see its file)
and returns what its `build()` returns: the runtime front end exactly as a user runs it."""
import importlib.util
import sys
import uuid


def run_build(tmp_path, src: str):
    path = tmp_path / "program.py"
    path.write_text(src)
    name = f"_ts_program_{uuid.uuid4().hex}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
        return module.build()
    finally:
        sys.modules.pop(name, None)
