//! Move ordering: hash move first (without generating), then everything else scored once
//! and picked best-first by selection (most nodes cut off after one or two moves, so a
//! full sort would be wasted work).
//!
//! Order: hash move, winning/equal captures and queen promotions (MVV + capture history),
//! killers, counter move, quiets by history, losing captures, under-promotions.

use super::history::{History, PieceTo, piece_to};
use super::see::see_ge;
use crate::board::{Board, MAX_MOVES, Move, NULL_MOVE, Piece, Rank, Square, captured_piece};
use crate::eval::pst::SEE_VALUE;

const GOOD_NOISY: i32 = 2_000_000;
const KILLER_0: i32 = 1_000_002;
const KILLER_1: i32 = 1_000_001;
const COUNTER: i32 = 1_000_000;
const BAD_NOISY: i32 = -2_000_000;
const UNDER_PROMO: i32 = -3_000_000;

/// Is a picker score one that belongs to a capture that lost material by SEE?
#[inline]
pub fn is_bad_noisy_score(score: i32) -> bool {
    score < -1_000_000
}

/// Generate captures, en passant and queen promotions only (for quiescence).
pub fn generate_noisy(board: &Board, mut push: impl FnMut(Move, Piece)) {
    let stm = board.side_to_move();
    let them = board.colors(!stm);
    let promo_rank = Rank::Eighth.relative_to(stm).bitboard();
    let ep = board
        .en_passant()
        .map(|f| Square::new(f, Rank::Sixth.relative_to(stm)).bitboard())
        .unwrap_or_default();
    board.generate_moves(|mut pm| {
        if pm.piece == Piece::Pawn {
            pm.to &= them | ep | promo_rank;
        } else {
            pm.to &= them;
        }
        let piece = pm.piece;
        for mv in pm {
            if matches!(mv.promotion, None | Some(Piece::Queen)) {
                push(mv, piece);
            }
        }
        false
    });
}

pub struct MovePicker {
    moves: [Move; MAX_MOVES],
    scores: [i32; MAX_MOVES],
    len: usize,
    idx: usize,
    stage: u8,
    tt_move: Move,
    killers: [Move; 2],
    counter: Move,
    noisy_only: bool,
    /// Capture history's divisor in a capture's score (switch `caphist-div`): at 16 it moves
    /// a capture at most ±1,024 against 3,500 between victim classes (MVV-LVA decides); at 1
    /// it can outweigh a victim class, as in Ethereal.
    cap_div: i32,
}

impl MovePicker {
    pub fn new(
        tt_move: Move,
        killers: [Move; 2],
        counter: Move,
        noisy_only: bool,
        cap_div: i32,
    ) -> Self {
        Self {
            moves: [NULL_MOVE; MAX_MOVES],
            scores: [0; MAX_MOVES],
            len: 0,
            idx: 0,
            stage: 0,
            tt_move,
            killers,
            counter,
            noisy_only,
            cap_div: cap_div.max(1),
        }
    }

    /// Next move and its ordering score, or `None` when exhausted.
    pub fn next(
        &mut self,
        board: &Board,
        hist: &History,
        cont: [PieceTo; 2],
    ) -> Option<(Move, i32)> {
        if self.stage == 0 {
            self.stage = 1;
            let tt = self.tt_move;
            if tt != NULL_MOVE
                && board.is_legal(tt)
                && (!self.noisy_only
                    || captured_piece(board, tt).is_some()
                    || tt.promotion == Some(Piece::Queen))
            {
                return Some((tt, i32::MAX));
            }
            self.tt_move = NULL_MOVE;
        }
        if self.stage == 1 {
            self.stage = 2;
            self.generate(board, hist, cont);
        }
        if self.idx >= self.len {
            return None;
        }
        let mut best = self.idx;
        for i in self.idx + 1..self.len {
            if self.scores[i] > self.scores[best] {
                best = i;
            }
        }
        self.moves.swap(self.idx, best);
        self.scores.swap(self.idx, best);
        let out = (self.moves[self.idx], self.scores[self.idx]);
        self.idx += 1;
        Some(out)
    }

    fn generate(&mut self, board: &Board, hist: &History, cont: [PieceTo; 2]) {
        let stm = board.side_to_move();
        let them = board.colors(!stm);
        let tt = self.tt_move;
        let noisy_only = self.noisy_only;
        let killers = self.killers;
        let counter = self.counter;
        let cap_div = self.cap_div;
        let moves = &mut self.moves;
        let scores = &mut self.scores;
        let mut len = 0;
        let mut score_one = |mv: Move, piece: Piece| {
            if mv == tt {
                return;
            }
            let victim = if them.has(mv.to) {
                board.piece_on(mv.to)
            } else if piece == Piece::Pawn && mv.from.file() != mv.to.file() {
                Some(Piece::Pawn)
            } else {
                None
            };
            let pt = piece_to(stm, piece, mv.to as usize);
            let s = match (victim, mv.promotion) {
                (_, Some(p)) if p != Piece::Queen => UNDER_PROMO + SEE_VALUE[p as usize],
                (None, None) => {
                    if mv == killers[0] {
                        KILLER_0
                    } else if mv == killers[1] {
                        KILLER_1
                    } else if mv == counter {
                        COUNTER
                    } else {
                        hist.quiet_score(stm, mv, pt, cont)
                    }
                }
                (v, _) => {
                    let victim = v.unwrap_or(Piece::Pawn);
                    let mvv = if v.is_some() {
                        SEE_VALUE[victim as usize]
                    } else {
                        0
                    } + mv.promotion.map_or(0, |_| SEE_VALUE[4]);
                    // Quiescence prunes losing captures itself; only the main search sorts them.
                    let base = if noisy_only || see_ge(board, mv, 0) {
                        GOOD_NOISY
                    } else {
                        BAD_NOISY
                    };
                    base + mvv * 16 + hist.capture_score(pt, victim) / cap_div
                        - SEE_VALUE[piece as usize] / 100
                }
            };
            moves[len] = mv;
            scores[len] = s;
            len += 1;
        };
        if noisy_only {
            generate_noisy(board, &mut score_one);
        } else {
            board.generate_moves(|pm| {
                let piece = pm.piece;
                for mv in pm {
                    score_one(mv, piece);
                }
                false
            });
        }
        self.len = len;
    }
}
