"""Every worker model training uses: `multiprocessing` started with fork, spawn and forkserver,
`concurrent.futures.ProcessPoolExecutor`, a subprocess running `python -m`, grandchildren,
threads importing patched modules at once, and torch DataLoader workers (where torch is
installed). Each case runs in a fresh interpreter under a timeout, so a deadlock fails the test
instead of hanging it; a worker reports whether the patched code is what runs."""

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from test_runtime import POSITIONAL

HERE = Path(__file__).parent

CLI = '''\
"""Run as `python -m toymodels.cli`: says whose code runs, the module's own and the model's."""
import json

from toymodels.modeling_toy import ToyLayer, ToyModel

WHO = "stock"

if __name__ == "__main__":
    ToyLayer.calls.clear()
    ToyModel().forward(1, 2, 3)
    print(json.dumps({"main": WHO, "model": all(kw == [] for _, kw in ToyLayer.calls)}))
'''

CLI_RULE = """\
id: cli-says
files: ["**/toymodels/cli.py"]
match: 'WHO = "stock"'
action: {replace: 'WHO = "patched"'}
"""

PROBE = '''\
"""What a worker reports: whether the patched code runs, and how the hook got there."""
import inspect
import os
import sys


def probe(_=None):
    import toymodels.modeling_toy as m

    m.ToyLayer.calls.clear()
    m.ToyModel().forward(1, 2, 3)
    return {
        "patched": all(kwargs == [] for _, kwargs in m.ToyLayer.calls),
        "source": "x = layer(x, m, b)" in inspect.getsource(m.ToyModel.forward),
        "hooks": sum(type(h).__name__ == "Hook" for h in sys.meta_path),
        "bootstrap": os.environ.get("REGRAFT_BOOTSTRAP", ""),
        "pid": os.getpid(),
    }


def grandchild(path):
    """Run in a spawned child: starts a spawned child of its own; both reports go to ``path``."""
    import json
    import multiprocessing

    with multiprocessing.get_context("spawn").Pool(1) as pool:
        below = pool.apply(probe)
    with open(path, "w") as out:
        json.dump({"child": probe(), "grandchild": below}, out)


class Items:
    """A torch Dataset (duck-typed) whose items say whether the worker runs the patch."""

    def __len__(self):
        return 4

    def __getitem__(self, i):
        return int(probe()["patched"])
'''

PRELUDE = f"""
import json, multiprocessing, os, sys, warnings
import regraft
warnings.simplefilter("ignore", DeprecationWarning)
RULES = regraft.Rules.parse({POSITIONAL + "---" + chr(10) + CLI_RULE!r})
from probe import probe, grandchild, Items

def hook():
    return regraft.install(RULES, packages=["toymodels"], versions={{}}, children=True)

def patch():
    import toymodels.modeling_toy as m
    return regraft.patch(m.ToyModel.forward, RULES, versions={{}})
"""


@pytest.fixture
def run(tmp_path):
    """Runs ``body`` as the main script (``if __name__ == "__main__"``, so spawned children can
    import it) beside a fresh copy of the toy package, and returns what it printed as JSON."""
    shutil.copytree(HERE / "toymodels", tmp_path / "toymodels")
    (tmp_path / "toymodels" / "cli.py").write_text(CLI)
    (tmp_path / "probe.py").write_text(PROBE)
    paths = [str(tmp_path)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(paths), TMPDIR=str(tmp_path))
    env.pop("REGRAFT_BOOTSTRAP", None)

    def run(body, timeout=180):
        main = tmp_path / "main.py"
        main.write_text(PRELUDE + "\nif __name__ == '__main__':\n" + textwrap.indent(textwrap.dedent(body), "    "))
        out = subprocess.run([sys.executable, str(main)], env=env, cwd=tmp_path, capture_output=True,
                             text=True, timeout=timeout)
        assert out.returncode == 0, out.stderr
        return json.loads(out.stdout.strip().splitlines()[-1])

    run.path, run.env = tmp_path, env
    return run


@pytest.mark.parametrize("method", ["fork", "spawn", "forkserver"])
def test_multiprocessing_workers_run_the_patch_the_hook_carries(run, method):
    got = run(f"""
        hook()
        ctx = multiprocessing.get_context({method!r})
        with ctx.Pool(2) as pool:
            workers = pool.map(probe, range(4))
        process = ctx.Process(target=probe)
        process.start(); process.join(60)
        print(json.dumps({{"workers": workers, "exit": process.exitcode}}))
        """)
    assert got["exit"] == 0
    for worker in got["workers"]:
        assert worker["patched"] and worker["source"], worker
        assert worker["hooks"] == 1, "one hook in each worker: inherited or installed once"


@pytest.mark.parametrize("method", ["fork", "spawn", "forkserver"])
def test_a_parent_s_patch_reaches_forked_workers_only(run, method):
    got = run(f"""
        patch()
        with multiprocessing.get_context({method!r}).Pool(1) as pool:
            print(json.dumps(pool.apply(probe)))
        """)
    # `patch` changes this process's objects: a forked worker shares them; a spawned one (and
    # one the fork server starts) imports the module afresh — `install(children=True)` is
    # what carries patches there.
    assert got["patched"] is (method == "fork"), got
    assert got["hooks"] == 0 and not got["bootstrap"]


def test_a_fork_server_started_before_the_hook_is_said_to_start_workers_stock(run):
    got = run("""
        ctx = multiprocessing.get_context("forkserver")
        with ctx.Pool(1) as pool:
            pool.apply(probe)  # the server starts now, with the environment as it is
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            handle = hook()
            with ctx.Pool(1) as pool:
                worker = pool.apply(probe)
            regraft.uninstall(handle)
        print(json.dumps({"worker": worker["patched"], "warned": [str(w.message) for w in caught]}))
        """)
    assert got["worker"] is False, "the fork server keeps the environment it started with"
    assert len(got["warned"]) == 2, got
    assert "workers it starts run without the hook" in got["warned"][0]
    assert "workers it starts keep the hook" in got["warned"][1]


@pytest.mark.parametrize("method", ["spawn", "fork"])
def test_a_process_pool_executor_runs_the_patch(run, method):
    got = run(f"""
        import concurrent.futures
        hook()
        context = multiprocessing.get_context({method!r})
        with concurrent.futures.ProcessPoolExecutor(2, mp_context=context) as pool:
            print(json.dumps(list(pool.map(probe, range(4)))))
        """)
    assert len(got) == 4 and all(w["patched"] and w["source"] and w["hooks"] == 1 for w in got), got


def test_python_minus_m_in_a_subprocess_runs_the_patched_main_module(run):
    got = run("""
        import subprocess
        hook()
        out = subprocess.run([sys.executable, "-m", "toymodels.cli"], capture_output=True, text=True,
                             timeout=60)
        print(out.stdout.strip() or json.dumps({"error": out.stderr}))
        """)
    assert got == {"main": "patched", "model": True}


def test_grandchildren_get_the_hook_once_and_the_bootstrap_never_recurses(run):
    got = run("""
        hook()
        child = multiprocessing.get_context("spawn").Process(target=grandchild, args=("report.json",))
        child.start(); child.join(120)
        print(open("report.json").read())
        """)
    child, below = got["child"], got["grandchild"]
    assert child["patched"] and below["patched"], got
    assert child["hooks"] == below["hooks"] == 1
    # A child installs the hook without exporting it again: every generation reads the
    # snapshot the first parent wrote.
    assert child["bootstrap"] == below["bootstrap"] != ""


@pytest.mark.parametrize("given", [None, "raise", "warn"])
def test_a_carried_hook_warns_unless_the_parent_said_otherwise(run, given):
    argument = "" if given is None else f", on_error={given!r}"
    got = run(f"""
        hook = regraft.install(RULES, packages=["toymodels"], versions={{}}, children=True{argument})
        probe_child = "import sys, json; print(json.dumps([h.on_error for h in sys.meta_path if type(h).__name__ == 'Hook']))"
        import subprocess
        out = subprocess.run([sys.executable, "-c", probe_child], capture_output=True, text=True, timeout=60)
        print(json.dumps({{"parent": hook.on_error, "child": json.loads(out.stdout.strip().splitlines()[-1])}}))
        """)
    assert got["parent"] == (given or "raise")
    assert got["child"] == [given or "warn"]


def test_nothing_of_regraft_loads_where_the_bootstrap_is_not_asked_for(run):
    probe = "import sys; print(sorted(m for m in sys.modules if m.split('.')[0] == 'regraft'))"
    out = subprocess.run([sys.executable, "-c", probe], env=run.env, capture_output=True, text=True,
                         timeout=60)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr


THREADS = 8


def _thread_package(root: Path) -> None:
    """``threadpkg``: one module per thread and one every thread imports, each long enough that
    patching takes a while (the rules run with the GIL released), each counting its own runs."""
    package = root / "threadpkg"
    package.mkdir()
    (package / "__init__.py").write_text("executed = []\n")
    filler = "".join(f"\ndef filler_{i}(x):\n    return x + {i}\n" for i in range(400))
    for name in [f"m{i}" for i in range(THREADS)] + ["shared"]:
        (package / f"{name}.py").write_text(
            "import threadpkg\nthreadpkg.executed.append(__name__)\n\n\n"
            "def who():\n    return 'stock'\n" + filler)


def test_threads_importing_patched_modules_at_once_patch_each_once(run):
    _thread_package(run.path)
    got = run(f"""
        import threading
        rules = regraft.Rules.parse("id: t\\nfiles: ['**/threadpkg/m*.py', '**/threadpkg/shared.py']\\n"
                                    "match: \\"return 'stock'\\"\\naction: {{replace: \\"return 'patched'\\"}}\\n")
        hook = regraft.install(rules, packages=["threadpkg"], versions={{}})
        barrier = threading.Barrier({THREADS})
        seen = {{}}

        def work(i):
            barrier.wait()
            import importlib
            mine = importlib.import_module(f"threadpkg.m{{i}}")
            shared = importlib.import_module("threadpkg.shared")
            seen[i] = (mine.who(), shared.who())

        threads = [threading.Thread(target=work, args=(i,)) for i in range({THREADS})]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        import threadpkg
        print(json.dumps({{"seen": sorted(seen.values()), "stuck": sum(t.is_alive() for t in threads),
                          "executed": sorted(threadpkg.executed), "misses": hook.misses,
                          "modules": sorted(hook.modules)}}))
        """)
    names = sorted([f"threadpkg.m{i}" for i in range(THREADS)] + ["threadpkg.shared"])
    assert got["stuck"] == 0
    assert got["seen"] == [["patched", "patched"]] * THREADS
    assert got["executed"] == names, "each module ran once"
    assert got["misses"] == len(names) and got["modules"] == names, "each module patched once"


def test_what_the_hook_warns_through_never_runs_under_the_import_lock(run, tmp_path):
    """A warning runs user code (``warnings.showwarning``, replaced here by one that waits for
    another thread's import, as a logging handler may): the hook warns only where the import
    system holds no global lock, so the other thread's import goes through."""
    import zipfile

    with zipfile.ZipFile(tmp_path / "lib.zip", "w") as archive:
        archive.writestr("zipped/__init__.py", "")
        archive.writestr("zipped/mod.py", "def f(x):\n    return x + 1\n")
    for i in range(2):
        (tmp_path / f"fresh{i}.py").write_text("VALUE = 1\n")
    got = run(f"""
        import threading
        sys.path.append({str(tmp_path / "lib.zip")!r})
        # The toy rule made to expect two matches (it finds one), and a rule for a zipped module.
        rules = regraft.Rules.parse({POSITIONAL.replace("expect: 1", "expect: 2")!r} + "---\\n"
                                    + 'id: z\\nfiles: ["**/zipped/mod.py"]\\nmatch: "return x + 1"\\n'
                                    + 'action: {{replace: "return x + 2"}}\\n')
        regraft.install(rules, packages=["toymodels", "zipped"], versions={{}}, on_error="warn")
        calls = []

        def showwarning(message, category, filename, lineno, file=None, line=None):
            other = threading.Thread(target=__import__, args=(f"fresh{{len(calls)}}",))
            other.start()
            other.join(10)
            calls.append([str(message), other.is_alive()])

        warnings.showwarning = showwarning
        warnings.simplefilter("always")
        import toymodels.modeling_toy  # drift: warned while the module is patched
        import zipped.mod  # no source file: warned as the module is created
        print(json.dumps(calls))
        """)
    assert any("toy-layers-positional" in message for message, _ in got), got
    assert any("zipped.mod is loaded by zipimporter" in message for message, _ in got), got
    assert not any(blocked for _, blocked in got), got


def test_data_loader_workers_run_the_patch(run):
    pytest.importorskip("torch", reason="torch is not installed here: DataLoader workers not tried")
    got = run("""
        import torch.utils.data
        hook()
        result = {}
        for method in ("fork", "spawn", "forkserver"):
            loader = torch.utils.data.DataLoader(Items(), batch_size=None, num_workers=2,
                                                 multiprocessing_context=method)
            result[method] = [int(x) for x in loader]
        print(json.dumps(result))
        """, timeout=600)
    assert got == {m: [1, 1, 1, 1] for m in ("fork", "spawn", "forkserver")}, got
