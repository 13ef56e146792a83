"""Machine-readable formats: every command's SARIF log validates against the SARIF 2.1.0
schema (tests/fixtures/sarif-schema-2.1.0.json, the OASIS schema), and its GitHub workflow
commands and JSON say what it found."""

import json
import pathlib
import subprocess

import jsonschema
import pytest

SCHEMA = json.loads(
    (pathlib.Path(__file__).resolve().parents[1] / "fixtures" / "sarif-schema-2.1.0.json").read_text()
)

RULES = """\
- id: use-g
  match: "f($X)"
  action: {replace: "g($X)"}
  expect: 1
  tests:
    - name: wrongly-unchanged
      before: "f(1)\\n"
      unchanged: true
- id: no-expect
  match: "h($X)"
  action: {replace: "k($X)"}
"""


@pytest.fixture()
def work(tmp_path: pathlib.Path) -> pathlib.Path:
    (tmp_path / "rules").mkdir()
    (tmp_path / "rules" / "r.yaml").write_text(RULES)
    (tmp_path / "m.py").write_text("x = 1\nf(2)\n")
    (tmp_path / "tree").mkdir()
    (tmp_path / "tree" / "a.py").write_text("x = 1\n")
    return tmp_path


COMMANDS = {
    "lint": ["lint"],
    "apply": ["apply", "--check", "m.py"],
    "matrix": ["matrix", "--target", "transformers=4.57.6:tree"],
    "test": ["test"],
}


def run(cli, work, args):
    return subprocess.run([str(cli), *args], cwd=work, capture_output=True, text=True)


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_sarif_of_every_command_validates_against_the_schema(cli, work, command):
    out = run(cli, work, [*COMMANDS[command], "--format", "sarif"])
    assert out.returncode in (0, 1, 2, 3), out.stderr
    log = json.loads(out.stdout)
    jsonschema.Draft7Validator(SCHEMA).validate(log)
    results = log["runs"][0]["results"]
    assert results, f"{command} found nothing: {out.stdout}"
    for result in results:
        region = result["locations"][0]["physicalLocation"]["region"]
        assert region["startLine"] >= 1 and region["startColumn"] >= 1


def test_sarif_schema_check_can_fail(cli, work):
    # The check is real: a log with a bad level is rejected.
    log = json.loads(run(cli, work, ["lint", "--format", "sarif"]).stdout)
    log["runs"][0]["results"][0]["level"] = "fatal"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft7Validator(SCHEMA).validate(log)


def test_github_annotations_of_apply_matrix_and_test(cli, work):
    apply = run(cli, work, ["apply", "--check", "--format", "github", "m.py"])
    assert apply.returncode == 1
    assert apply.stdout.startswith("::error file=m.py,line=2,col=1,endLine=2,endColumn=5,title=use-g::")
    matrix = run(cli, work, [*COMMANDS["matrix"], "--format", "github"])
    assert matrix.returncode == 3
    assert "title=regraft%3A%3Amatrix%3A%3Amissing::missing on transformers==4.57.6" in matrix.stdout
    assert "file=rules/r.yaml,line=1," in matrix.stdout
    test = run(cli, work, ["test", "--format", "github"])
    assert test.returncode == 1
    assert "::error file=rules/r.yaml,line=1,col=7" in test.stdout
    assert "case `wrongly-unchanged` fails" in test.stdout


def test_test_reports_every_case_as_json(cli, work):
    out = run(cli, work, ["test", "--format", "json"])
    assert out.returncode == 1
    cases = json.loads(out.stdout)
    assert [(c["rule"], c["case"], c["passed"]) for c in cases] == [
        ("use-g", "wrongly-unchanged", False)
    ]
