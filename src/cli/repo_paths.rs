//! Paths as code scanning reads them: relative to the root of the repository (SARIF, GitHub
//! annotations), whatever path the command line was given.

/// The root of the git work tree holding the working directory, if any.
pub(super) fn repository_root() -> Option<std::path::PathBuf> {
    let here = std::env::current_dir().ok()?;
    here.ancestors()
        .find(|d| d.join(".git").exists())
        .map(std::path::Path::to_path_buf)
}

/// `path` relative to `root` (`/`-separated, `..` folded away) where it lies below it; as
/// given otherwise.
pub(super) fn repo_relative(path: &str, root: Option<&std::path::Path>) -> String {
    use std::path::Component;
    let (Some(root), Ok(absolute)) = (root, std::path::absolute(path)) else {
        return path.to_string();
    };
    let mut folded = std::path::PathBuf::new();
    for part in absolute.components() {
        match part {
            Component::ParentDir => {
                folded.pop();
            }
            Component::CurDir => {}
            other => folded.push(other),
        }
    }
    match folded.strip_prefix(root) {
        Ok(relative) => crate::targets::glob_path(relative),
        Err(_) => path.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_made_relative_to_the_root_with_dots_folded() {
        let root = std::env::current_dir().unwrap();
        let parent = root.parent().unwrap();
        let name = root.file_name().unwrap().to_str().unwrap();
        assert_eq!(
            repo_relative(&format!("../{name}/a/../b/x.py"), Some(&root)),
            "b/x.py"
        );
        assert_eq!(repo_relative("x.py", Some(&root.join("elsewhere"))), "x.py");
        assert_eq!(repo_relative("x.py", Some(parent)), format!("{name}/x.py"));
        assert_eq!(repo_relative("x.py", None), "x.py");
    }
}
