#!/usr/bin/env python3
"""Per-release report of the generic layer-call rule, and proof that it changes no binding.

    bench/generic-report.py REGRAFT RULES_DIR VERSION:DIR...

For each release (DIR holds `transformers/`), copies `transformers/models` to a scratch folder,
runs the positional rules of RULES_DIR (those whose id says `positional`, alone, so every
call they convert stays where it was) with `REGRAFT apply --write --format json` there, and
prints: models selected, calls converted, refusals by reason. Then every converted call is checked independently of regraft:
the callee's `forward` is found with Python's own `ast` (through the module, its bases and its
`from ... import`s), and the call before and after must bind every parameter to the same
expression (`inspect.Signature.bind`, defaults applied, expressions compared by `ast.dump`).
A mis-bound call is reported and makes the exit status 1.
"""
import ast
import collections
import inspect
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

# The classes named rules convert against; generic rules bind `$CLS`.
NAMED = {"whisper-decoder-layer-positional": "WhisperDecoderLayer"}


def positional_rules(rules_dir, out):
    """Writes the positional rules of `rules_dir` (YAML documents) into the file `out`."""
    docs = []
    for name in sorted(os.listdir(rules_dir)):
        if name.endswith(".yaml"):
            with open(os.path.join(rules_dir, name), encoding="utf-8") as f:
                for doc in f.read().split("\n---\n"):
                    found = re.search(r"^id: (\S+)", doc, re.M)
                    if found and "positional" in found.group(1):
                        docs.append(doc.strip("-\n") + "\n")
    with open(out, "w", encoding="utf-8") as f:
        f.write("---\n".join(docs))


def ordered_calls(tree):
    """Every Call node in document order."""
    out = []

    def visit(node):
        if isinstance(node, ast.Call):
            out.append(node)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return out


class Resolver:
    """Finds `Class.forward` from a module file through bases and relative imports."""

    def __init__(self):
        self.trees = {}

    def tree(self, path):
        if path not in self.trees:
            with open(path, encoding="utf-8") as f:
                self.trees[path] = ast.parse(f.read())
        return self.trees[path]

    def find(self, path, cls, depth=0):
        if depth > 12 or not os.path.isfile(path):
            return None
        tree = self.tree(path)
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef) and node.name == cls:
                for item in node.body:
                    if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and item.name == "forward":
                        return item
                for base in node.bases:
                    if isinstance(base, ast.Name):
                        found = self.find(path, base.id, depth + 1)
                        if found:
                            return found
                return None
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.level > 0:
                for alias in node.names:
                    if (alias.asname or alias.name) == cls:
                        base = os.path.dirname(path)
                        for _ in range(node.level - 1):
                            base = os.path.dirname(base)
                        target = os.path.join(base, *(node.module or "").split(".")) + ".py"
                        return self.find(target, alias.name, depth + 1)
        return None


def signature_of(func):
    """An inspect.Signature of an ast FunctionDef (self dropped), defaults as ast dumps."""
    a = func.args
    params = []
    positional = a.posonlyargs + a.args
    defaults = [None] * (len(positional) - len(a.defaults)) + list(a.defaults)
    for i, (arg, default) in enumerate(zip(positional, defaults)):
        kind = inspect.Parameter.POSITIONAL_ONLY if i < len(a.posonlyargs) else inspect.Parameter.POSITIONAL_OR_KEYWORD
        value = inspect.Parameter.empty if default is None else ast.dump(default)
        params.append(inspect.Parameter(arg.arg, kind, default=value))
    if a.vararg:
        params.append(inspect.Parameter(a.vararg.arg, inspect.Parameter.VAR_POSITIONAL))
    for arg, default in zip(a.kwonlyargs, a.kw_defaults):
        value = inspect.Parameter.empty if default is None else ast.dump(default)
        params.append(inspect.Parameter(arg.arg, inspect.Parameter.KEYWORD_ONLY, default=value))
    if a.kwarg:
        params.append(inspect.Parameter(a.kwarg.arg, inspect.Parameter.VAR_KEYWORD))
    decorators = {ast.unparse(d) for d in func.decorator_list}
    if "staticmethod" not in decorators:
        params = params[1:]
    return inspect.Signature(params)


def strip(node):
    """An expression's dump without the parentheses that only group it."""
    return ast.dump(node)


def binding(sig, call):
    """Parameter -> expression dump, for what `call` passes (defaults applied)."""
    args = [strip(a) for a in call.args]
    kwargs = {k.arg: strip(k.value) for k in call.keywords if k.arg is not None}
    splat = any(k.arg is None for k in call.keywords)
    bound = (sig.bind_partial if splat else sig.bind)(*args, **kwargs)
    bound.apply_defaults()
    return dict(bound.arguments)


def report(regraft, rules, version, src):
    scratch = tempfile.mkdtemp(prefix=f"generic-{version}-")
    work = os.path.join(scratch, "transformers", "models")
    shutil.copytree(os.path.join(src, "transformers", "models"), work)
    run = subprocess.run(
        [regraft, "apply", "-r", rules, "transformers/models", "--write", "--format", "json",
         "--with", f"transformers={version}"],
        cwd=scratch, capture_output=True, text=True,
    )
    if run.returncode not in (0, 1):
        sys.stderr.write(run.stderr[-3000:])
        raise SystemExit(f"{version}: regraft exited {run.returncode}")
    files = json.loads(run.stdout)
    resolver = Resolver()
    selected = converted = checked = 0
    refusals = collections.Counter()
    misbound = []
    for f in files:
        for r in f["rules"]:
            if "positional" not in r["rule"] or not r["matches"]:
                continue
            selected += 1
            original_path = os.path.join(src, f["path"])
            with open(original_path, encoding="utf-8") as fh:
                before = ast.parse(fh.read())
            with open(os.path.join(scratch, f["path"]), encoding="utf-8") as fh:
                after = ast.parse(fh.read())
            calls_before, calls_after = ordered_calls(before), ordered_calls(after)
            index = {(c.lineno, c.col_offset): i for i, c in enumerate(calls_before)}
            for m in r["matches"]:
                if m.get("refused"):
                    reason = re.sub(r"`[^`]*`", "X", m["refused"])
                    refusals[reason] += 1
                    continue
                if not m["edits"]:
                    continue
                converted += 1
                # The match is `$OUT = $LAYER(...)`: its call starts where the callee name does.
                line, col = m["start"]["line"], m["start"]["column"] - 1
                candidates = [
                    i for (l, c), i in index.items()
                    if (l, c) >= (line, col) and l <= m["end"]["line"]
                ]
                i = min(candidates, key=lambda i: (calls_before[i].lineno, calls_before[i].col_offset))
                old, new = calls_before[i], calls_after[i]
                cls = m["bindings"].get("CLS") or NAMED[r["rule"]]
                func = resolver.find(original_path, cls)
                if func is None:
                    misbound.append(f"{f['path']}:{line}: no forward for {cls}")
                    continue
                sig = signature_of(func)
                if binding(sig, old) != binding(sig, new):
                    misbound.append(f"{f['path']}:{line}: {ast.unparse(old)} -> {ast.unparse(new)}")
                checked += 1
    shutil.rmtree(scratch)
    print(f"transformers {version}: {selected} models selected, {converted} calls converted, "
          f"{checked} checked against the callee's signature, {len(misbound)} mis-bound")
    for reason, n in refusals.most_common():
        print(f"  refused {n}x: {reason}")
    for m in misbound:
        print(f"  MIS-BOUND {m}")
    return not misbound


def main():
    regraft, rules, *targets = sys.argv[1:]
    regraft = os.path.abspath(regraft)
    scratch = tempfile.mkdtemp(prefix="generic-rules-")
    positional_rules(rules, os.path.join(scratch, "positional.yaml"))
    rules = os.path.join(scratch, "positional.yaml")
    ok = True
    for target in targets:
        version, src = target.split(":", 1)
        ok &= report(regraft, rules, version, os.path.abspath(src))
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
