"""Re-installs the import hook in a child interpreter (``install(children=True)``): the
``regraft-bootstrap.pth`` file the wheel puts in site-packages imports this module at every
interpreter start where ``REGRAFT_BOOTSTRAP`` is set (and ``-E``/``-I`` do not tell Python to
ignore the environment), and nothing else happens otherwise.

The parent does not hand its children a path to read again: it writes a snapshot of the very
rule texts it loaded to a private file (a folder of mode 700, a file of mode 600) and puts the
snapshot's path and sha256 in the variable. A child opens it without following links and
without blocking (a FIFO is refused, not waited on), takes it only if it is a regular file the
current user owns that nobody else can write, reads at most ``MAX_SNAPSHOT_BYTES``, and checks
the digest: rule files edited after the parent started cannot make workers run other code than
the parent."""

import hashlib
import json
import os
import stat
import sys
import warnings
from typing import List, Tuple

from ._carry import VARIABLE
MAX_SNAPSHOT_BYTES = 64 << 20


def read_snapshot(path: str, digest: str) -> List[Tuple[str, str, str]]:
    """The ``(text, format, name)`` sources the parent wrote at ``path``; raises ``ValueError``
    saying why where the file is not the parent's snapshot."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    descriptor = os.open(path, flags)
    try:
        info = os.fstat(descriptor)
        if not stat.S_ISREG(info.st_mode):
            raise ValueError(f"{path} is not a regular file")
        if hasattr(os, "geteuid") and info.st_uid != os.geteuid():
            raise ValueError(f"{path} belongs to another user")
        if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
            raise ValueError(f"{path} can be written by others")
        chunks, size = [], 0
        while size <= MAX_SNAPSHOT_BYTES:
            chunk = os.read(descriptor, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if size > MAX_SNAPSHOT_BYTES:
            raise ValueError(f"{path} is larger than {MAX_SNAPSHOT_BYTES} bytes")
    finally:
        os.close(descriptor)
    data = b"".join(chunks)
    if hashlib.sha256(data).hexdigest() != digest:
        raise ValueError(f"{path} is not what the parent wrote (its sha256 differs)")
    return [tuple(source) for source in json.loads(data)]


def _install_from_environment() -> None:
    raw = os.environ.get(VARIABLE)
    if not raw or sys.flags.ignore_environment:
        return
    try:
        settings = json.loads(raw)
        from . import Rules
        from ._native import NativeRules
        from ._hook import install

        sources = read_snapshot(settings["snapshot"], settings["sha256"])
        rules = Rules(NativeRules.parse_many(sources), settings["fingerprint"])
        install(rules, settings["packages"], phase=settings["phase"], versions=settings["versions"],
                cache=settings["cache"], on_error=settings["on_error"], live=settings.get("live"))
    except Exception as error:  # a child must start even if its patches cannot be restored
        warnings.warn(f"regraft: {VARIABLE} is set but the import hook could not be installed "
                      f"in this process: {error}", RuntimeWarning)


_install_from_environment()
