//! # ntuple — learned n-tuple value tables for Drop7
//!
//! Lookup tables over every row and column (and small windows), conditioned on the rise
//! clock, learned by TD(0) with temporal coherence from self-play (docs/design/drop7-SPEC.md §7). The value of a
//! state is the sum of its active f32 entries, in rise units (×17,000 for points).
//!
//! | module | what |
//! |---|---|
//! | [`layout`] | families, phase conditioning, offsets, sizes |
//! | [`features`] | active entry indices straight from the packed column words |
//! | [`tables`] | lock-free shared weights and TC accumulators, TD+TC update |
//! | [`model`] | `D7NTUP02` files carrying their own SHA-256 (optionally zstd; `D7NTUP01` read with its sidecar), upgrade, NaN counts, edits |
//! | [`play`] | the n-tuple search leaf and the `ntuple-1ply` / `ntuple-dNsK` policies |
//! | [`policy`] | every policy by name (`PolicySpec`) and the model cache |
//! | [`train`] | self-play TD(0)+TC, and the resumable [`train::Trainer`]: ledger, checkpoints, validation, best weights, plateau, progress log, curve |
// Three audited `unsafe` blocks outside tests, each with its SAFETY note: the
// madvise(MADV_HUGEPAGE) hint in `tables`, and the two run-time-dispatched calls into the
// AVX-512 VBMI and AVX2 builds of feature extraction in `features` (the CPU was checked for
// the instructions just before each call). The tests add two more of the latter kind.
#![deny(unsafe_code)]

mod error;
pub mod features;
pub mod layout;
pub mod model;
pub mod pack;
pub mod play;
pub mod policy;
pub mod tables;
pub mod train;

pub use error::Error;

/// Tests that allocate hundreds of megabytes to gigabytes of tables take this lock, so the
/// test binary's threads hold one such table set at a time (the suite stays under 4 GB).
#[cfg(test)]
pub(crate) fn heavy_test() -> std::sync::MutexGuard<'static, ()> {
    static HEAVY: std::sync::Mutex<()> = std::sync::Mutex::new(());
    HEAVY.lock().unwrap_or_else(|e| e.into_inner())
}
