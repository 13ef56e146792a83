"""The import hook's cache of patched module sources.

The hook *executes* what it reads from here, so an entry is trusted only as far as Python's and
pip's own caches trust theirs: the folder and every entry must belong to the current user and
be writable by nobody else (otherwise caching is off, with one warning), entries are opened
without following links, and each carries a sha256 over everything its text depends on (the
module's source and path, the rules, the versions, the phase, this package's version) and over
the text itself, checked before the text is used. A truncated, corrupted or foreign entry is
rebuilt, never run. Writes go through a random-named file created exclusively (``mkstemp``)
and renamed over the entry, so a reader sees a whole old entry or a whole new one. A folder
that cannot be written degrades to no cache; it never fails an import.
"""

import hashlib
import json
import os
import stat
import tempfile
import warnings
from typing import Any, Dict, List, Optional, Tuple

_MAGIC = "regraft-cache 1"
# An entry holds one module's source: far below this. A larger file is not read.
_MAX_ENTRY = 256 << 20


def _owner_ok(st: os.stat_result) -> Optional[str]:
    """Why a file or folder with these attributes is not safe to trust, or ``None``."""
    geteuid = getattr(os, "geteuid", None)
    if geteuid is not None and st.st_uid != geteuid():
        return f"it is owned by uid {st.st_uid}, not by the current user ({geteuid()})"
    if os.name == "posix" and st.st_mode & 0o022:
        return f"it is writable by group or others (mode {stat.S_IMODE(st.st_mode):o})"
    return None


class Cache:
    """One cache folder: checked once, then read and written entry by entry."""

    def __init__(self, folder: str) -> None:
        self.folder = os.path.abspath(folder)
        self.usable: Optional[bool] = None
        self._warned = False

    def _warn(self, reason: str) -> None:
        if not self._warned:
            self._warned = True
            warnings.warn(f"regraft: not using the cache {self.folder}: {reason}; "
                          "modules are patched without it", RuntimeWarning, stacklevel=4)

    def _check_folder(self) -> bool:
        """Creates the folder (private to the user) if missing; refuses one that another user
        owns or can write, or that is a link."""
        if self.usable is None:
            self.usable = False
            try:
                if not os.path.lexists(self.folder):
                    parent = os.path.dirname(self.folder)
                    os.makedirs(parent, exist_ok=True)
                    os.mkdir(self.folder, 0o700)
                st = os.lstat(self.folder)
            except OSError as error:
                self._warn(f"it cannot be created ({error.strerror})")
                return False
            if stat.S_ISLNK(st.st_mode) or not stat.S_ISDIR(st.st_mode):
                self._warn("it is not a folder (or is a symbolic link)")
                return False
            reason = _owner_ok(st)
            if reason:
                self._warn(reason)
                return False
            self.usable = True
        return self.usable

    @staticmethod
    def key(parts: List[str]) -> str:
        """The entry key of everything a patched text depends on."""
        digest = hashlib.sha256()
        for part in parts:
            digest.update(part.encode("utf-8", "surrogatepass"))
            digest.update(b"\0")
        return digest.hexdigest()

    @staticmethod
    def _seal(key: str, payload: bytes) -> str:
        return hashlib.sha256(key.encode() + b"\0" + payload).hexdigest()

    def _read_payload(self, key: str, suffix: str) -> Optional[bytes]:
        """The sealed payload of the entry ``key`` + ``suffix``, if a sound one exists: a
        regular file of this user's that nobody else can write, whose seal matches."""
        if not self._check_folder():
            return None
        flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
        try:
            fd = os.open(os.path.join(self.folder, key + suffix), flags)
        except OSError:
            return None
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode) or _owner_ok(st) or st.st_size > _MAX_ENTRY:
                return None
            with os.fdopen(fd, "rb", closefd=False) as f:
                data = f.read(_MAX_ENTRY + 1)
        except OSError:
            return None
        finally:
            os.close(fd)
        header, _, rest = data.partition(b"\n")
        seal, _, payload = rest.partition(b"\n")
        if header.decode("ascii", "replace") != _MAGIC or seal.decode("ascii", "replace") != self._seal(key, payload):
            return None
        return payload

    def read(self, key: str) -> Optional[Tuple[str, List[str], Dict[str, Any]]]:
        """The patched text, the warnings it was made with and what else was stored with it
        (``write``'s ``extra``), if a sound entry exists."""
        payload = self._read_payload(key, ".py")
        if payload is None:
            return None
        meta, _, body = payload.partition(b"\n")
        try:
            found = json.loads(meta)
            extra = found.get("extra", {})
            if not isinstance(extra, dict):
                return None
            return body.decode("utf-8"), [str(w) for w in found["warnings"]], extra
        except (ValueError, KeyError, TypeError, AttributeError):
            return None

    def entry(self, key: str) -> str:
        """The file of the text entry ``key``: what a message about it names."""
        return os.path.join(self.folder, key + ".py")

    def read_code(self, key: str) -> Optional[bytes]:
        """The marshalled bytecode stored for ``key`` (a key that names the text it was
        compiled from and the interpreter's bytecode version), if a sound entry exists."""
        return self._read_payload(key, ".code")

    def write(self, key: str, text: str, drift: List[str], extra: Optional[Dict[str, Any]] = None) -> None:
        """Stores an entry (``extra``: JSON-able facts about the text, read back with it); a
        folder that cannot be written leaves caching off."""
        meta = {"warnings": drift, "extra": extra or {}}
        payload = json.dumps(meta).encode() + b"\n" + text.encode("utf-8")
        self._write_payload(key, ".py", payload)

    def write_code(self, key: str, code: bytes) -> None:
        """Stores the bytecode for ``key``, as ``write`` stores text."""
        self._write_payload(key, ".code", code)

    def _write_payload(self, key: str, suffix: str, payload: bytes) -> None:
        if not self._check_folder():
            return
        data = f"{_MAGIC}\n{self._seal(key, payload)}\n".encode() + payload
        try:
            fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=suffix, dir=self.folder)
        except OSError as error:
            self.usable = False
            self._warn(f"it cannot be written ({error.strerror})")
            return
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            os.replace(tmp, os.path.join(self.folder, key + suffix))
        except OSError as error:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            self.usable = False
            self._warn(f"it cannot be written ({error.strerror})")
