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

/// Tests that allocate hundreds of megabytes of tables hold one of two places, so at most two
/// such table sets are in memory at once (peaks measured with `/usr/bin/time -f %M`: at most
/// 1.1 GB each); the two of about 2 GB (`edits`, `files_are_in_spec_order`) take both
/// ([`heavy_test_alone`]). The suite stays under 4 GB, and the heavy tests no longer queue
/// one behind another on a 2-core machine.
#[cfg(test)]
pub(crate) fn heavy_test() -> HeavyGuard {
    HeavyGuard::take(1)
}

/// [`heavy_test`] for a test that needs both places (about 2 GB at its peak).
#[cfg(test)]
pub(crate) fn heavy_test_alone() -> HeavyGuard {
    HeavyGuard::take(HEAVY_PLACES)
}

#[cfg(test)]
const HEAVY_PLACES: u32 = 2;

#[cfg(test)]
static HEAVY: (std::sync::Mutex<u32>, std::sync::Condvar) =
    (std::sync::Mutex::new(0), std::sync::Condvar::new());

/// Places held by a heavy test, given back when it ends (a panic included).
#[cfg(test)]
pub(crate) struct HeavyGuard(u32);

#[cfg(test)]
impl HeavyGuard {
    fn take(places: u32) -> Self {
        let (used, freed) = &HEAVY;
        let mut used = used.lock().unwrap_or_else(|e| e.into_inner());
        while *used + places > HEAVY_PLACES {
            used = freed.wait(used).unwrap_or_else(|e| e.into_inner());
        }
        *used += places;
        HeavyGuard(places)
    }
}

#[cfg(test)]
impl Drop for HeavyGuard {
    fn drop(&mut self) {
        let (used, freed) = &HEAVY;
        *used.lock().unwrap_or_else(|e| e.into_inner()) -= self.0;
        freed.notify_all();
    }
}
