"""The editor set-ups as printed: the Helix `languages.toml` and the Neovim Lua are parsed (by
a TOML parser and a Lua parser) and are the documentation's text; the Neovim Lua makes the API
calls of each release (0.7 to 0.12) under a mock `vim`, and a real Neovim (Debian 12's 0.7.2,
which tests/run.sh installs) started with it as its only configuration starts a fake `regraft lsp`
and the real one for a `.graft` and a YAML rule file; the VS Code extension is a valid manifest
whose script node accepts, and `vsce package` builds it (when tests/run.sh has installed its node
modules)."""

import json
import os
import pathlib
import shutil
import subprocess
import sys
from urllib.parse import unquote, urlparse

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
EDITORS = ROOT / "editors"
NEOVIM_LUA = EDITORS / "neovim" / "regraft.lua"

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib


def documented(text):
    """Whether the README, or a page under docs/, prints `text` as it is."""
    pages = [ROOT / "README.md"]
    if (ROOT / "docs").is_dir():
        pages += sorted((ROOT / "docs").rglob("*.md"))
    return any(text in page.read_text(encoding="utf-8") for page in pages)


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
    assert documented(text), "the README (or a page under docs/) prints the file as it is"


def test_the_neovim_lua_parses_and_starts_the_server():
    luaparser = pytest.importorskip("luaparser.ast", reason="tests/run.sh installs luaparser")
    text = NEOVIM_LUA.read_text()
    tree = luaparser.parse(text)
    calls = [luaparser.to_lua_source(node.func) for node in luaparser.walk(tree)
             if type(node).__name__ in ("Call", "Invoke")]
    assert {"vim.lsp.config", "vim.lsp.enable", "vim.filetype.add", "vim.api.nvim_create_autocmd",
            "vim.lsp.start", "vim.lsp.start_client", "vim.lsp.buf_attach_client"} <= set(calls), calls
    assert "cmd = { 'regraft', 'lsp' }" in text
    assert documented(text), "the README (or a page under docs/) prints the file as it is"
    with pytest.raises(Exception):
        luaparser.parse("vim.lsp.config('regraft', {")  # the parser does refuse broken Lua


# --- The same file under a mock `vim` of each release: the version switch, every branch run. ---

# Loads regraft.lua with a `vim` of one release (MOCK_NVIM=0.7, ...), fires the FileType
# autocmd it creates for four buffers, and writes each API call it made as a JSON line to
# MOCK_OUT. An API of another release is nil, as in Neovim; a name of no release is an error,
# so a typo in any branch fails. Runs on Lua 5.1+, LuaJIT, or Neovim's own LuaJIT.
MOCK_HARNESS = r"""
local version = assert(os.getenv('MOCK_NVIM'))
local major, minor = version:match('^(%d+)%.(%d+)$')
major, minor = tonumber(major), tonumber(minor)
local out = assert(io.open(assert(os.getenv('MOCK_OUT')), 'w'))

local function json(v)
  if type(v) == 'table' then
    local parts = {}
    if #v > 0 then
      for _, x in ipairs(v) do parts[#parts + 1] = json(x) end
      return '[' .. table.concat(parts, ',') .. ']'
    end
    for k, x in pairs(v) do parts[#parts + 1] = json(tostring(k)) .. ':' .. json(x) end
    return '{' .. table.concat(parts, ',') .. '}'
  elseif type(v) == 'string' then
    return '"' .. (v:gsub('[%c"\\]', function(c) return string.format('\\u%04x', c:byte()) end)) .. '"'
  elseif type(v) == 'function' then
    return '"<function>"'
  elseif v == nil then
    return 'null'
  end
  return tostring(v)
end
local function record(call, ...)
  local args = {}
  for i = 1, select('#', ...) do args[i] = json((select(i, ...))) end
  out:write('{"call":', json(call), ',"args":[', table.concat(args, ','), ']}\n')
end

-- What some release has: absent from this one, it reads as nil.
local known = { ['lsp.start'] = true, ['lsp.config'] = true, ['lsp.enable'] = true,
  ['lsp.get_clients'] = true, ['fs'] = true, ['uv'] = true }
local function strict(prefix, t)
  return setmetatable(t, { __index = function(_, k)
    if known[prefix .. k] then return nil end
    error('vim.' .. prefix .. k .. ' is no Neovim API (mock of ' .. version .. ')', 2)
  end })
end

local names = { '/home/u/project/rules/deep/a.graft', '/home/u/project/rules/b.yaml',
  '/elsewhere/c.yaml', '' }
local filetype = { 'graft', 'yaml', 'yaml', 'yaml' }
local buftype = { '', '', '', 'help' }
local exists = { ['/home/u/project/regraft.toml'] = true, ['/home/u/.git'] = true }
local autocmds, clients = {}, {}

local lsp = {
  get_client_by_id = function(id) return clients[id] end,
  start_client = function(config)
    record('vim.lsp.start_client', config)
    clients[#clients + 1] = { is_stopped = function() return false end }
    return #clients
  end,
  buf_attach_client = function(buf, id) record('vim.lsp.buf_attach_client', buf, id) return true end,
}
if major > 0 or minor >= 8 then
  lsp.start = function(config, opts) record('vim.lsp.start', config, opts) return 1 end
end
if major > 0 or minor >= 11 then
  lsp.config = function(name, config) record('vim.lsp.config', name, config) end
  lsp.enable = function(name) record('vim.lsp.enable', name) end
end
local bo = {}
for buf = 1, #names do bo[buf] = strict('bo.', { buftype = buftype[buf] }) end

local vim = strict('', {
  fn = strict('fn.', {
    has = function(feature)
      local a, b = feature:match('^nvim%-(%d+)%.(%d+)$')
      assert(a, 'has(' .. feature .. ')')
      a, b = tonumber(a), tonumber(b)
      return (major > a or (major == a and minor >= b)) and 1 or 0
    end,
    fnamemodify = function(path, mods)
      assert(mods == ':h' or mods == ':p:h', mods)
      if path == '' then return '/cwd' end
      return path:match('^(.+)/[^/]*$') or '/'
    end,
  }),
  api = strict('api.', {
    nvim_create_autocmd = function(event, opts)
      record('vim.api.nvim_create_autocmd', event, opts)
      autocmds[#autocmds + 1] = { event = event, opts = opts }
      return #autocmds
    end,
    nvim_buf_get_name = function(buf) return assert(names[buf]) end,
  }),
  bo = bo,
  filetype = strict('filetype.', { add = function(spec) record('vim.filetype.add', spec) end }),
  loop = strict('loop.', { fs_stat = function(path) return exists[path] and { type = 'file' } or nil end }),
  lsp = strict('lsp.', lsp),
})

local ok, err = pcall(function()
  local path = assert(os.getenv('MOCK_LUA'))
  local env = setmetatable({ vim = vim }, { __index = _G })
  local chunk = setfenv and setfenv(assert(loadfile(path)), env) or assert(loadfile(path, 't', env))
  chunk()
  for buf = 1, #names do -- what Neovim does on opening each buffer
    for _, autocmd in ipairs(autocmds) do
      local patterns = autocmd.opts.pattern
      patterns = type(patterns) == 'table' and patterns or { patterns }
      for _, pattern in ipairs(patterns) do
        if autocmd.event == 'FileType' and pattern == filetype[buf] then
          autocmd.opts.callback({ buf = buf, match = filetype[buf] })
        end
      end
    end
  end
end)
out:write(json({ done = ok, error = not ok and tostring(err) or nil }), '\n')
out:close()
"""


def isolated_env(tmp_path, **extra):
    """The environment, with a HOME and XDG folders in tmp_path: Neovim reads nothing of the
    user's and writes nothing (its log, state) outside tmp_path."""
    home = tmp_path / "home"
    return dict(os.environ, HOME=str(home), XDG_CONFIG_HOME=str(home / "config"),
                XDG_DATA_HOME=str(home / "data"), XDG_STATE_HOME=str(home / "state"),
                XDG_CACHE_HOME=str(home / "cache"), **extra)


def lua_interpreter():
    """A command running a Lua file: a stand-alone Lua, else Neovim's own LuaJIT."""
    for name in ("luajit", "lua5.1", "lua"):
        if shutil.which(name):
            return [name]
    if shutil.which("nvim"):
        return ["nvim", "--headless", "--clean", "-u", "NONE", "-i", "NONE", "-c", "luafile %s", "-c", "qa!"]
    pytest.skip("no Lua interpreter and no nvim (tests/run.sh installs Debian's neovim)")


GRAFT_FILETYPE_BY_AUTOCMD = {"call": "vim.api.nvim_create_autocmd", "args": [
    ["BufRead", "BufNewFile"], {"pattern": "*.graft", "command": "setfiletype graft"}]}
GRAFT_FILETYPE_ADDED = {"call": "vim.filetype.add", "args": [{"extension": {"graft": "graft"}}]}
FILETYPE_AUTOCMD = {"call": "vim.api.nvim_create_autocmd",
                    "args": ["FileType", {"pattern": ["yaml", "graft"], "callback": "<function>"}]}
PROJECT = {"name": "regraft", "cmd": ["regraft", "lsp"], "root_dir": "/home/u/project"}
ELSEWHERE = dict(PROJECT, root_dir="/elsewhere")  # no marker above: the file's own folder
OLD_RELEASE = [GRAFT_FILETYPE_ADDED, FILETYPE_AUTOCMD] + [
    {"call": "vim.lsp.start", "args": [config, {"bufnr": buf}]}
    for buf, config in ((1, PROJECT), (2, PROJECT), (3, ELSEWHERE))]  # not the help buffer (4)
# Declared once, Neovim starts it itself (no autocmd, so no buffer starts anything).
NEW_RELEASE = [GRAFT_FILETYPE_ADDED,
               {"call": "vim.lsp.config", "args": ["regraft", {
                   "cmd": ["regraft", "lsp"], "filetypes": ["yaml", "graft"],
                   "root_markers": ["regraft.toml", "pyproject.toml", ".git"]}]},
               {"call": "vim.lsp.enable", "args": ["regraft"]}]


@pytest.mark.parametrize("version, expected", [
    # 0.7 (Debian 12): no vim.lsp.start; one client per root, attached to each of its buffers.
    ("0.7", [GRAFT_FILETYPE_BY_AUTOCMD, FILETYPE_AUTOCMD,
             {"call": "vim.lsp.start_client", "args": [PROJECT]},
             {"call": "vim.lsp.buf_attach_client", "args": [1, 1]},
             {"call": "vim.lsp.buf_attach_client", "args": [2, 1]},
             {"call": "vim.lsp.start_client", "args": [ELSEWHERE]},
             {"call": "vim.lsp.buf_attach_client", "args": [3, 2]}]),
    ("0.8", OLD_RELEASE),
    ("0.9", OLD_RELEASE),  # Ubuntu 24.04
    ("0.10", OLD_RELEASE),
    ("0.11", NEW_RELEASE),
    ("0.12", NEW_RELEASE),
])
def test_the_neovim_lua_calls_the_api_of_each_release(tmp_path, version, expected):
    harness = tmp_path / "harness.lua"
    harness.write_text(MOCK_HARNESS)
    out = tmp_path / "calls.jsonl"
    command = [part.replace("%s", str(harness)) for part in lua_interpreter()]
    if command[0] != "nvim":
        command.append(str(harness))
    run = subprocess.run(command, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL,
                         env=isolated_env(tmp_path, MOCK_NVIM=version, MOCK_OUT=str(out),
                                          MOCK_LUA=str(NEOVIM_LUA)))
    assert out.exists(), run.stdout + run.stderr
    *calls, end = [json.loads(line) for line in out.read_text().splitlines()]
    assert end == {"done": True}, (end, calls)
    assert calls == expected


# --- A real Neovim (Debian 12's 0.7.2 under tests/run.sh) with the file as its only config. ---

FAKE_SERVER = """#!{python}
# A stand-in `regraft`: just enough LSP over stdio, and a JSON line per event into $FAKE_REGRAFT_LOG.
import json, os, sys
log = open(os.environ["FAKE_REGRAFT_LOG"], "a")
def record(**entry):
    log.write(json.dumps(dict(entry, pid=os.getpid())) + "\\n")
    log.flush()
record(event="start", argv=sys.argv[1:])
stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
while True:
    headers = {{}}
    for line in iter(stdin.readline, b""):
        if not line.strip():
            break
        name, _, value = line.decode().partition(":")
        headers[name.strip().lower()] = value.strip()
    if not headers:
        sys.exit(0)  # end of input
    message = json.loads(stdin.read(int(headers["content-length"])))
    method, params = message.get("method"), message.get("params") or {{}}
    record(event=method, rootUri=params.get("rootUri"), uri=params.get("textDocument", {{}}).get("uri"))
    if "id" in message and method:
        result = {{"capabilities": {{"textDocumentSync": 1}}}} if method == "initialize" else None
        body = json.dumps({{"jsonrpc": "2.0", "id": message["id"], "result": result}}).encode()
        stdout.write(b"Content-Length: %d\\r\\n\\r\\n%s" % (len(body), body))
        stdout.flush()
    if method == "exit":
        sys.exit(0)
"""

# Opens FILES one by one, waits (up to 10 s) until each has a `regraft` client attached and
# initialized and READY() holds, then writes what it saw to REPORT and quits.
NVIM_DRIVER = r"""
local get_clients = vim.lsp.get_clients or vim.lsp.get_active_clients
local report = { version = tostring(vim.version().major) .. '.' .. tostring(vim.version().minor), buffers = {} }
local function attached(buf)
  local names = {}
  for _, client in ipairs(get_clients()) do
    if vim.lsp.buf_is_attached(buf, client.id) and client.initialized then names[#names + 1] = client.name end
  end
  return names
end
for _, path in ipairs(FILES) do
  vim.cmd('edit ' .. vim.fn.fnameescape(path))
  local buf = vim.api.nvim_get_current_buf()
  vim.wait(10000, function() return #attached(buf) > 0 end, 20)
end
vim.wait(10000, READY, 20)
for _, buf in ipairs(vim.api.nvim_list_bufs()) do
  local codes = {}
  for _, d in ipairs(vim.diagnostic.get(buf)) do codes[#codes + 1] = d.code or d.user_data.lsp.code end
  report.buffers[#report.buffers + 1] = { name = vim.api.nvim_buf_get_name(buf), filetype = vim.bo[buf].filetype,
    clients = attached(buf), diagnostics = codes }
end
report.errmsg = vim.v.errmsg
report.messages = vim.fn.execute('messages')
local file = assert(io.open(REPORT, 'w'))
file:write(vim.fn.json_encode(report))
file:close()
vim.cmd('qa!')
"""


def run_neovim(tmp_path, server, files, ready="function() return true end"):
    """`nvim --headless --clean -u regraft.lua` with `server` as the `regraft` first on PATH, driven
    through `files`: what it reported, and its stderr."""
    nvim = shutil.which("nvim")
    if nvim is None:
        pytest.skip("nvim is not installed (tests/run.sh installs Debian's neovim, as root with apt-get)")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "regraft").symlink_to(server)
    report = tmp_path / "report.json"
    driver = tmp_path / "driver.lua"
    driver.write_text(f"local FILES = {{ {', '.join(json.dumps(str(f)) for f in files)} }}\n"
                      f"local REPORT = {json.dumps(str(report))}\nlocal READY = {ready}\n" + NVIM_DRIVER)
    env = isolated_env(tmp_path, PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
                       FAKE_REGRAFT_LOG=str(tmp_path / "server.jsonl"))
    run = subprocess.run([nvim, "--headless", "--clean", "-u", str(NEOVIM_LUA), "-i", "NONE",
                          "-c", f"luafile {driver}"], cwd=tmp_path, env=env, capture_output=True,
                         text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert report.exists(), f"nvim exited {run.returncode} without a report: {run.stdout}{run.stderr}"
    return json.loads(report.read_text()), run.stderr


def rule_project(tmp_path):
    """A project (regraft.toml) inside a git checkout: rules/deep/a.graft and rules/b.yaml, each
    a rule with a typo (`mach`)."""
    (tmp_path / "checkout" / ".git").mkdir(parents=True)
    project = tmp_path / "checkout" / "project"
    (project / "rules" / "deep").mkdir(parents=True)
    (project / "regraft.toml").write_text('targets = ["model.py"]\n')
    (project / "model.py").write_text("y = f(1)\n")
    graft = project / "rules" / "deep" / "a.graft"
    graft.write_text('rule r\n  mach `f($X)`\n  replace `g($X)`\n  expect 1\n')
    yaml = project / "rules" / "b.yaml"
    yaml.write_text('id: r\nmach: "f($X)"\naction: {replace: "g($X)"}\nexpect: 1\n')
    return project, graft, yaml


def test_neovim_starts_the_server_for_graft_and_yaml_files(tmp_path):
    project, graft, yaml = rule_project(tmp_path)
    log = tmp_path / "server.jsonl"
    server = tmp_path / "fake-regraft"
    server.write_text(FAKE_SERVER.format(python=sys.executable))
    server.chmod(0o755)
    both_opened = ("function() local f = io.open(%s) local t = f and f:read('*a') or '' "
                   "if f then f:close() end local _, n = t:gsub('didOpen', '') return n >= 2 end"
                   % json.dumps(str(log)))
    report, stderr = run_neovim(tmp_path, server, [graft, yaml], ready=both_opened)
    assert stderr == "" and report["errmsg"] == "", (stderr, report)
    assert "rror" not in report["messages"], report["messages"]
    buffers = {pathlib.Path(b["name"]).name: b for b in report["buffers"]}
    assert buffers["a.graft"]["filetype"] == "graft" and buffers["b.yaml"]["filetype"] == "yaml"
    assert buffers["a.graft"]["clients"] == ["regraft"] == buffers["b.yaml"]["clients"], report
    events = [json.loads(line) for line in log.read_text().splitlines()]
    # One server for the project, started as `regraft lsp`, rooted at the folder of regraft.toml
    # (not the git checkout above it), that both files were opened in, and told to exit.
    assert [e["argv"] for e in events if e["event"] == "start"] == [["lsp"]], events
    assert len({e["pid"] for e in events}) == 1, events
    [init] = [e for e in events if e["event"] == "initialize"]
    assert pathlib.Path(unquote(urlparse(init["rootUri"]).path)) == project, init
    assert [e["uri"] for e in events if e["event"] == "textDocument/didOpen"] == [
        graft.as_uri(), yaml.as_uri()], events
    assert [e["event"] for e in events][-2:] == ["shutdown", "exit"], events


def test_neovim_attaches_the_real_server_and_shows_its_diagnostics(tmp_path, cli):
    project, graft, yaml = rule_project(tmp_path)
    both_linted = ("function() return #vim.diagnostic.get(vim.fn.bufnr(%s)) > 0 and "
                   "#vim.diagnostic.get(vim.fn.bufnr(%s)) > 0 end" % (json.dumps(str(graft)), json.dumps(str(yaml))))
    report, stderr = run_neovim(tmp_path, cli, [graft, yaml], ready=both_linted)
    assert stderr == "" and report["errmsg"] == "", (stderr, report)
    buffers = {pathlib.Path(b["name"]).name: b for b in report["buffers"]}
    assert buffers["a.graft"]["clients"] == ["regraft"] == buffers["b.yaml"]["clients"], report
    for name in ("a.graft", "b.yaml"):  # the server's own diagnostics of the `mach` typo, shown
        assert "regraft::rule::unknown_key" in buffers[name]["diagnostics"], report


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
