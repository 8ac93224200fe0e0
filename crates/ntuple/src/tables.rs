//! Shared tables: f32 weights (and, when training, the two temporal-coherence accumulators)
//! stored as `AtomicU32` bit patterns. Training threads read and write them with relaxed
//! ordering ("Hogwild"): a concurrent update may be lost, but there is no data race and no
//! `unsafe`. Single-threaded training is exactly the serial rule, hence deterministic.

use std::sync::atomic::{AtomicU32, Ordering::Relaxed};

use crate::features::{Active, MAX_ACTIVE};
use crate::layout::Layout;

/// States summed side by side in [`Tables::values`].
const LANES: usize = 8;

/// Initial optimistic value of a fresh board in rise units (≈ 340,000 points).
pub const OPTIMISTIC_TOTAL: f32 = 20.0;
/// TD error clamp, rise units.
pub const DELTA_CLAMP: f32 = 30.0;

/// The value tables of one layout.
pub struct Tables {
    pub layout: Layout,
    pub weights: Vec<AtomicU32>,
    /// Temporal coherence: E (running sum of errors) and A (running sum of |errors|).
    pub coherence: Option<(Vec<AtomicU32>, Vec<AtomicU32>)>,
}

/// Bytes a table set needs: 4 per entry, 12 with the accumulators.
pub fn bytes_needed(layout: &Layout, with_coherence: bool) -> u64 {
    layout.total * if with_coherence { 12 } else { 4 }
}

/// Refuse to allocate what the machine cannot hold, with a message that says how much.
pub fn check_memory(layout: &Layout, with_coherence: bool) -> Result<(), crate::Error> {
    let need = bytes_needed(layout, with_coherence);
    // keep 1 GiB of headroom for the rest of the process and the OS
    if let Some(avail) = drop7::memory::shortfall(need) {
        return Err(crate::Error::Memory(format!(
            "layout `{layout}` needs {:.1} GB ({} entries × {} bytes{}) but only {:.1} GB is available; use a smaller layout{}",
            need as f64 / 1e9,
            layout.total,
            if with_coherence { 12 } else { 4 },
            if with_coherence {
                ", weights + E + A accumulators"
            } else {
                ""
            },
            avail as f64 / 1e9,
            if with_coherence {
                " or load the weights without accumulators"
            } else {
                ""
            }
        )));
    }
    Ok(())
}

/// A vector of `n` atomics holding `v`, backed by transparent huge pages where the kernel
/// offers them: lookups are random over gigabytes, and 2 MB pages remove most TLB misses
/// (arm C training went from 70k to 107k moves/s on 2 threads here).
pub(crate) fn filled(n: u64, v: f32) -> Vec<AtomicU32> {
    let bits = v.to_bits();
    let mut out: Vec<AtomicU32> = Vec::with_capacity(n as usize);
    advise_huge_pages(out.as_ptr() as usize, out.capacity() * 4);
    out.extend((0..n).map(|_| AtomicU32::new(bits)));
    out
}

/// Ask for transparent huge pages on a fresh, not yet touched allocation.
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
fn advise_huge_pages(addr: usize, len: usize) {
    const HUGE: usize = 2 << 20;
    let start = addr.next_multiple_of(HUGE);
    let end = (addr + len) / HUGE * HUGE;
    if end > start {
        // SAFETY: madvise(MADV_HUGEPAGE) only changes the kernel's paging policy for a
        // page-aligned range inside one live allocation we own; it neither reads nor writes
        // the memory and cannot invalidate it. A failure (e.g. THP disabled) is harmless.
        unsafe {
            libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE);
        }
    }
}

#[cfg(not(target_os = "linux"))]
fn advise_huge_pages(_addr: usize, _len: usize) {}

impl Tables {
    /// Fresh tables: every weight `optimistic_total / active` (computed in f32), so a state's
    /// value starts at `optimistic_total` rise units; accumulators at 0 if `trainable`.
    pub fn new(
        layout: Layout,
        optimistic_total: f32,
        trainable: bool,
    ) -> Result<Self, crate::Error> {
        check_memory(&layout, trainable)?;
        let init = optimistic_total / layout.active() as f32;
        let weights = filled(layout.total, init);
        let coherence = trainable.then(|| (filled(layout.total, 0.0), filled(layout.total, 0.0)));
        Ok(Self {
            layout,
            weights,
            coherence,
        })
    }

    /// The initial weight of a fresh entry (to recognise never-updated entries).
    pub fn initial_weight(&self) -> f32 {
        OPTIMISTIC_TOTAL / self.layout.active() as f32
    }

    #[inline]
    pub fn weight(&self, i: u64) -> f32 {
        f32::from_bits(self.weights[i as usize].load(Relaxed))
    }

    #[inline]
    pub fn set_weight(&self, i: u64, v: f32) {
        self.weights[i as usize].store(v.to_bits(), Relaxed)
    }

    /// Value in rise units: the f32 sum of the active entries in feature order.
    #[inline]
    pub fn value(&self, active: &[u64]) -> f32 {
        let mut v = 0.0f32;
        for &i in active {
            v += self.weight(i);
        }
        v
    }

    /// Values of many states (rise units) into `out`. Each is the same f32 sum in feature
    /// order as [`Tables::value`], bit for bit, but eight states are summed side by side:
    /// one state's sum is a chain of 74 dependent additions (74 × the add latency at best),
    /// while eight interleaved chains keep the adder busy and let eight times as many table
    /// reads be in flight, which makes a batch several times cheaper per state.
    pub fn values(&self, states: &[Active], out: &mut [f32]) {
        assert_eq!(states.len(), out.len(), "one output per state");
        let mut chunks = states.chunks_exact(LANES);
        let mut outs = out.chunks_exact_mut(LANES);
        for (s, o) in (&mut chunks).zip(&mut outs) {
            let s: &[Active; LANES] = s.try_into().expect("chunks of LANES");
            o.copy_from_slice(&self.sum_lanes(s));
        }
        for (s, o) in chunks.remainder().iter().zip(outs.into_remainder()) {
            *o = self.value(s.as_slice());
        }
    }

    #[inline(always)]
    fn sum_lanes<const N: usize>(&self, s: &[Active; N]) -> [f32; N] {
        let len = s[0].len.min(MAX_ACTIVE);
        assert!(s.iter().all(|a| a.len == len), "states of one layout");
        let mut acc = [0.0f32; N];
        for k in 0..len {
            for j in 0..N {
                acc[j] += self.weight(s[j].idx[k]);
            }
        }
        acc
    }

    /// One TD(0)+TC step towards `target` (rise units) for the state whose entries are
    /// `active`: δ = clamp(target − V, ±30); each entry moves by β·α·δ/n with β = |E|/A
    /// (1 while A = 0), then E += δ, A += |δ|. Returns δ.
    pub fn update(&self, active: &[u64], target: f32, alpha: f32) -> f32 {
        let pred = self.value(active);
        let delta = (target - pred).clamp(-DELTA_CLAMP, DELTA_CLAMP);
        let step = alpha * delta / active.len() as f32;
        match &self.coherence {
            Some((e_acc, a_acc)) => {
                for &i in active {
                    let i = i as usize;
                    let e = f32::from_bits(e_acc[i].load(Relaxed));
                    let a = f32::from_bits(a_acc[i].load(Relaxed));
                    let beta = if a > 0.0 { e.abs() / a } else { 1.0 };
                    let w = f32::from_bits(self.weights[i].load(Relaxed));
                    self.weights[i].store((w + beta * step).to_bits(), Relaxed);
                    e_acc[i].store((e + delta).to_bits(), Relaxed);
                    a_acc[i].store((a + delta.abs()).to_bits(), Relaxed);
                }
            }
            None => {
                for &i in active {
                    let w = self.weight(i);
                    self.set_weight(i, w + step);
                }
            }
        }
        delta
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn small() -> Tables {
        Tables::new(
            Layout::parse("win23,win32,phase=none").unwrap(),
            OPTIMISTIC_TOTAL,
            true,
        )
        .unwrap()
    }

    #[test]
    fn fresh_entries_move_by_alpha_delta_over_n() {
        let _heavy = crate::heavy_test();
        let t = small();
        let active: Vec<u64> = (0..60).map(|k| k * 1_000_000 + 7).collect();
        assert!((t.value(&active) - 20.0).abs() < 1e-4);
        let before = t.weight(active[0]);
        let d = t.update(&active, 20.0 + 6.0, 0.5);
        assert!((d - 6.0).abs() < 1e-4);
        let moved = t.weight(active[0]) - before;
        assert!((moved - 0.5 * d / 60.0).abs() < 1e-6, "moved {moved}");
    }

    #[test]
    fn coherence_freezes_after_opposite_errors() {
        let _heavy = crate::heavy_test();
        let t = small();
        let active = [3u64];
        t.set_weight(3, 0.0);
        // +4 then −4 with α = 0.5 and one active entry
        t.update(&active, 4.0, 0.5);
        assert_eq!(t.weight(3), 2.0);
        t.update(&active, 2.0 - 4.0, 0.5);
        // β = |4|/4 = 1 on the second step: w = 2 + 0.5·(−4) = 0
        assert_eq!(t.weight(3), 0.0);
        let (e, a) = t.coherence.as_ref().unwrap();
        assert_eq!(f32::from_bits(e[3].load(Relaxed)), 0.0);
        assert_eq!(f32::from_bits(a[3].load(Relaxed)), 8.0);
        // now |E|/A = 0: frozen whatever the error
        t.update(&active, 25.0, 0.5);
        assert_eq!(t.weight(3), 0.0);
    }

    #[test]
    fn clamp_limits_the_error() {
        let _heavy = crate::heavy_test();
        let t = small();
        let d = t.update(&[1, 2], 1000.0, 1.0);
        assert_eq!(d, DELTA_CLAMP);
    }

    #[test]
    fn memory_check_refuses_absurd_layouts() {
        let wide = Layout::parse("rows,cols,win23,win32,win24,win42,phase=all").unwrap();
        assert_eq!(bytes_needed(&wide, true), 69_600_000_000);
        if drop7::memory::available_memory().is_some_and(|m| m < 69_000_000_000) {
            let e = check_memory(&wide, true).unwrap_err();
            assert!(e.to_string().contains("69.6 GB"), "{e}");
        }
    }
}
