//! The integration tests of the `drop7` command, one module per subject, in one test binary:
//! one binary per crate links once instead of once per file (ripgrep's habit). `common` holds
//! the helpers every module shares: running the binary to success or to a refusal whose whole
//! stderr is checked.

mod bad_input;
mod cli;
mod common;
mod serve_browser;
mod slurm;
