//! Feature extraction: the active table entries of a state, straight from the packed column
//! words, with no cell unpacked one by one. Three builds give the same indices, picked at run
//! time:
//!
//! - `vbmi` (AVX-512 VBMI): every pattern is a base-10 number of at most eight cells, so
//!   eight indices come from one byte permutation of the unpacked cells and three
//!   multiply-adds (18 ns per board for arm C here);
//! - AVX2: for each column one pass computes its cells by row and its 2- and 3-cell vertical
//!   windows for every window top at once (8 lanes, one per row), and folds them into the row
//!   patterns and the win23/win32 placements (a win32 placement is three 2-cell column
//!   windows side by side, so each window is computed once and shared); columns and the rare
//!   win24/win42 families use small decimal lookup tables (29 ns);
//! - portable: the AVX2 build's code without the intrinsics, for other CPUs.
//!
//! Indices are in storage order (see [`crate::layout`]): placement offset + pattern × stride.
//! Measured with `cargo bench -p ntuple --bench features`.

use drop7::board::Board;

use crate::layout::{Family, Layout};

pub(crate) mod vbmi;

pub use crate::layout::MAX_ACTIVE;

/// Room for indices in [`Active`]: [`MAX_ACTIVE`] rounded up to whole groups of eight, so the
/// vector extraction always stores full 8-lane groups.
pub const INDEX_CAPACITY: usize = MAX_ACTIVE.next_multiple_of(8);

/// `DEC8[x]`: the two nibbles of `x` read as decimal digits, low nibble least significant
/// (cell codes are 0–9, so every nibble is a digit). 256 bytes.
static DEC8: [u8; 1 << 8] = {
    let mut t = [0u8; 1 << 8];
    let mut x = 0;
    while x < t.len() {
        t[x] = ((x & 0xF) + 10 * (x >> 4)) as u8;
        x += 1;
    }
    t
};

/// `DEC12[x]`: three nibbles as decimal digits. 8 KB, small enough to stay in L1 (a 16-bit
/// table would be 256 KB and live in L2).
static DEC12: [u16; 1 << 12] = {
    let mut t = [0u16; 1 << 12];
    let mut x = 0;
    while x < t.len() {
        t[x] = ((x & 0xF) + 10 * ((x >> 4) & 0xF) + 100 * (x >> 8)) as u16;
        x += 1;
    }
    t
};

/// Decimal value of a whole 7-nibble column word (cell of row 6 least significant).
#[inline(always)]
fn dec7(w: u32) -> u32 {
    DEC12[(w & 0xFFF) as usize] as u32
        + 1_000 * DEC12[((w >> 12) & 0xFFF) as usize] as u32
        + 1_000_000 * (w >> 24)
}

/// Two cells of `w` from nibble `lo` up, as a decimal number (nibble `lo` least significant).
#[inline(always)]
fn dec2(w: u32, lo: usize) -> u64 {
    DEC8[((w >> (4 * lo)) & 0xFF) as usize] as u64
}

/// Four cells of `w` from nibble `lo` up.
#[inline(always)]
fn dec4(w: u32, lo: usize) -> u64 {
    dec2(w, lo) + 100 * dec2(w, lo + 2)
}

/// Eight `u32` lanes: the shape every per-column quantity below is computed in, one lane per
/// row (or window top), so the compiler can do each step for all rows at once (one vector
/// instruction with AVX2, two with SSE2).
type Lanes = [u32; 8];

/// Shifts that bring cell(r + k, c) down to the low nibble of column word c, for lane r and
/// k = 0, 1, 2 (row 6 is nibble 0; past the bottom the shift reads nibble 7, always empty).
const ROW_SHIFT: [Lanes; 3] = [
    [24, 20, 16, 12, 8, 4, 0, 28],
    [20, 16, 12, 8, 4, 0, 28, 28],
    [16, 12, 8, 4, 0, 28, 28, 28],
];

/// Lane r = cell(r + k, c) of column word `w`.
#[inline(always)]
fn rows_below(w: u32, k: usize) -> Lanes {
    let mut o = [0u32; 8];
    for r in 0..8 {
        o[r] = (w >> ROW_SHIFT[k][r]) & 0xF;
    }
    o
}

/// Length of the pattern buffer: every active entry, 8 lanes of slack for a whole-register
/// store past a family's end, and scratch room for the rows/win23/win32 blocks of layouts
/// that lack them (they are always computed; see `Layout::common_at`).
pub const PATTERN_BUFFER: usize = MAX_ACTIVE + 8 + 8 + 38 + 38;

/// One pass over the columns computing each column's cells by row (`d[r]` = cell(r, c)) and
/// its vertical windows by top row (`two[t]` = 10·cell(t) + cell(t+1), `three[t]` =
/// 100·cell(t) + 10·cell(t+1) + cell(t+2)), folding them straight into the row numbers
/// (Σ_c cell(r, c)·10^c), the win23 placements (left 3-window + 1000 × right) and the win32
/// placements (three 2-windows in base 100) while the previous columns are still in
/// registers. Each block is multiplied by its storage stride `mul` (see [`Layout`]) and goes
/// to `pat` at `at` = [rows, win23, win32] in whole 8-lane stores,
/// after the pass and in ascending position: a block's unused lanes land on the next block,
/// on a family written later (cols, win24, win42), or on slack.
#[inline(always)]
fn common_portable(w: &[u32; 7], pat: &mut [u32; PATTERN_BUFFER], at: [usize; 3], mul: [u32; 3]) {
    let (mut rows, mut two1, mut two2, mut three1) = ([0u32; 8], [0u32; 8], [0u32; 8], [0u32; 8]);
    let mut win23 = [[0u32; 8]; 6];
    let mut win32 = [[0u32; 8]; 5];
    let mut pow = 1;
    for c in 0..7 {
        let d = rows_below(w[c], 0);
        let two = madd(&rows_below(w[c], 1), 10, &d);
        let three = madd(&rows_below(w[c], 2), 10, &two);
        rows = madd(&rows, pow, &d);
        pow *= 10;
        if c >= 1 {
            win23[c - 1] = madd(&three1, 1000, &three);
        }
        if c >= 2 {
            win32[c - 2] = madd(&madd(&two2, 100, &two1), 10_000, &two);
        }
        (two2, two1, three1) = (two1, two, three);
    }
    let zero = [0; 8];
    pat[at[0]..][..8].copy_from_slice(&madd(&zero, mul[0], &rows));
    for (c, p) in win23.iter().enumerate() {
        pat[at[1] + 5 * c..][..8].copy_from_slice(&madd(&zero, mul[1], p));
    }
    for (c, p) in win32.iter().enumerate() {
        pat[at[2] + 6 * c..][..8].copy_from_slice(&madd(&zero, mul[2], p));
    }
}

/// [`common_portable`] in AVX2: one 8-lane register per column quantity, variable shifts to
/// pull every row's nibble at once. Same numbers, about a third of the instructions.
#[cfg(target_arch = "x86_64")]
mod avx2 {
    use std::arch::x86_64::*;

    use super::PATTERN_BUFFER;

    #[inline(always)]
    fn lanes(v: __m256i) -> [u32; 8] {
        bytemuck::cast(v)
    }

    #[target_feature(enable = "avx2")]
    pub(super) fn common(
        w: &[u32; 7],
        pat: &mut [u32; PATTERN_BUFFER],
        at: [usize; 3],
        mul: [u32; 3],
    ) {
        let shift = [
            _mm256_setr_epi32(24, 20, 16, 12, 8, 4, 0, 28),
            _mm256_setr_epi32(20, 16, 12, 8, 4, 0, 28, 28),
            _mm256_setr_epi32(16, 12, 8, 4, 0, 28, 28, 28),
        ];
        let nibble = _mm256_set1_epi32(0xF);
        let k = |x: i32| _mm256_set1_epi32(x);
        let zero = _mm256_setzero_si256();
        let (mut rows, mut two1, mut two2, mut three1) = (zero, zero, zero, zero);
        let mut win23 = [zero; 6];
        let mut win32 = [zero; 5];
        let mut pow = 1;
        for c in 0..7 {
            let wc = _mm256_set1_epi32(w[c] as i32);
            let cell = |s: __m256i| _mm256_and_si256(_mm256_srlv_epi32(wc, s), nibble);
            let d = cell(shift[0]);
            let two = _mm256_add_epi32(_mm256_mullo_epi32(d, k(10)), cell(shift[1]));
            let three = _mm256_add_epi32(_mm256_mullo_epi32(two, k(10)), cell(shift[2]));
            rows = _mm256_add_epi32(rows, _mm256_mullo_epi32(d, k(pow)));
            pow *= 10;
            if c >= 1 {
                win23[c - 1] = _mm256_add_epi32(three1, _mm256_mullo_epi32(three, k(1000)));
            }
            if c >= 2 {
                win32[c - 2] = _mm256_add_epi32(
                    _mm256_add_epi32(two2, _mm256_mullo_epi32(two1, k(100))),
                    _mm256_mullo_epi32(two, k(10_000)),
                );
            }
            (two2, two1, three1) = (two1, two, three);
        }
        let [m0, m1, m2] = mul.map(|m| k(m as i32));
        pat[at[0]..][..8].copy_from_slice(&lanes(_mm256_mullo_epi32(rows, m0)));
        for (c, &p) in win23.iter().enumerate() {
            pat[at[1] + 5 * c..][..8].copy_from_slice(&lanes(_mm256_mullo_epi32(p, m1)));
        }
        for (c, &p) in win32.iter().enumerate() {
            pat[at[2] + 6 * c..][..8].copy_from_slice(&lanes(_mm256_mullo_epi32(p, m2)));
        }
    }
}

/// Lane-wise `a + k·b`.
#[inline(always)]
fn madd(a: &Lanes, k: u32, b: &Lanes) -> Lanes {
    let mut o = [0u32; 8];
    for i in 0..8 {
        o[i] = a[i] + k * b[i];
    }
    o
}

/// The active entry indices of one state, in feature order.
#[derive(Clone, Copy)]
pub struct Active {
    pub idx: [u64; INDEX_CAPACITY],
    pub len: usize,
    /// Work space of the extraction (pattern numbers × storage stride, before offsets), kept
    /// here so a reused
    /// `Active` needs no fresh zeroed buffer per board.
    pat: [u32; PATTERN_BUFFER],
}

impl Active {
    /// No entries (storage to fill with [`active_into`]).
    pub const EMPTY: Active = Active {
        idx: [0; INDEX_CAPACITY],
        len: 0,
        pat: [0; PATTERN_BUFFER],
    };

    #[inline]
    pub fn as_slice(&self) -> &[u64] {
        &self.idx[..self.len]
    }
}

impl std::fmt::Debug for Active {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.as_slice()).finish()
    }
}

/// Phase index `clamp(moves_remaining, 1, 5) − 1` (terminal states with 0 map to phase 0).
#[inline]
pub fn phase_index(moves_remaining: u8) -> u64 {
    (moves_remaining.clamp(1, 5) - 1) as u64
}

/// Active entries for `board` (canonicalised here: mirror when the mirror is smaller) with
/// `moves_remaining` moves until the rise.
#[inline]
pub fn active(layout: &Layout, board: &Board, moves_remaining: u8) -> Active {
    let mut out = Active::EMPTY;
    active_into(layout, board, moves_remaining, &mut out);
    out
}

/// [`active`] into existing storage: the hot loops (one-ply choice, training) reuse one
/// buffer instead of zeroing a fresh kilobyte per board.
///
/// Pattern numbers are computed first, for all placements of a family at once in 8-lane
/// rows; the indices are then `placement/rise-clock/fill offset + pattern × stride`, in
/// storage order ([`Layout::spec_index`] gives the docs/design/drop7-SPEC.md §7 numbers). On
/// x86-64 CPUs with AVX2 (detected once at run time) the whole function runs in an AVX2
/// build of itself; elsewhere the portable build gives the same indices.
#[inline]
pub fn active_into(layout: &Layout, board: &Board, moves_remaining: u8, out: &mut Active) {
    #[cfg(target_arch = "x86_64")]
    if vbmi_available() {
        #[allow(unsafe_code)]
        // SAFETY: the kernel only requires AVX-512 F, BW and VBMI, which `vbmi_available`
        // just found on this CPU; it has no other precondition.
        unsafe {
            return vbmi::kernel::active(layout, board, moves_remaining, out);
        }
    }
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        #[allow(unsafe_code)]
        // SAFETY: `active_avx2` only requires the AVX2 instructions, which the CPU was just
        // checked to have; it has no other precondition.
        unsafe {
            return active_avx2(layout, board, moves_remaining, out);
        }
    }
    active_impl(layout, board, moves_remaining, out, common_portable)
}

/// Whether the CPU runs the byte-shuffle extraction (module `vbmi`); `NTUPLE_NO_VBMI=1` in the
/// environment turns it off (to measure or test the AVX2 path on such a CPU).
#[cfg(target_arch = "x86_64")]
#[inline]
pub fn vbmi_available() -> bool {
    static OFF: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    std::arch::is_x86_feature_detected!("avx512vbmi")
        && std::arch::is_x86_feature_detected!("avx512bw")
        && !*OFF.get_or_init(|| std::env::var_os("NTUPLE_NO_VBMI").is_some_and(|v| v == "1"))
}

/// [`active_into`] compiled for AVX2 (the compiler also vectorises the final index loop).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn active_avx2(layout: &Layout, board: &Board, moves_remaining: u8, out: &mut Active) {
    active_impl(layout, board, moves_remaining, out, |w, pat, at, mul| {
        avx2::common(w, pat, at, mul)
    })
}

/// The body of [`active_into`], generic over how the common families are computed.
#[inline(always)]
fn active_impl(
    layout: &Layout,
    board: &Board,
    moves_remaining: u8,
    out: &mut Active,
    common: impl Fn(&[u32; 7], &mut [u32; PATTERN_BUFFER], [usize; 3], [u32; 3]),
) {
    let (b, _) = board.canonical();
    let w = &b.cols;
    let pat = &mut out.pat;
    common(w, pat, layout.common_at, layout.common_stride);
    let mut n = 0;
    for &fam in &layout.families {
        match fam {
            Family::Rows | Family::Win23 | Family::Win32 => n += fam.tables() as usize,
            Family::Cols => {
                for (c, &wc) in w.iter().enumerate() {
                    pat[n + c] = dec7(wc) * layout.cols_stride;
                }
                n += 7;
            }
            Family::Win24 => {
                for c in 0..6 {
                    for top in 0..4 {
                        let lo = 3 - top;
                        pat[n] = (dec4(w[c], lo) + 10_000 * dec4(w[c + 1], lo)) as u32;
                        n += 1;
                    }
                }
            }
            Family::Win42 => {
                for c in 0..4 {
                    for top in 0..6 {
                        let lo = 5 - top;
                        pat[n] = (dec2(w[c], lo)
                            + 100 * dec2(w[c + 1], lo)
                            + 10_000 * dec2(w[c + 2], lo)
                            + 1_000_000 * dec2(w[c + 3], lo))
                            as u32;
                        n += 1;
                    }
                }
            }
        }
    }
    let fill = layout.fill.bucket(&b) * layout.bucket_entries;
    let place = &layout.place[phase_index(moves_remaining) as usize][..n];
    for ((i, &p), &q) in out.idx[..n].iter_mut().zip(place).zip(&out.pat[..n]) {
        *i = p + fill + q as u64;
    }
    out.len = n;
}

#[cfg(test)]
// Hand-computed patterns spell out every digit, ones and zeros included.
#[allow(clippy::identity_op, clippy::erasing_op)]
mod tests {
    use super::*;

    /// A board with distinct digits so every pattern is recognisable: cell(r, c) as given.
    fn board() -> Board {
        // rows from the top; columns bottom-packed (no holes)
        Board::parse(concat!(
            "0000000", //
            "0000000", //
            "0000001", //
            "2300009", //
            "4561008", //
            "7182938", //
            "8899912", //
        ))
        .unwrap()
    }

    fn cell(b: &Board, r: usize, c: usize) -> u64 {
        b.cell(r, c) as u64
    }

    #[test]
    fn hand_computed_indices_every_family() {
        let b = board();
        assert!(!b.mirror_is_smaller(), "test board must be canonical");
        let spec = "rows,cols,win23,win32,win24,win42,phase=all";
        let l = Layout::parse(spec).unwrap();
        let mr = 3; // phase 2
        let mut a = active(&l, &b, mr);
        for i in &mut a.idx[..a.len] {
            *i = l.spec_index(*i);
        }
        assert_eq!(a.len, 122);
        let p = 2u64;
        // rows: offset 0, size 5·10⁷, pattern Σ cell(r,c)·10^c
        let row5 = 7 + 10 * 1 + 100 * 8 + 1000 * 2 + 10_000 * 9 + 100_000 * 3 + 1_000_000 * 8;
        assert_eq!(
            row5,
            (0..7)
                .map(|c| cell(&b, 5, c) * 10u64.pow(c as u32))
                .sum::<u64>()
        );
        assert_eq!(a.idx[5], 5 * 50_000_000 + p * 10_000_000 + row5);
        // cols: offset 7·5·10⁷, pattern Σ cell(r,c)·10^(6−r); column 0 = 8,7,4,2 from the bottom
        let col0 = 8 + 10 * 7 + 100 * 4 + 1000 * 2;
        assert_eq!(a.idx[7], 350_000_000 + p * 10_000_000 + col0);
        // win23 (c=1, top=4): rows 4..6 of columns 1 and 2
        let l23 = 100 * 5 + 10 * 1 + 8;
        let r23 = 100 * 6 + 10 * 8 + 9;
        let off23 = 700_000_000;
        assert_eq!(
            a.idx[14 + 5 + 4],
            off23 + (5 + 4) * 5_000_000 + p * 1_000_000 + l23 + 1000 * r23
        );
        // win32 (c=2, top=5): rows 5..6 of columns 2..4: a = 10·cell(5,2)+cell(6,2)
        let (x, y, z) = (10 * 8 + 9, 10 * 2 + 9, 10 * 9 + 9);
        let off32 = off23 + 30 * 5_000_000;
        assert_eq!(
            a.idx[14 + 30 + 2 * 6 + 5],
            off32 + (2 * 6 + 5) * 5_000_000 + p * 1_000_000 + x + 100 * y + 10_000 * z
        );
        // win24 (c=0, top=3): rows 3..6, lowest row least significant; never conditioned
        let left = 8 + 10 * 7 + 100 * 4 + 1000 * 2;
        let right = 8 + 10 * 1 + 100 * 5 + 1000 * 3;
        let off24 = off32 + 30 * 5_000_000;
        assert_eq!(
            a.idx[14 + 60 + 3],
            off24 + 3 * 100_000_000 + left + 10_000 * right
        );
        // win42 (c=3, top=4): rows 4..5, columns 3..6; Σ 100^j (10·cell(4,c+j) + cell(5,c+j))
        let off42 = off24 + 24 * 100_000_000;
        let w =
            (10 * 1 + 2) + 100 * (10 * 0 + 9) + 10_000 * (10 * 0 + 3) + 1_000_000 * (10 * 8 + 8);
        assert_eq!(
            a.idx[14 + 60 + 24 + 3 * 6 + 4],
            off42 + (3 * 6 + 4) * 100_000_000 + w
        );
        assert_eq!(l.total, off42 + 24 * 100_000_000);
    }

    /// Every placement of every family against docs/design/drop7-SPEC.md §7's definitions computed cell by cell
    /// (no lookup tables), on boards from real games.
    #[test]
    fn every_placement_matches_the_spec_formulas() {
        let l = Layout::parse("rows,cols,win23,win32,win24,win42,phase=all").unwrap();
        let states = drop7::runner::sample_states(0x1234_0000, 300);
        for (s, _) in &states {
            let (b, _) = s.board.canonical();
            let mr = s.moves_remaining;
            let p = phase_index(mr);
            let cell = |r: usize, c: usize| b.cell(r, c) as u64;
            let mut want = Vec::new();
            let (size7, size6) = (50_000_000u64, 5_000_000u64);
            for r in 0..7 {
                want.push(
                    r as u64 * size7
                        + p * 10_000_000
                        + (0..7)
                            .map(|c| cell(r, c) * 10u64.pow(c as u32))
                            .sum::<u64>(),
                );
            }
            for c in 0..7 {
                want.push(
                    350_000_000
                        + c as u64 * size7
                        + p * 10_000_000
                        + (0..7)
                            .map(|r| cell(r, c) * 10u64.pow(6 - r as u32))
                            .sum::<u64>(),
                );
            }
            let mut off = 700_000_000;
            for c in 0..6 {
                for top in 0..5 {
                    let col =
                        |c: usize| 100 * cell(top, c) + 10 * cell(top + 1, c) + cell(top + 2, c);
                    want.push(
                        off + (c * 5 + top) as u64 * size6
                            + p * 1_000_000
                            + col(c)
                            + 1000 * col(c + 1),
                    );
                }
            }
            off += 30 * size6;
            for c in 0..5 {
                for top in 0..6 {
                    let col = |c: usize| 10 * cell(top, c) + cell(top + 1, c);
                    want.push(
                        off + (c * 6 + top) as u64 * size6
                            + p * 1_000_000
                            + col(c)
                            + 100 * col(c + 1)
                            + 10_000 * col(c + 2),
                    );
                }
            }
            off += 30 * size6;
            for c in 0..6 {
                for top in 0..4 {
                    let col = |c: usize| {
                        (0..4)
                            .map(|k| cell(top + 3 - k, c) * 10u64.pow(k as u32))
                            .sum::<u64>()
                    };
                    want.push(
                        off + (c * 4 + top) as u64 * 100_000_000 + col(c) + 10_000 * col(c + 1),
                    );
                }
            }
            off += 24 * 100_000_000;
            for c in 0..4 {
                for top in 0..6 {
                    let pat: u64 = (0..4)
                        .map(|j| {
                            100u64.pow(j as u32) * (10 * cell(top, c + j) + cell(top + 1, c + j))
                        })
                        .sum();
                    want.push(off + (c * 6 + top) as u64 * 100_000_000 + pat);
                }
            }
            let got: Vec<u64> = active(&l, &s.board, mr)
                .as_slice()
                .iter()
                .map(|&i| l.spec_index(i))
                .collect();
            assert_eq!(got, want, "board {}", s.board);
        }
    }

    /// Every extraction path gives the same indices — the portable build, the AVX2 build,
    /// the AVX-512 VBMI kernel where the CPU has it, and (on any CPU) a scalar interpreter of
    /// the kernel's shuffle recipe — for layouts covering every family, stride and fill, on
    /// boards of real games and their mirrors. The other tests run whichever path this CPU
    /// selects.
    #[test]
    fn every_extraction_path_agrees() {
        let specs = [
            "rows,cols,win23,win32,win24,win42,phase=all,fill=occ5",
            "rows,cols,win23,win32,phase=all",
            "cols,win32,win42,phase=cols,fill=hgt5",
            "rows,win23,win24,phase=none",
        ];
        let states = drop7::runner::sample_states(0x4242_0000, 1_000);
        for spec in specs {
            let l = Layout::parse(spec).unwrap();
            for (s, _) in &states {
                for b in [s.board, s.board.mirrored()] {
                    let mr = s.moves_remaining;
                    let mut portable = Active::EMPTY;
                    active_impl(&l, &b, mr, &mut portable, common_portable);
                    let want = portable.as_slice();
                    assert_eq!(vbmi::interpret(&l, &b, mr), want, "recipe, {spec}, {b}");
                    let mut dispatched = Active::EMPTY;
                    active_into(&l, &b, mr, &mut dispatched);
                    assert_eq!(dispatched.as_slice(), want, "dispatched, {spec}, {b}");
                    #[cfg(target_arch = "x86_64")]
                    if std::arch::is_x86_feature_detected!("avx2") {
                        let mut a = Active::EMPTY;
                        #[allow(unsafe_code)]
                        // SAFETY: AVX2 was detected just above.
                        unsafe {
                            active_avx2(&l, &b, mr, &mut a)
                        };
                        assert_eq!(a.as_slice(), want, "avx2, {spec}, {b}");
                    }
                    #[cfg(target_arch = "x86_64")]
                    if vbmi_available() {
                        let mut a = Active::EMPTY;
                        #[allow(unsafe_code)]
                        // SAFETY: AVX-512 F/BW/VBMI were detected just above.
                        unsafe {
                            vbmi::kernel::active(&l, &b, mr, &mut a)
                        };
                        assert_eq!(a.as_slice(), want, "vbmi, {spec}, {b}");
                    }
                }
            }
        }
    }

    /// Every subset of families gets the same pattern numbers as the full layout (catches a
    /// block's spare lanes overwriting a neighbouring family).
    #[test]
    fn family_subsets_have_the_same_patterns() {
        let full = Layout::parse("rows,cols,win23,win32,win24,win42").unwrap();
        let states = drop7::runner::sample_states(0x5151_0000, 200);
        for mask in 1u32..64 {
            let fams: Vec<&str> = Family::ALL
                .iter()
                .enumerate()
                .filter(|(i, _)| mask >> i & 1 == 1)
                .map(|(_, f)| f.name())
                .collect();
            let sub = Layout::parse(&fams.join(",")).unwrap();
            for (s, _) in &states {
                let patterns = |l: &Layout| {
                    let a = active(l, &s.board, s.moves_remaining);
                    let mut by_family = Vec::new();
                    let mut k = 0;
                    for &f in &l.families {
                        let n = f.tables() as usize;
                        let p: Vec<u64> = (k..k + n).map(|i| a.idx[i] - l.place[0][i]).collect();
                        by_family.push((f, p));
                        k += n;
                    }
                    by_family
                };
                let all = patterns(&full);
                for (f, p) in patterns(&sub) {
                    let want = &all.iter().find(|(g, _)| *g == f).unwrap().1;
                    assert_eq!(&p, want, "{f:?} in `{}`", fams.join(","));
                }
            }
        }
    }

    #[test]
    fn phase_conditioning_by_layout() {
        let b = board();
        let none = Layout::parse("rows,cols,phase=none").unwrap();
        let cols = Layout::parse("rows,cols,phase=cols").unwrap();
        for mr in 1..=5u8 {
            let a = active(&none, &b, mr);
            assert_eq!(a.as_slice(), active(&none, &b, 1).as_slice());
            let c = active(&cols, &b, mr);
            let c1 = active(&cols, &b, 1);
            // rows unconditioned, cols shifted by phase·10⁷ in spec order, by the phase in
            // storage order
            assert_eq!(c.idx[0], c1.idx[0]);
            let phase = mr as u64 - 1;
            assert_eq!(
                cols.spec_index(c.idx[7]),
                cols.spec_index(c1.idx[7]) + phase * 10_000_000
            );
            assert_eq!(c.idx[7], c1.idx[7] + phase);
        }
        assert_eq!(phase_index(0), 0);
    }

    #[test]
    fn fill_buckets_offset_whole_table_sets() {
        let b = board(); // 23 occupied cells → occ5 bucket 2; tallest column 5 → hgt5 bucket 2
        let base = Layout::parse("rows,cols,phase=none").unwrap();
        let a0 = active(&base, &b, 4);
        for (fill, bucket) in [
            (crate::layout::Fill::Occ5, 2u64),
            (crate::layout::Fill::Hgt5, 2),
        ] {
            let l = base.with_fill(fill);
            let a = active(&l, &b, 4);
            for k in 0..a.len {
                assert_eq!(a.idx[k], a0.idx[k] + bucket * base.total);
            }
        }
    }

    #[test]
    fn reflection_invariant() {
        let l = Layout::parse("rows,cols,win23,win32,win24,win42,phase=all").unwrap();
        let b = board();
        assert_eq!(
            active(&l, &b, 2).as_slice(),
            active(&l, &b.mirrored(), 2).as_slice()
        );
    }
}
