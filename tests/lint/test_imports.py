"""ts-lint follows imports of the user's own modules (ts_lint/extract/imports.py): the
imported file is read with libcst, never imported, and the importing file's kernels are
checked with the real classes, schedules and values; findings in imported code carry the
imported file's path and line."""
import json
import sys
import textwrap

from ts_lint import cli
from ts_lint.api import AnalysisCache, analyze_source, lint_file

from lint_parity import HEADER

# the tail of lint_parity.COPY with the consumer wait removed from the store schedule:
# TS206 at the `read_smem()` call (consumer work before its wait), TS811 at the commit
IMPORTS = '''\
from ts_runtime import schedule, domain_loop
from ts_runtime.task import Task
from ts_runtime.task_manager import TaskManager
from ts_runtime.memory import SmemAllocator
from ts_runtime.resources import PipelineConfig
from ts_runtime.pipeline import CooperativeGroup, Agent
'''

SCHEDULES = '''

@schedule
def load_schedule(input_gmem, smem):
    with domain_loop(0, 8, 1):
        idx = input_gmem.compute_coords()
        smem.try_acquire()
        smem.acquire()
        smem.tma_load(gmem_idx=idx)
        smem.commit()


@schedule
def store_schedule(smem, output_gmem):
    with domain_loop(0, 8, 1):
        v = smem.read_smem()
        output_gmem.store(smem_val=v)
        smem.release()
'''


def build(prefix="", scheds=""):
    """A `build()` whose resources are `{prefix}InGmem` ... and schedules `{scheds}load_schedule`."""
    return f'''

def build(stages=STAGES, consumer=128):
    cfg = PipelineConfig.create_tma_async_pipeline_cfg(
        num_stages=stages, num_bytes=4096,
        producer_group=CooperativeGroup(Agent.Thread),
        consumer_group=CooperativeGroup(Agent.Thread, consumer))
    inp, out = {prefix}InGmem(name="in"), {prefix}OutGmem(name="out")
    smem = {prefix}Smem(name="smem", pipeline_config=cfg)
    alloc = SmemAllocator(); alloc.add_resource(smem); alloc.compute_layout()
    tasks = [
        Task(name="StoreTask", src_resources=[smem], dst_resources=[out], warp_idx=0, num_warps=4,
             schedule={scheds}store_schedule(smem, out)),
        Task(name="LoadTask", src_resources=[inp], dst_resources=[smem], warp_idx=4, num_warps=1,
             schedule={scheds}load_schedule(inp, smem)),
    ]
    return TaskManager(tasks=tasks, resource_dependency_graph={{smem: [inp], out: [smem]}},
                       smem_allocator=alloc, verbose=False)
'''


def line_of(text, needle):
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


def found(diags):
    return {(d.code, d.range.path, d.range.line) for d in diags}


def write(root, files):
    for name, text in files.items():
        p = root / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return root


def package(tmp_path, files=None):
    """tmp_path/pkg/ (a package) with the resource classes in pkg/resources.py, and `files`."""
    return write(tmp_path, {"pkg/__init__.py": "", "pkg/resources.py": HEADER + "\nSTAGES = 2\n",
                            **(files or {})})


def test_relative_import_of_resource_classes(tmp_path):
    main = IMPORTS + "from .resources import InGmem, Smem, OutGmem, STAGES\n" + SCHEDULES + build()
    package(tmp_path, {"pkg/main.py": main})
    path = tmp_path / "pkg" / "main.py"
    diags = lint_file(path, explain_unknown=True)
    assert ("TS206", str(path), line_of(main, "v = smem.read_smem()")) in found(diags)
    assert ("TS811", str(path), line_of(main, "smem.commit()")) in found(diags)
    assert not [d for d in diags if d.code in ("TS956", "TS954", "TS951", "TS999")], diags
    # the same program in one file reports the same codes
    whole = HEADER + "\nSTAGES = 2\n" + IMPORTS + SCHEDULES + build()
    one = analyze_source(whole, str(tmp_path / "one.py")).diagnostics
    assert sorted(d.code for d in one) == sorted(d.code for d in diags if d.code < "TS900")


def test_defect_in_an_imported_schedule_has_the_imported_files_path(tmp_path):
    scheds = "from ts_runtime import schedule, domain_loop\n" + SCHEDULES + \
        '\n\nif __name__ == "__main__":\n    store_schedule(1, 2)\n'      # TS221 if it ran
    main = IMPORTS + "import pkg.resources as R\nfrom pkg import sched\nSTAGES = R.STAGES\n" + \
        build("R.", "sched.")
    package(tmp_path, {"pkg/sched.py": scheds, "pkg/main.py": main})
    sched_path = str(tmp_path / "pkg" / "sched.py")
    diags = lint_file(tmp_path / "pkg" / "main.py", explain_unknown=True)
    assert ("TS206", sched_path, line_of(scheds, "v = smem.read_smem()")) in found(diags)
    (d,) = [d for d in diags if d.code == "TS206"]
    assert d.range.column == scheds.splitlines()[d.range.line - 1].index("smem.read_smem")
    assert "TS221" not in {d.code for d in diags}     # the module's `__main__` block did not run
    assert not [d for d in diags if d.code in ("TS956", "TS999")]
    # linting the schedule module itself reports its own `__main__` finding
    assert "TS221" in {d.code for d in lint_file(sched_path)}


def test_absolute_imports_within_a_package(tmp_path):
    main = IMPORTS + "import pkg.resources\nfrom pkg.resources import STAGES\n" + SCHEDULES + \
        build("pkg.resources.")
    package(tmp_path, {"pkg/kernels/__init__.py": "", "pkg/kernels/gemm.py": main})
    path = tmp_path / "pkg" / "kernels" / "gemm.py"
    diags = lint_file(path, explain_unknown=True)
    assert ("TS206", str(path), line_of(main, "v = smem.read_smem()")) in found(diags)
    assert not [d for d in diags if d.code in ("TS956", "TS999")]
    # and `..` from the subpackage
    up = IMPORTS + "from ..resources import InGmem, Smem, OutGmem, STAGES\n" + SCHEDULES + build()
    write(tmp_path, {"pkg/kernels/up.py": up})
    diags = lint_file(tmp_path / "pkg" / "kernels" / "up.py", explain_unknown=True)
    assert ("TS206", str(tmp_path / "pkg" / "kernels" / "up.py"), line_of(up, "v = smem.read_smem()")) in found(diags)
    assert not [d for d in diags if d.code in ("TS956", "TS999")]


def test_relative_import_next_to_a_script_without_package(tmp_path):
    main = IMPORTS + "from . import resources as R\nSTAGES = 2\n" + SCHEDULES + build("R.")
    write(tmp_path, {"resources.py": HEADER, "main.py": main})
    diags = lint_file(tmp_path / "main.py")
    assert ("TS206", str(tmp_path / "main.py"), line_of(main, "v = smem.read_smem()")) in found(diags)


def test_import_cycle_terminates(tmp_path):
    consts = "from .res import Smem\nSTAGES = 2\n"
    res = HEADER + "from .consts import STAGES as S\n"          # consts is half-imported here
    main = IMPORTS + "from .consts import STAGES\nfrom .res import InGmem, Smem, OutGmem\n" + \
        SCHEDULES + build()
    write(tmp_path, {"pkg/__init__.py": "", "pkg/consts.py": consts, "pkg/res.py": res, "pkg/main.py": main})
    path = tmp_path / "pkg" / "main.py"
    diags = lint_file(path, explain_unknown=True)
    assert ("TS206", str(path), line_of(main, "v = smem.read_smem()")) in found(diags)
    assert "TS999" not in {d.code for d in diags}
    # a module importing the file being linted reads it as a module of its own
    write(tmp_path, {"pkg/back.py": "from .main2 import build\n",
                     "pkg/main2.py": "from .back import build as again\n" + main})
    assert "TS999" not in {d.code for d in lint_file(tmp_path / "pkg" / "main2.py")}


def test_imported_file_with_a_syntax_error(tmp_path, monkeypatch):
    main = IMPORTS + "from .broken import Smem\nfrom .resources import InGmem, OutGmem\nSTAGES = 2\n" + \
        SCHEDULES + build()
    package(tmp_path, {"pkg/broken.py": "class Smem(:\n    pass\n", "pkg/main.py": main})
    path = tmp_path / "pkg" / "main.py"
    assert "TS999" not in {d.code for d in lint_file(path)}
    diags = lint_file(path, explain_unknown=True)
    (note,) = [d for d in diags if d.code == "TS956" and d.range.line == line_of(main, ".broken")]
    assert "syntax error at line 1" in note.message
    assert "TS999" not in {d.code for d in diags}
    # an internal failure while reading the module is a note too, never TS999
    from ts_lint.extract import imports

    def boom(*a, **k):
        raise ValueError("kaboom")
    monkeypatch.setattr(imports.Loader, "_run_body", boom)
    diags = lint_file(path, explain_unknown=True)
    assert "TS999" not in {d.code for d in diags}
    assert any(d.code == "TS956" and "kaboom" in d.message for d in diags)


def test_imported_user_code_is_never_executed(tmp_path):
    marker = tmp_path / "executed.txt"
    evil = textwrap.dedent(f'''
        import os
        open({str(marker)!r}, "w").write("module body ran")
        os.system("touch {marker}")


        def make():
            open({str(marker)!r}, "w").write("make ran")
            return 2
    ''')
    main = IMPORTS + "from .evil import make\nfrom .resources import InGmem, Smem, OutGmem\n" + \
        "STAGES = make()\n" + SCHEDULES + build() + '\n\nif __name__ == "__main__":\n    build()\n'
    package(tmp_path, {"pkg/evil.py": evil, "pkg/main.py": main})
    before = set(sys.modules)
    lint_file(tmp_path / "pkg" / "main.py", explain_unknown=True)
    assert not marker.exists()
    assert not [m for m in set(sys.modules) - before if m.split(".")[0] in ("pkg", "evil", "resources")]


def test_names_not_found_keep_the_old_notes(tmp_path):
    main = IMPORTS + "from .nothere import f\nfrom .resources import nope\nf()\nnope()\n"
    package(tmp_path, {"pkg/main.py": main})
    diags = lint_file(tmp_path / "pkg" / "main.py", explain_unknown=True)
    notes = [d for d in diags if d.code == "TS956"]
    assert any(d.range.line == line_of(main, "f()") and "does not read" in d.message for d in notes)
    assert any(d.range.line == line_of(main, "import nope") and "`nope` is not defined" in d.message
               for d in notes)


def test_only_ts_code_follows_imports(tmp_path):
    # a plain-Python file is analysed alone (a large package is not interpreted module by
    # module for each of its files); a module that fails to read, imported by an imported
    # module, leaves that module's names unknown without a note in the linted file
    package(tmp_path, {"pkg/broken.py": "def (:\n",
                       "pkg/plain.py": "from . import broken\nLIMIT = 4\n",
                       "pkg/tool.py": "from . import broken\n",
                       "pkg/main.py": IMPORTS + "from .plain import LIMIT\n"})
    tool = lint_file(tmp_path / "pkg" / "tool.py", explain_unknown=True)
    assert not [d for d in tool if "syntax error" in d.message]
    main = lint_file(tmp_path / "pkg" / "main.py", explain_unknown=True)
    assert not [d for d in main if "syntax error" in d.message]
    # the same broken module imported directly by TS code is read, and says why it failed
    write(tmp_path, {"pkg/main.py": IMPORTS + "from . import broken\n"})
    main = lint_file(tmp_path / "pkg" / "main.py", explain_unknown=True)
    assert [d.code for d in main if "syntax error" in d.message] == ["TS956"]


def test_incremental_cache_sees_an_edit_of_the_imported_module(tmp_path):
    main = IMPORTS + "from .resources import InGmem, Smem, OutGmem, STAGES\n" + SCHEDULES + build() + \
        "\n\nX = 1\n\n\ndef other():\n    return X\n"
    package(tmp_path, {"pkg/main.py": main})
    path = str(tmp_path / "pkg" / "main.py")
    cache = AnalysisCache()
    first = found(analyze_source(main, path, cache=cache).diagnostics)
    assert ("TS206", path, line_of(main, "v = smem.read_smem()")) in first
    assert found(analyze_source(main, path, cache=cache).diagnostics) == first and cache.hits
    res = tmp_path / "pkg" / "resources.py"
    text = res.read_text()
    # read_smem becomes producer work: the store schedule's findings change
    res.write_text(text.replace("@consumer_work(returns=val)\n    def read_smem", "@producer_work\n    def read_smem"))
    edited = found(analyze_source(main, path, cache=cache).diagnostics)
    assert edited != first and ("TS206", path, line_of(main, "v = smem.read_smem()")) not in edited
    assert edited == found(analyze_source(main, path).diagnostics)
    res.write_text(text)
    assert found(analyze_source(main, path, cache=cache).diagnostics) == first


def test_unsaved_importing_text_is_analysed_with_modules_from_disk(tmp_path):
    main = IMPORTS + "from .resources import InGmem, Smem, OutGmem, STAGES\n" + SCHEDULES + build()
    package(tmp_path)
    path = str(tmp_path / "pkg" / "open_in_editor.py")        # not on disk
    assert ("TS206", path, line_of(main, "v = smem.read_smem()")) in found(analyze_source(main, path).diagnostics)


def test_cli_reports_each_finding_once_and_reads_the_imported_files_noqa(tmp_path, capsys, monkeypatch):
    scheds = "from ts_runtime import schedule, domain_loop\n" + SCHEDULES
    main = IMPORTS + "from .resources import InGmem, Smem, OutGmem, STAGES\n" + \
        "from .sched import load_schedule, store_schedule\n" + build()
    package(tmp_path, {"pkg/sched.py": scheds, "pkg/a.py": main, "pkg/b.py": main})
    monkeypatch.chdir(tmp_path)
    cli.main(["pkg", "--format", "json", "--jobs", "1", "--isolated"])
    out = json.loads(capsys.readouterr().out)
    keys = [(d["code"], d["filename"], json.dumps(d["range"], sort_keys=True), d["message"]) for d in out]
    assert len(keys) == len(set(keys)), keys
    assert [k for k in keys if k[0] == "TS206"] and all("sched.py" in k[1] for k in keys if k[0] == "TS206")
    # a `noqa` in the imported file silences its finding; the importer's same line does not
    line = line_of(scheds, "v = smem.read_smem()")
    lines = scheds.splitlines()
    lines[line - 1] += "  # noqa: TS206"
    (tmp_path / "pkg" / "sched.py").write_text("\n".join(lines) + "\n")
    res = cli.check_source(main, "pkg/a.py", cli.Settings(), analyze=False)
    assert "TS206" not in {d.code for d in res.diagnostics}
    (tmp_path / "pkg" / "sched.py").write_text(scheds)
    a_lines = main.splitlines()
    a_lines[line - 1] += "  # noqa: TS206"
    res = cli.check_source("\n".join(a_lines) + "\n", "pkg/a.py", cli.Settings())
    assert "TS206" in {d.code for d in res.diagnostics}


def test_a_plain_module_imported_by_an_imported_module_is_read(tmp_path):
    # main (TS) -> plain.py (a direct import) -> consts.py (plain Python, one more level
    # down): imports are followed transitively, so STAGES is known and the checks run
    main = IMPORTS + "from .resources import InGmem, Smem, OutGmem\nfrom .plain import STAGES\n" + \
        SCHEDULES + build()
    package(tmp_path, {"pkg/consts.py": "N = 2\n", "pkg/plain.py": "from .consts import N\nSTAGES = N\n",
                       "pkg/main.py": main})
    diags = lint_file(tmp_path / "pkg" / "main.py", explain_unknown=True)
    assert ("TS811", line_of(main, "smem.commit()")) in {(d.code, d.range.line) for d in diags}
    assert "TS950" not in {d.code for d in diags}


def test_a_plain_config_module_of_an_imported_ts_module_is_read(tmp_path):
    # main (TS) -> resources.py (TS) -> cfg.py (plain Python): the three-level split of a
    # kernel (the reference: AssertionError "num_registers must be between 8 and 256 and
    # divisible by 8, got 164", from the register count cfg.py sets)
    main = IMPORTS + "from .resources import InGmem, Smem, OutGmem, STAGES, REGS\n" + SCHEDULES + \
        build().replace("schedule=store_schedule(smem, out))", "schedule=store_schedule(smem, out), num_registers=REGS)")
    package(tmp_path, {"pkg/resources.py": HEADER + "\nfrom .cfg import REGS\nSTAGES = 2\n",
                       "pkg/cfg.py": "REGS = 164\n", "pkg/main.py": main})
    diags = lint_file(tmp_path / "pkg" / "main.py")
    errors = {(d.code, d.range.line) for d in diags if d.severity.name == "ERROR"}
    assert ("TS712", line_of(main, "num_registers=REGS")) in errors


def test_plain_modules_read_through_other_modules_are_bounded(tmp_path, monkeypatch):
    from ts_lint.extract import imports
    monkeypatch.setattr(imports, "MAX_PLAIN_MODULES", 1)
    main = IMPORTS + "from .resources import InGmem, Smem, OutGmem\nfrom .plain import STAGES\n" + \
        SCHEDULES + build()
    package(tmp_path, {"pkg/c1.py": "N = 1\n", "pkg/c2.py": "M = 1\n",
                       "pkg/plain.py": "from .c1 import N\nfrom .c2 import M\nSTAGES = N + M\n",
                       "pkg/main.py": main})
    diags = lint_file(tmp_path / "pkg" / "main.py", explain_unknown=True)
    codes = {d.code for d in diags}
    assert "TS950" in codes and "TS811" not in codes        # STAGES unknown: c2 is not read


def test_an_imported_module_is_parsed_like_the_linted_file(tmp_path):
    # the same parse (extract.source.parse) for both: a continuation onto a blank line,
    # which Python accepts and libcst's tokenizer does not, is read in an imported module too
    main = IMPORTS + "from .resources import InGmem, Smem, OutGmem\nfrom .plain import STAGES\n" + \
        SCHEDULES + build()
    package(tmp_path, {"pkg/plain.py": "STAGES = 2\\\n\n", "pkg/main.py": main})
    diags = lint_file(tmp_path / "pkg" / "main.py", explain_unknown=True)
    assert not [d for d in diags if d.code in ("TS956", "TS950")], diags
    assert "TS811" in {d.code for d in diags}
