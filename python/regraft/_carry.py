"""The parent's side of ``install(children=True)``: the snapshot of the rules written where
children inherit it (``REGRAFT_BOOTSTRAP``), and taken back by ``uninstall``. The child's side,
which reads it and installs the hook, is ``_bootstrap``; the two share the variable's name."""

import atexit
import hashlib
import json
import os
import shutil
import sys
import tempfile
import warnings
from typing import Any, Mapping, Optional, Sequence

VARIABLE = "REGRAFT_BOOTSTRAP"


def export(rules: Any, packages: Sequence[str], phase: Optional[str],
           versions: Optional[Mapping[str, str]], cache: Optional[str], on_error: str,
           live: Optional[bool] = None) -> None:
    """Writes the rules' snapshot and puts it, with the settings, where children inherit it."""
    payload = json.dumps(rules._native.sources()).encode()
    folder = tempfile.mkdtemp(prefix="regraft-children-")
    atexit.register(_remove, folder, os.getpid())
    descriptor, path = tempfile.mkstemp(dir=folder, suffix=".json")
    with os.fdopen(descriptor, "wb") as out:
        out.write(payload)
    _warn_fork_server("workers it starts run without the hook")
    os.environ[VARIABLE] = json.dumps({
        "snapshot": path, "sha256": hashlib.sha256(payload).hexdigest(),
        "fingerprint": rules.fingerprint, "packages": list(packages), "phase": phase,
        "versions": dict(versions) if versions is not None else None,
        "cache": cache, "on_error": on_error, "live": live,
    })


def _remove(folder: str, owner: int) -> None:
    """Removes the snapshot when the process that wrote it exits (a forked child that runs its
    exit handlers leaves it to the parent)."""
    if os.getpid() == owner:
        shutil.rmtree(folder, True)


def withdraw() -> None:
    """Stops handing the hook to children started from now on."""
    if os.environ.pop(VARIABLE, None) is not None:
        _warn_fork_server("workers it starts keep the hook")


def _warn_fork_server(consequence: str) -> None:
    """Says so where a ``multiprocessing`` fork server is running: it took this process's
    environment once, when it started, and every worker it forks starts from that."""
    forkserver = sys.modules.get("multiprocessing.forkserver")
    server = getattr(forkserver, "_forkserver", None)
    if getattr(server, "_forkserver_pid", None) is not None:
        warnings.warn("regraft: a multiprocessing fork server is already running, started before "
                      f"this change to {VARIABLE}: {consequence}", RuntimeWarning, stacklevel=4)
