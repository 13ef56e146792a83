"""The README's Python example runs as written where what it needs is installed, and says what
it needs where that is absent (it needs transformers and torch; the suite's venvs have neither,
the bench venv both)."""

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def _example() -> str:
    blocks = re.findall(r"```python\n(.*?)```", README, re.S)
    assert len(blocks) == 1, "the README has one Python example"
    return blocks[0]


def test_the_readme_python_example_says_what_it_needs_or_runs():
    example = _example()
    needs = re.match(r"# Needs (.+?) installed", example)
    assert needs, "the example's first line says what it needs"
    wanted = [w for w in re.findall(r"[a-z_]+", needs.group(1)) if w != "and"]
    assert wanted == ["transformers", "torch"], wanted
    missing = [m for m in wanted if importlib.util.find_spec(m) is None]
    if missing:
        return  # said, and not runnable here: what the example promises
    run = subprocess.run([sys.executable, "-c", example], cwd=ROOT, capture_output=True,
                         text=True, timeout=600)
    assert run.returncode == 0, run.stderr


def test_the_test_command_says_why_it_skips_and_shows_the_wheel_build():
    script = (ROOT / "tests" / "run.sh").read_text()
    pytest_lines = [l for l in script.splitlines() if "-m pytest" in l]
    assert pytest_lines and all(" -rs " in l for l in pytest_lines), pytest_lines
    wheel = next(l for l in script.splitlines() if "pip wheel" in l)
    assert "--quiet" not in wheel and " -v " in wheel, wheel
    assert "Compiling" in script, "cargo's progress lines are shown"
