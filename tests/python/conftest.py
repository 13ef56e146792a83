"""Shared fixtures: the repository root and the CLI binary that `cargo test` builds."""

import os
import pathlib
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def root() -> pathlib.Path:
    return ROOT


@pytest.fixture(scope="session")
def cli() -> pathlib.Path:
    """The `regraft` binary: $REGRAFT_BIN, else the debug build, built here if missing."""
    binary = pathlib.Path(os.environ.get("REGRAFT_BIN", ROOT / "target" / "debug" / "regraft"))
    if not binary.exists():
        subprocess.run(["cargo", "build", "--locked", "--bin", "regraft"], cwd=ROOT, check=True)
    assert binary.exists(), f"no regraft binary at {binary}"
    return binary
