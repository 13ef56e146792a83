"""The pre-commit hooks (`.pre-commit-hooks.yaml`) run by the real `pre-commit` tool against
this repository (`pre-commit try-repo`) in a temporary git repository."""

import os
import pathlib
import shutil
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
# The venv's own pre-commit (tests/run.sh installs it there), else one on PATH.
beside = pathlib.Path(sys.executable).with_name("pre-commit")
pre_commit = str(beside) if beside.exists() else shutil.which("pre-commit")

BROKEN = 'id: r\nmach: "f($X)"\naction: {replace: "g($X)"}\nexpect: 1\n'
FIXED = 'id: r\nmatch: "f($X)"\naction: {replace: "g($X)"}\nexpect: 1\n'


@pytest.mark.skipif(pre_commit is None, reason="pre-commit is installed by tests/run.sh")
def test_the_lint_hook_fails_a_broken_rule_and_passes_it_fixed(tmp_path):
    repo = tmp_path / "project"
    (repo / "rules").mkdir(parents=True)
    rule = repo / "rules" / "r.yaml"
    rule.write_text(BROKEN)
    git = lambda *a: subprocess.run(["git", *a], cwd=repo, check=True, capture_output=True)  # noqa: E731
    git("init", "-q")
    git("-c", "user.email=t@t", "-c", "user.name=t", "add", ".")
    # The hook environment builds regraft from this checkout: the build shares target/.
    env = dict(os.environ, PRE_COMMIT_HOME=str(ROOT / "target" / "pre-commit-home"),
               CARGO_TARGET_DIR=str(ROOT / "target"))
    run = lambda: subprocess.run([pre_commit, "try-repo", str(ROOT), "regraft-lint", "--all-files"],  # noqa: E731
                                 cwd=repo, env=env, capture_output=True, text=True)
    failed = run()
    assert failed.returncode == 1, failed.stdout + failed.stderr
    assert "unknown key `mach`" in failed.stdout, failed.stdout
    rule.write_text(FIXED)
    passed = run()
    assert passed.returncode == 0, passed.stdout + passed.stderr


@pytest.mark.skipif(pre_commit is None, reason="pre-commit is installed by tests/run.sh")
def test_the_check_hook_passes_a_patcher_whose_rules_apply_and_fails_drift(tmp_path):
    repo = tmp_path / "project"
    (repo / "rules").mkdir(parents=True)
    (repo / "rules" / "r.yaml").write_text(FIXED)
    (repo / "regraft.toml").write_text('rules = ["rules"]\ntargets = ["upstream.py"]\n')
    upstream = repo / "upstream.py"
    upstream.write_text("y = f(1)\n")
    git = lambda *a: subprocess.run(["git", *a], cwd=repo, check=True, capture_output=True)  # noqa: E731
    git("init", "-q")
    git("-c", "user.email=t@t", "-c", "user.name=t", "add", ".")
    env = dict(os.environ, PRE_COMMIT_HOME=str(ROOT / "target" / "pre-commit-home"),
               CARGO_TARGET_DIR=str(ROOT / "target"))
    run = lambda hook: subprocess.run([pre_commit, "try-repo", str(ROOT), hook, "--all-files"],  # noqa: E731
                                      cwd=repo, env=env, capture_output=True, text=True)
    applies = run("regraft-check")
    assert applies.returncode == 0, applies.stdout + applies.stderr
    assert "every rule applies cleanly" in applies.stdout, applies.stdout
    unchanged = run("regraft-check-unchanged")
    assert unchanged.returncode == 1, "the target would still change"
    upstream.write_text("y = h(1)\n")
    drift = run("regraft-check")
    assert drift.returncode == 1, drift.stdout + drift.stderr
    assert "drift" in drift.stdout, drift.stdout
    assert upstream.read_text() == "y = h(1)\n"
