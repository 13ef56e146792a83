//! Records the commit and its date for `regraft --version` (`0.1.0 (abc1234 2026-12-07)`), so a
//! bug report names the build exactly. Outside a git checkout (an sdist, a vendored copy) the
//! version says so instead of failing the build.

use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    let text = String::from_utf8(out.stdout).ok()?;
    (out.status.success() && !text.trim().is_empty()).then(|| text.trim().to_string())
}

fn main() {
    let commit = git(&["rev-parse", "--short=9", "HEAD"]);
    let date = git(&["log", "-1", "--format=%cs"]);
    let dirty = git(&["status", "--porcelain", "--untracked-files=no"]).is_some();
    let described = match (commit, date) {
        (Some(c), Some(d)) => format!("{c}{} {d}", if dirty { "-modified" } else { "" }),
        _ => "not built from a git checkout".to_string(),
    };
    println!("cargo:rustc-env=REGRAFT_BUILD={described}");
    // Rebuilt when HEAD moves (a commit, a checkout) or the index changes, not on every edit.
    if let Some(dir) = git(&["rev-parse", "--git-dir"]) {
        let branch = git(&["symbolic-ref", "-q", "HEAD"]);
        for file in ["HEAD", "index", "packed-refs"]
            .into_iter()
            .map(String::from)
            .chain(branch)
        {
            let path = std::path::Path::new(&dir).join(file);
            if path.exists() {
                println!("cargo:rerun-if-changed={}", path.display());
            }
        }
    }
    println!("cargo:rerun-if-changed=build.rs");
}
