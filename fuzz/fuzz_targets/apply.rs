//! apply: one rule on arbitrary Python source. The properties are in properties.rs.
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "properties.rs"]
mod properties;

fuzz_target!(|bytes: &[u8]| properties::apply(bytes));
