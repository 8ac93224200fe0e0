//! Helpers shared by the test modules: the binaries under test, the opening book, and the
//! project's error rule checked on the whole stderr (`docs/reliability.md`): a refusal exits 2
//! with exactly one `error:` line; a run that started and then failed exits 1 with at most one
//! `error:` line, which ends stderr.

use std::process::ExitStatus;

/// The arbiter binary.
pub fn arbiter() -> &'static str {
    env!("CARGO_BIN_EXE_arbiter")
}

/// The scripted engine (`src/bin/fake_engine.rs`).
pub fn fake() -> &'static str {
    env!("CARGO_BIN_EXE_arbiter-fake-engine")
}

/// The opening book most tests play from.
pub fn book() -> String {
    format!(
        "{}/../../data/chess/books/2moves_v1.epd",
        env!("CARGO_MANIFEST_DIR")
    )
}

/// A refusal: exit status 2, and the whole stderr is one line that starts with `error: ` and
/// contains `needle`.
pub fn refused(status: ExitStatus, stderr: &str, needle: &str) {
    assert_eq!(status.code(), Some(2), "{stderr}");
    assert_eq!(
        stderr.lines().count(),
        1,
        "stderr is not one line:\n{stderr}"
    );
    assert!(
        stderr.starts_with("error: ") && stderr.contains(needle),
        "`{}` is not an `error: ` line containing `{needle}`",
        stderr.trim_end()
    );
}

/// A run that started and then failed: exit status 1, one `error:` line, and it is the last
/// line of stderr (the match's table may come before it). Returns that line.
pub fn stopped(status: ExitStatus, stderr: &str) -> &str {
    assert_eq!(status.code(), Some(1), "{stderr}");
    let errors: Vec<&str> = stderr.lines().filter(|l| l.starts_with("error:")).collect();
    assert_eq!(errors.len(), 1, "not one `error:` line:\n{stderr}");
    let last = stderr.lines().rev().find(|l| !l.trim().is_empty());
    assert_eq!(
        last,
        Some(errors[0]),
        "the `error:` line does not end stderr:\n{stderr}"
    );
    errors[0]
}
