//! Move generation against the standard perft suite.

use chess::perft::run_perft_suite;

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

const CHESS960: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../data/chess/suites/chess960.epd"
));

/// Chess960 (Fischer random): the public 960-position suite, Shredder-FEN castling, every
/// position to depth 3 and the first twenty to depth 5 (about a second in release; all 960
/// to depth 4 is `actuary perft-suite data/chess/suites/chess960.epd 4`, ~5 s).
#[test]
fn chess960_perft() {
    let shallow = run_perft_suite(CHESS960, 3).expect("suite parses");
    assert_eq!(shallow.len(), 960 * 3);
    let first: String = CHESS960
        .lines()
        .filter(|l| !l.starts_with('#'))
        .take(20)
        .collect::<Vec<_>>()
        .join("\n");
    let deep = run_perft_suite(&first, 5).expect("suite parses");
    assert_eq!(deep.len(), 20 * 5);
    let bad: Vec<String> = shallow
        .iter()
        .chain(&deep)
        .filter(|c| c.got != c.expected)
        .map(|c| {
            format!(
                "D{} expected {} got {} ({})",
                c.depth, c.expected, c.got, c.fen
            )
        })
        .collect();
    assert!(
        bad.is_empty(),
        "chess960 perft mismatches:\n{}",
        bad.join("\n")
    );
}
