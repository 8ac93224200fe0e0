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

/// The 18 raw terms of the fair leaf for a live state (`moves_remaining` 1..=5).
pub fn fair_terms(board: &Board, next: u8, moves_remaining: u8) -> [f64; 18] {
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
    let mut rise_pressure = 0.0;
    let mut next_options = 0.0;
    for c in 0..SIZE {
        let h = board.height(c) as i32;
        rise_pressure += (h * h * h) as f64 / moves_remaining as f64;
        if h < 7 && h + 1 == next as i32 {
            next_options += 1.0;
        }
    }
    let mut v = partial;
    v += WEIGHTS[16] * rise_pressure;
    v += WEIGHTS[17] * next_options;
    v
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
