//! Full-tier terms: everything that needs attack generation (mobility, king safety,
//! threats, trapped pieces, rook files). These are what the lazy tiers *skip*, so their
//! spread per army bucket is exactly what the residual tables of docs/design/chess-DESIGN.md §2 measure.

use super::S;
use super::params::p;
use super::pawns::{FILE_A, pawn_attacks};
use super::trace::{NoTrace, Side, Tracer};
use crate::board::{BitBoard, Board, Color, Piece, Square};
use cozy_chess::{get_bishop_moves, get_king_moves, get_knight_moves, get_rook_moves};

/// Mobility counts around which a piece is "normal" (score 0): structure, not a weight.
pub const MOB_CENTRE: [i32; 6] = [0, 4, 6, 6, 12, 0];
/// Attack weight per attacking piece kind on the king zone (the king-attack term is
/// quadratic in these, so the linear tuner leaves them alone).
pub const KING_ATTACK_WEIGHT: [i32; 6] = [0, 2, 2, 3, 5, 0];
/// The side to move's bonus.
pub const TEMPO: S = super::params::TEMPO;

fn square(sq: Square) -> usize {
    sq as usize
}

/// The full-tier terms of each side, from that side's view, indexed by colour: what
/// calibration histograms per side (docs/design/chess-DESIGN.md §2).
#[derive(Clone, Copy, Default, Debug)]
pub struct FullSides {
    /// King attack by this side on the enemy king (a bonus for this side).
    pub danger: [S; 2],
    /// This side's own king shelter.
    pub shelter: [S; 2],
    /// Mobility, threats, trapped pieces and rook files of this side.
    pub residual: [S; 2],
}

/// The full-tier terms of each side.
#[inline]
pub fn full_sides(board: &Board) -> FullSides {
    full_sides_traced(board, &mut NoTrace)
}

/// [`full_sides`], each term reported to `t`.
pub fn full_sides_traced<T: Tracer>(board: &Board, t: &mut T) -> FullSides {
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
        let c = color as usize;
        let mut residual = Side::new(color, t);
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
                    Piece::Knight => p!(KNIGHT_MOB),
                    Piece::Bishop => p!(BISHOP_MOB),
                    Piece::Rook => p!(ROOK_MOB),
                    _ => p!(QUEEN_MOB),
                };
                residual.add(weight, mob - MOB_CENTRE[p]);
                if mob == 0 && piece != Piece::Queen {
                    residual.add(p!(NO_SAFE_MOVES), 1);
                }
                let hits = (att & zone).len() as i32;
                if hits > 0 {
                    attackers += 1;
                    attack_units += KING_ATTACK_WEIGHT[p] * hits;
                }
                if matches!(piece, Piece::Knight | Piece::Bishop)
                    && !(att & them & their_majors).is_empty()
                {
                    residual.add(p!(THREAT_BY_MINOR_ON_MAJOR), 1);
                }
                if piece == Piece::Rook {
                    let file = FILE_A << (square(sq) % 8);
                    if file & our_pawns == 0 {
                        residual.add(
                            if file & their_pawns == 0 {
                                p!(ROOK_OPEN)
                            } else {
                                p!(ROOK_SEMI_OPEN)
                            },
                            1,
                        );
                    }
                }
            }
        }
        // Threats: enemy non-pawn pieces attacked by our pawns.
        let targets = (them & !board.pieces(Piece::Pawn) & !board.pieces(Piece::King)).0;
        residual.add(
            p!(THREAT_BY_PAWN),
            (targets & our_pawn_att).count_ones() as i32,
        );
        trapped(board, color, &mut residual);
        out.residual[c] = residual.s;

        // King attack: quadratic in accumulated units, only meaningful with 2+ attackers
        // or a queen; halved without our queen because mating nets need her.
        if attackers >= 2 {
            let mut danger = (attack_units * attack_units).min(900);
            if board.colored_pieces(color, Piece::Queen).is_empty() {
                danger /= 2;
            }
            let mut d = Side::new(color, t);
            d.fixed(S::new(danger / 2, danger / 8));
            out.danger[c] = d.s;
        }
        // Our own shelter (a term of *our* king).
        let mut sh = Side::new(color, t);
        shelter(board, color, &mut sh);
        out.shelter[c] = sh.s;
    }
    out
}

/// Pawn shield and open files in front of `color`'s king.
fn shelter<T: Tracer>(board: &Board, color: Color, s: &mut Side<'_, T>) {
    let ksq = square(board.king(color));
    let kf = (ksq % 8) as i32;
    let kr = ksq / 8;
    let rel_rank = if color == Color::White { kr } else { 7 - kr };
    if rel_rank > 1 {
        s.add(p!(SHIELD_MISSING), 2);
        return;
    }
    let our_pawns = board.colored_pieces(color, Piece::Pawn).0;
    let all_pawns = board.pieces(Piece::Pawn).0;
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
            s.add(p!(SHIELD_PAWN_NEAR), 1);
        } else if far_rank < 8 && our_pawns & file & (0xFFu64 << (far_rank * 8)) != 0 {
            s.add(p!(SHIELD_PAWN_FAR), 1);
        } else {
            s.add(p!(SHIELD_MISSING), 1);
        }
        if all_pawns & file == 0 {
            s.add(p!(KING_OPEN_FILE), 1);
        }
    }
}

/// Classic trapped pieces: bishop on a7/h7 shut in by a pawn on b6/g6, rook boxed in by
/// its own uncastled king.
fn trapped<T: Tracer>(board: &Board, color: Color, s: &mut Side<'_, T>) {
    let flip = |sq: usize| if color == Color::White { sq } else { sq ^ 56 };
    let bishops = board.colored_pieces(color, Piece::Bishop).0;
    let their_pawns = board.colored_pieces(!color, Piece::Pawn).0;
    // a7 = 48, b6 = 41, h7 = 55, g6 = 46 (White's view).
    for (b, p) in [(48usize, 41usize), (55, 46)] {
        if bishops & (1u64 << flip(b)) != 0 && their_pawns & (1u64 << flip(p)) != 0 {
            s.add(p!(TRAPPED_BISHOP), 1);
        }
    }
    let rooks = board.colored_pieces(color, Piece::Rook).0;
    let k = flip(square(board.king(color)));
    // King on f1/g1 with rook on g1/h1 (or b1/c1 with rook a1/b1) cannot get out.
    if (k == 5 || k == 6)
        && rooks & ((1u64 << flip(7)) | (1u64 << flip(6))) & !(1u64 << flip(k)) != 0
        && (rooks & (1u64 << flip(7)) != 0 || k == 5)
    {
        s.add(p!(TRAPPED_ROOK), 1);
    }
    if (k == 1 || k == 2) && rooks & ((1u64 << flip(0)) | (1u64 << flip(1))) != 0 {
        s.add(p!(TRAPPED_ROOK), 1);
    }
}
