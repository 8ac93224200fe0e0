//! Helpers shared by the test modules: the binary, run to the end, to success, or to a
//! refusal whose whole stderr is checked (the project's rule: a refused command prints exactly
//! one `error:` line naming the bad input, and exits 2; see `docs/reliability.md`).

use std::ffi::OsStr;
use std::fmt::Debug;
use std::process::{Command, Output};

/// The binary under test.
pub const DROP7: &str = env!("CARGO_BIN_EXE_drop7");

/// Bytes of output as text.
pub fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// `drop7 ARGS`, run to the end.
pub fn run<S: AsRef<OsStr>>(args: &[S]) -> Output {
    Command::new(DROP7).args(args).output().expect("run drop7")
}

/// `drop7 ARGS` succeeds; its output.
pub fn ok<S: AsRef<OsStr> + Debug>(args: &[S]) -> Output {
    let out = run(args);
    assert!(out.status.success(), "{args:?}: {}", text(&out.stderr));
    out
}

/// `drop7 ARGS` is refused: see [`refused`]. Returns its stderr.
pub fn fails<S: AsRef<OsStr> + Debug>(args: &[S], needle: &str) -> String {
    let out = run(args);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    refused(&out, needle)
}

/// `out` is a refusal: exit status 2, and the whole stderr is one line that starts with
/// `error: ` and contains `needle`. Returns that stderr.
pub fn refused(out: &Output, needle: &str) -> String {
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "stderr is not one line:\n{err}");
    assert!(
        err.starts_with("error: ") && err.contains(needle),
        "`{}` is not an `error: ` line containing `{needle}`",
        err.trim_end()
    );
    err
}
