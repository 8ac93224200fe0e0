//! The bad-input corpus (`tests/data/bad-input-uci.json`): hostile and careless UCI
//! sessions and command lines for `actuary`, each with its expected outcome, run by the shared
//! runner (`corpus`: schema and rules).

#[test]
fn every_bad_input_has_its_expected_outcome() {
    let _cpu = crate::common::shared();
    // ACTUARY_BIN: run the corpus against another build (say, one from before a fix).
    let bin = std::env::var("ACTUARY_BIN").unwrap_or(crate::common::ACTUARY.into());
    corpus::Runner {
        bin: bin.into(),
        // two at a time: several cases pause on purpose (pondering, clocks), and the machine
        // may be busy; timing-sensitive cases keep generous margins
        workers: 2,
        min_cases: 50,
        ..Default::default()
    }
    .run_file(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/bad-input-uci.json").as_ref());
}
