"""The releases of a package uploaded less than DAYS ago, as PEP 440 exclusions to append to a
`--fetch` selection (`,!=5.26.0,!=5.27.0rc1`): the drift workflow waits for a release to settle
(ddtrace's two-day cooldown: a release yanked or patched within days is not reported).

    python .github/drift/cooldown.py PACKAGE DAYS [--json FILE]

Reads PyPI's JSON API (or FILE, a saved copy of it); prints nothing when every release is old
enough.
"""

import argparse
import datetime
import json
import sys
import urllib.request


def recent(data: dict, days: float, now: datetime.datetime) -> list:
    """The versions of `data` (PyPI's JSON for a project) whose first upload is newer than
    `days` before `now`."""
    cutoff = now - datetime.timedelta(days=days)
    out = []
    for version, files in data.get("releases", {}).items():
        times = [datetime.datetime.fromisoformat(f["upload_time_iso_8601"].replace("Z", "+00:00"))
                 for f in files if f.get("upload_time_iso_8601")]
        if times and min(times) > cutoff:
            out.append(version)
    return sorted(out)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("package")
    parser.add_argument("days", type=float)
    parser.add_argument("--json", help="a saved copy of https://pypi.org/pypi/PACKAGE/json")
    options = parser.parse_args()
    if options.json:
        with open(options.json) as f:
            data = json.load(f)
    else:
        url = f"https://pypi.org/pypi/{options.package}/json"
        with urllib.request.urlopen(url, timeout=60) as response:
            data = json.load(response)
    now = datetime.datetime.now(datetime.timezone.utc)
    print("".join(f",!={v}" for v in recent(data, options.days, now)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
