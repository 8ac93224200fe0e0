//! # drop7 — the game, bit for bit
//!
//! A Drop7 (Hardcore, headless) engine identical to the public `drop7-bench` reference
//! simulator: same board after every move, same score, same reveals (see `SPEC.md` in the
//! shared folder and its test vectors).
//!
//! | module | what |
//! |---|---|
//! | [`board`] | packed column words, parsing, mirror canonicalisation |
//! | [`rules`] | one move: waves, gray damage, reveals, gravity, rise, scoring |
//! | [`rng`] | `mix32`, Mulberry32, seed → disc and reveal streams |
//! | [`game`] | headless games and the simple policies |
//! | [`trace`] | the reference trace/step JSON records |
#![forbid(unsafe_code)]

pub mod board;
pub mod game;
pub mod rng;
pub mod rules;
pub mod trace;

pub use board::{Board, BoardError};
pub use game::{Game, PublicState};
pub use rules::{MoveError, MoveOutcome, Wave, play_move};
pub mod fair_leaf;
pub mod lease;
pub mod policy;
pub mod runner;
pub mod search;
