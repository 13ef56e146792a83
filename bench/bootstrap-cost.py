"""What the wheel's `regraft-bootstrap.pth` costs every interpreter started where it is installed
(not in CI; prints figures, asserts nothing): `python -c pass` in a fresh venv without the
wheel, the same venv with the wheel's files in its site-packages and `REGRAFT_BOOTSTRAP` unset,
and with the variable set (a child of `install(children=True)`: the hook re-installed from the
parent's snapshot). Wall time of the whole process, and its CPU time (user + system); medians
of N runs, interleaved so a slow spell of the machine hits every column alike.

    python bench/bootstrap-cost.py [N]        # N = 200 by default
"""

import json
import os
import pathlib
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import regraft

ROOT = pathlib.Path(__file__).resolve().parent.parent
RULES = 'id: r\nfiles: ["**/nothing_here/*.py"]\nmatch: "f($X)"\naction: {replace: "g($X)"}\n'


def site_packages(venv: pathlib.Path) -> pathlib.Path:
    python = venv / "bin" / "python"
    out = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                         check=True, capture_output=True, text=True)
    return pathlib.Path(out.stdout.strip())


def once(python: str, env: dict) -> "tuple[float, float]":
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run([python, "-c", "pass"], env=env, check=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    work = pathlib.Path(tempfile.mkdtemp(prefix="regraft-bootstrap-cost-"))
    try:
        plain, wheel = work / "plain", work / "wheel"
        for venv in (plain, wheel):
            subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
        # The wheel's files as pip lays them out: the package and the .pth beside it.
        target = site_packages(wheel)
        shutil.copytree(pathlib.Path(regraft.__file__).parent, target / "regraft",
                        ignore=shutil.ignore_patterns("__pycache__"))
        shutil.copy(ROOT / "regraft-bootstrap.pth", target)
        # A parent that exported its hook: the variable its children inherit.
        parent = ("import os, regraft; h = regraft.install(regraft.Rules.parse(%r), "
                  "packages=['nothing_here'], versions={}, children=True); "
                  "print(os.environ['REGRAFT_BOOTSTRAP']); import sys; sys.stdout.flush(); "
                  "sys.stdin.read()" % RULES)
        exporter = subprocess.Popen([sys.executable, "-c", parent], stdin=subprocess.PIPE,
                                    stdout=subprocess.PIPE, text=True)
        variable = exporter.stdout.readline().strip()
        env = {k: v for k, v in os.environ.items() if k not in ("REGRAFT_BOOTSTRAP", "PYTHONPATH")}
        columns = {
            "without the wheel": (str(plain / "bin" / "python"), env),
            "wheel, variable unset": (str(wheel / "bin" / "python"), env),
            "wheel, variable set": (str(wheel / "bin" / "python"), dict(env, REGRAFT_BOOTSTRAP=variable)),
        }
        for python, settings in columns.values():  # bytecode caches written, disk warm
            for _ in range(3):
                once(python, settings)
        results = {name: [] for name in columns}
        for _ in range(runs):
            for name, (python, settings) in columns.items():
                results[name].append(once(python, settings))
        exporter.communicate("")
        print(f"`python -c pass`, {sys.version.split()[0]}, median of {runs} runs "
              f"(interleaved), this machine:")
        base_wall = statistics.median(w for w, _ in results["without the wheel"])
        base_cpu = statistics.median(c for _, c in results["without the wheel"])
        for name, samples in results.items():
            wall = statistics.median(w for w, _ in samples)
            cpu = statistics.median(c for _, c in samples)
            print(f"  {name:24} wall {wall * 1e3:6.2f} ms ({(wall - base_wall) * 1e3:+.2f})"
                  f"   cpu {cpu * 1e3:6.2f} ms ({(cpu - base_cpu) * 1e3:+.2f})")
        print(json.dumps({name: statistics.median(w for w, _ in s) for name, s in results.items()}))
    finally:
        shutil.rmtree(work, True)


if __name__ == "__main__":
    main()
