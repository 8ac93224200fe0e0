//! actuary: a UCI chess engine whose risky shortcuts are meant to be priced by tables the
//! engine measures itself (see shared/chess/DESIGN.md). This crate is the baseline: board
//! adapter, tiered evaluation, a standard strong alpha-beta search, UCI and tools.
#![forbid(unsafe_code)]

pub mod board;
#[cfg(feature = "calibration")]
pub mod calib;
pub mod eval;
#[cfg(feature = "calibration")]
pub mod probe;
pub mod search;
pub mod tools;
pub mod uci;
