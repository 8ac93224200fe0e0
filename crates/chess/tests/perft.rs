//! Move generation against the standard perft suite.

use chess::tools::perft::run_perft_suite;

const SUITE: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../data/chess/suites/perftsuite.epd"
));

fn check(depth: u32) {
    let checks = run_perft_suite(SUITE, depth).expect("suite parses");
    assert!(
        checks.len() >= 126 * depth as usize,
        "expected every position at every depth"
    );
    let bad: Vec<String> = checks
        .iter()
        .filter(|c| c.got != c.expected)
        .map(|c| {
            format!(
                "line {} D{}: expected {} got {} ({})",
                c.line, c.depth, c.expected, c.got, c.fen
            )
        })
        .collect();
    assert!(bad.is_empty(), "perft mismatches:\n{}", bad.join("\n"));
}

/// The acceptance depth: every position of the suite (the start position is its first line)
/// at every depth from 1 to 5 (about 1.5 s in release).
#[test]
fn perft_depth5() {
    check(5);
}

#[test]
#[ignore = "slow: about a minute in release"]
fn perft_depth6() {
    check(6);
}
