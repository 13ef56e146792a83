//! Replays every input the fuzzers found a failure with (fuzz/regressions/TARGET/) and every
//! seed (fuzz/corpus/TARGET/seed-*) through the fuzz targets' own properties.

use std::fs;
use std::path::Path;

#[path = "../fuzz/fuzz_targets/properties.rs"]
mod properties;

/// A fuzz target's property: panics on a failing input.
type Property = fn(&[u8]);

const TARGETS: &[(&str, Property)] = &[
    ("yaml_loader", properties::yaml_loader),
    ("dsl_parser", properties::dsl_parser),
    ("pattern_compile", properties::pattern_compile),
    ("apply", properties::apply),
];

fn replay(folder: &str, keep: impl Fn(&str) -> bool) -> usize {
    let mut count = 0;
    for (target, property) in TARGETS {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join(folder)
            .join(target);
        let Ok(entries) = fs::read_dir(&dir) else {
            continue;
        };
        let mut files: Vec<_> = entries.map(|e| e.unwrap().path()).collect();
        files.sort();
        for file in files {
            let name = file.file_name().unwrap().to_string_lossy().into_owned();
            if !keep(&name) {
                continue;
            }
            let bytes = fs::read(&file).unwrap();
            let outcome = std::panic::catch_unwind(|| property(&bytes));
            assert!(outcome.is_ok(), "{target}: {} fails again", file.display());
            count += 1;
        }
    }
    count
}

#[test]
fn every_fuzz_finding_stays_fixed() {
    assert!(replay("fuzz/regressions", |_| true) >= 2);
}

#[test]
fn every_fuzz_seed_holds_the_properties() {
    assert!(replay("fuzz/corpus", |name| name.starts_with("seed-")) >= 30);
}
