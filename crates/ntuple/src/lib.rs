//! # ntuple — learned n-tuple value tables for Drop7
//!
//! Lookup tables over every row and column (and small windows), conditioned on the rise
//! clock, learned by TD(0) with temporal coherence from self-play (SPEC §7). The value of a
//! state is the sum of its active f32 entries, in rise units (×17,000 for points).
//!
//! | module | what |
//! |---|---|
//! | [`layout`] | families, phase conditioning, offsets, sizes |
//! | [`features`] | active entry indices straight from the packed column words |
//! | [`tables`] | lock-free shared weights and TC accumulators, TD+TC update |
//! | [`model`] | `D7NTUP01` files (optionally zstd), SHA-256, edits |
//! | [`play`] | the n-tuple search leaf and the `ntuple-1ply` / `ntuple-dNsK` policies |
//! | [`train`] | self-play TD(0)+TC training with checkpoints and validation |
// One audited `unsafe` block exists: the madvise(MADV_HUGEPAGE) hint in `tables`.
#![deny(unsafe_code)]

pub mod features;
pub mod layout;
pub mod model;
pub mod play;
pub mod tables;
pub mod train;
