//! The integration tests of `actuary`, one module per subject, in one test binary: one binary
//! per crate links once instead of once per file (ripgrep's habit). `common` holds the
//! helpers every module shares: running the binary and checking a refusal's whole stderr.

mod bad_input_uci;
#[cfg(feature = "lab")]
mod calibrate_loop;
mod chess960;
mod common;
#[cfg(feature = "lab")]
mod datagen_slurm;
mod openbench;
#[cfg(feature = "lab")]
mod prune_loop;
mod time_management;
mod uci_python;
