"""Re-installs the import hook in a child interpreter (``install(children=True)``): the
``regraft-bootstrap.pth`` file the wheel puts in site-packages imports this module at every
interpreter start where ``REGRAFT_BOOTSTRAP`` is set, and nothing else happens otherwise."""

import json
import os
import warnings
from typing import Any, Mapping, Optional, Sequence

VARIABLE = "REGRAFT_BOOTSTRAP"


def export(rules: Any, packages: Sequence[str], phase: Optional[str],
           versions: Optional[Mapping[str, str]], cache: Optional[str], on_error: str) -> None:
    """Puts what ``install`` was given into the environment children inherit."""
    origin = getattr(rules, "_origin", None)
    if origin is None:
        raise ValueError("install(children=True) needs rules from Rules.load or Rules.parse: "
                         "they are read again in each child")
    os.environ[VARIABLE] = json.dumps({
        "rules": origin, "packages": list(packages), "phase": phase,
        "versions": dict(versions) if versions is not None else None,
        "cache": cache, "on_error": on_error,
    })


def _install_from_environment() -> None:
    raw = os.environ.get(VARIABLE)
    if not raw:
        return
    try:
        settings = json.loads(raw)
        from . import Rules
        from .runtime import install

        origin = settings["rules"]
        rules = (Rules.load(origin["path"]) if "path" in origin
                 else Rules.parse(origin["text"], origin["format"], origin["name"]))
        install(rules, settings["packages"], phase=settings["phase"], versions=settings["versions"],
                cache=settings["cache"], on_error=settings["on_error"])
    except Exception as error:  # a child must start even if its patches cannot be restored
        warnings.warn(f"regraft: {VARIABLE} is set but the import hook could not be installed "
                      f"in this process: {error}", RuntimeWarning)


_install_from_environment()
