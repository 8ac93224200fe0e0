//! Bit-exact reimplementation of NumPy's default random generator for the one
//! call our reference statistics scripts make:
//!
//! ```python
//! rng = numpy.random.default_rng(0xB0071EAF)
//! idx = rng.integers(0, n, size=(20000, n))   # int64, endpoint=False
//! ```
//!
//! # Why this exists
//!
//! The paired-bootstrap screens in this crate must report *the same* bounds as
//! the reference Python screens, to the last bit, so that a claim checked in
//! Rust and a claim checked by the reference script can never disagree because
//! of resampling noise. That is only possible if the resample indices are the
//! very same integers NumPy draws. This module therefore reproduces, without
//! dependencies and without `unsafe`:
//!
//! * [`SeedSequence`]: NumPy's `SeedSequence(entropy)` (pool size 4, the
//!   `INIT_A`/`MULT_A` entropy hash, the `MIX_MULT_L`/`MIX_MULT_R` mixer and the
//!   `INIT_B`/`MULT_B` output hash of `generate_state`);
//! * [`NumpyPcg64`]: NumPy's `PCG64` bit generator (128-bit LCG, XSL-RR output,
//!   seeded from `generate_state(4, uint64)` exactly as `pcg64_set_seed` and
//!   `pcg64_srandom_r` do, including the 32-bit half-word buffer NumPy keeps in
//!   the bit generator);
//! * [`NumpyPcg64::fill_integers`]: `Generator.integers(0, n, size=k)` for the
//!   default `int64` dtype, i.e. NumPy's `random_bounded_uint64_fill` with
//!   Lemire's rejection method (the 32-bit variant for `n <= 2**32`, the 64-bit
//!   variant above that).
//!
//! # Which 32-bit half comes first, and call boundaries
//!
//! For a range that fits in 32 bits NumPy draws 32-bit words with
//! `next_uint32`, which splits one 64-bit PCG64 output into two words: the
//! **low** half is returned first, the **high** half is kept and returned by the
//! next 32-bit request. That one-word buffer (`has_uint32`/`uinteger`) lives in
//! the *bit generator state*, not in the `integers` call (the `buf`/`bcnt`
//! arguments of NumPy's `buffered_bounded_lemire_uint32` are unused), so it
//! persists across calls. Consequently **calling [`NumpyPcg64::fill_integers`]
//! once per row gives exactly the same numbers as one big
//! `integers(0, n, size=(rows, n))` call**, even for odd row lengths; this was
//! checked against NumPy (see the tests). A caller can thus consume the
//! `20000 * n` draws row by row with one reusable row buffer, or through the
//! streaming handle [`NumpyPcg64::integers`] (`rng.integers(n).next()`).
//!
//! Verified against NumPy 2.4 (`pip install numpy`); the algorithms have been
//! stable since NumPy 1.17.

/// `SeedSequence` entropy-hash start constant (`INIT_A`).
const INIT_A: u32 = 0x43b0_d7e5;
/// `SeedSequence` entropy-hash multiplier (`MULT_A`).
const MULT_A: u32 = 0x931e_8875;
/// `SeedSequence` output-hash start constant (`INIT_B`).
const INIT_B: u32 = 0x8b51_f9dd;
/// `SeedSequence` output-hash multiplier (`MULT_B`).
const MULT_B: u32 = 0x58f3_8ded;
/// Left multiplier of the pool mixer (`MIX_MULT_L`).
const MIX_MULT_L: u32 = 0xca01_f9dd;
/// Right multiplier of the pool mixer (`MIX_MULT_R`).
const MIX_MULT_R: u32 = 0x4973_f715;
/// Xor-shift used throughout `SeedSequence` (half of a 32-bit word).
const XSHIFT: u32 = 16;
/// NumPy's `DEFAULT_POOL_SIZE`.
pub const POOL_SIZE: usize = 4;

/// The 128-bit multiplier of NumPy's PCG64 (`PCG_DEFAULT_MULTIPLIER_128`).
const PCG_MULT: u128 = 0x2360_ed05_1fc6_5da4_4385_df64_9fcc_f645;

/// NumPy's `SeedSequence(entropy)` with no spawn key and the default pool size.
///
/// Only the parts needed to seed `PCG64` are implemented: building the mixed
/// entropy pool and `generate_state`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SeedSequence {
    pool: [u32; POOL_SIZE],
}

/// The running `INIT_A`/`MULT_A` hash NumPy applies to every entropy word.
struct EntropyHasher {
    hash_const: u32,
}

impl EntropyHasher {
    fn hash(&mut self, value: u32) -> u32 {
        let mut v = value ^ self.hash_const;
        self.hash_const = self.hash_const.wrapping_mul(MULT_A);
        v = v.wrapping_mul(self.hash_const);
        v ^ (v >> XSHIFT)
    }
}

/// NumPy's pool mixing function `mix(x, y)`.
fn mix(x: u32, y: u32) -> u32 {
    let r = MIX_MULT_L
        .wrapping_mul(x)
        .wrapping_sub(MIX_MULT_R.wrapping_mul(y));
    r ^ (r >> XSHIFT)
}

impl SeedSequence {
    /// `SeedSequence(entropy)` for a non-negative Python int below `2**64`.
    ///
    /// NumPy splits the int into little-endian 32-bit words (`0` becomes the
    /// single word `[0]`), so seeds below `2**32` hash one word and larger
    /// seeds hash two.
    pub fn new(entropy: u64) -> Self {
        // Truncating casts are the point here: low word, then high word.
        let lo = entropy as u32;
        let hi = (entropy >> 32) as u32;
        if hi == 0 {
            Self::from_entropy_words(&[lo])
        } else {
            Self::from_entropy_words(&[lo, hi])
        }
    }

    /// `SeedSequence` from the little-endian 32-bit words of an arbitrary
    /// non-negative Python int (as NumPy's `_coerce_to_uint32_array` yields
    /// them, least significant word first).
    pub fn from_entropy_words(entropy: &[u32]) -> Self {
        let mut hasher = EntropyHasher { hash_const: INIT_A };
        let mut pool = [0u32; POOL_SIZE];
        for (i, slot) in pool.iter_mut().enumerate() {
            *slot = hasher.hash(entropy.get(i).copied().unwrap_or(0));
        }
        for src in 0..POOL_SIZE {
            for dst in 0..POOL_SIZE {
                if src != dst {
                    let h = hasher.hash(pool[src]);
                    pool[dst] = mix(pool[dst], h);
                }
            }
        }
        for &word in entropy.iter().skip(POOL_SIZE) {
            for slot in pool.iter_mut() {
                let h = hasher.hash(word);
                *slot = mix(*slot, h);
            }
        }
        Self { pool }
    }

    /// The mixed entropy pool (NumPy's `SeedSequence.pool`).
    pub fn pool(&self) -> [u32; POOL_SIZE] {
        self.pool
    }

    /// `generate_state(n_words, dtype=np.uint32)`.
    pub fn generate_state_u32(&self, n_words: usize) -> Vec<u32> {
        let mut hash_const = INIT_B;
        self.pool
            .iter()
            .cycle()
            .take(n_words)
            .map(|&word| {
                let mut v = word ^ hash_const;
                hash_const = hash_const.wrapping_mul(MULT_B);
                v = v.wrapping_mul(hash_const);
                v ^ (v >> XSHIFT)
            })
            .collect()
    }

    /// `generate_state(n_words, dtype=np.uint64)`: twice as many 32-bit words,
    /// paired little-endian (first word is the low half).
    pub fn generate_state_u64(&self, n_words: usize) -> Vec<u64> {
        self.generate_state_u32(2 * n_words)
            .chunks_exact(2)
            .map(|pair| u64::from(pair[0]) | (u64::from(pair[1]) << 32))
            .collect()
    }
}

/// NumPy's `PCG64` bit generator together with the bounded-integer sampler of
/// `Generator.integers`, bit-for-bit.
///
/// `NumpyPcg64::from_seed(s)` is `numpy.random.default_rng(s)` (for a Python
/// int `s < 2**64`): same raw stream as `PCG64(SeedSequence(s)).random_raw()`,
/// and [`fill_integers`](Self::fill_integers) yields the same values as
/// `default_rng(s).integers(0, n, size=k)`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NumpyPcg64 {
    state: u128,
    inc: u128,
    /// The high half of the last 64-bit output, pending for the next 32-bit
    /// request (NumPy's `has_uint32` / `uinteger`).
    pending_u32: Option<u32>,
}

impl NumpyPcg64 {
    /// `PCG64(SeedSequence(seed))`, the bit generator of
    /// `numpy.random.default_rng(seed)`.
    pub fn from_seed(seed: u64) -> Self {
        Self::from_seed_sequence(&SeedSequence::new(seed))
    }

    /// `PCG64(seed_sequence)`: the four words of `generate_state(4, uint64)`
    /// give `initstate = w0 << 64 | w1` and `initseq = w2 << 64 | w3`.
    pub fn from_seed_sequence(seed_sequence: &SeedSequence) -> Self {
        let w = seed_sequence.generate_state_u64(4);
        let initstate = (u128::from(w[0]) << 64) | u128::from(w[1]);
        let initseq = (u128::from(w[2]) << 64) | u128::from(w[3]);
        Self::from_initstate_initseq(initstate, initseq)
    }

    /// PCG's `srandom(initstate, initseq)` as NumPy runs it: start from state
    /// 0 with increment `2 * initseq + 1`, step once, add `initstate`, step
    /// again. The 32-bit buffer starts empty.
    pub fn from_initstate_initseq(initstate: u128, initseq: u128) -> Self {
        let mut rng = Self {
            state: 0,
            inc: (initseq << 1) | 1,
            pending_u32: None,
        };
        rng.step();
        rng.state = rng.state.wrapping_add(initstate);
        rng.step();
        rng
    }

    /// The LCG state and increment, as in NumPy's
    /// `bit_generator.state['state']`.
    pub fn pcg_state(&self) -> (u128, u128) {
        (self.state, self.inc)
    }

    /// The buffered high half waiting to be returned by the next 32-bit draw
    /// (`Some(uinteger)` when NumPy's `has_uint32 == 1`).
    pub fn pending_u32(&self) -> Option<u32> {
        self.pending_u32
    }

    fn step(&mut self) {
        self.state = self.state.wrapping_mul(PCG_MULT).wrapping_add(self.inc);
    }

    /// One raw 64-bit output (`random_raw()`): advance the LCG, then apply the
    /// XSL-RR output function to the *new* state. Does not touch the 32-bit
    /// buffer, exactly like NumPy.
    pub fn next_u64(&mut self) -> u64 {
        self.step();
        // Truncations select the high and low 64-bit halves; the rotation is
        // the top 6 bits of the state.
        let folded = ((self.state >> 64) as u64) ^ (self.state as u64);
        folded.rotate_right((self.state >> 122) as u32)
    }

    /// NumPy's `next_uint32`: the low half of a fresh 64-bit output, with the
    /// high half buffered for the following call.
    pub fn next_u32(&mut self) -> u32 {
        if let Some(word) = self.pending_u32.take() {
            return word;
        }
        let raw = self.next_u64();
        self.pending_u32 = Some((raw >> 32) as u32);
        raw as u32
    }

    /// Lemire's nearly divisionless method on 32-bit words, inclusive range
    /// `0..=rng` (`rng != u32::MAX`), as NumPy's
    /// `buffered_bounded_lemire_uint32`.
    fn lemire_u32(&mut self, rng: u32) -> u32 {
        let rng_excl = rng + 1;
        let mut m = u64::from(self.next_u32()) * u64::from(rng_excl);
        let mut leftover = m as u32;
        if leftover < rng_excl {
            let threshold = (u32::MAX - rng) % rng_excl;
            while leftover < threshold {
                m = u64::from(self.next_u32()) * u64::from(rng_excl);
                leftover = m as u32;
            }
        }
        (m >> 32) as u32
    }

    /// Lemire's method on 64-bit words, inclusive range `0..=rng`
    /// (`rng != u64::MAX`), as NumPy's `bounded_lemire_uint64`.
    fn lemire_u64(&mut self, rng: u64) -> u64 {
        let rng_excl = rng + 1;
        let mut m = u128::from(self.next_u64()) * u128::from(rng_excl);
        let mut leftover = m as u64;
        if leftover < rng_excl {
            let threshold = (u64::MAX - rng) % rng_excl;
            while leftover < threshold {
                m = u128::from(self.next_u64()) * u128::from(rng_excl);
                leftover = m as u64;
            }
        }
        (m >> 64) as u64
    }

    /// One element of NumPy's `random_bounded_uint64_fill` with
    /// `use_masked=False`, inclusive range `0..=rng` (`rng = high - 1 - low`).
    fn bounded_inclusive(&mut self, rng: u64) -> u64 {
        if rng == 0 {
            0
        } else if let Ok(rng32) = u32::try_from(rng) {
            if rng32 == u32::MAX {
                u64::from(self.next_u32())
            } else {
                u64::from(self.lemire_u32(rng32))
            }
        } else if rng == u64::MAX {
            self.next_u64()
        } else {
            self.lemire_u64(rng)
        }
    }

    /// One draw of `integers(0, n)` (uniform on `0..n`).
    ///
    /// Consecutive calls give the same sequence as one `integers(0, n,
    /// size=k)` call, because NumPy's only carried-over state (the 32-bit
    /// half-word buffer) lives in the bit generator.
    ///
    /// # Panics
    ///
    /// If `n == 0` (NumPy raises `ValueError: high <= 0`).
    pub fn integer_below(&mut self, n: u64) -> u64 {
        assert!(n > 0, "integers(0, n) needs n > 0 (NumPy: high <= 0)");
        self.bounded_inclusive(n - 1)
    }

    /// Fill `out` exactly as one call `rng.integers(0, n, size=out.len())`
    /// (default `int64` dtype, `endpoint=False`) fills its array, in C order.
    ///
    /// For `integers(0, n, size=(rows, cols))`, calling this once per row
    /// with `out.len() == cols` yields the same rows as the single big call
    /// (verified against NumPy for odd `cols`, where a row ends in the middle
    /// of a 64-bit output). `n == 1` consumes no randomness, as in NumPy.
    ///
    /// # Panics
    ///
    /// If `n == 0` (NumPy raises `ValueError: high <= 0`).
    pub fn fill_integers(&mut self, n: u64, out: &mut [u64]) {
        assert!(n > 0, "integers(0, n) needs n > 0 (NumPy: high <= 0)");
        let rng = n - 1;
        for slot in out.iter_mut() {
            *slot = self.bounded_inclusive(rng);
        }
    }

    /// A streaming view of `rng.integers(0, n, size=...)`: each
    /// [`BoundedIntegers::next`] is the next element of the (C-order) output
    /// array, so a caller can walk the `20000 * n` draws of
    /// `integers(0, n, size=(20000, n))` without allocating them. Because the
    /// 32-bit buffer lives in `self`, dropping the stream and calling
    /// `integers` again continues the same sequence.
    ///
    /// # Panics
    ///
    /// If `n == 0` (NumPy raises `ValueError: high <= 0`).
    pub fn integers(&mut self, n: u64) -> BoundedIntegers<'_> {
        assert!(n > 0, "integers(0, n) needs n > 0 (NumPy: high <= 0)");
        BoundedIntegers {
            rng: self,
            inclusive_max: n - 1,
        }
    }
}

/// Endless stream of `integers(0, n)` draws borrowed from a [`NumpyPcg64`];
/// see [`NumpyPcg64::integers`].
#[derive(Debug)]
pub struct BoundedIntegers<'a> {
    rng: &'a mut NumpyPcg64,
    inclusive_max: u64,
}

impl BoundedIntegers<'_> {
    /// The next draw, uniform on `0..n`.
    ///
    /// Deliberately not `Iterator::next`: the stream never ends, and an
    /// `Option` would only add an `unwrap` at every resampling site.
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> u64 {
        self.rng.bounded_inclusive(self.inclusive_max)
    }

    /// Fill `out` with the next `out.len()` draws (same as
    /// [`NumpyPcg64::fill_integers`]).
    pub fn fill(&mut self, out: &mut [u64]) {
        for slot in out.iter_mut() {
            *slot = self.next();
        }
    }
}

#[cfg(test)]
mod tests {
    //! Every expected value below was printed by NumPy 2.4.6, e.g.
    //! `np.random.default_rng(0xB0071EAF).integers(0, 64, size=20).tolist()`.

    use super::*;

    const SEED: u64 = 0xB007_1EAF;

    /// `default_rng(seed).integers(0, n, size=count)` via one fill call.
    fn draw(seed: u64, n: u64, count: usize) -> Vec<u64> {
        let mut out = vec![0; count];
        NumpyPcg64::from_seed(seed).fill_integers(n, &mut out);
        out
    }

    #[test]
    fn seed_sequence_generate_state_matches_numpy() {
        // np.random.SeedSequence(s).generate_state(4, np.uint64)
        assert_eq!(
            SeedSequence::new(SEED).generate_state_u64(4),
            [
                0x0ac2_3be4_8d92_0774,
                0x1da3_69d4_8fbb_e66e,
                0x7289_363f_3ef6_4860,
                0x931a_b90d_0676_6e23
            ]
        );
        assert_eq!(
            SeedSequence::new(0).generate_state_u64(4),
            [
                0xdb2c_d7e7_b0f4_78be,
                0xabf4_641a_2c71_ba49,
                0x20c6_ed6d_9d7b_8d41,
                0x2c40_99de_223c_39d4
            ]
        );
        // The u64 view pairs u32 words little-endian.
        let ss = SeedSequence::new(SEED);
        let w32 = ss.generate_state_u32(2);
        assert_eq!(
            ss.generate_state_u64(1)[0],
            u64::from(w32[0]) | (u64::from(w32[1]) << 32)
        );
    }

    #[test]
    fn pcg64_initial_state_matches_numpy() {
        // default_rng(SEED).bit_generator.state
        let rng = NumpyPcg64::from_seed(SEED);
        assert_eq!(
            rng.pcg_state(),
            (
                227_968_730_519_100_129_452_758_434_193_977_853_200,
                304_488_872_900_156_649_274_843_246_561_902_517_319
            )
        );
        assert_eq!(rng.pending_u32(), None);
    }

    #[test]
    fn raw_outputs_match_numpy() {
        // PCG64(SeedSequence(s)).random_raw(k)
        let mut a = NumpyPcg64::from_seed(SEED);
        let got: Vec<u64> = (0..6).map(|_| a.next_u64()).collect();
        assert_eq!(
            got,
            [
                6_530_406_894_459_196_408,
                12_083_695_870_379_798_637,
                11_189_821_908_896_287_336,
                9_096_352_118_305_179_150,
                1_192_792_321_075_565_973,
                17_491_415_669_332_562_472
            ]
        );
        let mut b = NumpyPcg64::from_seed(0);
        let got: Vec<u64> = (0..6).map(|_| b.next_u64()).collect();
        assert_eq!(
            got,
            [
                11_749_869_230_777_074_271,
                4_976_686_463_289_251_617,
                755_828_109_848_996_024,
                304_881_062_738_325_533,
                15_002_187_965_291_974_971,
                16_837_368_535_893_154_894
            ]
        );
        // A two-word seed (2**64 - 1).
        let mut c = NumpyPcg64::from_seed(u64::MAX);
        let got: Vec<u64> = (0..3).map(|_| c.next_u64()).collect();
        assert_eq!(
            got,
            [
                12_544_278_110_101_001_871,
                15_593_249_672_699_323_225,
                136_562_751_618_339_402
            ]
        );
    }

    #[test]
    fn integers_small_ranges_match_numpy() {
        let cases: [(u64, [u64; 20]); 5] = [
            (
                64,
                [
                    35, 22, 13, 41, 26, 38, 38, 31, 55, 4, 45, 60, 22, 18, 19, 11, 47, 55, 54, 10,
                ],
            ),
            (
                256,
                [
                    143, 90, 55, 167, 107, 155, 155, 126, 220, 16, 181, 242, 88, 75, 78, 45, 189,
                    222, 216, 40,
                ],
            ),
            (
                1000,
                [
                    558, 354, 218, 655, 420, 606, 607, 493, 861, 64, 708, 948, 345, 296, 306, 175,
                    739, 868, 844, 157,
                ],
            ),
            (
                70_000,
                [
                    39102, 24780, 15269, 45854, 29434, 42462, 42506, 34517, 60299, 4526, 49565,
                    66374, 24161, 20747, 21457, 12316, 51747, 60818, 59097, 11003,
                ],
            ),
            (
                100_000,
                [
                    55860, 35401, 21813, 65505, 42049, 60660, 60723, 49311, 86141, 6466, 70808,
                    94821, 34516, 29638, 30653, 17595, 73925, 86882, 84425, 15718,
                ],
            ),
        ];
        for (n, expected) in cases {
            assert_eq!(draw(SEED, n, 20), expected, "n = {n}");
        }
    }

    #[test]
    fn integers_across_a_rejection_match_numpy() {
        // For SEED, the first Lemire rejection for n = 70000 happens at draw
        // 25943 and for n = 100000 at draw 110120 (found with a Python model
        // of the algorithm); NumPy's values around those draws:
        // default_rng(SEED).integers(0, n, size=i + 4)[i - 3:i + 4]
        let cases: [(u64, usize, [u64; 7]); 2] = [
            (
                70_000,
                25_943,
                [42161, 726, 23894, 49707, 52072, 18738, 14408],
            ),
            (
                100_000,
                110_120,
                [69072, 37731, 94161, 74934, 35577, 91386, 88003],
            ),
        ];
        for (n, at, expected) in cases {
            let all = draw(SEED, n, at + 4);
            assert_eq!(all[at - 3..], expected, "n = {n}");
        }
        // n = 2**31 + 11 rejects almost half of all words.
        assert_eq!(
            draw(SEED, (1 << 31) + 11, 12),
            [
                760_239_423,
                468_441_144,
                1_406_727_350,
                903_005_496,
                1_304_027_917,
                1_849_879_251,
                1_520_593_179,
                741_244_575,
                658_279_212,
                1_587_530_726,
                1_813_019_564,
                996_557_020
            ]
        );
    }

    #[test]
    fn integers_wide_ranges_match_numpy() {
        // n = 2**32: plain next_uint32 words.
        assert_eq!(
            draw(SEED, 1 << 32, 6),
            [
                2_399_179_768,
                1_520_478_840,
                936_882_285,
                2_813_454_687,
                1_806_010_984,
                2_605_333_437
            ]
        );
        // n = 2**40 + 3: 64-bit Lemire.
        assert_eq!(
            draw(SEED, (1 << 40) + 3, 6),
            [
                389_242_583_184,
                720_244_399_929,
                666_965_359_981,
                542_184_836_764,
                71_095_962_588,
                1_042_569_617_592
            ]
        );
        // integers(0, 2**64 - 1, dtype=np.uint64)
        assert_eq!(
            draw(SEED, u64::MAX, 4),
            [
                6_530_406_894_459_196_407,
                12_083_695_870_379_798_636,
                11_189_821_908_896_287_335,
                9_096_352_118_305_179_149
            ]
        );
    }

    #[test]
    fn n_one_consumes_nothing() {
        // integers(0, 1, size=5) is all zeros and the next raw output is
        // still the first one.
        let mut rng = NumpyPcg64::from_seed(SEED);
        let mut out = [9u64; 5];
        rng.fill_integers(1, &mut out);
        assert_eq!(out, [0; 5]);
        assert_eq!(rng.next_u64(), 6_530_406_894_459_196_408);
    }

    #[test]
    fn rows_one_at_a_time_equal_one_big_call() {
        // default_rng(SEED).integers(0, 7, size=(3, 7)); NumPy gives the same
        // rows for three separate integers(0, 7, size=7) calls.
        let expected: [[u64; 7]; 3] = [
            [3, 2, 1, 4, 2, 4, 4],
            [3, 6, 0, 4, 6, 2, 2],
            [2, 1, 5, 6, 5, 1, 3],
        ];
        let mut rng = NumpyPcg64::from_seed(SEED);
        let mut row = [0u64; 7];
        for want in expected {
            rng.fill_integers(7, &mut row);
            assert_eq!(row, want);
        }
        let mut big = NumpyPcg64::from_seed(SEED);
        let mut all = [0u64; 21];
        big.fill_integers(7, &mut all);
        assert_eq!(all[..], expected.concat());
        assert_eq!(big, rng);
        // The streaming view: one stream for everything, or a fresh stream
        // per row, walk the same sequence.
        let mut one = NumpyPcg64::from_seed(SEED);
        let mut stream = one.integers(7);
        let streamed: Vec<u64> = (0..21).map(|_| stream.next()).collect();
        assert_eq!(streamed, expected.concat());
        let mut per_row = NumpyPcg64::from_seed(SEED);
        for want in expected {
            per_row.integers(7).fill(&mut row);
            assert_eq!(row, want);
        }
        assert_eq!(per_row, rng);
        assert_eq!(one, rng);
    }

    #[test]
    fn buffer_state_matches_numpy() {
        // After integers(0, 7, size=3): has_uint32 = 1, uinteger = 2813454687.
        let mut rng = NumpyPcg64::from_seed(SEED);
        let mut three = [0u64; 3];
        rng.fill_integers(7, &mut three);
        assert_eq!(rng.pending_u32(), Some(2_813_454_687));
        assert_eq!(
            rng.pcg_state().0,
            85_802_732_503_557_457_504_184_689_855_484_500_986
        );
        // After a second such call the buffer is drained (has_uint32 = 0).
        rng.fill_integers(7, &mut three);
        assert_eq!(rng.pending_u32(), None);
        assert_eq!(
            rng.pcg_state().0,
            266_892_428_698_481_932_704_964_312_880_546_194_089
        );
    }

    /// `numpy.quantile(values, q)` with the default `method="linear"`,
    /// including NumPy's two-sided `_lerp`.
    fn numpy_quantile(sorted: &[f64], q: f64) -> f64 {
        let virtual_index = q * (sorted.len() - 1) as f64;
        let lo = virtual_index.floor();
        let gamma = virtual_index - lo;
        let i = lo as usize;
        let a = sorted[i];
        let b = sorted[(i + 1).min(sorted.len() - 1)];
        let diff = b - a;
        if gamma >= 0.5 {
            b - diff * (1.0 - gamma)
        } else {
            a + diff * gamma
        }
    }

    /// NumPy's pairwise sum for a block of exactly eight values, divided by 8.
    fn numpy_mean8(v: [f64; 8]) -> f64 {
        (((v[0] + v[1]) + (v[2] + v[3])) + ((v[4] + v[5]) + (v[6] + v[7]))) / 8.0
    }

    fn assert_close(got: f64, want: f64, rel: f64) {
        let tol = rel * want.abs();
        assert!(
            (got - want).abs() <= tol,
            "got {got:?}, NumPy gave {want:?}"
        );
    }

    #[test]
    fn paired_bootstrap_bounds_match_numpy() {
        // rng = default_rng(SEED); idx = rng.integers(0, 8, size=(20000, 8))
        // means = d[idx].mean(axis=1)
        // np.quantile(means, [0.025, 0.05, 0.5, 0.95, 0.975]), means.sum(),
        // idx[-1], rng.bit_generator.random_raw()
        struct Case {
            d: [f64; 8],
            quantiles: [f64; 5],
            sum: f64,
            first: [f64; 3],
        }
        let cases = [
            Case {
                d: [3.0, -1.0, 4.0, 1.0, -5.0, 9.0, 2.0, 6.0],
                quantiles: [-0.5, 0.0, 2.375, 4.625, 5.125],
                sum: 47566.375,
                first: [-0.125, 3.875, 1.375],
            },
            Case {
                d: [0.31, -0.17, 0.043, 1.9, -0.55, 0.0071, 0.26, -0.8],
                quantiles: [
                    -0.3312625,
                    -0.275_911_875_000_000_03,
                    0.102_512_499_999_999_98,
                    0.5984,
                    0.713_249_999_999_999_9,
                ],
                sum: 2_471.390_249_999_999_5,
                first: [
                    0.253_762_499_999_999_95,
                    -0.0329875,
                    0.197_512_499_999_999_98,
                ],
            },
        ];
        const RESAMPLES: usize = 20_000;
        for case in cases {
            // Walk all 20000 * 8 draws through one stream, row by row.
            let mut rng = NumpyPcg64::from_seed(SEED);
            let mut draws = rng.integers(8);
            let mut row = [0u64; 8];
            let mut means = Vec::with_capacity(RESAMPLES);
            for _ in 0..RESAMPLES {
                draws.fill(&mut row);
                means.push(numpy_mean8(row.map(|i| case.d[i as usize])));
            }
            assert_eq!(row, [7, 0, 5, 2, 6, 5, 5, 2]);
            assert_eq!(rng.next_u64(), 2_391_160_824_294_058_622);
            for (got, want) in means.iter().zip(case.first) {
                assert_close(*got, want, 1e-12);
            }
            // NumPy sums pairwise, this sums left to right: allow rounding.
            assert_close(means.iter().sum(), case.sum, 1e-11);
            means.sort_by(f64::total_cmp);
            for (q, want) in [0.025, 0.05, 0.5, 0.95, 0.975]
                .into_iter()
                .zip(case.quantiles)
            {
                let got = numpy_quantile(&means, q);
                if want == 0.0 {
                    assert_eq!(got, 0.0, "q = {q}");
                } else {
                    assert_close(got, want, 1e-12);
                }
            }
        }
    }
}
