"""The light packages must never import cutlass / CUDA (lint and LSP run without them)."""
import subprocess
import sys


def test_model_rules_checker_do_not_import_cutlass():
    code = (
        "import sys, importlib\n"
        "for m in ('ts_runtime', 'ts_runtime.model', 'ts_runtime.rules', 'ts_runtime.resources',\n"
        "          'ts_runtime.task', 'ts_runtime.task_manager', 'ts_runtime.pipeline_group',\n"
        "          'ts_runtime.memory', 'ts_runtime.enums', 'ts_runtime.schedule_builder',\n"
        "          'ts_runtime.pipeline', 'ts_lint', 'ts_lsp'):\n"
        "    try:\n"
        "        importlib.import_module(m)\n"
        "    except ModuleNotFoundError as e:\n"
        "        if e.name != m: raise\n"
        "import ts_runtime.rules as r; r.load_all()\n"
        "heavy = [m for m in ('cutlass', 'cuda', 'torch') if m in sys.modules]\n"
        "print('HEAVY', heavy)\n"
        "sys.exit(1 if heavy else 0)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr
