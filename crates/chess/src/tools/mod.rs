//! Command-line tools: bench (OpenBench contract), perft, and the EPD suite runner.

pub mod bench;
pub mod perft;
pub mod suite;
