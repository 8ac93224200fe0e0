//! Material values and piece-square tables, in (middlegame, endgame) pairs.
//!
//! Material uses the well-known PeSTO magnitudes. The square tables are our own, generated
//! from a few readable rules (centralisation, advancement, castled king) by `const fn`, so
//! that each number is explainable and the later tuning issue has one formula to change.

use super::S;

/// Material by piece index (pawn, knight, bishop, rook, queen, king).
pub const MATERIAL: [S; 6] = [
    S::new(82, 94),
    S::new(337, 281),
    S::new(365, 297),
    S::new(477, 512),
    S::new(1025, 936),
    S::new(0, 0),
];

/// Simple single-number piece values for SEE, MVV ordering and pruning estimates.
pub const SEE_VALUE: [i32; 6] = [100, 320, 330, 500, 950, 20_000];

/// Game-phase weight by piece; 24 = all pieces on board (pure middlegame).
pub const PHASE_WEIGHT: [i32; 6] = [0, 1, 1, 2, 4, 0];
pub const PHASE_MAX: i32 = 24;

const fn fc(sq: usize) -> i32 {
    let f = (sq % 8) as i32;
    if f < 4 { f } else { 7 - f }
}
const fn rc(sq: usize) -> i32 {
    let r = (sq / 8) as i32;
    if r < 4 { r } else { 7 - r }
}

/// Square bonus for `piece` on `sq`, seen from White (rank 0 = own back rank).
const fn square_bonus(piece: usize, sq: usize) -> S {
    let f = (sq % 8) as i32;
    let r = (sq / 8) as i32;
    let centre = fc(sq) + rc(sq); // 0 (corner) .. 6 (centre)
    match piece {
        0 => {
            // Pawns: advance, and occupy the centre in the middlegame.
            if r == 0 || r == 7 {
                S::new(0, 0)
            } else {
                let central = if fc(sq) >= 2 && r >= 2 && r <= 4 {
                    12
                } else {
                    0
                };
                let flank_push = if fc(sq) == 0 && r >= 3 { -4 } else { 0 };
                S::new((r - 1) * 4 + central + flank_push - 4, (r - 1) * 9)
            }
        }
        1 => {
            let outpost = if r >= 4 && r <= 5 && fc(sq) >= 2 {
                8
            } else {
                0
            };
            S::new(centre * 9 - 28 + outpost, centre * 7 - 22)
        }
        2 => {
            let diag = if f == r || f + r == 7 { 8 } else { 0 };
            let back = if r == 0 { -8 } else { 0 };
            S::new(centre * 4 - 10 + diag + back, centre * 4 - 12)
        }
        3 => {
            let seventh = if r == 6 { 18 } else { 0 };
            let centre_file = if fc(sq) >= 2 { 5 } else { 0 };
            S::new(seventh + centre_file - 3, if r == 6 { 12 } else { 0 })
        }
        4 => {
            let early = if r >= 5 { -6 } else { 0 };
            S::new(centre * 2 - 6 + early, centre * 6 - 18)
        }
        _ => {
            // King: shelter in the corner early, walk to the centre late.
            let mg = if r == 0 {
                match f {
                    0 | 7 => 18,
                    1 | 6 => 28,
                    2 => 8,
                    5 => 0,
                    _ => -10,
                }
            } else if r == 1 {
                match f {
                    0 | 1 | 6 | 7 => 5,
                    _ => -20,
                }
            } else {
                -30 - 12 * (r - 2)
            };
            S::new(mg, centre * 11 - 35)
        }
    }
}

const fn build() -> [[S; 64]; 6] {
    let mut t = [[S::new(0, 0); 64]; 6];
    let mut p = 0;
    while p < 6 {
        let mut sq = 0;
        while sq < 64 {
            let b = square_bonus(p, sq);
            t[p][sq] = S::new(b.mg + MATERIAL[p].mg, b.eg + MATERIAL[p].eg);
            sq += 1;
        }
        p += 1;
    }
    t
}

/// Material + square bonus, indexed `[piece][square from White's side]`.
/// Black looks up `sq ^ 56` (rank mirror).
pub const PST: [[S; 64]; 6] = build();
