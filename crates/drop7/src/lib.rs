//! # drop7 — the game, bit for bit
//!
//! A Drop7 (Hardcore, headless) engine identical to the public `drop7-bench` reference
//! simulator: same board after every move, same score, same reveals (see `docs/design/drop7-SPEC.md` and the
//! vectors in `data/drop7/vectors/`), with its fair expectimax search and the machinery to
//! play, screen and record games.
//!
//! | module | what |
//! |---|---|
//! | [`board`] | packed column words, parsing, mirror canonicalisation |
//! | [`rules`] | one move: waves, gray damage, reveals, gravity, rise, scoring |
//! | [`rng`] | `mix32`, Mulberry32, seed → disc and reveal streams |
//! | [`seeds`] | seeds and seed blocks as every command and file names them |
//! | [`game`] | headless games and the simple column rules |
//! | [`trace`] | the reference trace/step JSON records |
//! | [`fair_leaf`] | the frozen 18-term fair leaf |
//! | [`search`] | expectimax dNsK over any [`search::Leaf`]: strata, table, work |
//! | [`memory`] | what this process may still allocate (MemAvailable, cgroup, `ulimit -v`) |
//! | [`policy`] | the [`policy::Policy`] trait, built-in policies by name |
//! | [`runner`] | the game loop, the resumable parallel block runner, benchmarks' loops |
//! | [`lease`] | the seed ledger: blocks opened once, roles kept apart |
//! | [`screen`] | paired screens: arms on one block, contrasts, report, figures |
#![forbid(unsafe_code)]

pub mod board;
pub mod fair_leaf;
pub mod game;
pub mod lease;
pub mod memory;
pub mod policy;
pub mod protocol;
pub mod rng;
pub mod rules;
pub mod runner;
pub mod screen;
pub mod search;
pub mod seeds;
pub mod slurm;
pub mod topk;
pub mod trace;

pub use board::{Board, BoardError};
pub use game::{Game, PublicState, StateError};
pub use rules::{MoveError, MoveOutcome, Wave, play_move, play_settled};
pub use seeds::SeedBlock;
