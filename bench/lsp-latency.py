"""Keystroke-to-completion latency of `regraft lsp` while typing (not in CI): a rule file of N
rules is opened, then a key is typed every 30 ms (a `didChange` with the whole text, as
clients with full sync send) and after each key a completion is asked at the cursor. Prints the
completion latency (p50, p95, max) and how many lints were published, per file size; the
target is p95 <= 50 ms.

    python bench/lsp-latency.py [--regraft target/release/regraft] [--keys 60] [N ...]
"""

import argparse
import json
import os
import select
import statistics
import subprocess
import tempfile
import time

RULE = """- id: rule-{i}
  description: Rule {i} of a large pack.
  files: ['**/models/m{i}/modeling_m{i}.py']
  inside: {{class: Model{i}Layer}}
  match: "$OUT = self.attn_{i}($H, $$$ARGS)"
  action:
    replace: "$OUT = self.fused_attn_{i}($H, $$$ARGS)"
  expect: 1
"""


class Client:
    """A JSON-RPC client over the server's stdio, reading without blocking the clock."""

    def __init__(self, binary):
        self.proc = subprocess.Popen([binary, "lsp"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.buffer = b""
        self.next_id = 1

    def send(self, message):
        body = json.dumps(message).encode()
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
        self.proc.stdin.flush()

    def request(self, method, params):
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        return self.next_id

    def notify(self, method, params):
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def messages(self, timeout):
        """Every message that arrives within `timeout` seconds (at least those already read)."""
        end = time.perf_counter() + timeout
        out = []
        while True:
            while b"\r\n\r\n" in self.buffer:
                head, rest = self.buffer.split(b"\r\n\r\n", 1)
                length = int(head.split(b"Content-Length: ")[1].split(b"\r\n")[0])
                if len(rest) < length:
                    break
                out.append((time.perf_counter(), json.loads(rest[:length])))
                self.buffer = rest[length:]
            left = end - time.perf_counter()
            if left <= 0:
                return out
            ready, _, _ = select.select([self.proc.stdout], [], [], left)
            if ready:
                self.buffer += os.read(self.proc.stdout.fileno(), 1 << 20)


def run(binary, rules, keys):
    text = "".join(RULE.format(i=i) for i in range(rules))
    folder = tempfile.mkdtemp(prefix="regraft-lsp-")
    uri = f"file://{folder}/rules.yaml"
    client = Client(binary)
    client.request("initialize", {"capabilities": {}})
    client.messages(1.0)
    client.notify("initialized", {})
    client.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "yaml",
                                                            "version": 1, "text": text}})
    client.messages(3.0)
    asked = {}
    latencies = []
    lints = 0
    line = text.count("\n")
    for k in range(keys):
        text += "x" if k % 8 else "\n  description: typed "
        column = len(text) - text.rfind("\n") - 1
        line = text.count("\n")
        client.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": k + 2},
                                                 "contentChanges": [{"text": text}]})
        sent = time.perf_counter()
        asked[client.request("textDocument/completion", {
            "textDocument": {"uri": uri}, "position": {"line": line, "character": column}})] = sent
        for at, message in client.messages(0.03):
            if message.get("id") in asked:
                latencies.append(at - asked.pop(message["id"]))
            elif message.get("method") == "textDocument/publishDiagnostics":
                lints += 1
    for at, message in client.messages(5.0):
        if message.get("id") in asked:
            latencies.append(at - asked.pop(message["id"]))
        elif message.get("method") == "textDocument/publishDiagnostics":
            lints += 1
    client.request("shutdown", None)
    client.notify("exit", None)
    client.proc.wait(timeout=10)
    latencies.sort()
    p95 = latencies[int(0.95 * (len(latencies) - 1))] * 1000
    print(f"{rules:5} rules, {keys} keys: completion p50 {statistics.median(latencies) * 1000:6.1f} ms, "
          f"p95 {p95:6.1f} ms, max {latencies[-1] * 1000:6.1f} ms; {lints} lint(s) published "
          f"({'within' if p95 <= 50 else 'OVER'} the 50 ms target)")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--regraft", default="target/release/regraft")
    parser.add_argument("--keys", type=int, default=60)
    parser.add_argument("sizes", nargs="*", type=int, default=[300, 3000])
    options = parser.parse_args()
    for rules in options.sizes:
        run(options.regraft, rules, options.keys)


if __name__ == "__main__":
    main()
