//! Helpers shared by the test modules: the binary, a UCI session with it, and its tools run
//! to success or to a refusal whose whole stderr is checked (the project's rule: a refused
//! command prints exactly one `error:` line naming the bad input, and exits 2; see
//! `docs/reliability.md`).

#[cfg(feature = "lab")]
use std::process::Output;
use std::process::{Child, Command, Stdio};

/// The binary under test.
pub const ACTUARY: &str = env!("CARGO_BIN_EXE_actuary");

/// `actuary` with no arguments (the UCI engine), its stdin and stdout piped.
pub fn uci_engine() -> Child {
    Command::new(ACTUARY)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("start actuary")
}

/// `actuary ARGS`, run to the end.
#[cfg(feature = "lab")]
pub fn run(args: &[&str]) -> Output {
    Command::new(ACTUARY)
        .args(args)
        .output()
        .expect("run actuary")
}

/// `actuary ARGS` succeeds; its stdout.
#[cfg(feature = "lab")]
pub fn ok(args: &[&str]) -> String {
    let out = run(args);
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "actuary {args:?} failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

/// `actuary ARGS` is refused: exit status 2, and the whole stderr is one line that starts
/// with `error: ` and contains `needle`.
#[cfg(feature = "lab")]
pub fn fails(args: &[&str], needle: &str) {
    let out = run(args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
    assert_eq!(
        stderr.lines().count(),
        1,
        "{args:?}: stderr is not one line:\n{stderr}"
    );
    assert!(
        stderr.starts_with("error: ") && stderr.contains(needle),
        "{args:?}: `{}` is not an `error: ` line containing `{needle}`",
        stderr.trim_end()
    );
}

/// Tests that play on a clock run alone; every other test of this binary takes a share of
/// the machine. Why: the binary's tests run two at a time, and on two cores a calibration or
/// bench beside a 1+0.01 game starves the engine into time losses (seen once in the clean
/// test command after the test files became one binary).
static CPU: std::sync::RwLock<()> = std::sync::RwLock::new(());

/// A share of the machine (any number of these at once, never beside [`alone`]).
pub fn shared() -> std::sync::RwLockReadGuard<'static, ()> {
    CPU.read().unwrap_or_else(|e| e.into_inner())
}

/// The whole machine: no other test of this binary runs meanwhile.
pub fn alone() -> std::sync::RwLockWriteGuard<'static, ()> {
    CPU.write().unwrap_or_else(|e| e.into_inner())
}
