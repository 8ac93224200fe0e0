//! The hot loops of inference in three copies — portable Rust, AVX2 and AVX-512 (BW) — and
//! the choice among them, made once per process ([`Simd::chosen`]) and kept in every loaded
//! [`super::Network`], so the search pays one predictable `match` on a field per call instead
//! of a CPU-feature query.
//!
//! All three compute the same integers: the accumulator updates are `i16` additions that
//! cannot overflow (the trainer's clip bounds every accumulator, see the module note of
//! [`super`]), and the output's dot product is exact (each term at most `255² · 127 < 2²³`,
//! summed in `i32` blocks of 256 terms and the blocks in `i64`). `tests::every_path_agrees`
//! checks each copy the CPU can run against a plain sum, at widths that are and are not
//! multiples of the vector lengths.
//!
//! Why explicit intrinsics: left to the compiler, the output's dot product became 8-lane loops
//! behind a block-length prologue that cost more than the arithmetic at this network's widths,
//! and the baseline x86-64 build cannot use AVX2 without a run-time choice anyway.
//!
//! The trainer's `f32` loops ([`TrainKernels`]) live here too, for the same reason (the
//! laboratory crate forbids `unsafe`): they are lane-wise, so each vector copy is the portable
//! loop compiled with the path's features, giving the same bits on every path.
#![allow(unsafe_code)]

use std::sync::OnceLock;

/// An instruction set the inference (and training) loops are compiled for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Simd {
    /// Plain Rust (the compiler vectorises it for the build's target).
    Portable,
    /// 16 lanes of `i16` (x86-64 with AVX2).
    Avx2,
    /// 32 lanes of `i16` (x86-64 with AVX-512 F and BW).
    Avx512,
}

/// The process's choice, made at the first network load (or set before it).
static CHOSEN: OnceLock<Simd> = OnceLock::new();

impl Simd {
    /// Every path, narrowest first.
    pub const ALL: [Simd; 3] = [Simd::Portable, Simd::Avx2, Simd::Avx512];

    /// The name users type (`actuary bench --simd NAME`) and the engine prints.
    pub fn name(self) -> &'static str {
        match self {
            Simd::Portable => "portable",
            Simd::Avx2 => "avx2",
            Simd::Avx512 => "avx512",
        }
    }

    /// The path named `name` (as [`Simd::name`] writes it).
    pub fn parse(name: &str) -> Result<Simd, String> {
        Simd::ALL
            .into_iter()
            .find(|s| s.name() == name)
            .ok_or_else(|| format!("unknown SIMD path `{name}` (portable, avx2 or avx512)"))
    }

    /// Whether this CPU can run the path.
    pub fn supported(self) -> bool {
        match self {
            Simd::Portable => true,
            #[cfg(target_arch = "x86_64")]
            Simd::Avx2 => std::arch::is_x86_feature_detected!("avx2"),
            #[cfg(target_arch = "x86_64")]
            Simd::Avx512 => {
                std::arch::is_x86_feature_detected!("avx512f")
                    && std::arch::is_x86_feature_detected!("avx512bw")
            }
            #[cfg(not(target_arch = "x86_64"))]
            _ => false,
        }
    }

    /// The widest path this CPU runs.
    pub fn best() -> Simd {
        Simd::ALL
            .into_iter()
            .rev()
            .find(|s| s.supported())
            .unwrap_or(Simd::Portable)
    }

    /// The process's path: [`Simd::choose`]'s, or else the widest the CPU runs (fixed at the
    /// first call).
    pub fn chosen() -> Simd {
        *CHOSEN.get_or_init(Simd::best)
    }

    /// Fix the process's path before any network is loaded (for `bench --simd` and speed
    /// comparisons). Refused when the CPU cannot run it or another path is already fixed.
    pub fn choose(self) -> Result<(), String> {
        if !self.supported() {
            return Err(format!(
                "this CPU cannot run the {} path (it runs {})",
                self.name(),
                Simd::best().name()
            ));
        }
        match *CHOSEN.get_or_init(|| self) {
            s if s == self => Ok(()),
            s => Err(format!(
                "the {} path is already in use (chosen before {} was asked for)",
                s.name(),
                self.name()
            )),
        }
    }
}

/// A path this CPU runs: only [`Runnable::new`] makes one, after checking, so the kernels
/// below are safe to call with it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Runnable(Simd);

impl Runnable {
    /// `simd` if this CPU runs it.
    pub(crate) fn new(simd: Simd) -> Option<Runnable> {
        simd.supported().then_some(Runnable(simd))
    }

    /// The process's path ([`Simd::chosen`], which is always supported).
    pub(crate) fn chosen() -> Runnable {
        Runnable::new(Simd::chosen()).unwrap_or(Runnable(Simd::Portable))
    }

    pub(crate) fn simd(self) -> Simd {
        self.0
    }
}

/// The trainer's lane-wise loops over `f32` rows (`actuary train-net`: a first-layer row into
/// an accumulator, a gradient into a first-layer row, the hidden layer's backward step), on a
/// path chosen once. Without a run-time choice the baseline x86-64 build runs them 4 lanes at a
/// time with SSE2, and SCReLU's slope as a branch per lane; the `x86-64-v3` build trained
/// 1.6–2.0× faster (docs/chess/speed.md).
///
/// Every path gives the same bits: each lane is the same `f32` operations in the same order on
/// every path (no reduction is among them), so a run is reproducible across CPUs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TrainKernels(Runnable);

/// Calls `$f` of the path `$k` holds with the arguments that follow.
macro_rules! on_path {
    ($k:expr, $f:ident($($a:expr),*)) => {
        match $k.0.0 {
            Simd::Portable => portable::$f($($a),*),
            // SAFETY: a `Runnable` holds only paths this CPU runs.
            #[cfg(target_arch = "x86_64")]
            Simd::Avx2 => unsafe { avx2::$f($($a),*) },
            #[cfg(target_arch = "x86_64")]
            Simd::Avx512 => unsafe { avx512::$f($($a),*) },
            #[cfg(not(target_arch = "x86_64"))]
            _ => portable::$f($($a),*),
        }
    };
}

impl TrainKernels {
    /// The widest path this CPU runs.
    pub fn best() -> TrainKernels {
        TrainKernels(Runnable::new(Simd::best()).unwrap_or(Runnable(Simd::Portable)))
    }

    /// `simd` if this CPU runs it.
    pub fn new(simd: Simd) -> Option<TrainKernels> {
        Runnable::new(simd).map(TrainKernels)
    }

    /// The path this handle runs.
    pub fn simd(self) -> Simd {
        self.0.simd()
    }

    /// `dst[i] += src[i]` for every lane of the shorter of the two.
    #[inline]
    pub fn add(self, dst: &mut [f32], src: &[f32]) {
        on_path!(self, add_f32(dst, src))
    }

    /// `dst[i] += a[i] + b[i]` (the first-layer bias's gradient from both perspectives).
    #[inline]
    pub fn add2(self, dst: &mut [f32], a: &[f32], b: &[f32]) {
        on_path!(self, add2_f32(dst, a, b))
    }

    /// One perspective's backward step through SCReLU, `y = clamp(x, 0, 1)²`, for an output
    /// gradient `d_out` and output weights `w`: `d[i] = d_out · w[i] · 2 · x[i]` where
    /// `0 < x[i] < 1` and 0 elsewhere (the accumulator's gradient), and `gw[i] += d_out · y[i]`
    /// (the output weights' gradient).
    #[inline]
    pub fn screlu_backward(self, d_out: f32, x: &[f32], w: &[f32], d: &mut [f32], gw: &mut [f32]) {
        on_path!(self, screlu_backward_f32(d_out, x, w, d, gw))
    }
}

/// `Σ clamp(a, 0, QA)² · w` over a half of the hidden layer.
#[inline]
pub(crate) fn screlu_dot(path: Runnable, a: &[i16], w: &[i16]) -> i64 {
    debug_assert_eq!(a.len(), w.len());
    match path.0 {
        Simd::Portable => portable::screlu_dot(a, w),
        // SAFETY: a `Runnable` holds only paths this CPU runs.
        #[cfg(target_arch = "x86_64")]
        Simd::Avx2 => unsafe { avx2::screlu_dot(a, w) },
        #[cfg(target_arch = "x86_64")]
        Simd::Avx512 => unsafe { avx512::screlu_dot(a, w) },
        #[cfg(not(target_arch = "x86_64"))]
        _ => portable::screlu_dot(a, w),
    }
}

/// `t = s − r + a` lane by lane (a quiet move: one feature out, one in).
#[inline]
pub(crate) fn sub_add(path: Runnable, s: &[i16], t: &mut [i16], r: &[i16], a: &[i16]) {
    match path.0 {
        Simd::Portable => portable::sub_add(s, t, r, a),
        // SAFETY: a `Runnable` holds only paths this CPU runs.
        #[cfg(target_arch = "x86_64")]
        Simd::Avx2 => unsafe { avx2::sub_add(s, t, r, a) },
        #[cfg(target_arch = "x86_64")]
        Simd::Avx512 => unsafe { avx512::sub_add(s, t, r, a) },
        #[cfg(not(target_arch = "x86_64"))]
        _ => portable::sub_add(s, t, r, a),
    }
}

/// `t = s − r1 − r2 + a` lane by lane (a capture: two features out, one in).
#[inline]
pub(crate) fn sub2_add(
    path: Runnable,
    s: &[i16],
    t: &mut [i16],
    r1: &[i16],
    r2: &[i16],
    a: &[i16],
) {
    match path.0 {
        Simd::Portable => portable::sub2_add(s, t, r1, r2, a),
        // SAFETY: a `Runnable` holds only paths this CPU runs.
        #[cfg(target_arch = "x86_64")]
        Simd::Avx2 => unsafe { avx2::sub2_add(s, t, r1, r2, a) },
        #[cfg(target_arch = "x86_64")]
        Simd::Avx512 => unsafe { avx512::sub2_add(s, t, r1, r2, a) },
        #[cfg(not(target_arch = "x86_64"))]
        _ => portable::sub2_add(s, t, r1, r2, a),
    }
}

/// The trainer's loops of a vector path: the portable loops compiled with the target features
/// `$feat` (one definition for AVX2 and AVX-512, which differ only in those).
#[cfg(target_arch = "x86_64")]
macro_rules! train_loops {
    ($feat:literal) => {
        #[target_feature(enable = $feat)]
        pub(super) fn add_f32(dst: &mut [f32], src: &[f32]) {
            portable::add_f32(dst, src);
        }

        #[target_feature(enable = $feat)]
        pub(super) fn add2_f32(dst: &mut [f32], a: &[f32], b: &[f32]) {
            portable::add2_f32(dst, a, b);
        }

        #[target_feature(enable = $feat)]
        pub(super) fn screlu_backward_f32(
            d_out: f32,
            x: &[f32],
            w: &[f32],
            d: &mut [f32],
            gw: &mut [f32],
        ) {
            portable::screlu_backward_f32(d_out, x, w, d, gw);
        }
    };
}

/// The portable copies; the vector copies run them on the lanes past their last full vector.
mod portable {
    /// Blocks of 256 terms are summed in `i32` (each term < 2²³), the blocks in `i64`. `v · w`
    /// fits an `i16` (255 · 127: the loader refuses output weights beyond ±127), so the
    /// products pair up as `pmaddwd` does.
    #[inline(always)]
    pub(super) fn screlu_dot(a: &[i16], w: &[i16]) -> i64 {
        let mut total = 0i64;
        for (ab, wb) in a.chunks(256).zip(w.chunks(256)) {
            let s: i32 = ab
                .iter()
                .zip(wb)
                .map(|(&x, &w)| {
                    let v = x.clamp(0, super::super::QA as i16);
                    i32::from(v.wrapping_mul(w)) * i32::from(v)
                })
                .sum();
            total += i64::from(s);
        }
        total
    }

    #[inline(always)]
    pub(super) fn sub_add(s: &[i16], t: &mut [i16], r: &[i16], a: &[i16]) {
        for (((t, &s), &r), &a) in t.iter_mut().zip(s).zip(r).zip(a) {
            *t = s - r + a;
        }
    }

    // The trainer's loops are lane-wise, so the compiler vectorises them for whatever features
    // its caller has: the vector copies are these loops compiled with AVX2 or AVX-512 enabled.

    #[inline(always)]
    pub(super) fn add_f32(dst: &mut [f32], src: &[f32]) {
        for (d, &x) in dst.iter_mut().zip(src) {
            *d += x;
        }
    }

    #[inline(always)]
    pub(super) fn add2_f32(dst: &mut [f32], a: &[f32], b: &[f32]) {
        for ((d, &a), &b) in dst.iter_mut().zip(a).zip(b) {
            *d += a + b;
        }
    }

    #[inline(always)]
    pub(super) fn screlu_backward_f32(
        d_out: f32,
        x: &[f32],
        w: &[f32],
        d: &mut [f32],
        gw: &mut [f32],
    ) {
        for (((d, gw), &x), &w) in d.iter_mut().zip(gw.iter_mut()).zip(x).zip(w) {
            *d = if x > 0.0 && x < 1.0 {
                d_out * w * 2.0 * x
            } else {
                0.0
            };
            let c = x.clamp(0.0, 1.0);
            *gw += d_out * (c * c);
        }
    }

    #[inline(always)]
    pub(super) fn sub2_add(s: &[i16], t: &mut [i16], r1: &[i16], r2: &[i16], a: &[i16]) {
        for ((((t, &s), &r1), &r2), &a) in t.iter_mut().zip(s).zip(r1).zip(r2).zip(a) {
            *t = s - r1 - r2 + a;
        }
    }
}

/// The first `full(n, lanes)` of `n` lanes fill whole vectors; the rest go the portable way.
const fn full(n: usize, lanes: usize) -> usize {
    n - n % lanes
}

/// The AVX2 copies: 16 lanes of `i16`.
#[cfg(target_arch = "x86_64")]
mod avx2 {
    use super::{full, portable};
    use std::arch::x86_64::{
        __m256i, _mm_add_epi32, _mm_cvtsi128_si32, _mm_shuffle_epi32, _mm256_add_epi16,
        _mm256_add_epi32, _mm256_castsi256_si128, _mm256_extracti128_si256, _mm256_loadu_si256,
        _mm256_madd_epi16, _mm256_max_epi16, _mm256_min_epi16, _mm256_mullo_epi16,
        _mm256_set1_epi16, _mm256_setzero_si256, _mm256_storeu_si256, _mm256_sub_epi16,
    };

    const LANES: usize = 16;

    /// 16 lanes from `p`. Safety: 16 readable `i16` behind `p`, on a CPU with AVX2.
    #[inline(always)]
    unsafe fn load(p: *const i16) -> __m256i {
        // SAFETY: the caller's promise; unaligned loads are allowed.
        unsafe { _mm256_loadu_si256(p.cast()) }
    }

    /// 16 lanes to `p`. Safety: 16 writable `i16` behind `p`, on a CPU with AVX2.
    #[inline(always)]
    unsafe fn store(p: *mut i16, v: __m256i) {
        // SAFETY: the caller's promise; unaligned stores are allowed.
        unsafe { _mm256_storeu_si256(p.cast(), v) }
    }

    // The trainer's loops: the portable ones compiled with AVX2 (8 lanes of `f32`).
    train_loops!("avx2");

    #[target_feature(enable = "avx2")]
    pub(super) fn screlu_dot(a: &[i16], w: &[i16]) -> i64 {
        let n = full(a.len().min(w.len()), LANES);
        let zero = _mm256_setzero_si256();
        let qa = _mm256_set1_epi16(super::super::QA as i16);
        let mut total = 0i64;
        let mut block = 0;
        // blocks of 256 terms, as the portable copy: their sum stays inside an i32
        while block < n {
            let end = (block + 256).min(n);
            let mut acc = _mm256_setzero_si256();
            let mut i = block;
            while i < end {
                // SAFETY: i + 16 <= end <= n <= both lengths; the CPU has AVX2.
                let (x, y) = unsafe { (load(a.as_ptr().add(i)), load(w.as_ptr().add(i))) };
                let v = _mm256_min_epi16(_mm256_max_epi16(x, zero), qa);
                // v·w fits an i16 (255 · 127); pmaddwd multiplies by v again and adds pairs
                acc = _mm256_add_epi32(acc, _mm256_madd_epi16(_mm256_mullo_epi16(v, y), v));
                i += LANES;
            }
            let s = _mm_add_epi32(
                _mm256_castsi256_si128(acc),
                _mm256_extracti128_si256::<1>(acc),
            );
            let s = _mm_add_epi32(s, _mm_shuffle_epi32::<0b01_00_11_10>(s));
            let s = _mm_add_epi32(s, _mm_shuffle_epi32::<0b10_11_00_01>(s));
            total += i64::from(_mm_cvtsi128_si32(s));
            block = end;
        }
        total + portable::screlu_dot(&a[n..], &w[n..])
    }

    #[target_feature(enable = "avx2")]
    pub(super) fn sub_add(s: &[i16], t: &mut [i16], r: &[i16], a: &[i16]) {
        let n = full(t.len().min(s.len()).min(r.len()).min(a.len()), LANES);
        let mut i = 0;
        while i < n {
            // SAFETY: i + 16 <= n <= every length; the CPU has AVX2.
            unsafe {
                let v = _mm256_add_epi16(
                    _mm256_sub_epi16(load(s.as_ptr().add(i)), load(r.as_ptr().add(i))),
                    load(a.as_ptr().add(i)),
                );
                store(t.as_mut_ptr().add(i), v);
            }
            i += LANES;
        }
        portable::sub_add(&s[n..], &mut t[n..], &r[n..], &a[n..]);
    }

    #[target_feature(enable = "avx2")]
    pub(super) fn sub2_add(s: &[i16], t: &mut [i16], r1: &[i16], r2: &[i16], a: &[i16]) {
        let n = full(
            t.len()
                .min(s.len())
                .min(r1.len())
                .min(r2.len())
                .min(a.len()),
            LANES,
        );
        let mut i = 0;
        while i < n {
            // SAFETY: i + 16 <= n <= every length; the CPU has AVX2.
            unsafe {
                let out = _mm256_add_epi16(load(r1.as_ptr().add(i)), load(r2.as_ptr().add(i)));
                let v = _mm256_add_epi16(
                    _mm256_sub_epi16(load(s.as_ptr().add(i)), out),
                    load(a.as_ptr().add(i)),
                );
                store(t.as_mut_ptr().add(i), v);
            }
            i += LANES;
        }
        portable::sub2_add(&s[n..], &mut t[n..], &r1[n..], &r2[n..], &a[n..]);
    }
}

/// The AVX-512 copies: 32 lanes of `i16` (AVX-512 BW for the 16-bit lanes).
#[cfg(target_arch = "x86_64")]
mod avx512 {
    use super::{full, portable};
    use std::arch::x86_64::{
        __m512i, _mm512_add_epi16, _mm512_add_epi32, _mm512_loadu_epi16, _mm512_madd_epi16,
        _mm512_max_epi16, _mm512_min_epi16, _mm512_mullo_epi16, _mm512_reduce_add_epi32,
        _mm512_set1_epi16, _mm512_setzero_si512, _mm512_storeu_epi16, _mm512_sub_epi16,
    };

    const LANES: usize = 32;

    /// 32 lanes from `p`. Safety: 32 readable `i16` behind `p`, on a CPU with AVX-512 BW.
    #[inline(always)]
    unsafe fn load(p: *const i16) -> __m512i {
        // SAFETY: the caller's promise; unaligned loads are allowed.
        unsafe { _mm512_loadu_epi16(p) }
    }

    /// 32 lanes to `p`. Safety: 32 writable `i16` behind `p`, on a CPU with AVX-512 BW.
    #[inline(always)]
    unsafe fn store(p: *mut i16, v: __m512i) {
        // SAFETY: the caller's promise; unaligned stores are allowed.
        unsafe { _mm512_storeu_epi16(p, v) }
    }

    // The trainer's loops: the portable ones compiled with AVX-512 F (16 lanes of `f32`).
    train_loops!("avx512f,avx512bw");

    #[target_feature(enable = "avx512f,avx512bw")]
    pub(super) fn screlu_dot(a: &[i16], w: &[i16]) -> i64 {
        let n = full(a.len().min(w.len()), LANES);
        let zero = _mm512_setzero_si512();
        let qa = _mm512_set1_epi16(super::super::QA as i16);
        let mut total = 0i64;
        let mut block = 0;
        while block < n {
            let end = (block + 256).min(n);
            let mut acc = _mm512_setzero_si512();
            let mut i = block;
            while i < end {
                // SAFETY: i + 32 <= end <= n <= both lengths; the CPU has AVX-512 BW.
                let (x, y) = unsafe { (load(a.as_ptr().add(i)), load(w.as_ptr().add(i))) };
                let v = _mm512_min_epi16(_mm512_max_epi16(x, zero), qa);
                acc = _mm512_add_epi32(acc, _mm512_madd_epi16(_mm512_mullo_epi16(v, y), v));
                i += LANES;
            }
            total += i64::from(_mm512_reduce_add_epi32(acc));
            block = end;
        }
        total + portable::screlu_dot(&a[n..], &w[n..])
    }

    #[target_feature(enable = "avx512f,avx512bw")]
    pub(super) fn sub_add(s: &[i16], t: &mut [i16], r: &[i16], a: &[i16]) {
        let n = full(t.len().min(s.len()).min(r.len()).min(a.len()), LANES);
        let mut i = 0;
        while i < n {
            // SAFETY: i + 32 <= n <= every length; the CPU has AVX-512 BW.
            unsafe {
                let v = _mm512_add_epi16(
                    _mm512_sub_epi16(load(s.as_ptr().add(i)), load(r.as_ptr().add(i))),
                    load(a.as_ptr().add(i)),
                );
                store(t.as_mut_ptr().add(i), v);
            }
            i += LANES;
        }
        portable::sub_add(&s[n..], &mut t[n..], &r[n..], &a[n..]);
    }

    #[target_feature(enable = "avx512f,avx512bw")]
    pub(super) fn sub2_add(s: &[i16], t: &mut [i16], r1: &[i16], r2: &[i16], a: &[i16]) {
        let n = full(
            t.len()
                .min(s.len())
                .min(r1.len())
                .min(r2.len())
                .min(a.len()),
            LANES,
        );
        let mut i = 0;
        while i < n {
            // SAFETY: i + 32 <= n <= every length; the CPU has AVX-512 BW.
            unsafe {
                let out = _mm512_add_epi16(load(r1.as_ptr().add(i)), load(r2.as_ptr().add(i)));
                let v = _mm512_add_epi16(
                    _mm512_sub_epi16(load(s.as_ptr().add(i)), out),
                    load(a.as_ptr().add(i)),
                );
                store(t.as_mut_ptr().add(i), v);
            }
            i += LANES;
        }
        portable::sub2_add(&s[n..], &mut t[n..], &r1[n..], &r2[n..], &a[n..]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nnue::QA;

    /// Every path this CPU runs against a plain `i64` sum and plain lane arithmetic, on random
    /// accumulators over the whole `i16` range (SCReLU clamps them) and weights within the
    /// loader's limits, at widths that are and are not multiples of 16 and 32.
    /// A xorshift64 stream: test data that is the same on every run.
    fn xorshift(mut x: u64) -> impl FnMut() -> u64 {
        move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        }
    }

    #[test]
    fn every_path_agrees() {
        let mut next = xorshift(0x9e37_79b9_7f4a_7c15);
        let paths: Vec<Runnable> = Simd::ALL.into_iter().filter_map(Runnable::new).collect();
        assert_eq!(paths[0].simd(), Simd::Portable);
        for h in [1usize, 7, 16, 31, 32, 48, 64, 100, 128, 256, 300, 1024] {
            let a: Vec<i16> = (0..h).map(|_| next() as i16).collect();
            let w: Vec<i16> = (0..h).map(|_| (next() % 255) as i16 - 127).collect();
            let want: i64 = a
                .iter()
                .zip(&w)
                .map(|(&a, &w)| {
                    let v = i64::from(a.clamp(0, QA as i16));
                    v * v * i64::from(w)
                })
                .sum();
            let mut small =
                || -> Vec<i16> { (0..h).map(|_| (next() % 1001) as i16 - 500).collect() };
            let (s, r1, r2, ad) = (small(), small(), small(), small());
            for &p in &paths {
                let name = p.simd().name();
                assert_eq!(screlu_dot(p, &a, &w), want, "{name} h {h}");
                let mut t = vec![0i16; h];
                sub2_add(p, &s, &mut t, &r1, &r2, &ad);
                for i in 0..h {
                    assert_eq!(t[i], s[i] - r1[i] - r2[i] + ad[i], "{name} h {h} lane {i}");
                }
                sub_add(p, &s, &mut t, &r1, &ad);
                for i in 0..h {
                    assert_eq!(t[i], s[i] - r1[i] + ad[i], "{name} h {h} lane {i}");
                }
            }
        }
    }

    /// Every path's trainer loops against plain scalar arithmetic, bit for bit, at widths that
    /// are and are not multiples of 8 and 16, with sums that round and activations on both
    /// sides of SCReLU's bounds (and exactly on them).
    #[test]
    fn every_train_kernel_path_gives_the_same_bits() {
        let mut stream = xorshift(0x2545_f491_4f6c_dd1d);
        let mut next = move || (stream() >> 40) as f32 / (1u64 << 24) as f32 - 0.5;
        let paths: Vec<TrainKernels> = Simd::ALL
            .into_iter()
            .filter_map(TrainKernels::new)
            .collect();
        assert_eq!(paths[0].simd(), Simd::Portable);
        assert_eq!(TrainKernels::best().simd(), Simd::best());
        let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<u32>>();
        for h in [1usize, 7, 8, 15, 16, 33, 128, 256, 1000] {
            let d: Vec<f32> = (0..h).map(|_| next() * 1e3).collect();
            let a: Vec<f32> = (0..h).map(|_| next() * 1e-3).collect();
            let b: Vec<f32> = (0..h).map(|_| next()).collect();
            // Accumulators from -1 to 2, with the bounds 0 and 1 themselves among them.
            let acc: Vec<f32> = (0..h)
                .map(|i| match i % 9 {
                    0 => 0.0,
                    1 => 1.0,
                    _ => next() * 3.0 + 0.5,
                })
                .collect();
            let d_out = next() * 0.1;
            let want_add: Vec<f32> = (0..h).map(|i| d[i] + a[i]).collect();
            let want_add2: Vec<f32> = (0..h).map(|i| d[i] + (a[i] + b[i])).collect();
            let want_d: Vec<f32> = (0..h)
                .map(|i| {
                    let x = acc[i];
                    if x > 0.0 && x < 1.0 {
                        d_out * b[i] * 2.0 * x
                    } else {
                        0.0
                    }
                })
                .collect();
            let want_gw: Vec<f32> = (0..h)
                .map(|i| {
                    let c = acc[i].clamp(0.0, 1.0);
                    d[i] + d_out * (c * c)
                })
                .collect();
            assert!(
                want_d.iter().any(|&v| v != 0.0) || h < 8,
                "h {h}: no lane inside (0, 1)"
            );
            for &p in &paths {
                let name = p.simd().name();
                let mut t = d.clone();
                p.add(&mut t, &a);
                assert_eq!(bits(&t), bits(&want_add), "add, {name}, h {h}");
                let mut t = d.clone();
                p.add2(&mut t, &a, &b);
                assert_eq!(bits(&t), bits(&want_add2), "add2, {name}, h {h}");
                let (mut dd, mut gw) = (vec![f32::NAN; h], d.clone());
                p.screlu_backward(d_out, &acc, &b, &mut dd, &mut gw);
                assert_eq!(bits(&dd), bits(&want_d), "screlu_backward d, {name}, h {h}");
                assert_eq!(
                    bits(&gw),
                    bits(&want_gw),
                    "screlu_backward gw, {name}, h {h}"
                );
            }
        }
    }

    #[test]
    fn names_parse_back_and_unknown_names_are_refused() {
        for s in Simd::ALL {
            assert_eq!(Simd::parse(s.name()), Ok(s));
        }
        assert!(Simd::parse("sse9").unwrap_err().contains("sse9"));
        assert!(Simd::best().supported());
    }
}
