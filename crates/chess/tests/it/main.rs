//! The integration tests of the `chess` library, one module per subject, in one test binary:
//! one binary per crate links once instead of once per file (ripgrep's habit).

mod bench;
mod draws;
mod fen;
mod limits;
mod parsers_proptest;
mod perft;
mod uci_robustness;
