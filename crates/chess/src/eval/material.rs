//! The super-lazy tier kept incrementally: material + piece-square tables (White minus
//! Black), the game phase and each side's army, updated from a per-move delta so that the
//! cheap exit never walks the pieces (issue 13, item 1).
//!
//! The search keeps one [`Material`] per ply: the child's is the parent's plus
//! [`Material::after`] of the move (a handful of table lookups), a null move copies it.

use super::S;
use super::pst::{PHASE_MAX, PHASE_WEIGHT, PST};
use crate::board::{Board, Color, Move, Piece, Square};

/// Army weight by piece (N = B = 3, R = 5, Q = 9; pawns and kings 0), docs/design/chess-DESIGN.md §2.
pub(crate) const ARMY_WEIGHT: [i32; 6] = [0, 3, 3, 5, 9, 0];
/// Army scaler cap: the opening army 2N + 2B + 2R + Q is exactly 31.
pub(crate) const ARMY_MAX: i32 = 31;

/// Material + PST, phase and armies of a position.
#[derive(Clone, Copy, Default, Debug, PartialEq, Eq)]
pub struct Material {
    /// Material + piece-square values, White minus Black (before tapering).
    pub psqt: S,
    /// Sum of the phase weights (uncapped; [`Material::phase`] caps it).
    pub phase_sum: i32,
    /// Non-pawn material of each side (uncapped; [`Material::army`] caps it).
    pub army_sum: [i32; 2],
}

#[inline]
fn pst_index(color: Color, sq: Square) -> usize {
    if color == Color::White {
        sq as usize
    } else {
        sq as usize ^ 56
    }
}

impl Material {
    /// From scratch (the root of a search, tools, tests).
    pub fn from_board(board: &Board) -> Self {
        let mut m = Self::default();
        for color in [Color::White, Color::Black] {
            for piece in Piece::ALL {
                for sq in board.colored_pieces(color, piece) {
                    m.add(color, piece, sq);
                }
            }
        }
        m
    }

    #[inline]
    fn add(&mut self, color: Color, piece: Piece, sq: Square) {
        let p = piece as usize;
        let v = PST[p][pst_index(color, sq)];
        if color == Color::White {
            self.psqt += v;
        } else {
            self.psqt -= v;
        }
        self.phase_sum += PHASE_WEIGHT[p];
        self.army_sum[color as usize] += ARMY_WEIGHT[p];
    }

    #[inline]
    fn remove(&mut self, color: Color, piece: Piece, sq: Square) {
        let p = piece as usize;
        let v = PST[p][pst_index(color, sq)];
        if color == Color::White {
            self.psqt -= v;
        } else {
            self.psqt += v;
        }
        self.phase_sum -= PHASE_WEIGHT[p];
        self.army_sum[color as usize] -= ARMY_WEIGHT[p];
    }

    /// The accumulator after the legal move `mv` of `board`; `moved` is the piece on
    /// `mv.from` (the caller has it already). Castling (king takes own rook in cozy-chess),
    /// en passant and promotions included.
    #[inline]
    pub fn after(&self, board: &Board, mv: Move, moved: Piece) -> Self {
        let us = board.side_to_move();
        let mut m = *self;
        if board.colors(us).has(mv.to) {
            // Castling: king to the g/c file, rook to the f/d file of the back rank.
            let rank = mv.from.rank();
            let (kf, rf) = if mv.to.file() > mv.from.file() {
                (crate::board::File::G, crate::board::File::F)
            } else {
                (crate::board::File::C, crate::board::File::D)
            };
            m.remove(us, Piece::King, mv.from);
            m.remove(us, Piece::Rook, mv.to);
            m.add(us, Piece::King, Square::new(kf, rank));
            m.add(us, Piece::Rook, Square::new(rf, rank));
            return m;
        }
        if let Some(victim) = board.piece_on(mv.to) {
            m.remove(!us, victim, mv.to);
        } else if moved == Piece::Pawn && mv.from.file() != mv.to.file() {
            m.remove(!us, Piece::Pawn, Square::new(mv.to.file(), mv.from.rank()));
        }
        m.remove(us, moved, mv.from);
        m.add(us, mv.promotion.unwrap_or(moved), mv.to);
        m
    }

    /// Game phase, capped at [`PHASE_MAX`] (promotions can push the sum above it).
    #[inline]
    pub fn phase(&self) -> i32 {
        self.phase_sum.min(PHASE_MAX)
    }

    /// Army scaler of `color`, 0..=31 (same as [`super::army_scaler`]).
    #[inline]
    pub fn army(&self, color: Color) -> u32 {
        self.army_sum[color as usize].min(ARMY_MAX) as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::board::legal_moves;
    use crate::eval::army_scaler;

    /// Walk the legal move tree and compare the delta update with a from-scratch count at
    /// every node (castling both ways, en passant, promotions with and without capture).
    fn walk(board: &Board, m: Material, depth: u32, checked: &mut u64) {
        assert_eq!(m, Material::from_board(board), "{board}");
        for c in [Color::White, Color::Black] {
            assert_eq!(m.army(c), army_scaler(board, c));
        }
        *checked += 1;
        if depth == 0 {
            return;
        }
        for mv in legal_moves(board) {
            let moved = board.piece_on(mv.from).unwrap();
            let child_m = m.after(board, mv, moved);
            let mut child = board.clone();
            child.play_unchecked(mv);
            walk(&child, child_m, depth - 1, checked);
        }
    }

    #[test]
    fn delta_matches_from_scratch() {
        let mut checked = 0;
        for (fen, depth) in [
            // kiwipete: castling both sides, en passant, promotions at depth 3
            (
                "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
                3,
            ),
            ("8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1", 4),
            (
                "r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1",
                3,
            ),
            ("4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 2", 2),
            // Chess960: king b1 castles with rooks a1 (king stays on c1's side) and g1.
            ("rk4r1/pppppppp/8/8/8/8/PPPPPPPP/RK4R1 w GAga - 0 1", 3),
        ] {
            let b = crate::board::parse_fen_960(fen).unwrap();
            walk(&b, Material::from_board(&b), depth, &mut checked);
        }
        assert!(checked > 100_000, "{checked}");
    }
}
