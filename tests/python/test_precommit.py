"""The pre-commit hooks (`.pre-commit-hooks.yaml`) run by the real `pre-commit` tool against
this repository (`pre-commit try-repo`) in a temporary git repository.

`try-repo` on this repository builds the crate in the hook's environment (minutes); the tests
of what the hooks do run them from a git copy of the mirror (`pre-commit-mirror/`, the same
hooks: a test holds them equal) whose `regraft` dependency is a stand-in wheel running the
binary under test (`cli`: $REGRAFT_BIN, else the debug build), so they take seconds."""

import base64
import hashlib
import os
import pathlib
import shutil
import subprocess
import sys
import zipfile

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
def test_the_check_hook_passes_a_patcher_whose_rules_apply_and_fails_drift(tmp_path, cli):
    repo = _project(tmp_path, {"rules/r.yaml": FIXED, "upstream.py": "y = f(1)\n",
                               "regraft.toml": 'rules = ["rules"]\ntargets = ["upstream.py"]\n'})
    run = _mirror_runner(tmp_path, cli, repo)
    applies = run("regraft-check")
    assert applies.returncode == 0, applies.stdout + applies.stderr
    assert "every rule applies cleanly" in applies.stdout, applies.stdout
    # Opt-in (`stages: [manual]`): run in the manual stage, it fails where a target would change.
    unchanged = run("regraft-check-unchanged", "--hook-stage", "manual")
    assert unchanged.returncode == 1, "the target would still change"
    assert "would patch upstream.py" in unchanged.stdout, unchanged.stdout
    (repo / "upstream.py").write_text("y = h(1)\n")
    drift = run("regraft-check")
    assert drift.returncode == 1, drift.stdout + drift.stderr
    assert "drift" in drift.stdout, drift.stdout
    assert (repo / "upstream.py").read_text() == "y = h(1)\n"


# A runtime patcher's rules: written by hand, a list of rules with comments, keys in the
# author's order; they target an installed upstream package outside the repository.
PATCHER_RULES = """# The patcher's rewrites of the installed `lib`.
- id: use-g
  description: Call g instead of f.
  files: ['**/lib/mod.py']
  # The call the patcher replaces.
  match: "f($X)"
  action: {replace: "g($X)"}   # g is lib's own
  expect: 1
- id: pin-h
  description: lib still defines h.
  files: ['**/lib/mod.py']
  match: 'def h($$$P): $$$B'
  expect: 1
  tests:
    - name: drifted
      before: "def k():\\n    return 1\\n"
      error: drift
"""


@pytest.mark.skipif(pre_commit is None, reason="pre-commit is installed by tests/run.sh")
def test_try_repo_with_no_hook_id_passes_for_a_runtime_patcher(tmp_path, cli):
    site = tmp_path / "site-packages" / "lib"
    site.mkdir(parents=True)
    (site / "mod.py").write_text("def h():\n    return 1\n\n\ny = f(1)\n")
    repo = _project(tmp_path, {"rules/patches.yaml": PATCHER_RULES,
                               "regraft.toml": 'rules = ["rules"]\ntargets = ["../site-packages/lib"]\n'})
    run = _mirror_runner(tmp_path, cli, repo)
    every = run()
    assert every.returncode == 0, every.stdout + every.stderr
    for hook in ("regraft-lint", "regraft-fmt", "regraft-check"):
        assert f"- hook id: {hook}" in every.stdout, every.stdout
    assert "every rule applies cleanly" in every.stdout, every.stdout
    # The opt-in hook did not run; run in its stage it fails, as it must for these targets.
    assert "- hook id: regraft-check-unchanged" not in every.stdout, every.stdout
    assert run("regraft-check-unchanged", "--hook-stage", "manual").returncode == 1
    assert (repo / "rules" / "patches.yaml").read_text() == PATCHER_RULES
    assert "y = f(1)" in (site / "mod.py").read_text()


@pytest.mark.skipif(pre_commit is None, reason="pre-commit is installed by tests/run.sh")
def test_a_broken_rule_is_reported_once_per_run(tmp_path, cli):
    files = {f"rules/ok{i}.yaml": FIXED.replace("id: r", f"id: ok{i}") for i in range(4)}
    files.update({"rules/r.yaml": BROKEN, "upstream.py": "y = f(1)\n",
                  "regraft.toml": 'rules = ["rules"]\ntargets = ["upstream.py"]\n'})
    repo = _project(tmp_path, files)
    run = _mirror_runner(tmp_path, cli, repo)
    # The default stage, and the manual one, which adds the opt-in regraft-check-unchanged.
    for stage, hooks in (((), ["regraft-fmt", "regraft-check"]),
                         (("--hook-stage", "manual"), ["regraft-fmt", "regraft-check", "regraft-check-unchanged"])):
        result = run(*stage)
        assert result.returncode == 1, result.stdout + result.stderr
        # In full once, by regraft-lint; every other hook that loads the rules fails, naming
        # the file in one line.
        assert result.stdout.count("unknown key `mach`") == 1, result.stdout
        sections = {s.split("\n", 1)[0]: s for s in result.stdout.split("- hook id: ")[1:]}
        assert "unknown key `mach`" in sections["regraft-lint"], result.stdout
        assert sorted(sections) == sorted(["regraft-lint", *hooks]), result.stdout
        for hook in hooks:
            lines = [line for line in sections[hook].splitlines() if "does not load" in line]
            assert lines == ["error: rules/r.yaml does not load: "
                             + ("not formatted" if hook == "regraft-fmt" else "nothing checked")
                             + " (`regraft lint rules/r.yaml` shows why)"], sections[hook]


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


def _project(tmp_path, files):
    """A git repository of `files` (path -> text), all added."""
    repo = tmp_path / "project"
    for name, text in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True, capture_output=True)
    subprocess.run(["git", "-c", "user.email=t@t", "-c", "user.name=t", "add", "."], cwd=repo,
                   check=True, capture_output=True)
    return repo


def _stand_in_wheel(directory, binary):
    """A wheel named as the release the mirror pins (`regraft==VERSION`) whose `regraft` command
    runs `binary`: the mirror's hooks on the binary under test, with nothing to build."""
    version = _crate_version()
    dist = f"regraft-{version}.dist-info"
    files = {
        "regraft_under_test.py": ("import os\nimport sys\n\n\ndef main():\n"
                                  f"    os.execv({str(binary)!r}, [{str(binary)!r}, *sys.argv[1:]])\n"),
        f"{dist}/METADATA": f"Metadata-Version: 2.1\nName: regraft\nVersion: {version}\n",
        f"{dist}/WHEEL": "Wheel-Version: 1.0\nGenerator: test_precommit\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
        f"{dist}/entry_points.txt": "[console_scripts]\nregraft = regraft_under_test:main\n",
    }
    record = []
    for name, text in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()
        record.append(f"{name},sha256={digest},{len(text.encode())}")
    files[f"{dist}/RECORD"] = "\n".join(record + [f"{dist}/RECORD,,"]) + "\n"
    wheel = directory / f"regraft-{version}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        for name, text in files.items():
            archive.writestr(name, text)
    return wheel


def _mirror_runner(tmp_path, cli, repo):
    """Runs `pre-commit try-repo` on a git copy of the mirror in `repo` (--all-files,
    --verbose), the hooks' `regraft` being `cli`: `run(*hook_ids_and_options)`."""
    copy = tmp_path / "mirror"
    shutil.copytree(ROOT / "pre-commit-mirror", copy)
    git = lambda *a: subprocess.run(["git", *a], cwd=copy, check=True, capture_output=True)  # noqa: E731
    git("init", "-q")
    git("add", ".")
    git("-c", "user.email=t@t", "-c", "user.name=t", "commit", "-q", "-m", "mirror")
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    _stand_in_wheel(wheels, pathlib.Path(cli).resolve())
    env = dict(os.environ, PRE_COMMIT_HOME=str(tmp_path / "pre-commit-home"), PIP_FIND_LINKS=str(wheels))
    return lambda *args: subprocess.run(  # noqa: E731
        [pre_commit, "try-repo", str(copy), *args, "--all-files", "--verbose"],
        cwd=repo, env=env, capture_output=True, text=True)
