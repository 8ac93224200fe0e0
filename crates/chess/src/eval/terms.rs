//! Full-tier terms: everything that needs attack generation (mobility, king safety,
//! threats, trapped pieces, rook files). These are what the lazy tiers *skip*, so their
//! spread per army bucket is exactly what the residual tables of docs/design/chess-DESIGN.md §2 measure.

use super::S;
use super::params::p;
use super::pawns::{FILE_A, front_span, passed_mask, pawn_attacks};
use super::trace::{NoTrace, Side, Tracer};
use crate::board::{BitBoard, Board, Color, Piece, Square};
use cozy_chess::{get_bishop_moves, get_king_moves, get_knight_moves, get_rook_moves};

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

/// Most knights, bishops, rooks and queens one side can have (2 + 8 promotions each, but at
/// most 15 pieces besides the king).
const MAX_PIECES: usize = 15;

/// One side's attacks, gathered before any term is scored: the threat and safe-check terms
/// of one side need the other side's attacks.
#[derive(Clone, Copy)]
struct Attacks {
    /// (piece, square, attacked squares) of each knight, bishop, rook and queen.
    pieces: [(Piece, Square, BitBoard); MAX_PIECES],
    len: usize,
    /// Squares attacked by each piece kind (indexed by `Piece`), and by anything.
    by: [u64; 6],
    all: u64,
}

impl Attacks {
    fn of(board: &Board, color: Color, occ: BitBoard) -> Self {
        let pawn = pawn_attacks(board.colored_pieces(color, Piece::Pawn).0, color);
        let mut a = Attacks {
            pieces: [(Piece::Knight, Square::A1, BitBoard::EMPTY); MAX_PIECES],
            len: 0,
            by: [0; 6],
            all: pawn,
        };
        a.by[Piece::Pawn as usize] = pawn;
        let king = get_king_moves(board.king(color)).0;
        a.by[Piece::King as usize] = king;
        a.all |= king;
        for piece in [Piece::Knight, Piece::Bishop, Piece::Rook, Piece::Queen] {
            for sq in board.colored_pieces(color, piece) {
                let att = match piece {
                    Piece::Knight => get_knight_moves(sq),
                    Piece::Bishop => get_bishop_moves(sq, occ),
                    Piece::Rook => get_rook_moves(sq, occ),
                    _ => get_bishop_moves(sq, occ) | get_rook_moves(sq, occ),
                };
                a.by[piece as usize] |= att.0;
                a.all |= att.0;
                if a.len < MAX_PIECES {
                    a.pieces[a.len] = (piece, sq, att);
                    a.len += 1;
                }
            }
        }
        a
    }
}

/// [`full_sides`], each term reported to `t`.
pub fn full_sides_traced<T: Tracer>(board: &Board, t: &mut T) -> FullSides {
    let occ = board.occupied();
    let pawns = board.pieces(Piece::Pawn);
    let attacks = [
        Attacks::of(board, Color::White, occ),
        Attacks::of(board, Color::Black, occ),
    ];
    let mut out = FullSides::default();
    for color in [Color::White, Color::Black] {
        let us = board.colors(color);
        let them = board.colors(!color);
        let our_pawns = (pawns & us).0;
        let their_pawns = (pawns & them).0;
        let ours = &attacks[color as usize];
        let theirs = &attacks[!color as usize];
        let area = BitBoard(!(us.0 | theirs.by[Piece::Pawn as usize]));
        let their_king = board.king(!color);
        let zone = get_king_moves(their_king) | their_king.bitboard();
        let c = color as usize;
        let mut residual = Side::new(color, t);
        let mut attack_units = 0i32;
        let mut attackers = 0i32;
        let their_majors = board.pieces(Piece::Rook) | board.pieces(Piece::Queen);
        // One colour class of squares (a1, c1, ..., b2, ...: the dark ones; which class is
        // which does not matter, a bishop's pawns are counted on its own class).
        const LIGHT: u64 = 0x55AA_55AA_55AA_55AA;
        let seventh = if color == Color::White {
            0xFFu64 << 48
        } else {
            0xFFu64 << 8
        };

        for &(piece, sq, att) in &ours.pieces[..ours.len] {
            let p = piece as usize;
            let mob = (att & area).len() as usize;
            residual.add(
                match piece {
                    Piece::Knight => p!(KNIGHT_MOBILITY[mob]),
                    Piece::Bishop => p!(BISHOP_MOBILITY[mob]),
                    Piece::Rook => p!(ROOK_MOBILITY[mob]),
                    _ => p!(QUEEN_MOBILITY[mob]),
                },
                1,
            );
            let hits = (att & zone).len() as i32;
            if hits > 0 {
                attackers += 1;
                attack_units += KING_ATTACK_WEIGHT[p] * hits;
            }
            let bit = 1u64 << square(sq);
            match piece {
                Piece::Knight | Piece::Bishop => {
                    if !(att & them & their_majors).is_empty() {
                        residual.add(p!(THREAT_BY_MINOR_ON_MAJOR), 1);
                    }
                    let rel_rank = if color == Color::White {
                        square(sq) / 8
                    } else {
                        7 - square(sq) / 8
                    };
                    if (3..=5).contains(&rel_rank)
                        && ours.by[Piece::Pawn as usize] & bit != 0
                        && their_pawns
                            & passed_mask(square(sq), color)
                            & !front_span(square(sq), color)
                            == 0
                    {
                        residual.add(
                            if piece == Piece::Knight {
                                p!(KNIGHT_OUTPOST)
                            } else {
                                p!(BISHOP_OUTPOST)
                            },
                            1,
                        );
                    }
                    if piece == Piece::Bishop {
                        let same = if bit & LIGHT != 0 { LIGHT } else { !LIGHT };
                        residual.add(p!(BISHOP_PAWNS), (our_pawns & same).count_ones() as i32);
                    }
                }
                Piece::Rook => {
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
                    if bit & seventh != 0 {
                        residual.add(p!(ROOK_ON_SEVENTH), 1);
                    }
                }
                _ => {}
            }
        }
        // Threats: enemy non-pawn pieces attacked by our pawns; enemy pieces we attack that
        // nothing of theirs defends; their queens under our rooks; a pawn push to a square
        // their pawns do not hold (or ours do) that would attack a piece.
        let targets = (them & !board.pieces(Piece::Pawn) & !board.pieces(Piece::King)).0;
        residual.add(
            p!(THREAT_BY_PAWN),
            (targets & ours.by[Piece::Pawn as usize]).count_ones() as i32,
        );
        residual.add(
            p!(HANGING),
            (targets & ours.all & !theirs.all).count_ones() as i32,
        );
        let their_queens = board.colored_pieces(!color, Piece::Queen).0;
        residual.add(
            p!(THREAT_BY_ROOK_ON_QUEEN),
            (their_queens & ours.by[Piece::Rook as usize]).count_ones() as i32,
        );
        let empty = !occ.0;
        let pushed = if color == Color::White {
            (our_pawns << 8) & empty
        } else {
            (our_pawns >> 8) & empty
        } & (!theirs.by[Piece::Pawn as usize] | ours.by[Piece::Pawn as usize]);
        residual.add(
            p!(PAWN_PUSH_THREAT),
            (pawn_attacks(pushed, color) & targets).count_ones() as i32,
        );
        trapped(board, color, &mut residual);

        // King attack, the linear part: attack units, and squares from which each piece kind
        // could give a check that nothing of theirs attacks.
        if attackers >= 1 {
            residual.add(p!(KING_ATTACK_UNITS), attack_units);
        }
        let safe = !(theirs.all | us.0);
        let bishop_checks = get_bishop_moves(their_king, occ).0;
        let rook_checks = get_rook_moves(their_king, occ).0;
        let checks = [
            get_knight_moves(their_king).0 & ours.by[Piece::Knight as usize],
            bishop_checks & ours.by[Piece::Bishop as usize],
            rook_checks & ours.by[Piece::Rook as usize],
            (bishop_checks | rook_checks) & ours.by[Piece::Queen as usize],
        ];
        for (k, squares) in checks.into_iter().enumerate() {
            let n = (squares & safe).count_ones() as i32;
            if n > 0 {
                residual.add(p!(SAFE_CHECK[k]), n);
            }
        }
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
