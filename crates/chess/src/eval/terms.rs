//! Full-tier terms: everything that needs attack generation (mobility, king safety,
//! threats, trapped pieces, rook files). These are what the lazy tiers *skip*, so their
//! spread per army bucket is exactly what the residual tables of DESIGN.md §2 measure.

use super::S;
use super::pawns::{FILE_A, pawn_attacks};
use crate::board::{BitBoard, Board, Color, Piece, Square};
use cozy_chess::{get_bishop_moves, get_king_moves, get_knight_moves, get_rook_moves};

pub const KNIGHT_MOB: S = S::new(4, 4);
pub const BISHOP_MOB: S = S::new(5, 5);
pub const ROOK_MOB: S = S::new(2, 4);
pub const QUEEN_MOB: S = S::new(1, 2);
/// Mobility counts around which a piece is "normal" (score 0).
pub const MOB_CENTRE: [i32; 6] = [0, 4, 6, 6, 12, 0];
pub const ROOK_OPEN: S = S::new(24, 8);
pub const ROOK_SEMI_OPEN: S = S::new(11, 6);
pub const THREAT_BY_PAWN: S = S::new(45, 30);
pub const THREAT_BY_MINOR_ON_MAJOR: S = S::new(30, 25);
pub const NO_SAFE_MOVES: S = S::new(-25, -25);
pub const TRAPPED_BISHOP: S = S::new(-90, -90);
pub const TRAPPED_ROOK: S = S::new(-40, -5);
pub const SHIELD_PAWN_NEAR: i32 = 12;
pub const SHIELD_PAWN_FAR: i32 = 6;
pub const SHIELD_MISSING: i32 = -14;
pub const KING_OPEN_FILE: i32 = -12;
/// Attack weight per attacking piece kind on the king zone.
pub const KING_ATTACK_WEIGHT: [i32; 6] = [0, 2, 2, 3, 5, 0];
pub const TEMPO: S = S::new(14, 6);

/// Breakdown of the full-tier terms, White minus Black; kept separate so calibration can
/// histogram the king term apart from the rest (DESIGN.md §2: king tables vs residual tables).
#[derive(Clone, Copy, Default, Debug)]
pub struct FullTerms {
    pub king: S,
    pub residual: S,
}

fn square(sq: Square) -> usize {
    sq as usize
}

/// The full-tier terms of each side, from that side's view, indexed by colour: what
/// calibration histograms per side (DESIGN.md §2).
#[derive(Clone, Copy, Default, Debug)]
pub struct FullSides {
    /// King attack by this side on the enemy king (a bonus for this side).
    pub danger: [S; 2],
    /// This side's own king shelter (middlegame only).
    pub shelter: [i32; 2],
    /// Mobility, threats, trapped pieces and rook files of this side.
    pub residual: [S; 2],
}

/// King safety, mobility, threats and trapped pieces for both colours (White minus Black).
#[inline]
pub fn full_terms(board: &Board) -> FullTerms {
    let s = full_sides(board);
    let (w, b) = (Color::White as usize, Color::Black as usize);
    FullTerms {
        king: (s.danger[w] + S::new(s.shelter[w], 0)) - (s.danger[b] + S::new(s.shelter[b], 0)),
        residual: s.residual[w] - s.residual[b],
    }
}

/// The full-tier terms of each side.
pub fn full_sides(board: &Board) -> FullSides {
    let occ = board.occupied();
    let pawns = board.pieces(Piece::Pawn);
    let mut out = FullSides::default();
    for color in [Color::White, Color::Black] {
        let us = board.colors(color);
        let them = board.colors(!color);
        let our_pawns = (pawns & us).0;
        let their_pawns = (pawns & them).0;
        let their_pawn_att = pawn_attacks(their_pawns, !color);
        let our_pawn_att = pawn_attacks(our_pawns, color);
        let area = BitBoard(!(us.0 | their_pawn_att));
        let their_king = board.king(!color);
        let zone = get_king_moves(their_king) | their_king.bitboard();
        let mut residual = S::default();
        let mut attack_units = 0i32;
        let mut attackers = 0i32;
        let their_majors = board.pieces(Piece::Rook) | board.pieces(Piece::Queen);

        for piece in [Piece::Knight, Piece::Bishop, Piece::Rook, Piece::Queen] {
            let p = piece as usize;
            for sq in board.colored_pieces(color, piece) {
                let att = match piece {
                    Piece::Knight => get_knight_moves(sq),
                    Piece::Bishop => get_bishop_moves(sq, occ),
                    Piece::Rook => get_rook_moves(sq, occ),
                    _ => get_bishop_moves(sq, occ) | get_rook_moves(sq, occ),
                };
                let mob = (att & area).len() as i32;
                let weight = match piece {
                    Piece::Knight => KNIGHT_MOB,
                    Piece::Bishop => BISHOP_MOB,
                    Piece::Rook => ROOK_MOB,
                    _ => QUEEN_MOB,
                };
                residual += weight * (mob - MOB_CENTRE[p]);
                if mob == 0 && piece != Piece::Queen {
                    residual += NO_SAFE_MOVES;
                }
                let hits = (att & zone).len() as i32;
                if hits > 0 {
                    attackers += 1;
                    attack_units += KING_ATTACK_WEIGHT[p] * hits;
                }
                if matches!(piece, Piece::Knight | Piece::Bishop)
                    && !(att & them & their_majors).is_empty()
                {
                    residual += THREAT_BY_MINOR_ON_MAJOR;
                }
                if piece == Piece::Rook {
                    let file = FILE_A << (square(sq) % 8);
                    if file & our_pawns == 0 {
                        residual += if file & their_pawns == 0 {
                            ROOK_OPEN
                        } else {
                            ROOK_SEMI_OPEN
                        };
                    }
                }
            }
        }
        // Threats: enemy non-pawn pieces attacked by our pawns.
        let targets = (them & !board.pieces(Piece::Pawn) & !board.pieces(Piece::King)).0;
        residual += THREAT_BY_PAWN * (targets & our_pawn_att).count_ones() as i32;

        residual += trapped(board, color);

        // King attack: quadratic in accumulated units, only meaningful with 2+ attackers
        // or a queen; halved without our queen because mating nets need her.
        let c = color as usize;
        if attackers >= 2 {
            let mut danger = (attack_units * attack_units).min(900);
            if board.colored_pieces(color, Piece::Queen).is_empty() {
                danger /= 2;
            }
            out.danger[c] = S::new(danger / 2, danger / 8);
        }
        // Our own shelter (a term of *our* king).
        out.shelter[c] = shelter(board, color);
        out.residual[c] = residual;
    }
    out
}

/// Pawn shield and open files in front of `color`'s king (middlegame only).
fn shelter(board: &Board, color: Color) -> i32 {
    let ksq = square(board.king(color));
    let kf = (ksq % 8) as i32;
    let kr = ksq / 8;
    let rel_rank = if color == Color::White { kr } else { 7 - kr };
    if rel_rank > 1 {
        return SHIELD_MISSING * 2;
    }
    let our_pawns = board.colored_pieces(color, Piece::Pawn).0;
    let all_pawns = board.pieces(Piece::Pawn).0;
    let mut s = 0;
    for f in (kf - 1).max(0)..=(kf + 1).min(7) {
        let file = FILE_A << f;
        let near_rank = if color == Color::White {
            kr + 1
        } else {
            kr.saturating_sub(1)
        };
        let far_rank = if color == Color::White {
            kr + 2
        } else {
            kr.saturating_sub(2)
        };
        if near_rank < 8 && our_pawns & file & (0xFFu64 << (near_rank * 8)) != 0 {
            s += SHIELD_PAWN_NEAR;
        } else if far_rank < 8 && our_pawns & file & (0xFFu64 << (far_rank * 8)) != 0 {
            s += SHIELD_PAWN_FAR;
        } else {
            s += SHIELD_MISSING;
        }
        if all_pawns & file == 0 {
            s += KING_OPEN_FILE;
        }
    }
    s
}

/// Classic trapped pieces: bishop on a7/h7 shut in by a pawn on b6/g6, rook boxed in by
/// its own uncastled king.
fn trapped(board: &Board, color: Color) -> S {
    let mut s = S::default();
    let flip = |sq: usize| if color == Color::White { sq } else { sq ^ 56 };
    let bishops = board.colored_pieces(color, Piece::Bishop).0;
    let their_pawns = board.colored_pieces(!color, Piece::Pawn).0;
    // a7 = 48, b6 = 41, h7 = 55, g6 = 46 (White's view).
    for (b, p) in [(48usize, 41usize), (55, 46)] {
        if bishops & (1u64 << flip(b)) != 0 && their_pawns & (1u64 << flip(p)) != 0 {
            s += TRAPPED_BISHOP;
        }
    }
    let rooks = board.colored_pieces(color, Piece::Rook).0;
    let k = flip(square(board.king(color)));
    // King on f1/g1 with rook on g1/h1 (or b1/c1 with rook a1/b1) cannot get out.
    if (k == 5 || k == 6)
        && rooks & ((1u64 << flip(7)) | (1u64 << flip(6))) & !(1u64 << flip(k)) != 0
        && (rooks & (1u64 << flip(7)) != 0 || k == 5)
    {
        s += TRAPPED_ROOK;
    }
    if (k == 1 || k == 2) && rooks & ((1u64 << flip(0)) | (1u64 << flip(1))) != 0 {
        s += TRAPPED_ROOK;
    }
    s
}
