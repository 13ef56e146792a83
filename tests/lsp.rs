//! `regraft lsp` driven over stdio by a scripted JSON-RPC client: initialize, open a broken
//! rule, diagnostics at the right range, edit it valid, diagnostics cleared, hover,
//! completion and go to definition answer, shutdown and exit.

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use serde_json::{Value, json};

struct Client {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    next_id: i64,
}

impl Client {
    fn start() -> Client {
        let mut child = Command::new(crate::util::regraft_bin())
            .arg("lsp")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        Client {
            child,
            stdin,
            stdout,
            next_id: 1,
        }
    }

    fn send(&mut self, message: Value) {
        let body = message.to_string();
        write!(self.stdin, "Content-Length: {}\r\n\r\n{body}", body.len()).unwrap();
        self.stdin.flush().unwrap();
    }

    fn receive(&mut self) -> Value {
        let mut length = 0;
        loop {
            let mut line = String::new();
            self.stdout.read_line(&mut line).unwrap();
            let line = line.trim_end();
            if line.is_empty() {
                break;
            }
            if let Some(n) = line.strip_prefix("Content-Length: ") {
                length = n.parse().unwrap();
            }
        }
        let mut body = vec![0; length];
        self.stdout.read_exact(&mut body).unwrap();
        serde_json::from_slice(&body).unwrap()
    }

    fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let message = self.receive();
            if message["id"] == id {
                return message["result"].clone();
            }
        }
    }

    fn notify(&mut self, method: &str, params: Value) {
        self.send(json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    /// Opens `uri` holding `text` (as YAML).
    fn open(&mut self, uri: &str, text: &str) {
        self.notify(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": uri, "languageId": "yaml", "version": 1, "text": text}}),
        );
    }

    /// Shuts the server down as a client does, and checks it exited cleanly.
    fn end(mut self) {
        assert_eq!(self.request("shutdown", Value::Null), Value::Null);
        self.notify("exit", Value::Null);
        assert!(self.child.wait().unwrap().success());
    }

    /// The next `publishDiagnostics` for any document.
    fn diagnostics(&mut self) -> Vec<Value> {
        loop {
            let message = self.receive();
            if message["method"] == "textDocument/publishDiagnostics" {
                return message["params"]["diagnostics"].as_array().unwrap().clone();
            }
        }
    }
}

const BROKEN: &str = "id: r\nmach: \"f($X)\"\naction: {replace: \"g($X)\"}\nexpect: 1\n";
const FIXED: &str = "id: r\nmatch: \"f($X)\"\naction:\n  replace: \"g($X)\"\nexpect: 1\n";

#[test]
fn an_editor_session_over_stdio() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("regraft.toml"),
        "targets = [\"model.py\"]\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("model.py"), "y = f(1)\nz = h(2)\n").unwrap();
    std::fs::write(
        dir.path().join("layers.py"),
        "class Layer:\n    def forward(self, x, mask=None):\n        return x\n",
    )
    .unwrap();
    let rule_path = dir.path().join("rules").join("r.yaml");
    let uri = format!("file://{}", rule_path.display());
    let mut client = Client::start();
    let init = client.request("initialize", json!({"capabilities": {}}));
    assert_eq!(init["capabilities"]["hoverProvider"], true);
    client.notify("initialized", json!({}));

    client.open(&uri, BROKEN);
    let found = client.diagnostics();
    let unknown = found
        .iter()
        .find(|d| d["code"] == "regraft::rule::unknown_key")
        .unwrap_or_else(|| panic!("{found:?}"));
    assert_eq!(
        unknown["range"],
        json!({"start": {"line": 1, "character": 0}, "end": {"line": 1, "character": 4}})
    );
    assert_eq!(unknown["severity"], 1);
    assert!(
        unknown["message"]
            .as_str()
            .unwrap()
            .contains("did you mean `match`?")
    );

    client.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri, "version": 2}, "contentChanges": [{"text": FIXED}]}),
    );
    assert_eq!(
        client.diagnostics(),
        Vec::<Value>::new(),
        "cleared when fixed"
    );

    let hover = client.request(
        "textDocument/hover",
        json!({"textDocument": {"uri": uri}, "position": {"line": 1, "character": 2}}),
    );
    let text = hover["contents"]["value"].as_str().unwrap();
    assert!(text.starts_with("`match`"), "{text}");
    // The short paragraph and its example, not the whole reference entry.
    assert!(
        text.contains("The code to find") && text.contains("```yaml"),
        "{text}"
    );
    assert!(text.len() < 600, "{} characters: {text}", text.len());
    let hover = client.request(
        "textDocument/hover",
        json!({"textDocument": {"uri": uri}, "position": {"line": 3, "character": 15}}),
    );
    let text = hover["contents"]["value"].as_str().unwrap();
    assert!(text.contains("`$X`: one node, bound on line 2"), "{text}");
    assert!(
        text.contains("In the configured targets it binds `1` (1 site(s))"),
        "{text}"
    );

    let completion = client.request(
        "textDocument/completion",
        json!({"textDocument": {"uri": uri}, "position": {"line": 3, "character": 2}}),
    );
    let labels: Vec<&str> = completion
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["label"].as_str().unwrap())
        .collect();
    assert!(
        labels.contains(&"outline") && labels.contains(&"kwargs_to_positional"),
        "{labels:?}"
    );
    assert!(
        !labels.contains(&"expect"),
        "under `action` only actions: {labels:?}"
    );

    let signature = "id: s\nmatch: \"$O = layer($$$A)\"\naction: {kwargs_to_positional: {signature: Layer.forward}}\n";
    client.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri, "version": 3}, "contentChanges": [{"text": signature}]}),
    );
    client.diagnostics();
    let at = signature.lines().nth(2).unwrap().find("forward").unwrap();
    let location = client.request(
        "textDocument/definition",
        json!({"textDocument": {"uri": uri}, "position": {"line": 2, "character": at}}),
    );
    assert!(
        location["uri"].as_str().unwrap().ends_with("/layers.py"),
        "{location}"
    );
    assert_eq!(
        location["range"]["start"],
        json!({"line": 1, "character": 8})
    );

    assert_eq!(client.request("shutdown", Value::Null), Value::Null);
    client.notify("exit", Value::Null);
    let status = client.child.wait().unwrap();
    assert!(status.success());
}

/// Malformed frames get a JSON-RPC parse error and the session goes on; an absurd
/// `Content-Length` is not allocated; `exit` without `shutdown` exits 1.
#[test]
fn malformed_frames_are_answered_and_the_session_goes_on() {
    let mut client = Client::start();
    client.request(
        "initialize",
        json!({"capabilities": {}, "rootUri": null, "processId": null}),
    );
    client.notify("initialized", json!({}));
    let frame = |body: &[u8]| {
        let mut out = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
        out.extend_from_slice(body);
        out
    };
    for bad in [
        frame(b"{this is not json"),
        frame(b"{\"jsonrpc\": \"2.0\", \"method\": \"\xff\xfe\"}"),
        b"Content-Length: 18446744073709551615\r\n\r\n".to_vec(),
    ] {
        client.stdin.write_all(&bad).unwrap();
        client.stdin.flush().unwrap();
        let answer = client.receive();
        assert_eq!(answer["error"]["code"], -32700, "{answer}");
        assert_eq!(answer["id"], Value::Null);
    }
    // Still serving: a request is answered.
    let hover = client.request(
        "textDocument/hover",
        json!({"textDocument": {"uri": "file:///nowhere/r.yaml"}, "position": {"line": 0, "character": 0}}),
    );
    assert!(hover.is_null() || hover.is_object(), "{hover}");
    client.notify("exit", Value::Null);
    let status = client.child.wait().unwrap();
    assert_eq!(status.code(), Some(1), "exit before shutdown");
}

/// The next message answering request `id`, and the ids of the answers that came before it.
fn answer(client: &mut Client, id: i64) -> (Value, Vec<Value>) {
    let mut before = Vec::new();
    loop {
        let message = client.receive();
        if message["id"] == id {
            return (message, before);
        }
        if !message["id"].is_null() {
            before.push(message["id"].clone());
        }
    }
}

/// Surveys of a huge configured tree run off the message loop: completion is answered while
/// a code lens surveys; `$/cancelRequest` and an edit stop a survey with the protocol's
/// codes; a metavariable's hover answers within its budget, saying how far it got.
#[test]
fn surveys_of_a_huge_tree_neither_block_the_loop_nor_run_on() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("regraft.toml"), "targets = [\"big\"]\n").unwrap();
    let big = dir.path().join("big");
    std::fs::create_dir(&big).unwrap();
    let body: String = (0..400).map(|i| format!("y{i} = f({i})\n")).collect();
    for i in 0..3_000 {
        std::fs::write(big.join(format!("m{i}.py")), &body).unwrap();
    }
    let uri = format!("file://{}", dir.path().join("r.yaml").display());
    let mut client = Client::start();
    client.request("initialize", json!({"capabilities": {}}));
    client.notify("initialized", json!({}));
    client.open(&uri, FIXED);
    client.diagnostics();
    let send = |client: &mut Client, id: i64, method: &str, params: Value| {
        client.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
    };

    send(
        &mut client,
        100,
        "textDocument/codeLens",
        json!({"textDocument": {"uri": uri}}),
    );
    send(
        &mut client,
        101,
        "textDocument/completion",
        json!({"textDocument": {"uri": uri}, "position": {"line": 3, "character": 2}}),
    );
    let (completion, before) = answer(&mut client, 101);
    assert!(completion["result"].is_array(), "{completion}");
    assert!(before.is_empty(), "the lens answered first: {before:?}");
    client.notify("$/cancelRequest", json!({"id": 100}));
    let (lens, _) = answer(&mut client, 100);
    assert_eq!(lens["error"]["code"], -32800, "{lens}");

    send(
        &mut client,
        102,
        "textDocument/codeLens",
        json!({"textDocument": {"uri": uri}}),
    );
    client.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri, "version": 2}, "contentChanges": [{"text": FIXED}]}),
    );
    let (lens, _) = answer(&mut client, 102);
    assert_eq!(lens["error"]["code"], -32801, "{lens}");

    send(
        &mut client,
        103,
        "textDocument/hover",
        json!({"textDocument": {"uri": uri}, "position": {"line": 3, "character": 15}}),
    );
    let (hover, _) = answer(&mut client, 103);
    let text = hover["result"]["contents"]["value"].as_str().unwrap();
    assert!(text.contains("`$X`: one node, bound on line 2"), "{text}");
    assert!(text.contains("target file(s) within 2 s"), "{text}");
    assert!(text.contains(" of 3000 "), "{text}");

    client.end();
}

/// Typing: a burst of changes is linted once, after the last, and a completion asked in the
/// middle of it is answered before any lint; `$` completion offers the names of the rule at the
/// cursor (no `$_`), hover names the place that binds a name first; the server names itself.
#[test]
fn typing_is_coalesced_and_completion_answers_meanwhile() {
    let dir = tempfile::tempdir().unwrap();
    let uri = format!("file://{}", dir.path().join("r.yaml").display());
    let mut client = Client::start();
    let init = client.request("initialize", json!({"capabilities": {}}));
    assert_eq!(init["serverInfo"]["name"], "regraft");
    client.notify("initialized", json!({}));
    let two = "id: a\nmatch: \"f($A, $_)\"\naction: {replace: \"g($A)\"}\nexpect: 1\n---\nid: b\ninside:\n  loop: \"for $L in self.$LIST\"\nmatch: \"$L($X, self.$LIST, $_)\"\naction: {replace: \"$L($X)\"}\nexpect: 1\n";
    client.open(&uri, two);
    assert_eq!(client.diagnostics(), Vec::<Value>::new());
    // Nine keystrokes, each text broken but the last, then a completion at once.
    let mut version = 1;
    for cut in (1..=9).rev() {
        version += 1;
        let text = &two[..two.len() - cut];
        client.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": uri, "version": version}, "contentChanges": [{"text": text}]}),
        );
    }
    version += 1;
    client.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri, "version": version}, "contentChanges": [{"text": two}]}),
    );
    let id = client.next_id;
    client.next_id += 1;
    let line = two.lines().nth(9).unwrap();
    let at = line.find("$X").unwrap() + 1;
    client.send(
        json!({"jsonrpc": "2.0", "id": id, "method": "textDocument/completion",
        "params": {"textDocument": {"uri": uri}, "position": {"line": 9, "character": at}}}),
    );
    let completion = loop {
        let message = client.receive();
        assert_ne!(
            message["method"], "textDocument/publishDiagnostics",
            "a lint came before the completion"
        );
        if message["id"] == id {
            break message["result"].clone();
        }
    };
    let labels: Vec<&str> = completion
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["label"].as_str().unwrap())
        .collect();
    assert_eq!(
        labels,
        ["L", "LIST", "X"],
        "rule b's names, no `_`, none of rule a's"
    );
    assert_eq!(
        client.diagnostics(),
        Vec::<Value>::new(),
        "one lint, of the last text"
    );
    let hover = client.request(
        "textDocument/hover",
        json!({"textDocument": {"uri": uri}, "position": {"line": 8, "character": 8}}),
    );
    let text = hover["contents"]["value"].as_str().unwrap();
    assert!(text.contains("bound on line 8: `loop:"), "{text}");
    client.end();
}

/// `regraft.showDiff` answers the diff and, to a client that can show documents, opens it:
/// stock clients show no command's result.
#[test]
fn show_diff_opens_the_diff_in_a_client_that_shows_documents() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("regraft.toml"),
        "targets = [\"model.py\"]\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("model.py"), "y = f(1)\n").unwrap();
    let uri = format!(
        "file://{}",
        dir.path().join("rules").join("r.yaml").display()
    );
    let mut client = Client::start();
    let caps = json!({"capabilities": {"window": {"showDocument": {"support": true}}}});
    client.request("initialize", caps);
    client.notify("initialized", json!({}));
    client.open(&uri, FIXED);
    let id = client.next_id;
    client.next_id += 1;
    client.send(
        json!({"jsonrpc": "2.0", "id": id, "method": "workspace/executeCommand",
        "params": {"command": "regraft.showDiff", "arguments": [uri, "r"]}}),
    );
    let (mut shown, mut result) = (None, None);
    while shown.is_none() || result.is_none() {
        let message = client.receive();
        if message["method"] == "window/showDocument" {
            shown = Some(message["params"]["uri"].as_str().unwrap().to_string());
        } else if message["id"] == id {
            result = Some(message["result"].as_str().unwrap().to_string());
        }
    }
    let (shown, result) = (shown.unwrap(), result.unwrap());
    assert!(
        result.contains("-y = f(1)") && result.contains("+y = g(1)"),
        "{result}"
    );
    let path = shown.strip_prefix("file://").unwrap();
    assert!(path.ends_with("/r.diff"), "{path}");
    assert_eq!(std::fs::read_to_string(path).unwrap(), result);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let folder = std::path::Path::new(path).parent().unwrap();
        assert_eq!(
            std::fs::metadata(folder).unwrap().permissions().mode() & 0o777,
            0o700
        );
    }
    client.end();
}
