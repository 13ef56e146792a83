"""The editor set-ups as printed: the Helix `languages.toml` and the Neovim Lua are parsed (by
a TOML parser and a Lua parser) and are the README's text; the VS Code extension is a valid
manifest whose script node accepts, and `vsce package` builds it (when tests/run.sh has
installed its node modules)."""

import json
import pathlib
import shutil
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
EDITORS = ROOT / "editors"
README = (ROOT / "README.md").read_text(encoding="utf-8")

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib


def test_the_helix_languages_toml_is_valid_and_complete():
    text = (EDITORS / "helix" / "languages.toml").read_text()
    config = tomllib.loads(text)
    assert config["language-server"]["regraft"] == {"command": "regraft", "args": ["lsp"]}
    languages = {lang["name"]: lang for lang in config["language"]}
    assert "regraft" in languages["yaml"]["language-servers"]
    graft = languages["graft"]
    # Helix refuses a language without these.
    assert graft["scope"] and graft["file-types"] == ["graft"] and graft["roots"]
    assert graft["language-servers"] == ["regraft"]
    assert text in README, "the README prints the file as it is"


def test_the_neovim_lua_parses_and_starts_the_server():
    luaparser = pytest.importorskip("luaparser.ast", reason="tests/run.sh installs luaparser")
    text = (EDITORS / "neovim" / "regraft.lua").read_text()
    tree = luaparser.parse(text)
    calls = [luaparser.to_lua_source(node.func) for node in luaparser.walk(tree)
             if type(node).__name__ in ("Call", "Invoke")]
    assert {"vim.lsp.config", "vim.lsp.enable", "vim.filetype.add"} <= set(calls), calls
    assert "cmd = { 'regraft', 'lsp' }" in text
    assert text in README, "the README prints the file as it is"
    with pytest.raises(Exception):
        luaparser.parse("vim.lsp.config('regraft', {")  # the parser does refuse broken Lua


def test_the_vscode_extension_is_a_client_of_regraft_lsp(tmp_path):
    folder = EDITORS / "vscode"
    manifest = json.loads((folder / "package.json").read_text())
    assert (folder / manifest["main"]).is_file()
    assert "vscode-languageclient" in manifest["dependencies"]
    assert [lang["extensions"] for lang in manifest["contributes"]["languages"]] == [[".graft"]]
    script = (folder / "extension.js").read_text()
    assert 'args: ["lsp"]' in script and 'language: "graft"' in script and 'language: "yaml"' in script
    for command in manifest["contributes"]["commands"]:
        assert command["command"] in script
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed")
    check = subprocess.run([node, "--check", str(folder / "extension.js")], capture_output=True, text=True)
    assert check.returncode == 0, check.stderr
    vsce = folder / "node_modules" / "@vscode" / "vsce" / "vsce"
    if not vsce.exists():
        pytest.skip("tests/run.sh installs the extension's node modules")
    out = tmp_path / "regraft.vsix"
    built = subprocess.run([node, str(vsce), "package", "--out", str(out)], cwd=folder,
                           capture_output=True, text=True)
    assert built.returncode == 0, built.stdout + built.stderr
    assert out.stat().st_size > 10_000
