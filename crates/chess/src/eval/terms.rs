//! Full-tier terms: everything that needs attack generation (mobility, king safety,
//! threats, trapped pieces, rook files). These are what the lazy tiers *skip*, so their
//! spread per army bucket is exactly what the residual tables of docs/design/chess-DESIGN.md §2 measure.

use super::S;
use super::params::p;
use super::pawns::{FILE_A, front_span, passed_mask, pawn_attacks};
use super::trace::{Danger, NoTrace, Side, Tracer};
use crate::board::{BitBoard, Board, Color, Piece, Square};
use cozy_chess::{get_bishop_moves, get_king_moves, get_knight_moves, get_rook_moves};

/// The king danger's score from its sum `d` (the attacking side's bonus): quadratic in the
/// middlegame, where attacks on the king decide games and several attackers are worth more
/// than the sum of each (a classic king-safety table made smooth), linear in the endgame.
/// Capped (at 1,388 and 100 cp) so that no weights a tuner tries can reach mate scores.
/// The tuner (`chess-lab`'s `tune`) fits the entries of `d` through this function.
#[inline]
pub fn king_danger(d: S) -> S {
    let mg = d.mg.clamp(0, KING_DANGER_MG_CAP);
    S::new(mg * mg / 720, d.eg.clamp(0, KING_DANGER_EG_CAP) / 20)
}

/// Where [`king_danger`] stops growing: middlegame and endgame sums.
pub const KING_DANGER_MG_CAP: i32 = 1000;
pub const KING_DANGER_EG_CAP: i32 = 2000;
/// The side to move's bonus.
pub(crate) const TEMPO: S = super::params::TEMPO;

fn square(sq: Square) -> usize {
    sq as usize
}

/// The full-tier terms of each side, from that side's view, indexed by colour: what
/// calibration histograms per side (docs/design/chess-DESIGN.md §2).
#[derive(Clone, Copy, Default, Debug)]
pub(crate) struct FullSides {
    /// King attack by this side on the enemy king (a bonus for this side).
    pub danger: [S; 2],
    /// This side's own king shelter.
    pub shelter: [S; 2],
    /// Mobility, threats, trapped pieces and rook files of this side.
    pub residual: [S; 2],
}

/// The full-tier terms of each side.
#[inline]
pub(crate) fn full_sides(board: &Board) -> FullSides {
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
pub(crate) fn full_sides_traced<T: Tracer>(board: &Board, t: &mut T) -> FullSides {
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
        // Zone squares hit by our knights, bishops, rooks, queens, and how many pieces hit it.
        let mut zone_hits = [0i32; 4];
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
                zone_hits[piece as usize - Piece::Knight as usize] += hits;
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

        out.residual[c] = residual.s;

        // King danger: only with two attackers, or one and our queen (a lone piece near the
        // king is no attack). Safe checking squares: reached by a piece of ours, giving check,
        // attacked by nothing of theirs and not ours. Weak zone squares: ours attack them and
        // nothing of theirs but the king or the queen defends them.
        let no_queen = board.colored_pieces(color, Piece::Queen).is_empty();
        if attackers + i32::from(!no_queen) >= 2 {
            let safe = !(theirs.all | us.0);
            let bishop_checks = get_bishop_moves(their_king, occ).0;
            let rook_checks = get_rook_moves(their_king, occ).0;
            let checks = [
                get_knight_moves(their_king).0 & ours.by[Piece::Knight as usize],
                bishop_checks & ours.by[Piece::Bishop as usize],
                rook_checks & ours.by[Piece::Rook as usize],
                (bishop_checks | rook_checks) & ours.by[Piece::Queen as usize],
            ];
            let defended = theirs.by[Piece::Pawn as usize]
                | theirs.by[Piece::Knight as usize]
                | theirs.by[Piece::Bishop as usize]
                | theirs.by[Piece::Rook as usize];
            let weak = zone.0 & ours.all & !defended;
            let mut d = Danger::new(color, t);
            for (k, hits) in zone_hits.into_iter().enumerate() {
                d.add(p!(KS_ATTACK_UNITS[k]), hits);
            }
            d.add(p!(KS_ATTACKERS), attackers);
            d.add(p!(KS_WEAK_SQUARES), weak.count_ones() as i32);
            for (k, squares) in checks.into_iter().enumerate() {
                d.add(p!(KS_SAFE_CHECK[k]), (squares & safe).count_ones() as i32);
            }
            d.add(p!(KS_NO_QUEEN), i32::from(no_queen));
            d.add(
                p!(KS_ZONE_PAWNS),
                (zone.0 & their_pawns).count_ones() as i32,
            );
            d.add(p!(KS_BASE), 1);
            out.danger[c] = king_danger(d.d);
        }
        // Our own shelter (a term of *our* king).
        let mut sh = Side::new(color, t);
        shelter(board, color, &mut sh);
        out.shelter[c] = sh.s;
    }
    out
}

/// Pawn shelter and pawn storm on the three files around `color`'s king (b–g as the centre,
/// so a king on the edge is judged on three files too): per file, our rearmost pawn level
/// with the king or in front of it, and their pawn nearest the king on that side, each by
/// the file's distance from the edge and the pawn's rank from our side. A storming pawn
/// that runs into ours is scored apart: it opens nothing.
fn shelter<T: Tracer>(board: &Board, color: Color, s: &mut Side<'_, T>) {
    let ksq = square(board.king(color));
    let white = color == Color::White;
    // Squares level with the king or in front of it, and a pawn's rank from our side.
    let ahead = if white {
        !0u64 << (8 * (ksq / 8))
    } else {
        !0u64 >> (8 * (7 - ksq / 8))
    };
    let rel = |sq: u32| if white { sq / 8 } else { 7 - sq / 8 } as usize;
    // The pawn of `bits` nearest our side of the board.
    let rearmost = |bits: u64| {
        if bits == 0 {
            0
        } else if white {
            rel(bits.trailing_zeros())
        } else {
            rel(63 - bits.leading_zeros())
        }
    };
    let our_pawns = board.colored_pieces(color, Piece::Pawn).0 & ahead;
    let their_pawns = board.colored_pieces(!color, Piece::Pawn).0 & ahead;
    let centre = (ksq % 8).clamp(1, 6);
    for f in centre - 1..=centre + 1 {
        let file = FILE_A << f;
        let edge = f.min(7 - f);
        let ours = rearmost(our_pawns & file);
        let theirs = rearmost(their_pawns & file);
        s.add(p!(KING_SHELTER[edge][ours]), 1);
        if ours != 0 && theirs == ours + 1 {
            s.add(p!(KING_STORM_BLOCKED[theirs]), 1);
        } else {
            s.add(p!(KING_STORM[edge][theirs]), 1);
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
