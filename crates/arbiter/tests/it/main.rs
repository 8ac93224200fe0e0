//! The integration tests of `arbiter`, one module per subject, in one test binary: one binary
//! per crate links once instead of once per file (ripgrep's habit). `common` holds the
//! helpers every module shares: the binaries, the book, and the checks of a failed run's
//! whole stderr.

mod bad_input;
mod common;
mod cross_rules;
mod matches;
mod parsers;
mod spsa;
