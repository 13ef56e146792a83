//! The DSL parser (pest grammar) and compiler on arbitrary bytes. The properties are in properties.rs.
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "properties.rs"]
mod properties;

fuzz_target!(|bytes: &[u8]| properties::dsl_parser(bytes));
