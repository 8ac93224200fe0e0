//! The extraction plan a layout carries: its active entries eight at a time as byte
//! permutations and multiply-add weights for the AVX-512 VBMI kernel
//! (`crate::features::vbmi`, which explains the arithmetic). It is derived from the layout
//! alone, so it is built here, with the layout, and the layout never imports the extraction
//! code that reads it (issue 31: no layout ↔ features cycle).

use super::{Family, Layout, PHASES};

/// The cells of one pattern, least significant digit first: `(row from the top, column)`, or
/// `None` for a digit that is always 0 (patterns of fewer than eight cells).
pub(crate) type Digits = [Option<(usize, usize)>; 8];

/// The digits of placement `p` of `fam`, straight from docs/design/drop7-SPEC.md §7's definitions.
pub(crate) fn digits(fam: Family, p: usize) -> Digits {
    let mut d: Digits = [None; 8];
    match fam {
        // Σ_c cell(r, c)·10^c
        Family::Rows => (0..7).for_each(|c| d[c] = Some((p, c))),
        // Σ_r cell(r, c)·10^(6−r)
        Family::Cols => (0..7).for_each(|k| d[k] = Some((6 - k, p))),
        // 2 wide × h tall (win23: L + 1000·R, L = 100·cell(top, c) + 10·cell(top+1, c) +
        // cell(top+2, c); win24: left4 + 10⁴·right4): each column's cells with the lowest
        // row least significant, the left column first
        Family::Win23 | Family::Win24 => {
            let h = if fam == Family::Win23 { 3 } else { 4 };
            let tops = 8 - h;
            let (c, top) = (p / tops, p % tops);
            for (side, col) in [c, c + 1].into_iter().enumerate() {
                for k in 0..h {
                    d[h * side + k] = Some((top + h - 1 - k, col));
                }
            }
        }
        // w wide × 2 tall (win32: a + 100·b + 10⁴·d; win42: Σ_j 100^j·…), each column's
        // pair 10·cell(top, c+j) + cell(top+1, c+j)
        Family::Win32 | Family::Win42 => {
            let w = if fam == Family::Win32 { 3 } else { 4 };
            let (c, top) = (p / 6, p % 6);
            for j in 0..w {
                d[2 * j] = Some((top + 1, c + j));
                d[2 * j + 1] = Some((top, c + j));
            }
        }
    }
    d
}

/// Where cell `(r, c)` sits in the unpacked cell vector: column words are paired into
/// 64-bit lanes (0|1, 2|3, 4|5, 6|pad); lanes 0–3 hold the nibbles of the even columns and
/// lanes 4–7 those of the odd ones, nibble j (row 6 − j) at byte j of its lane.
pub(crate) fn cell_byte(r: usize, c: usize) -> u8 {
    let j = 6 - r;
    let lane = if c.is_multiple_of(2) {
        c / 2
    } else {
        4 + c / 2
    };
    (8 * lane + j) as u8
}

/// A byte of the cell vector that is always 0 (nibble 0 of the empty pad column).
const ZERO_BYTE: u8 = 56;

/// Eight consecutive active entries, ready for the kernel.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct Group {
    /// Byte permutation of the cell vector, as is and mirrored (column c ↔ 6 − c).
    pub(crate) perm: [[u8; 64]; 2],
    /// Per lane `[s, 10s] × 4` for the first multiply-add, s the storage stride.
    pub(crate) weights: [i8; 64],
    /// Per rise-clock phase, per lane: placement offset + phase term (as in `Layout::place`).
    pub(crate) place: [[u64; 8]; 5],
}

/// The groups of a layout, from its families, strides and placement offsets.
pub(crate) fn groups(layout: &Layout) -> Vec<Group> {
    let mut recipes = Vec::new();
    for (&fam, &(_, _, conditioned)) in layout.families.iter().zip(&layout.parts) {
        let s = if conditioned { PHASES as i8 } else { 1 };
        recipes.extend((0..fam.tables() as usize).map(|p| (digits(fam, p), s)));
    }
    recipes
        .chunks(8)
        .enumerate()
        .map(|(g, chunk)| {
            let mut group = Group {
                perm: [[ZERO_BYTE; 64]; 2],
                weights: [0; 64],
                place: [[0; 8]; 5],
            };
            for (lane, (digits, s)) in chunk.iter().enumerate() {
                for (k, cell) in digits.iter().enumerate() {
                    if let Some((r, c)) = *cell {
                        group.perm[0][8 * lane + k] = cell_byte(r, c);
                        group.perm[1][8 * lane + k] = cell_byte(r, 6 - c);
                    }
                    group.weights[8 * lane + k] = if k.is_multiple_of(2) { *s } else { 10 * s };
                }
                for (phase, place) in group.place.iter_mut().enumerate() {
                    place[lane] = layout.place[phase][8 * g + lane];
                }
            }
            group
        })
        .collect()
}
