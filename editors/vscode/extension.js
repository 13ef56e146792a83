// A language client for `regraft lsp`: rule files in YAML and the DSL (`*.graft`). The server
// decides which YAML files hold rules (an `id:` with a `match:` or `action:`); others get no
// diagnostics. `regraft.showDiff` (the code lens command) opens the rule's diff in an editor.
const vscode = require("vscode");
const { LanguageClient } = require("vscode-languageclient/node");

let client;

function start(context) {
  const command = vscode.workspace.getConfiguration("regraft").get("path") || "regraft";
  const server = { command, args: ["lsp"] };
  client = new LanguageClient(
    "regraft",
    "regraft",
    { run: server, debug: server },
    {
      documentSelector: [
        { scheme: "file", language: "graft" },
        { scheme: "file", language: "yaml" },
      ],
    },
  );
  return client.start();
}

async function activate(context) {
  context.subscriptions.push(
    vscode.commands.registerCommand("regraft.restart", async () => {
      if (client) {
        await client.stop();
      }
      await start(context);
    }),
  );
  await start(context);
}

function deactivate() {
  return client ? client.stop() : undefined;
}

module.exports = { activate, deactivate };
