"""`regraft` as a command: the console script the wheel installs, and `python -m regraft`."""

import sys

from ._native import main as _main


def main() -> int:
    """Runs the regraft command line with this process's arguments."""
    return _main([sys.argv[0], *sys.argv[1:]])


if __name__ == "__main__":
    sys.exit(main())
