//! Shared transposition table for Lazy SMP, lock-free; its entries are read and written
//! without `unsafe` (the only `unsafe` is a prefetch hint and a huge-page hint on Linux).
//!
//! Each slot is two `AtomicU64`s: `data` and `key ^ data`. A reader accepts an entry only if
//! `stored_key ^ data == key`, so a torn write (two threads racing on one slot) shows up as a
//! key mismatch and is ignored instead of returning a corrupted move or score. This is the
//! classic "lockless hashing" scheme (Hyatt & Mann); relaxed atomics suffice because a stale
//! or missing entry only costs search effort, never correctness.
//!
//! Slots are stored four to a 64-byte cache line (aligned, so a probe is one memory access).
//! Every position has exactly one slot and a store of another position overwrites it; a
//! store of the same position keeps a deeper entry of this search unless it is exact.
//! Buckets of 2 and 4 slots with depth-and-age replacement (UCI `HashWays`) were tried and
//! removed after their games (issue 66, last in `d2a3642`): docs/chess/engine.md, "Hash
//! buckets", and docs/chess/search.md, "Draw handling (`draws`) and 4-way buckets".

use super::params::MATE_BOUND;
use crate::board::{Move, NULL_MOVE, Piece, Square};
use std::sync::atomic::{AtomicU8, AtomicU64, Ordering::Relaxed};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Bound {
    None = 0,
    Upper = 1,
    Lower = 2,
    Exact = 3,
}

#[derive(Clone, Copy, Debug)]
pub(crate) struct TtEntry {
    pub mv: Move,
    pub score: i32,
    pub eval: i32,
    pub depth: i32,
    pub bound: Bound,
}

/// Compress a move to 16 bits: from(6) | to(6) | promotion(3).
pub(crate) fn pack_move(mv: Move) -> u16 {
    let promo = match mv.promotion {
        None => 0,
        Some(Piece::Knight) => 1,
        Some(Piece::Bishop) => 2,
        Some(Piece::Rook) => 3,
        _ => 4,
    };
    (mv.from as u16) | (mv.to as u16) << 6 | promo << 12
}

pub(crate) fn unpack_move(v: u16) -> Move {
    if v == 0 {
        return NULL_MOVE;
    }
    let promotion = match v >> 12 {
        1 => Some(Piece::Knight),
        2 => Some(Piece::Bishop),
        3 => Some(Piece::Rook),
        4 => Some(Piece::Queen),
        _ => None,
    };
    Move {
        from: Square::index((v & 63) as usize),
        to: Square::index(((v >> 6) & 63) as usize),
        promotion,
    }
}

/// Mate scores are stored relative to the node, not the root, so they stay right when the
/// same position is reached at another ply.
#[inline]
pub(crate) fn score_to_tt(score: i32, ply: usize) -> i32 {
    if score >= MATE_BOUND {
        score + ply as i32
    } else if score <= -MATE_BOUND {
        score - ply as i32
    } else {
        score
    }
}

#[inline]
pub(crate) fn score_from_tt(score: i32, ply: usize) -> i32 {
    if score >= MATE_BOUND {
        score - ply as i32
    } else if score <= -MATE_BOUND {
        score + ply as i32
    } else {
        score
    }
}

struct Slot {
    key_xor: AtomicU64,
    data: AtomicU64,
}

/// Slots per 64-byte line (16 bytes each): the widest bucket.
const LINE_SLOTS: usize = 4;

/// Four slots on one cache line.
#[repr(align(64))]
struct Line([Slot; LINE_SLOTS]);

/// Ask Linux to back the table with 2 MB pages where it can (transparent huge pages in
/// `madvise` mode, the common default), before any page of it is touched: a probe is a random
/// access into a table far larger than the TLB covers with 4 KB pages, so without them most
/// probes miss the TLB as well as the cache. A hint: refused or unsupported, nothing changes.
#[cfg(target_os = "linux")]
fn advise_huge_pages(ptr: *const Line, bytes: usize) {
    const HUGE: usize = 2 << 20;
    let start = (ptr as usize).next_multiple_of(HUGE);
    let end = (ptr as usize + bytes) / HUGE * HUGE;
    if end > start {
        // SAFETY: MADV_HUGEPAGE changes how the kernel backs pages of this allocation (ours,
        // reserved and not yet written), never their contents; the range is page-aligned.
        #[allow(unsafe_code)]
        unsafe {
            libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE)
        };
    }
}

#[cfg(not(target_os = "linux"))]
fn advise_huge_pages(_: *const Line, _: usize) {}

pub struct Tt {
    lines: Vec<Line>,
    /// Slots in the table (kept so that a probe multiplies instead of dividing).
    slots: usize,
    age: AtomicU8,
}

// data layout: move 16 | score 16 | eval 16 | depth 8 | bound 2 | age 6
fn pack(mv: u16, score: i32, eval: i32, depth: i32, bound: Bound, age: u8) -> u64 {
    (mv as u64)
        | ((score as i16 as u16 as u64) << 16)
        | ((eval as i16 as u16 as u64) << 32)
        | ((depth.clamp(0, 255) as u64) << 48)
        | ((bound as u64) << 56)
        | (((age & 63) as u64) << 58)
}

/// Why `Tt::try_new` could not build a table.
#[derive(Debug, Clone, thiserror::Error)]
pub enum TtError {
    #[error("cannot allocate {mb} MB for the hash table")]
    Alloc { mb: usize },
}

/// A table built by [`Tt::new_clamped`], and the reason when it is smaller than asked.
pub(crate) struct Clamped {
    pub tt: Tt,
    /// Size actually allocated, in MB.
    pub mb: usize,
    /// Why `mb` is below the request (`None`: the request was met).
    pub reason: Option<String>,
}

/// Memory this process may still take, in MB ([`fileio::mem_available_mb`]: MemAvailable,
/// lowered to the memory cgroup's limit).
pub(crate) fn mem_available_mb() -> Option<usize> {
    fileio::mem_available_mb()
}

/// Largest table size (MB) to try for a request of `mb` when `available` MB are free:
/// three quarters of it, so that the engine does not push the machine (and whatever else
/// runs on it) into swap or the OOM killer. At least 1 MB.
pub(crate) fn fit_mb(mb: usize, available: Option<usize>) -> usize {
    match available {
        Some(avail) => mb.min(avail / 4 * 3).max(1),
        None => mb.max(1),
    }
}

/// Slots in a table of `mb` MB (16 bytes each; at least 1024; a multiple of four for any
/// size that can be allocated).
fn slots_for(mb: usize) -> usize {
    (mb.max(1).saturating_mul(1024 * 1024) / 16).max(1024)
}

/// Cache lines holding the slots of a table of `mb` MB.
fn lines_for(mb: usize) -> usize {
    slots_for(mb).div_ceil(LINE_SLOTS)
}

impl Tt {
    /// A table of about `mb` megabytes (16 bytes per slot). Never aborts: a request that
    /// does not fit is clamped as in `Tt::new_clamped`, with a one-line warning on
    /// stderr (the tools' `--hash`); the UCI loop uses `new_clamped` and says so itself.
    pub fn new(mb: usize) -> Self {
        let c = Self::new_clamped(mb);
        if let Some(reason) = &c.reason {
            eprintln!("warning: hash table clamped to {} MB ({reason})", c.mb);
        }
        c.tt
    }

    /// A table of exactly `mb` megabytes, or an error when the allocator refuses: the
    /// infallible `collect` this replaces aborted the whole process on `Hash 65536`.
    pub(crate) fn try_new(mb: usize) -> Result<Self, TtError> {
        Self::with_lines(lines_for(mb)).ok_or(TtError::Alloc { mb })
    }

    fn with_lines(n: usize) -> Option<Self> {
        let mut lines = Vec::new();
        lines.try_reserve_exact(n).ok()?;
        advise_huge_pages(lines.as_ptr(), n * size_of::<Line>());
        let empty = || Slot {
            key_xor: AtomicU64::new(0),
            data: AtomicU64::new(0),
        };
        lines.extend((0..n).map(|_| Line([empty(), empty(), empty(), empty()])));
        Some(Self {
            slots: n * LINE_SLOTS,
            lines,
            age: AtomicU8::new(0),
        })
    }

    /// Slots in the table.
    pub(crate) fn slot_count(&self) -> usize {
        self.lines.len() * LINE_SLOTS
    }

    #[inline]
    fn slot(&self, i: usize) -> &Slot {
        &self.lines[i / LINE_SLOTS].0[i % LINE_SLOTS]
    }

    /// The largest table up to `mb` MB that fits: first capped by [`fit_mb`] (MemAvailable),
    /// then halved while the allocator refuses (address-space limits, overcommit policy).
    /// After a refusal only half of the largest size granted is taken: a table that took
    /// the last of the address space would make the search's own allocations abort.
    pub(crate) fn new_clamped(mb: usize) -> Clamped {
        let mb = mb.max(1);
        let avail = mem_available_mb();
        let mut size = fit_mb(mb, avail);
        let mut reason = (size < mb).then(|| {
            format!(
                "{mb} MB asked, {} MB of memory available",
                avail.unwrap_or(0)
            )
        });
        // Probe with a bare reservation (no page is touched), then build the table.
        let reserves = |mb: usize| Vec::<Line>::new().try_reserve_exact(lines_for(mb)).is_ok();
        let mut refused = false;
        while size > 1 && !reserves(size) {
            reason = Some(TtError::Alloc { mb: size }.to_string());
            refused = true;
            size /= 2;
        }
        if refused {
            size = (size / 2).max(1);
        }
        loop {
            match Self::try_new(size) {
                Ok(tt) => {
                    return Clamped {
                        tt,
                        mb: size,
                        reason,
                    };
                }
                Err(e) if size > 1 => {
                    reason = Some(e.to_string());
                    size /= 2;
                }
                // Not even 1 MB: the 16 KB minimum. Should that fail too, the process is
                // out of memory and would die at its next allocation anyway.
                Err(e) => {
                    let tt = Self::with_lines(1024 / LINE_SLOTS)
                        .unwrap_or_else(|| std::process::abort());
                    return Clamped {
                        tt,
                        mb: 0,
                        reason: Some(e.to_string()),
                    };
                }
            }
        }
    }

    pub fn clear(&self) {
        for s in self.lines.iter().flat_map(|l| &l.0) {
            s.key_xor.store(0, Relaxed);
            s.data.store(0, Relaxed);
        }
        self.age.store(0, Relaxed);
    }

    /// Called once per `go`: entries from older searches become preferred victims.
    pub(crate) fn new_search(&self) {
        self.age
            .store(self.age.load(Relaxed).wrapping_add(1) & 63, Relaxed);
    }

    /// Start loading the cache line of `key`'s bucket, so that the probe after the move has
    /// been made (the child's accumulator update and material in between) finds it in cache:
    /// at 64 MB and beyond almost every probe is a miss to main memory. A hint only: it
    /// changes no result (the bench signature is the same with and without it).
    #[inline]
    pub(crate) fn prefetch(&self, key: u64) {
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
            let line: *const Line = &self.lines[self.index(key) / LINE_SLOTS];
            // SAFETY: prefetching never faults and reads nothing into the program; the
            // pointer is to a live element of `lines` in any case.
            #[allow(unsafe_code)]
            unsafe {
                _mm_prefetch::<_MM_HINT_T0>(line.cast::<i8>())
            };
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = key;
    }

    /// `key`'s slot: the key's high bits scaled to the slot count.
    #[inline]
    fn index(&self, key: u64) -> usize {
        ((key as u128 * self.slots as u128) >> 64) as usize
    }

    #[inline]
    pub(crate) fn probe(&self, key: u64, ply: usize) -> Option<TtEntry> {
        let slot = self.slot(self.index(key));
        let data = slot.data.load(Relaxed);
        if slot.key_xor.load(Relaxed) ^ data != key || data == 0 {
            return None;
        }
        let bound = match (data >> 56) & 3 {
            1 => Bound::Upper,
            2 => Bound::Lower,
            3 => Bound::Exact,
            _ => Bound::None,
        };
        Some(TtEntry {
            mv: unpack_move(data as u16),
            score: score_from_tt((data >> 16) as u16 as i16 as i32, ply),
            eval: (data >> 32) as u16 as i16 as i32,
            depth: ((data >> 48) & 255) as i32,
            bound,
        })
    }

    /// Store, preferring to keep deeper entries of the current search for the same key; a
    /// new key replaces whatever the slot held.
    #[inline]
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn store(
        &self,
        key: u64,
        mv: Move,
        score: i32,
        eval: i32,
        depth: i32,
        bound: Bound,
        ply: usize,
    ) {
        let age = self.age.load(Relaxed);
        let slot = self.slot(self.index(key));
        let old = slot.data.load(Relaxed);
        let same = slot.key_xor.load(Relaxed) ^ old == key;
        let old_depth = ((old >> 48) & 255) as i32;
        let old_age = ((old >> 58) & 63) as u8;
        if same && bound != Bound::Exact && depth + 3 < old_depth && old_age == age {
            return;
        }
        // Keep the previous best move when this store has none for the same position.
        let mv16 = if mv == NULL_MOVE && same {
            old as u16
        } else {
            pack_move(mv)
        };
        let data = pack(mv16, score_to_tt(score, ply), eval, depth, bound, age);
        slot.data.store(data, Relaxed);
        slot.key_xor.store(key ^ data, Relaxed);
    }

    /// Permille of sampled slots written by the current search (UCI `hashfull`).
    pub(crate) fn hashfull(&self) -> u32 {
        let age = self.age.load(Relaxed);
        let n = self.slot_count().min(1000);
        let used = (0..n)
            .filter(|&i| {
                let d = self.slot(i).data.load(Relaxed);
                d != 0 && ((d >> 58) & 63) as u8 == age
            })
            .count();
        (used * 1000 / n) as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_mates() {
        let tt = Tt::new(1);
        let mv: Move = "e7e8q".parse().unwrap();
        tt.store(
            0xDEAD_BEEF,
            mv,
            MATE_BOUND + 50 - 3,
            -12,
            7,
            Bound::Lower,
            3,
        );
        let e = tt.probe(0xDEAD_BEEF, 5).unwrap();
        assert_eq!(e.mv, mv);
        // Mate found 3 plies from the root, read back at ply 5: distance grows by 2.
        assert_eq!(e.score, MATE_BOUND + 50 - 5);
        assert_eq!(e.eval, -12);
        assert_eq!(e.depth, 7);
        assert_eq!(e.bound, Bound::Lower);
        assert!(tt.probe(0xDEAD_BEE0, 0).is_none());
    }

    /// Keys whose high 16 bits agree share a slot in a 1 MB table (65,536 slots).
    fn colliding(i: u64) -> u64 {
        0xABCD_0000_0000_0001 + i
    }

    fn quiet(i: u16) -> Move {
        unpack_move(8 + i)
    }

    #[test]
    fn any_other_key_replaces_the_same_key_keeps_depth() {
        let tt = Tt::new(1);
        tt.store(colliding(0), quiet(0), 50, 10, 12, Bound::Exact, 0);
        tt.store(colliding(1), quiet(1), 7, 3, 0, Bound::Upper, 0);
        assert!(
            tt.probe(colliding(0), 0).is_none(),
            "a deep entry of another key survived in its slot"
        );
        assert_eq!(tt.probe(colliding(1), 0).unwrap().score, 7);
        // The same key keeps its deeper entry of this search against a shallow bound...
        tt.store(colliding(1), quiet(1), 7, 3, 9, Bound::Lower, 0);
        tt.store(colliding(1), NULL_MOVE, -40, 3, 2, Bound::Upper, 0);
        let e = tt.probe(colliding(1), 0).unwrap();
        assert_eq!((e.depth, e.score), (9, 7));
        // ...but not against an exact score, and a store without a move keeps the old move.
        tt.store(colliding(1), NULL_MOVE, -40, 3, 2, Bound::Exact, 0);
        let e = tt.probe(colliding(1), 0).unwrap();
        assert_eq!((e.depth, e.score, e.mv), (2, -40, quiet(1)));
        // A later search may overwrite it with a shallow bound.
        tt.store(colliding(1), quiet(1), 7, 3, 9, Bound::Lower, 0);
        tt.new_search();
        tt.store(colliding(1), quiet(2), 1, 3, 1, Bound::Upper, 0);
        assert_eq!(tt.probe(colliding(1), 0).unwrap().depth, 1);
        // Keys of another slot are untouched by all this.
        tt.store(0x1234_0000_0000_0000, quiet(1), 5, 0, 1, Bound::Lower, 0);
        assert_eq!(tt.probe(0x1234_0000_0000_0000, 0).unwrap().score, 5);
        assert_eq!(tt.probe(colliding(1), 0).unwrap().score, 1);
    }

    #[test]
    fn oversized_tables_are_refused_or_clamped() {
        // More than any address space: an error, not an abort.
        assert!(Tt::try_new(usize::MAX / (1 << 20)).is_err());
        assert!(Tt::with_lines(usize::MAX / 64).is_none());
        // MemAvailable caps the request at three quarters of what is free.
        assert_eq!(fit_mb(65_536, Some(24_000)), 18_000);
        assert_eq!(fit_mb(64, Some(24_000)), 64);
        assert_eq!(fit_mb(64, Some(0)), 1);
        assert_eq!(fit_mb(64, None), 64);
        let c = Tt::new_clamped(2);
        assert!(c.mb == 2 && c.reason.is_none() && c.tt.slot_count() == 2 * 65_536);
    }
}
