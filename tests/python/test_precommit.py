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
    run = lambda hook: subprocess.run(  # noqa: E731
        [pre_commit, "try-repo", str(ROOT), hook, "--all-files", "--verbose"],
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


def _crate_version():
    for line in (ROOT / "Cargo.toml").read_text().splitlines():
        if line.startswith("version = "):
            return line.split('"')[1]
    raise AssertionError("no version in Cargo.toml")


def test_the_mirror_has_the_same_hooks_and_pins_the_crate_version():
    import yaml

    mirror = ROOT / "pre-commit-mirror"
    own = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    assert yaml.safe_load((mirror / ".pre-commit-hooks.yaml").read_text()) == own
    assert f'dependencies = ["regraft=={_crate_version()}"]' in (mirror / "pyproject.toml").read_text()
    assert f'version = "{_crate_version()}"' in (mirror / "pyproject.toml").read_text()


def _wheel():
    wheels = sorted((ROOT / "target" / "wheels").glob(f"regraft-{_crate_version()}-*.whl"))
    return wheels[-1] if wheels else None


@pytest.mark.skipif(pre_commit is None or _wheel() is None,
                    reason="pre-commit and the wheel come from tests/run.sh")
def test_the_mirror_installs_the_wheel_without_rust_and_its_hooks_run(tmp_path):
    copy = tmp_path / "mirror"
    shutil.copytree(ROOT / "pre-commit-mirror", copy)
    git = lambda cwd, *a: subprocess.run(["git", *a], cwd=cwd, check=True, capture_output=True)  # noqa: E731
    git(copy, "init", "-q")
    git(copy, "add", ".")
    git(copy, "-c", "user.email=t@t", "-c", "user.name=t", "commit", "-q", "-m", "mirror")
    repo = tmp_path / "project"
    (repo / "rules").mkdir(parents=True)
    (repo / "rules" / "r.yaml").write_text(BROKEN)
    git(repo, "init", "-q")
    git(repo, "-c", "user.email=t@t", "-c", "user.name=t", "add", ".")
    # No cargo or rustc anywhere on PATH: the hook must not build anything.
    path = [p for p in os.environ.get("PATH", "").split(os.pathsep)
            if p and not (pathlib.Path(p) / "cargo").exists() and not (pathlib.Path(p) / "rustc").exists()]
    env = dict(os.environ, PATH=os.pathsep.join([str(pathlib.Path(sys.executable).parent)] + path),
               PRE_COMMIT_HOME=str(tmp_path / "pre-commit-home"),
               PIP_FIND_LINKS=str(_wheel().parent))
    env.pop("CARGO_HOME", None)
    run = lambda: subprocess.run([pre_commit, "try-repo", str(copy), "regraft-lint", "--all-files"],  # noqa: E731
                                 cwd=repo, env=env, capture_output=True, text=True)
    failed = run()
    assert failed.returncode == 1, failed.stdout + failed.stderr
    assert "unknown key `mach`" in failed.stdout, failed.stdout
    (repo / "rules" / "r.yaml").write_text(FIXED)
    passed = run()
    assert passed.returncode == 0, passed.stdout + passed.stderr
