//! The bad-input corpus (`tests/data/bad-input.json`): hostile and careless command lines,
//! each with its expected outcome, run by the shared runner (`corpus`: schema and rules).

use crate::common::{arbiter, book, fake};

#[test]
fn every_bad_input_has_its_expected_outcome() {
    let engines = [
        "--engine",
        "name=a",
        "cmd=$FAKE",
        "--engine",
        "name=b",
        "cmd=$FAKE",
    ];
    corpus::Runner {
        bin: arbiter().into(),
        vars: vec![("$FAKE".into(), fake().into()), ("$BOOK".into(), book())],
        expand: vec![("$ENGINES".into(), engines.map(String::from).to_vec())],
        // a few at a time: most are refusals in milliseconds, some wait on a timeout
        workers: 4,
        min_cases: 60,
        ..Default::default()
    }
    .run_file(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/bad-input.json").as_ref());
}
