"""The scheduled drift workflow's two scripts (.github/drift/): which releases are too new to
report (the cooldown), and what changed between two runs' matrices (what an issue says). The
workflow itself is validated with actionlint (test_release.py)."""

import datetime
import json
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / ".github" / "drift"))

import changed  # noqa: E402
import cooldown  # noqa: E402


def _pypi(uploads):
    return {"releases": {v: [{"upload_time_iso_8601": t}] if t else [] for v, t in uploads.items()}}


def test_releases_younger_than_the_cooldown_are_excluded_from_the_selection(tmp_path):
    now = datetime.datetime(2026, 12, 5, 12, tzinfo=datetime.timezone.utc)
    data = _pypi({"5.25.0": "2026-11-20T10:00:00.000000Z", "5.26.0": "2026-12-04T09:00:00.000000Z",
                  "5.27.0rc1": "2026-12-05T08:00:00.000000Z", "5.24.0": None})
    assert cooldown.recent(data, 2, now) == ["5.26.0", "5.27.0rc1"]
    assert cooldown.recent(data, 0.25, now) == ["5.27.0rc1"]
    saved = tmp_path / "pypi.json"
    saved.write_text(json.dumps(_pypi({"1.0": "2000-01-01T00:00:00Z"})))
    run = subprocess.run([sys.executable, str(ROOT / ".github" / "drift" / "cooldown.py"), "demo", "2",
                          "--json", str(saved)], capture_output=True, text=True, check=True)
    assert run.stdout.strip() == "", "nothing to exclude: the selection stays as written"


def test_a_changed_cell_a_new_release_and_a_gone_rule_are_reported_and_nothing_else():
    before = [{"rule": "a", "target": "t==1", "status": "ok"},
              {"rule": "b", "target": "t==1", "status": "ok"},
              {"rule": "a", "target": "t==0", "status": "ok"}]
    after = [{"rule": "a", "target": "t==1", "status": "missing"},
             {"rule": "a", "target": "t==2rc1", "status": "ok"}]
    assert changed.changes(before, after) == [
        "a on t==1: ok → missing",
        "a on t==2rc1: ok (a release not looked at before)",
        "b on t==1: ok → absent",
    ], "a release no longer sampled (t==0) is no change"
    assert changed.changes(after, after) == []
