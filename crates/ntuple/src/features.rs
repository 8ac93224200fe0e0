//! Feature extraction: the active table entries of a state, straight from the packed column
//! words. A 4-nibble → decimal lookup table turns any run of cells into its base-10 pattern
//! number, so no cell is unpacked one by one in the hot path.

use drop7::board::{Board, SIZE};

use crate::layout::{Family, Layout};

/// Most active entries any layout has (the "wide" layout: 7+7+30+30+24+24).
pub const MAX_ACTIVE: usize = 122;

/// `DEC16[x]`: the four nibbles of `x` read as decimal digits, lowest nibble least
/// significant (cell codes are 0–9, so every nibble is a digit).
static DEC16: [u32; 1 << 16] = build_dec16();

const fn build_dec16() -> [u32; 1 << 16] {
    let mut t = [0u32; 1 << 16];
    let mut x = 0;
    while x < (1 << 16) {
        t[x] = (x & 0xF) as u32
            + 10 * ((x >> 4) & 0xF) as u32
            + 100 * ((x >> 8) & 0xF) as u32
            + 1000 * ((x >> 12) & 0xF) as u32;
        x += 1;
    }
    t
}

/// Decimal value of a whole 7-nibble column or row word.
#[inline(always)]
fn dec7(w: u32) -> u64 {
    DEC16[(w & 0xFFFF) as usize] as u64 + 10_000 * DEC16[(w >> 16) as usize & 0xFFFF] as u64
}

/// Decimal value of `n` nibbles of `w` starting at nibble `lo` (n ≤ 4).
#[inline(always)]
fn chunk(w: u32, lo: usize, mask: u32) -> u64 {
    DEC16[((w >> (4 * lo)) & mask) as usize] as u64
}

/// The active entry indices of one state, in feature order.
#[derive(Clone, Copy)]
pub struct Active {
    pub idx: [u64; MAX_ACTIVE],
    pub len: usize,
}

impl Active {
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
    let (b, _) = board.canonical();
    let cols = b.cols;
    let phase = phase_index(moves_remaining);
    let fill = layout.fill.bucket(&b) * layout.bucket_entries;
    let mut out = Active {
        idx: [0; MAX_ACTIVE],
        len: 0,
    };
    let mut push = |i: u64| {
        out.idx[out.len] = i;
        out.len += 1;
    };
    for (&fam, &(off, size, conditioned)) in layout.families.iter().zip(&layout.parts) {
        let base = fill
            + off
            + if conditioned {
                phase * fam.patterns()
            } else {
                0
            };
        match fam {
            Family::Rows => {
                for r in 0..SIZE {
                    let e = 4 * (SIZE - 1 - r);
                    let mut rw = 0u32;
                    for (c, &w) in cols.iter().enumerate() {
                        rw |= ((w >> e) & 0xF) << (4 * c);
                    }
                    push(base + r as u64 * size + dec7(rw));
                }
            }
            Family::Cols => {
                for (c, &w) in cols.iter().enumerate() {
                    push(base + c as u64 * size + dec7(w));
                }
            }
            Family::Win23 => {
                for c in 0..6 {
                    for top in 0..5 {
                        let lo = 4 - top;
                        let p = chunk(cols[c], lo, 0xFFF) + 1000 * chunk(cols[c + 1], lo, 0xFFF);
                        push(base + (c * 5 + top) as u64 * size + p);
                    }
                }
            }
            Family::Win32 => {
                for c in 0..5 {
                    for top in 0..6 {
                        let lo = 5 - top;
                        let p = chunk(cols[c], lo, 0xFF)
                            + 100 * chunk(cols[c + 1], lo, 0xFF)
                            + 10_000 * chunk(cols[c + 2], lo, 0xFF);
                        push(base + (c * 6 + top) as u64 * size + p);
                    }
                }
            }
            Family::Win24 => {
                for c in 0..6 {
                    for top in 0..4 {
                        let lo = 3 - top;
                        let p =
                            chunk(cols[c], lo, 0xFFFF) + 10_000 * chunk(cols[c + 1], lo, 0xFFFF);
                        push(base + (c * 4 + top) as u64 * size + p);
                    }
                }
            }
            Family::Win42 => {
                for c in 0..4 {
                    for top in 0..6 {
                        let lo = 5 - top;
                        let mut p = 0;
                        let mut scale = 1;
                        for j in 0..4 {
                            p += scale * chunk(cols[c + j], lo, 0xFF);
                            scale *= 100;
                        }
                        push(base + (c * 6 + top) as u64 * size + p);
                    }
                }
            }
        }
    }
    out
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
        let a = active(&l, &b, mr);
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

    /// Every placement of every family against SPEC §7's definitions computed cell by cell
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
            assert_eq!(
                active(&l, &s.board, mr).as_slice(),
                &want[..],
                "board {}",
                s.board
            );
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
            // rows unconditioned, cols shifted by phase·10⁷
            assert_eq!(c.idx[0], active(&cols, &b, 1).idx[0]);
            assert_eq!(
                c.idx[7],
                active(&cols, &b, 1).idx[7] + (mr as u64 - 1) * 10_000_000
            );
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
