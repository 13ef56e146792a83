//! The facts of modules read by any search of this process, kept by file: each file's edit
//! check builds a program of its own (its own text in place of the file), and every one of
//! them read the same base modules again (a pack editing 363 files parsed `modeling_utils.py`
//! 363 times). A file changed since (its size or modification time) is read again.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::SystemTime;

use super::model::Facts;

/// A file's size and modification time: what says its facts, read before, still hold.
pub(super) type Stamp = (u64, Option<SystemTime>);

/// Up to how many modules' facts the process keeps (a release has about 2,000).
const CACHED_MODULES: usize = 4096;

/// The facts by file, with the stamp they were read at and the module name they were read as.
type Cache = Mutex<HashMap<PathBuf, (Stamp, String, Arc<Facts>)>>;

fn module_cache() -> &'static Cache {
    static CACHE: OnceLock<Cache> = OnceLock::new();
    CACHE.get_or_init(Default::default)
}

pub(super) fn cached(path: &Path, stamp: Stamp, name: &str) -> Option<Arc<Facts>> {
    let cache = module_cache().lock().ok()?;
    let (at, read_as, facts) = cache.get(path)?;
    // A file without a modification time is read again each time; facts name their module.
    (*at == stamp && stamp.1.is_some() && read_as == name).then(|| facts.clone())
}

pub(super) fn remember(path: PathBuf, stamp: Stamp, name: &str, facts: Arc<Facts>) {
    let Ok(mut cache) = module_cache().lock() else {
        return;
    };
    if cache.len() >= CACHED_MODULES {
        cache.clear();
    }
    cache.insert(path, (stamp, name.to_string(), facts));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn facts_are_reused_for_the_same_stamp_and_name_only() {
        let path = PathBuf::from("/nonexistent/regraft-cache-test/mod.py");
        let now = Some(SystemTime::now());
        let facts = Arc::new(Facts::read("pkg.mod", false, "x = 1\n"));
        remember(path.clone(), (6, now), "pkg.mod", facts.clone());
        assert!(cached(&path, (6, now), "pkg.mod").is_some_and(|f| Arc::ptr_eq(&f, &facts)));
        // Changed on disk, read under another name, or with no modification time to trust.
        assert!(cached(&path, (7, now), "pkg.mod").is_none());
        assert!(cached(&path, (6, now), "other.mod").is_none());
        remember(path.clone(), (6, None), "pkg.mod", facts);
        assert!(cached(&path, (6, None), "pkg.mod").is_none());
    }
}
