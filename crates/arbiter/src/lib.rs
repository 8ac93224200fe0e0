//! # arbiter — engine matches refereed by the rules
//!
//! Runs UCI engines as child processes and referees every move: legality, mate, stalemate,
//! threefold repetition, the fifty-move rule, insufficient material, time forfeits, crashes,
//! hangs and illegal moves (each a loss with the reason in the PGN). Results go through the
//! `evidence` crate: Elo with a 95 % interval from game pairs, and a pentanomial SPRT.
#![forbid(unsafe_code)]

pub mod book;
pub mod engine;
pub mod game;
pub mod output;
pub mod pgn;
pub mod record;
pub mod rules;
pub mod sprt;
pub mod spsa;
pub mod tournament;
