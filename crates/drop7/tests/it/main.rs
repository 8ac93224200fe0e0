//! The integration tests of the `drop7` library, one module per subject, in one test binary:
//! one binary per crate links once instead of once per file (ripgrep's habit). `common` holds
//! the reading of the reference vectors the modules share.

mod common;
mod leaf_vectors;
mod properties;
mod search_vectors;
mod vectors;
