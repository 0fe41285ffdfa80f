"""The pre-commit hook, through the real `pre-commit` (skipped when it is not installed).

`pre-commit try-repo` installs the hook repository from a commit, so the project (its
tracked and untracked, not ignored, files: the working tree as it is) is copied into a
throwaway git repo and committed there. While ts_lint/api.py does not exist yet, the copy
gets a stand-in that reports the `# expect: TSxxx` markers of the program, so the hook's
packaging, file passing, exit codes and `# noqa` are still tested; with the real api the
same programs go through the real extractor. Each `try-repo` builds the hook's virtualenv
from scratch (pip, from the package index or its cache: about 40 s), so the test runs it
twice: a bad file (exit 1), then the file fixed plus a copy suppressed with `# noqa` (exit 0).
"""
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ts_runtime.rules import get

ROOT = Path(__file__).resolve().parents[2]

STAND_IN_API = '''\
"""Stand-in for ts_lint.api (tests/lint/test_precommit.py): reports `# expect:` markers."""
from ts_runtime.diagnostics import Diagnostic, Severity
from ts_runtime.source import SourceRange
from ts_runtime.testing import expected_findings


def lint_source(source, path="<string>", *, explain_unknown=False, run_checker=True):
    return [Diagnostic(code, "stand-in", Severity.ERROR, f"stand-in finding {code}",
                       SourceRange(path, line, 0)) for code, line in expected_findings(source)]
'''

BAD_FALLBACK = '''\
from ts_runtime import domain_loop, schedule


@schedule
def copy(src):
    with domain_loop(0, 8, 1, 2):  # expect: TS102
        pass
'''


def pre_commit():
    try:
        import pre_commit  # noqa: F401
    except ImportError:
        pytest.skip("pre-commit is not installed (pip install pre-commit)")
    return [sys.executable, "-m", "pre_commit"]


def git(*args, cwd):
    env = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@example.com",
               GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@example.com")
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True,
                          env=env)


def test_validate_manifest():
    out = subprocess.run([*pre_commit(), "validate-manifest", ".pre-commit-hooks.yaml"],
                         cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr


def copy_project(dest: Path) -> bool:
    """Copies the working tree's files into `dest` and commits; True when api.py is a stand-in."""
    files = git("ls-files", "-z", "--cached", "--others", "--exclude-standard", cwd=ROOT).stdout
    for rel in filter(None, files.split("\0")):
        src = ROOT / rel
        if src.is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel)
    stand_in = not (dest / "ts_lint" / "api.py").exists()
    if stand_in:
        (dest / "ts_lint" / "api.py").write_text(STAND_IN_API)
    git("init", "-q", ".", cwd=dest)
    git("add", "-A", cwd=dest)
    git("commit", "-q", "-m", "snapshot", cwd=dest)
    return stand_in


def programs():
    """(bad, fixed, suppressed) sources around one finding of TS102."""
    from ts_runtime.testing import expected_findings
    rule = get("TS102")
    if rule is not None and rule.INVALID and rule.VALID:
        bad, fixed = rule.INVALID[0], rule.VALID[0]
    else:  # pragma: no cover - the catalogue has TS102's examples
        bad, fixed = BAD_FALLBACK, BAD_FALLBACK.replace("0, 8, 1, 2", "0, 8, 1").replace(
            "  # expect: TS102", "")
    ((code, line),) = [f for f in expected_findings(bad) if f[0] == "TS102"]
    lines = bad.splitlines()
    lines[line - 1] = lines[line - 1].replace("# expect:", "# noqa: TS102  # expect:", 1)
    return bad, fixed, "\n".join(lines) + "\n"


def test_try_repo(tmp_path):
    cmd = pre_commit()
    hook_repo, work = tmp_path / "hook-repo", tmp_path / "work"
    hook_repo.mkdir()
    work.mkdir()
    copy_project(hook_repo)
    bad, fixed, suppressed = programs()
    git("init", "-q", ".", cwd=work)
    (work / "kernel.py").write_text(bad)
    (work / "notes.txt").write_text("# expect: TS102 (not a python file: not linted)\n")
    git("add", "-A", cwd=work)
    env = dict(os.environ, PRE_COMMIT_HOME=str(tmp_path / "pre-commit-home"),
               PRE_COMMIT_COLOR="never")
    env.pop("PYTHONPATH", None)

    def try_repo():
        return subprocess.run([*cmd, "try-repo", str(hook_repo), "ts-lint", "--all-files",
                               "--color", "never"],
                              cwd=work, capture_output=True, text=True, env=env, timeout=900)

    out = try_repo()
    log = out.stdout + out.stderr
    if out.returncode == 3 and ("ConnectionError" in log or "NewConnectionError" in log
                                or "Could not find a version" in log):
        pytest.skip("the hook environment could not be installed (no package index)")
    assert out.returncode == 1, log
    assert "ts-lint" in log and "Failed" in log
    assert "kernel.py:" in log and "TS102" in log
    assert "notes.txt" not in log
    assert "Traceback" not in log

    # one more run (each try-repo installs the hook anew, ~40 s): fixed + suppressed
    (work / "kernel.py").write_text(fixed)
    (work / "kernel_noqa.py").write_text(suppressed)
    git("add", "-A", cwd=work)
    out = try_repo()
    assert out.returncode == 0, out.stdout + out.stderr
    assert "Passed" in out.stdout
