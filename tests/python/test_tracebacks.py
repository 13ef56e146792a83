"""What a user quotes: an uncaught exception in patched code shows the patched line at its real
line number with Python's own handler — after `regraft.patch` and after the import hook, and
after `linecache.clearcache()` too — as do `traceback.format_exc()`, a thread's uncaught
exception and `inspect.getsource`. Each case runs in a fresh interpreter (CPython 3.9 to 3.12
print an uncaught exception in C, reading the file on disk; 3.13 goes through `traceback`)."""

import json
import os
import shutil
import subprocess
import sys
import textwrap

import pytest

MODULE = '''\
"""A module whose code raises, for the tracebacks of patched code."""
import os
\x0c
# A form feed above (a page break in old code) ends a line for str.splitlines, not for Python.


class Model:
    def fails(self, x):
        value = x + 1
        raise ValueError("stock")

    def steps(self, n):
        for i in range(n):
            yield i
        raise ValueError("stock in generator")


def helper(x):
    raise KeyError("stock helper")
'''

FAILS = """\
id: fails
files: ["**/tbpkg/mod.py"]
match: 'raise ValueError("stock")'
action: {replace: 'raise ValueError("patched")'}
"""
STEPS = """\
id: steps
files: ["**/tbpkg/mod.py"]
match: 'raise ValueError("stock in generator")'
action: {replace: 'raise ValueError("patched in generator")'}
"""
HELPER = """\
id: helper
files: ["**/tbpkg/mod.py"]
match: 'raise KeyError("stock helper")'
action: {replace: 'raise KeyError("patched helper")'}
"""


def _line(text):
    return next(i for i, line in enumerate(MODULE.split("\n"), 1) if text in line)


ALL = FAILS + "---\n" + STEPS + "---\n" + HELPER

PRELUDE = f"""
import importlib, inspect, json, linecache, os, sys, threading, traceback, warnings
import regraft
A = regraft.Rules.parse({ALL!r})
FAILS = regraft.Rules.parse({FAILS!r})
STEPS = regraft.Rules.parse({STEPS!r})

def start(mode, rules=A, **settings):
    if mode == "install":
        regraft.install(rules, packages=["tbpkg"], versions={{}}, **settings)
    import tbpkg.mod as m
    if mode == "patch":
        regraft.patch(m.Model, rules, versions={{}})
        regraft.patch(m.helper, rules, versions={{}})
    return m

def quoted(call):
    try:
        call()
    except Exception:
        return traceback.format_exc()
"""


@pytest.fixture
def run(tmp_path):
    """Runs a script in a fresh interpreter beside a fresh copy of the module, with a
    temporary folder of its own (where the patched texts go)."""
    (tmp_path / "tbpkg").mkdir()
    (tmp_path / "tbpkg" / "__init__.py").write_text("")
    (tmp_path / "tbpkg" / "mod.py").write_text(MODULE)
    (tmp_path / "tmp").mkdir()
    paths = [str(tmp_path)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(paths), TMPDIR=str(tmp_path / "tmp"))
    env.pop("REGRAFT_BOOTSTRAP", None)
    env.pop("PYTHONWARNINGS", None)

    def run(body):
        script = PRELUDE + textwrap.dedent(body)
        return subprocess.run([sys.executable, "-c", script], env=env, cwd=tmp_path,
                              capture_output=True, text=True, timeout=120)

    run.path = tmp_path
    return run


def _last_frame(stderr):
    """The last `File ...` line of a traceback and the source line under it."""
    lines = stderr.splitlines()
    at = max(i for i, line in enumerate(lines) if line.lstrip().startswith('File "'))
    return lines[at].strip(), lines[at + 1].strip() if at + 1 < len(lines) else ""


@pytest.mark.parametrize("clear", [False, True], ids=["", "after-clearcache"])
@pytest.mark.parametrize("mode", ["patch", "install"])
def test_an_uncaught_exception_shows_the_patched_line(run, mode, clear):
    out = run(f"""
        m = start({mode!r})
        if {clear}:
            linecache.clearcache()
        m.Model().fails(1)
        """)
    assert out.returncode == 1 and out.stderr.rstrip().endswith("ValueError: patched"), out.stderr
    where, line = _last_frame(out.stderr)
    assert line == 'raise ValueError("patched")', out.stderr
    assert where.endswith(f'/tbpkg/mod.py", line {_line("stock")}, in fails'), where
    assert 'raise ValueError("stock")' not in out.stderr


@pytest.mark.parametrize("mode", ["patch", "install"])
def test_format_exc_a_thread_a_generator_and_getsource_show_the_patched_text(run, mode):
    out = run(f"""
        m = start({mode!r})
        linecache.clearcache()
        seen = {{}}
        threading.excepthook = lambda args: seen.update(thread="".join(
            traceback.format_exception(args.exc_type, args.exc_value, args.exc_traceback)))
        worker = threading.Thread(target=m.Model().fails, args=(1,))
        worker.start(); worker.join()
        print(json.dumps({{
            "fails": quoted(lambda: m.Model().fails(1)),
            "generator": quoted(lambda: list(m.Model().steps(2))),
            "function": quoted(lambda: m.helper(1)),
            "thread": seen["thread"],
            "source": inspect.getsource(m.Model.fails),
        }}))
        """)
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout)
    for key, line, number in [("fails", 'raise ValueError("patched")', _line('"stock")')),
                              ("thread", 'raise ValueError("patched")', _line('"stock")')),
                              ("generator", 'raise ValueError("patched in generator")', _line("in generator")),
                              ("function", 'raise KeyError("patched helper")', _line("stock helper"))]:
        tail = got[key].splitlines()
        frame = next(i for i in range(len(tail) - 1, -1, -1) if tail[i].lstrip().startswith('File "'))
        assert tail[frame].endswith(f", line {number}, in {tail[frame].rsplit(' ', 1)[1]}"), got[key]
        assert tail[frame + 1].strip() == line, (key, got[key])
    assert 'raise ValueError("patched")' in got["source"]


def test_a_patch_reverted_shows_the_stock_line_again(run):
    out = run("""
        import tbpkg.mod as m
        handles = [regraft.patch(m.Model, A, versions={}), regraft.patch(m.helper, A, versions={})]
        print(quoted(lambda: m.Model().fails(1)).splitlines()[-2].strip())
        for handle in reversed(handles):
            handle.revert()
        print(quoted(lambda: m.Model().fails(1)).splitlines()[-2].strip())
        linecache.clearcache()
        print(quoted(lambda: m.helper(1)).splitlines()[-2].strip())
        print(inspect.getsource(m.Model).count("patched"), inspect.getsource(m.helper).count("patched"))
        m.Model().fails(1)
        """)
    assert out.returncode == 1
    assert out.stdout.splitlines() == ['raise ValueError("patched")', 'raise ValueError("stock")',
                                       'raise KeyError("stock helper")', "0 0"], out.stdout
    where, line = _last_frame(out.stderr)
    assert line == 'raise ValueError("stock")' and where.endswith(
        f'{os.sep}tbpkg{os.sep}mod.py", line {_line("stock")}, in fails'), out.stderr
    assert str(run.path) in where, "stock code names the module's own file"


def test_a_class_patched_twice_then_its_first_patch_reverted_shows_what_runs(run):
    out = run("""
        import tbpkg.mod as m
        first = regraft.patch(m.Model, FAILS, versions={})
        second = regraft.patch(m.Model, STEPS, versions={})
        print(quoted(lambda: list(m.Model().steps(1))).splitlines()[-2].strip())
        print(quoted(lambda: m.Model().fails(1)).splitlines()[-2].strip())
        first.revert()  # `fails` runs stock again; the later patch of `steps` stays
        print(quoted(lambda: m.Model().fails(1)).splitlines()[-2].strip())
        print(quoted(lambda: list(m.Model().steps(1))).splitlines()[-2].strip())
        source = inspect.getsource(m.Model)
        print('ValueError("stock")' in source, "patched in generator" in source)
        second.revert()
        print(inspect.getsource(m.Model).count("patched"))
        """)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == [
        'raise ValueError("patched in generator")', 'raise ValueError("patched")',
        'raise ValueError("stock")', 'raise ValueError("patched in generator")', "True True", "0"]


@pytest.mark.parametrize("mode", ["patch", "install"])
def test_the_module_file_deleted_from_disk(run, mode):
    out = run(f"""
        m = start({mode!r})
        os.unlink(m.__file__)
        linecache.clearcache()
        print(inspect.getsource(m.Model.fails).splitlines()[-1].strip())
        m.Model().fails(1)
        """)
    assert out.stdout.strip() == 'raise ValueError("patched")', out.stderr
    assert _last_frame(out.stderr)[1] == 'raise ValueError("patched")', out.stderr


def test_bytecode_from_the_hook_s_cache_names_a_file_that_holds_the_patch(run):
    cache = run.path / "cache"
    body = f"""
        m = start("install", cache={str(cache)!r})
        linecache.clearcache()
        m.Model().fails(1)
        """
    first = run(body)
    where = _last_frame(first.stderr)[0]
    folder = where.split('"')[1].rsplit(f"{os.sep}tbpkg{os.sep}", 1)[0]
    shutil.rmtree(folder)  # a temporary-folder cleaner came by between two starts
    second = run(body)
    assert _last_frame(second.stderr) == _last_frame(first.stderr)
    assert _last_frame(second.stderr)[1] == 'raise ValueError("patched")', second.stderr


def test_patched_texts_go_to_a_folder_only_the_user_can_write(run):
    shared = run.path / "tmp" / f"regraft-{os.geteuid()}"
    shared.mkdir()
    shared.chmod(0o777)  # made by someone else, or loosened: not used
    out = run("""
        m = start("patch")
        import regraft._sources as s
        print(s.root(), oct(os.stat(s.root()).st_mode & 0o777))
        linecache.clearcache()
        m.Model().fails(1)
        """)
    root, mode = out.stdout.split()
    assert root != str(shared) and mode == "0o700", out.stdout
    assert _last_frame(out.stderr)[1] == 'raise ValueError("patched")', out.stderr
    assert not os.path.exists(root), "a folder of the process's own goes when it exits"
    shared.chmod(0o700)
    out = run("""
        m = start("patch")
        import regraft._sources as s
        print(s.root())
        """)
    assert out.stdout.strip() == str(shared), out.stderr
    written = [os.path.join(d, f) for d, _, fs in os.walk(shared) for f in fs]
    assert written and all(os.stat(f).st_mode & 0o077 == 0 for f in written), written


@pytest.mark.parametrize("mode", ["patch", "install"])
@pytest.mark.parametrize("added", ["é", "→"], ids=["latin-1", "beyond-latin-1"])
def test_a_module_in_another_encoding_shows_its_own_characters(run, mode, added):
    (run.path / "tbpkg" / "mod.py").write_bytes(
        '# -*- coding: latin-1 -*-\nGREETING = "café"\n\n\ndef helper(x):\n'
        '    raise KeyError(GREETING + " stock helper")\n'.encode("latin-1"))
    rule = HELPER.replace('KeyError("stock helper")', 'KeyError(GREETING + " stock helper")').replace(
        'KeyError("patched helper")', f'KeyError(GREETING + " patched {added}")')
    out = run(f"""
        rules = regraft.Rules.parse({rule!r})
        if {mode!r} == "install":
            regraft.install(rules, packages=["tbpkg"], versions={{}})
        import tbpkg.mod as m
        if {mode!r} == "patch":
            regraft.patch(m.helper, rules, versions={{}})
        linecache.clearcache()
        m.helper(1)
        """)
    where, line = _last_frame(out.stderr)
    assert line == f'raise KeyError(GREETING + " patched {added}")' and where.endswith("line 6, in helper"), out.stderr
