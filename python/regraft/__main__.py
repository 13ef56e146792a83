"""`regraft` as a command: the console script the wheel installs, and `python -m regraft`."""

import sys

from ._native import main as _main


def main() -> int:
    """Runs the regraft command line with this process's arguments. The program is named
    `regraft` however it was started (`python -m regraft` gives `__main__.py` as argv[0])."""
    return _main(["regraft", *sys.argv[1:]])


if __name__ == "__main__":
    sys.exit(main())
