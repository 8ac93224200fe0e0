//! The frozen fair leaf: 18 hand-tuned weighted terms (docs/design/drop7-SPEC.md §6), reproduced to the last bit.
//!
//! Bit-exactness needs the reference's accumulation order: every term is summed cell by cell
//! in row-major order from the top, and the leaf adds `weight · raw` term by term into a
//! double starting at 0. The leaf is *not* mirror-symmetric in floating point, so the search
//! evaluates canonical boards only.
// Grid code reads best with explicit (row, column) indices.
#![allow(clippy::needless_range_loop)]

use crate::board::{Board, CRACKED, SIZE, SOLID};

/// Term names in accumulation order (the names of `vectors/leaf.jsonl`).
pub const TERM_NAMES: [&str; 18] = [
    "open_columns",
    "height_load",
    "solid_cells",
    "cracked_cells",
    "numbered_cells",
    "high_low_numbers",
    "direct_potential",
    "latent_chain_potential",
    "cracked_exposure",
    "solid_exposure",
    "adjacent_ones",
    "triple_twos",
    "dead_low_numbers",
    "covered_height_risk",
    "low_number_height_risk",
    "danger_height_squared",
    "rise_pressure",
    "next_disc_vertical_options",
];

/// The frozen weights ("FAIR_PHASE_BASELINE_WEIGHTS"), in the same order.
pub const WEIGHTS: [f64; 18] = [
    180.0, -20.0, -620.0, -220.0, -18.0, -90.0, 1600.0, 700.0, 100.0, 40.0, -550.0, -750.0, -120.0,
    -95.0, -85.0, -1250.0, -35.0, 220.0,
];

/// `readiness(c) = 2^(1−c)` for `c ≥ 1`, else 0: how close a disc is to popping when `c`
/// more discs are needed.
#[inline]
fn readiness(c: i32) -> f64 {
    if c >= 1 {
        f64::from_bits(((1024 - c) as u64) << 52)
    } else {
        0.0
    }
}

/// Probabilistic union `1 − (1 − a)(1 − b)`.
#[inline]
fn union(a: f64, b: f64) -> f64 {
    1.0 - (1.0 - a) * (1.0 - b)
}

/// The excess-th largest of `support` (1-based) times `readiness(excess)`; 0 when the run
/// is not too long or too few discs could be released.
#[inline]
fn release(excess: i32, support: &mut [f64]) -> f64 {
    if excess <= 0 || (support.len() as i32) < excess {
        return 0.0;
    }
    support.sort_unstable_by(|a, b| b.total_cmp(a));
    support[(excess - 1) as usize] * readiness(excess)
}

/// Row-major cell index `i = 7r + c` (row 0 the top): its row and column.
const ROW_OF: [u8; 49] = {
    let mut t = [0u8; 49];
    let mut i = 0;
    while i < 49 {
        t[i] = (i / SIZE) as u8;
        i += 1;
    }
    t
};
const COL_OF: [u8; 49] = {
    let mut t = [0u8; 49];
    let mut i = 0;
    while i < 49 {
        t[i] = (i % SIZE) as u8;
        i += 1;
    }
    t
};
/// Row-major cells of column 0 and of column 6 (a left or right shift must not wrap rows).
const COL0: u64 = 0x0408_1020_4081; // bits 0, 7, …, 42
const COL6: u64 = COL0 << 6;
const CELLS: u64 = (1 << 49) - 1;

/// All ones when `b`, else 0: a cell's bit goes into a kind's mask without a branch on the
/// kind (the branch is what mispredicts).
#[inline(always)]
fn all_if(b: bool) -> u64 {
    0u64.wrapping_sub(b as u64)
}

/// The 18 raw terms of the fair leaf for a live state (`moves_remaining` 1..=5).
///
/// Why it is written with masks: the leaf is most of a fair search's time, and a loop over
/// 49 cells that branches on each cell's kind mispredicts on every board. Here each term
/// visits only the cells it is about (the set bits of a row-major mask, in ascending order,
/// which is the reference's row-major order from the top), so every floating-point sum adds
/// the same values in the same order as the reference and the result is bit for bit its
/// own; a term that only counts is counted with `count_ones` (small integers are exact in
/// an f64 whatever the order). Adding `+0.0` changes no sum of non-negative terms, so cells
/// whose contribution is zero (a gray with no numbered neighbour) are skipped.
pub fn fair_terms(board: &Board, next: u8, moves_remaining: u8) -> [f64; 18] {
    // Unpack: g[i] for the row-major index i; e(r) = 7 − r. Masks of the kinds, row-major.
    let mut g = [0u8; 49];
    let mut h = [0i32; SIZE];
    let (mut occ, mut numbered, mut solid_m, mut cracked_m, mut ones, mut twos) =
        (0u64, 0u64, 0u64, 0u64, 0u64, 0u64);
    for c in 0..SIZE {
        let w = board.cols[c];
        h[c] = board.height(c) as i32;
        for e in 0..h[c] as usize {
            let v = ((w >> (4 * e)) & 0xF) as u8;
            let i = (SIZE - 1 - e) * SIZE + c;
            g[i] = v;
            let bit = 1u64 << i;
            occ |= bit & all_if(v != 0);
            numbered |= bit & all_if((1..=7).contains(&v));
            solid_m |= bit & all_if(v == SOLID);
            cracked_m |= bit & all_if(v == CRACKED);
            ones |= bit & all_if(v == 1);
            twos |= bit & all_if(v == 2);
        }
    }
    let max_h = *h.iter().max().expect("seven columns");
    // The horizontal run of occupied cells through cell i: its first and last column.
    let run = |i: usize| -> (i32, i32) {
        let (r, c) = (ROW_OF[i] as usize, COL_OF[i] as u32);
        // an empty sentinel at column 7 ends a run that reaches the right edge
        let empty = (!(occ >> (SIZE * r)) & 0x7F) | 0x80;
        let left = empty & ((1 << c) - 1);
        let start = if left == 0 {
            0
        } else {
            64 - left.leading_zeros() as i32
        };
        let right = empty >> c;
        (start, (c + right.trailing_zeros()) as i32 - 1)
    };

    // Pass 1: A = union(Ah, Av) per numbered disc.
    let mut ah = [0f64; 49];
    let mut av = [0f64; 49];
    let mut a = [0f64; 49];
    let mut direct = 0.0;
    let mut m = numbered;
    while m != 0 {
        let i = m.trailing_zeros() as usize;
        m &= m - 1;
        let (r, c) = (ROW_OF[i] as usize, COL_OF[i] as usize);
        let e = (SIZE - r) as i32;
        let v = g[i] as i32;
        av[i] = if v > h[c] { readiness(v - h[c]) } else { 0.0 };
        let (hs, he) = run(i);
        ah[i] = if v <= he - hs + 1 {
            0.0
        } else {
            let mut best = i32::MAX;
            let lo = (he - v + 1).max(0);
            let hi = hs.min(SIZE as i32 - v);
            for start in lo..=hi {
                let end = start + v - 1;
                if start > 0 && h[(start - 1) as usize] >= e {
                    continue;
                }
                if end + 1 < SIZE as i32 && h[(end + 1) as usize] >= e {
                    continue;
                }
                let cost: i32 = (start..=end).map(|k| (e - h[k as usize]).max(0)).sum();
                if cost > 0 && cost < best {
                    best = cost;
                }
            }
            if best == i32::MAX {
                0.0
            } else {
                readiness(best)
            }
        };
        a[i] = union(ah[i], av[i]);
        direct += a[i];
    }

    // Pass 2: R = union(Rh, Rv), dead low numbers. A release needs `excess` > 0 and at least
    // `excess` supporting discs, so the support is gathered only when it can matter.
    let mut rh = [0f64; 49];
    let mut rv = [0f64; 49];
    let mut rr = [0f64; 49];
    let mut latent = 0.0;
    let mut dead_low = 0.0;
    let mut m = numbered;
    while m != 0 {
        let i = m.trailing_zeros() as usize;
        m &= m - 1;
        let (r, c) = (ROW_OF[i] as usize, COL_OF[i] as usize);
        let v = g[i] as i32;
        let (hs, he) = run(i);
        let hlen = he - hs + 1;
        let mut buf = [0f64; SIZE];
        if hlen > v {
            let mut n = 0;
            for k in hs as usize..=he as usize {
                let j = r * SIZE + k;
                if k != c && numbered >> j & 1 != 0 {
                    buf[n] = a[j];
                    n += 1;
                }
            }
            rh[i] = release(hlen - v, &mut buf[..n]);
        }
        if h[c] > v {
            let mut n = 0;
            for k in SIZE - h[c] as usize..SIZE {
                let j = k * SIZE + c;
                if k != r && numbered >> j & 1 != 0 {
                    buf[n] = a[j];
                    n += 1;
                }
            }
            rv[i] = release(h[c] - v, &mut buf[..n]);
        }
        rr[i] = union(rh[i], rv[i]);
        latent += rr[i];
        if v <= 2 && hlen > v && h[c] > v {
            dead_low += 1.0 - union(a[i], rr[i]);
        }
    }

    // Counts: exact in any order.
    let open = (SIZE as u32 - (occ & 0x7F).count_ones()) as f64;
    let height_load = h
        .iter()
        .map(|&x| x * (x + 1) * (2 * x + 1) / 6)
        .sum::<i32>() as f64;
    let solid = solid_m.count_ones() as f64;
    let cracked = cracked_m.count_ones() as f64;
    let numbered_cells = numbered.count_ones() as f64;
    // 1s and 2s at elevation 5 or more: rows 0-2
    let high_low = ((ones | twos) & ((1 << (3 * SIZE)) - 1)).count_ones() as f64;

    let vert_escape = |i: usize| union(av[i], rv[i]);
    let horiz_escape = |i: usize| union(ah[i], rh[i]);
    let s_of = |i: usize| union(a[i], rr[i]);
    // Adjacent 1s: to the right, then below, per 1 in row-major order.
    let mut adjacent_ones = 0.0;
    let mut m = ones & ((ones >> 1 & !COL6) | ones >> SIZE);
    while m != 0 {
        let i = m.trailing_zeros() as usize;
        m &= m - 1;
        if COL_OF[i] as usize + 1 < SIZE && g[i + 1] == 1 {
            adjacent_ones += 1.0 - vert_escape(i).max(vert_escape(i + 1));
        }
        if i + SIZE < 49 && g[i + SIZE] == 1 {
            adjacent_ones += 1.0 - horiz_escape(i).max(horiz_escape(i + SIZE));
        }
    }
    // Exposure of grays with a numbered neighbour (above, below, left, right).
    let (mut cracked_exposure, mut solid_exposure) = (0.0, 0.0);
    let near_numbered =
        (numbered << SIZE | numbered >> SIZE | (numbered << 1 & !COL0) | (numbered >> 1 & !COL6))
            & CELLS;
    let mut m = (solid_m | cracked_m) & near_numbered;
    while m != 0 {
        let i = m.trailing_zeros() as usize;
        m &= m - 1;
        let mut s = [0f64; 4];
        let mut n = 0;
        let c = COL_OF[i] as usize;
        let neighbours = [
            (i >= SIZE).then(|| i.wrapping_sub(SIZE)),
            (i + SIZE < 49).then_some(i + SIZE),
            (c > 0).then(|| i.wrapping_sub(1)),
            (c + 1 < SIZE).then_some(i + 1),
        ];
        for j in neighbours.into_iter().flatten() {
            if numbered >> j & 1 != 0 {
                s[n] = s_of(j);
                n += 1;
            }
        }
        let s = &mut s[..n];
        s.sort_unstable_by(|x, y| y.total_cmp(x));
        if g[i] == CRACKED {
            let mut p = 1.0;
            for &x in s.iter() {
                p *= 1.0 - x;
            }
            cracked_exposure += 1.0 - p;
        } else {
            let first = s[0] * 0.35;
            let second = if n > 1 { s[1] * 0.65 } else { 0.0 };
            solid_exposure += first + second;
        }
    }
    // Runs of 2s: rows (vertical escapes), then columns (horizontal escapes); only a run of
    // three or more adds anything.
    let mut triple_twos = 0.0;
    let three_in_row = twos & (twos >> 1 & !COL6) & (twos >> 2 & !COL6 & !(COL6 >> 1));
    let three_in_col = twos & twos >> SIZE & twos >> (2 * SIZE);
    if three_in_row | three_in_col != 0 {
        let top = SIZE - max_h as usize;
        for r in top..SIZE {
            let mut c = 0;
            while c < SIZE {
                if g[r * SIZE + c] != 2 {
                    c += 1;
                    continue;
                }
                let s = c;
                while c < SIZE && g[r * SIZE + c] == 2 {
                    c += 1;
                }
                let excess = (c - s) as i32 - 2;
                if excess > 0 {
                    let escape = (s..c)
                        .map(|k| vert_escape(r * SIZE + k))
                        .fold(0.0, f64::max);
                    triple_twos += (excess * excess) as f64 * (1.0 - escape);
                }
            }
        }
        for c in 0..SIZE {
            let mut r = top;
            while r < SIZE {
                if g[r * SIZE + c] != 2 {
                    r += 1;
                    continue;
                }
                let s = r;
                while r < SIZE && g[r * SIZE + c] == 2 {
                    r += 1;
                }
                let excess = (r - s) as i32 - 2;
                if excess > 0 {
                    let escape = (s..r)
                        .map(|k| horiz_escape(k * SIZE + c))
                        .fold(0.0, f64::max);
                    triple_twos += (excess * excess) as f64 * (1.0 - escape);
                }
            }
        }
    }
    // Fair-only terms.
    let mut rise_pressure = 0.0;
    let mut next_options = 0u32;
    for &hc in &h {
        rise_pressure += (hc * hc * hc) as f64 / moves_remaining as f64;
        next_options += (hc < 7 && hc + 1 == next as i32) as u32;
    }
    let next_options = next_options as f64;
    // Covered height risk: grays in row-major order (a float sum); low numbers: exact.
    let mut covered = 0.0;
    let mut m = solid_m | cracked_m;
    while m != 0 {
        let i = m.trailing_zeros() as usize;
        m &= m - 1;
        let (r, c) = (ROW_OF[i] as usize, COL_OF[i] as usize);
        let e = (SIZE - r) as i32;
        let edge = if c == 0 || c == SIZE - 1 { 1.65 } else { 1.0 };
        let k = (e * e) as f64 * edge;
        covered += if cracked_m >> i & 1 != 0 { k * 0.72 } else { k };
    }
    let mut low_height = 0i32;
    let mut m = (ones | twos) & ((1 << (5 * SIZE)) - 1); // elevations 3 and up: rows 0-4
    while m != 0 {
        let i = m.trailing_zeros() as usize;
        m &= m - 1;
        let d = (SIZE - ROW_OF[i] as usize) as i32 - 2;
        low_height += d * d;
    }
    let low_height = low_height as f64;
    let danger = ((max_h - 4).max(0) * (max_h - 4).max(0)) as f64;
    [
        open,
        height_load,
        solid,
        cracked,
        numbered_cells,
        high_low,
        direct,
        latent,
        cracked_exposure,
        solid_exposure,
        adjacent_ones,
        triple_twos,
        dead_low,
        covered,
        low_height,
        danger,
        rise_pressure,
        next_options,
    ]
}

/// The weighted sum of the 16 board-only terms (1–16), in the reference's order. Terms 17
/// (rise pressure) and 18 (next-disc options) are added after it, so
/// `finish(board_part(b), b, next, mr)` equals the full leaf bit for bit; the search uses
/// this to evaluate the board once for all samples that share it.
pub fn board_part(board: &Board) -> f64 {
    // moves_remaining 1 and next 0 are placeholders: terms 17–18 are not summed here.
    let terms = fair_terms(board, 0, 1);
    let mut v = 0.0;
    for (w, t) in WEIGHTS[..16].iter().zip(&terms[..16]) {
        v += w * t;
    }
    v
}

/// Add terms 17 and 18 to a [`board_part`].
#[inline]
pub fn finish(partial: f64, board: &Board, next: u8, moves_remaining: u8) -> f64 {
    prepare(partial, board, moves_remaining).value(next)
}

/// A [`board_part`] with term 17 (rise pressure) added for one `moves_remaining`, and term
/// 18's count for every next disc: the samples of a chance node share board and
/// moves-until-rise and differ only in the next disc, so each of them costs one multiply-add.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Prepared {
    /// `board_part + WEIGHTS[16] · rise_pressure`, the reference's partial sum after term 17.
    base: f64,
    /// `options[d]`: the columns a disc `d` would land in at height `d` (term 18); entry 8
    /// stays 0 (a full column takes no disc).
    options: [u8; 9],
}

impl Prepared {
    /// The full leaf for next disc `next` (1..=7): bit for bit [`fair_leaf`].
    #[inline]
    pub fn value(&self, next: u8) -> f64 {
        let options = self.options.get(next as usize).copied().unwrap_or(0);
        self.base + WEIGHTS[17] * options as f64
    }
}

/// Prepare a [`board_part`] for the samples that share its board and `moves_remaining`.
#[inline]
pub fn prepare(partial: f64, board: &Board, moves_remaining: u8) -> Prepared {
    let mut rise_pressure = 0.0;
    let mut options = [0u8; 9];
    for c in 0..SIZE {
        let h = board.height(c) as i32;
        rise_pressure += (h * h * h) as f64 / moves_remaining as f64;
        options[(h + 1) as usize] += (h < 7) as u8;
    }
    Prepared {
        base: partial + WEIGHTS[16] * rise_pressure,
        options,
    }
}

/// Weighted sum in the reference's order.
#[inline]
pub fn combine(terms: &[f64; 18]) -> f64 {
    let mut v = 0.0;
    for (w, t) in WEIGHTS.iter().zip(terms) {
        v += w * t;
    }
    v
}

/// The fair leaf value of a live state (points).
#[inline]
pub fn fair_leaf(board: &Board, next: u8, moves_remaining: u8) -> f64 {
    combine(&fair_terms(board, next, moves_remaining))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Mulberry32;

    /// The implementation before the masks (2026-12-05): a plain loop over the 49 cells, kept
    /// as the oracle of the differential test below.
    pub fn fair_terms_plain(board: &Board, next: u8, moves_remaining: u8) -> [f64; 18] {
        // Unpack: g[r][c] with r = 0 the top row; e(r) = 7 − r.
        let mut g = [[0u8; SIZE]; SIZE];
        let mut h = [0i32; SIZE];
        for c in 0..SIZE {
            h[c] = board.height(c) as i32;
        }
        // Rows above the tallest column are empty: every row loop starts at `top`.
        let top = SIZE - *h.iter().max().expect("seven columns") as usize;
        for c in 0..SIZE {
            for r in top..SIZE {
                g[r][c] = board.cell(r, c);
            }
        }
        let numbered = |v: u8| (1..=7).contains(&v);
        // Horizontal runs of occupied cells.
        let mut hstart = [[0i32; SIZE]; SIZE];
        let mut hend = [[0i32; SIZE]; SIZE];
        for r in top..SIZE {
            let mut c = 0;
            while c < SIZE {
                if g[r][c] == 0 {
                    c += 1;
                    continue;
                }
                let s = c;
                while c < SIZE && g[r][c] != 0 {
                    c += 1;
                }
                for k in s..c {
                    hstart[r][k] = s as i32;
                    hend[r][k] = c as i32 - 1;
                }
            }
        }
        let hlen = |r: usize, c: usize| hend[r][c] - hstart[r][c] + 1;

        // Pass 1: A = union(Ah, Av) per numbered disc.
        let mut ah = [[0f64; SIZE]; SIZE];
        let mut av = [[0f64; SIZE]; SIZE];
        let mut a = [[0f64; SIZE]; SIZE];
        let mut direct = 0.0;
        for r in top..SIZE {
            let e = (SIZE - r) as i32;
            for c in 0..SIZE {
                let v = g[r][c];
                if !numbered(v) {
                    continue;
                }
                let v = v as i32;
                av[r][c] = if v > h[c] { readiness(v - h[c]) } else { 0.0 };
                ah[r][c] = if v <= hlen(r, c) {
                    0.0
                } else {
                    let (hs, he) = (hstart[r][c], hend[r][c]);
                    let mut best = i32::MAX;
                    let lo = (he - v + 1).max(0);
                    let hi = hs.min(SIZE as i32 - v);
                    for start in lo..=hi {
                        let end = start + v - 1;
                        if start > 0 && h[(start - 1) as usize] >= e {
                            continue;
                        }
                        if end + 1 < SIZE as i32 && h[(end + 1) as usize] >= e {
                            continue;
                        }
                        let cost: i32 = (start..=end).map(|k| (e - h[k as usize]).max(0)).sum();
                        if cost > 0 && cost < best {
                            best = cost;
                        }
                    }
                    if best == i32::MAX {
                        0.0
                    } else {
                        readiness(best)
                    }
                };
                a[r][c] = union(ah[r][c], av[r][c]);
                direct += a[r][c];
            }
        }

        // Pass 2: R = union(Rh, Rv), dead low numbers.
        let mut rh = [[0f64; SIZE]; SIZE];
        let mut rv = [[0f64; SIZE]; SIZE];
        let mut rr = [[0f64; SIZE]; SIZE];
        let mut latent = 0.0;
        let mut dead_low = 0.0;
        for r in top..SIZE {
            for c in 0..SIZE {
                let v = g[r][c];
                if !numbered(v) {
                    continue;
                }
                let v = v as i32;
                let mut buf = [0f64; SIZE];
                let mut n = 0;
                for k in hstart[r][c]..=hend[r][c] {
                    let k = k as usize;
                    if k != c && numbered(g[r][k]) {
                        buf[n] = a[r][k];
                        n += 1;
                    }
                }
                rh[r][c] = release(hlen(r, c) - v, &mut buf[..n]);
                n = 0;
                let top = SIZE - h[c] as usize;
                for k in top..SIZE {
                    if k != r && numbered(g[k][c]) {
                        buf[n] = a[k][c];
                        n += 1;
                    }
                }
                rv[r][c] = release(h[c] - v, &mut buf[..n]);
                rr[r][c] = union(rh[r][c], rv[r][c]);
                latent += rr[r][c];
                if v <= 2 && hlen(r, c) > v && h[c] > v {
                    dead_low += 1.0 - union(a[r][c], rr[r][c]);
                }
            }
        }

        let mut open = 0.0;
        let mut height_load = 0.0;
        let (mut solid, mut cracked, mut numbered_cells, mut high_low) = (0.0, 0.0, 0.0, 0.0);
        let (mut adjacent_ones, mut triple_twos) = (0.0, 0.0);
        let (mut cracked_exposure, mut solid_exposure) = (0.0, 0.0);
        for c in 0..SIZE {
            if g[0][c] == 0 {
                open += 1.0;
            }
        }
        let vert_escape = |r: usize, c: usize| union(av[r][c], rv[r][c]);
        let horiz_escape = |r: usize, c: usize| union(ah[r][c], rh[r][c]);
        let s_of = |r: usize, c: usize| union(a[r][c], rr[r][c]);
        for r in top..SIZE {
            let e = (SIZE - r) as i32;
            for c in 0..SIZE {
                let v = g[r][c];
                if v == 0 {
                    continue;
                }
                height_load += (e * e) as f64;
                match v {
                    SOLID => solid += 1.0,
                    CRACKED => cracked += 1.0,
                    _ => {
                        numbered_cells += 1.0;
                        if v <= 2 && e >= 5 {
                            high_low += 1.0;
                        }
                    }
                }
                if v == 1 {
                    if c + 1 < SIZE && g[r][c + 1] == 1 {
                        adjacent_ones += 1.0 - vert_escape(r, c).max(vert_escape(r, c + 1));
                    }
                    if r + 1 < SIZE && g[r + 1][c] == 1 {
                        adjacent_ones += 1.0 - horiz_escape(r, c).max(horiz_escape(r + 1, c));
                    }
                }
                if v == SOLID || v == CRACKED {
                    let mut s = [0f64; 4];
                    let mut n = 0;
                    let neighbours = [
                        (r > 0).then(|| (r - 1, c)),
                        (r + 1 < SIZE).then(|| (r + 1, c)),
                        (c > 0).then(|| (r, c - 1)),
                        (c + 1 < SIZE).then(|| (r, c + 1)),
                    ];
                    for (nr, nc) in neighbours.into_iter().flatten() {
                        if numbered(g[nr][nc]) {
                            s[n] = s_of(nr, nc);
                            n += 1;
                        }
                    }
                    let s = &mut s[..n];
                    s.sort_unstable_by(|x, y| y.total_cmp(x));
                    if v == CRACKED {
                        let mut p = 1.0;
                        for &x in s.iter() {
                            p *= 1.0 - x;
                        }
                        cracked_exposure += 1.0 - p;
                    } else {
                        let first = if n > 0 { s[0] * 0.35 } else { 0.0 };
                        let second = if n > 1 { s[1] * 0.65 } else { 0.0 };
                        solid_exposure += first + second;
                    }
                }
            }
        }
        // Runs of 2s: rows (vertical escapes), then columns (horizontal escapes).
        for r in top..SIZE {
            let mut c = 0;
            while c < SIZE {
                if g[r][c] != 2 {
                    c += 1;
                    continue;
                }
                let s = c;
                while c < SIZE && g[r][c] == 2 {
                    c += 1;
                }
                let excess = (c - s) as i32 - 2;
                if excess > 0 {
                    let escape = (s..c).map(|k| vert_escape(r, k)).fold(0.0, f64::max);
                    triple_twos += (excess * excess) as f64 * (1.0 - escape);
                }
            }
        }
        for c in 0..SIZE {
            let mut r = top;
            while r < SIZE {
                if g[r][c] != 2 {
                    r += 1;
                    continue;
                }
                let s = r;
                while r < SIZE && g[r][c] == 2 {
                    r += 1;
                }
                let excess = (r - s) as i32 - 2;
                if excess > 0 {
                    let escape = (s..r).map(|k| horiz_escape(k, c)).fold(0.0, f64::max);
                    triple_twos += (excess * excess) as f64 * (1.0 - escape);
                }
            }
        }
        // Fair-only terms.
        let mut rise_pressure = 0.0;
        let mut next_options = 0.0;
        let mut max_h = 0;
        for &hc in &h {
            rise_pressure += (hc * hc * hc) as f64 / moves_remaining as f64;
            if hc < 7 && hc + 1 == next as i32 {
                next_options += 1.0;
            }
            max_h = max_h.max(hc);
        }
        let mut covered = 0.0;
        let mut low_height = 0.0;
        for r in top..SIZE {
            let e = (SIZE - r) as i32;
            for c in 0..SIZE {
                let edge = if c == 0 || c == SIZE - 1 { 1.65 } else { 1.0 };
                match g[r][c] {
                    SOLID => covered += (e * e) as f64 * edge,
                    CRACKED => covered += (e * e) as f64 * edge * 0.72,
                    1 | 2 => low_height += ((e - 2).max(0) * (e - 2).max(0)) as f64,
                    _ => {}
                }
            }
        }
        let danger = ((max_h - 4).max(0) * (max_h - 4).max(0)) as f64;
        [
            open,
            height_load,
            solid,
            cracked,
            numbered_cells,
            high_low,
            direct,
            latent,
            cracked_exposure,
            solid_exposure,
            adjacent_ones,
            triple_twos,
            dead_low,
            covered,
            low_height,
            danger,
            rise_pressure,
            next_options,
        ]
    }

    /// Every term bit for bit against the plain implementation on boards the reference
    /// vectors do not reach: columns of random heights and random cells (no settledness, so
    /// runs of any length and grays anywhere), and boards from random play.
    #[test]
    fn masks_equal_the_plain_loops_bit_for_bit() {
        let mut rng = Mulberry32::new(0x35_fa17);
        let check = |b: &Board, next: u8, mr: u8| {
            let (fast, plain) = (fair_terms(b, next, mr), fair_terms_plain(b, next, mr));
            let prepared = prepare(board_part(b), b, mr);
            for d in [0, 1, 4, 7, 8, 9, 255] {
                let want = combine(&fair_terms_plain(b, d, mr));
                assert_eq!(prepared.value(d).to_bits(), want.to_bits(), "{b}: next {d}");
            }
            for k in 0..18 {
                assert_eq!(
                    fast[k].to_bits(),
                    plain[k].to_bits(),
                    "{b}: term {} {} vs {}",
                    TERM_NAMES[k],
                    fast[k],
                    plain[k]
                );
            }
        };
        for n in 0..200_000u32 {
            let mut b = Board { cols: [0; SIZE] };
            // a quarter of the boards draw cells from 1-2 and the grays only: long runs of 2s
            let narrow = n % 4 == 0;
            for c in 0..SIZE {
                let h = rng.next_u32() % 8;
                for e in 0..h {
                    let x = rng.next_u32();
                    let v = if narrow {
                        [1, 2, 2, 2, SOLID, CRACKED][(x % 6) as usize]
                    } else {
                        (1 + x % 9) as u8
                    };
                    b.cols[c] |= (v as u32) << (4 * e);
                }
            }
            let x = rng.next_u32();
            check(&b, (1 + x % 7) as u8, (1 + (x >> 8) % 5) as u8);
        }
        for seed in 0..300u32 {
            let mut game = crate::game::Game::new(seed);
            let mut policy = crate::game::TraceRandom::new(seed);
            while !game.finished() {
                let s = game.public();
                check(&s.board, s.next, s.moves_remaining);
                let c = policy.choose(&game.board).expect("a legal column");
                game.play(c, &mut ()).unwrap();
            }
        }
    }
}
