//! Move ordering: hash move first (without generating), then the rest in stages, each
//! generated only when the one before is exhausted and picked best-first by a stable
//! selection (most nodes cut off after one or two moves, so a full sort would be wasted work).
//!
//! Order: hash move, winning/equal captures and queen promotions (MVV + capture history),
//! killers, counter move, quiets by history, losing captures, under-promotions.
//!
//! Why stages: a node that a capture cuts off never generates or scores its quiet moves, a
//! capture's static exchange is evaluated only when the capture is picked (a losing one is
//! set aside for the losing-captures stage), and once late move pruning skips the remaining
//! quiets ([`MovePicker::skip_quiets`]) they are never picked. Given the same history, the
//! order is exactly that of scoring every move at once and picking by the same stable selection
//! (ties keep generation order; the unit test below holds it); in a search the quiets are
//! scored when reached, with the history the captures' subtrees have just updated.
//! `crates/chess/tests/it/bench.rs` pins the node counts, which any change of order moves.
//! The list is an `ArrayVec`, so a picker costs no 2 KB clear of its buffer at every node.

use arrayvec::ArrayVec;

use super::history::{History, PieceTo, piece_to};
use super::params::CAPHIST_DIV;
use super::see::see_ge;
use crate::board::{Board, MAX_MOVES, Move, NULL_MOVE, Piece, Rank, Square, captured_piece};
use crate::eval::pst::SEE_VALUE;
use cozy_chess::{BitBoard, PieceMoves, get_king_moves};

const GOOD_NOISY: i32 = 2_000_000;
const KILLER_0: i32 = 1_000_002;
const KILLER_1: i32 = 1_000_001;
const COUNTER: i32 = 1_000_000;
const BAD_NOISY: i32 = -2_000_000;
const UNDER_PROMO: i32 = -3_000_000;

/// Is a picker score one that belongs to a capture that lost material by SEE?
#[inline]
pub(crate) fn is_bad_noisy_score(score: i32) -> bool {
    score < -1_000_000
}

/// One legal move generation, split: every piece's whole move set goes to `all` (as cozy-chess
/// gives it, in generation order), and its captures, en passant and queen promotions to
/// `noisy` one by one. The picker keeps the sets and takes its quiet moves from them later,
/// so a node that reaches its quiets does not generate its legal moves a second time.
///
/// Without `ALL` (noisy moves only: quiescence) the king is left out unless it
/// attacks an enemy piece: its legal moves cost a safety test per square, the dearest part of
/// a generation, and only its captures could be noisy. cozy-chess generates the king last, so
/// the order of the other moves is the same either way.
#[inline]
fn generate_split<const ALL: bool>(
    board: &Board,
    mut all: impl FnMut(PieceMoves),
    mut noisy: impl FnMut(Move, Piece),
) {
    let stm = board.side_to_move();
    let them = board.colors(!stm);
    let promo_rank = Rank::Eighth.relative_to(stm).bitboard();
    let ep = board
        .en_passant()
        .map(|f| Square::new(f, Rank::Sixth.relative_to(stm)).bitboard())
        .unwrap_or_default();
    let king = board.king(stm);
    let from = if ALL || !(get_king_moves(king) & them).is_empty() {
        BitBoard::FULL
    } else {
        !king.bitboard()
    };
    board.generate_moves_for(from, |mut pm| {
        all(pm);
        if pm.piece == Piece::Pawn {
            pm.to &= them | ep | promo_rank;
        } else {
            pm.to &= them;
        }
        let piece = pm.piece;
        for mv in pm {
            if matches!(mv.promotion, None | Some(Piece::Queen)) {
                noisy(mv, piece);
            }
        }
        false
    });
}

/// A generated move and its ordering score.
#[derive(Clone, Copy)]
struct Entry {
    mv: Move,
    score: i32,
}

/// Where the picker is: each stage runs once, in this order.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Stage {
    TtMove,
    GenNoisy,
    Noisy,
    GenQuiet,
    Quiet,
    Bad,
    Under,
    Done,
}

/// Scores under this are under-promotions (all quiet and noisy scores are above it).
const UNDER_PROMO_BOUND: i32 = -2_500_000;

pub(crate) struct MovePicker {
    /// Noisy moves in `list[..noisy_end]` (those picked so far in pick order, a losing one
    /// re-scored as [`BAD_NOISY`] + its key), then quiets and under-promotions.
    list: ArrayVec<Entry, MAX_MOVES>,
    /// The legal move sets of the noisy stage's generation, kept for the quiet stage (the main
    /// search only; one per piece that can move, plus one per en-passant capturer: at most 18).
    sets: ArrayVec<PieceMoves, 32>,
    /// The next unpicked entry of the current stage.
    idx: usize,
    noisy_end: usize,
    /// The losing-captures stage's scan position in `list[..noisy_end]`.
    bad_idx: usize,
    stage: Stage,
    tt_move: Move,
    killers: [Move; 2],
    counter: Move,
    noisy_only: bool,
    skip_quiets: bool,
}

impl MovePicker {
    pub(crate) fn new(tt_move: Move, killers: [Move; 2], counter: Move, noisy_only: bool) -> Self {
        Self {
            list: ArrayVec::new(),
            sets: ArrayVec::new(),
            idx: 0,
            noisy_end: 0,
            bad_idx: 0,
            stage: Stage::TtMove,
            tt_move,
            killers,
            counter,
            noisy_only,
            skip_quiets: false,
        }
    }

    /// The search will skip every quiet move from now on (late move pruning): do not pick
    /// them. Losing captures and under-promotions still come.
    pub(crate) fn skip_quiets(&mut self) {
        self.skip_quiets = true;
    }

    /// Next move and its ordering score, or `None` when exhausted.
    pub(crate) fn next(
        &mut self,
        board: &Board,
        hist: &History,
        cont: [PieceTo; 2],
    ) -> Option<(Move, i32)> {
        loop {
            match self.stage {
                Stage::TtMove => {
                    self.stage = Stage::GenNoisy;
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
                Stage::GenNoisy => {
                    self.generate_noisy(board, hist);
                    self.noisy_end = self.list.len();
                    self.stage = Stage::Noisy;
                }
                Stage::Noisy => {
                    if self.idx >= self.noisy_end {
                        self.stage = if self.noisy_only {
                            Stage::Done
                        } else {
                            Stage::GenQuiet
                        };
                        continue;
                    }
                    let e = self.select(self.noisy_end);
                    // Quiescence prunes losing captures itself; only the main search defers them.
                    if !self.noisy_only && !see_ge(board, e.mv, 0) {
                        self.list[self.idx].score = e.score - GOOD_NOISY + BAD_NOISY;
                        self.idx += 1;
                        continue;
                    }
                    self.idx += 1;
                    return Some((e.mv, e.score));
                }
                Stage::GenQuiet => {
                    self.generate_quiet(board, hist, cont);
                    self.stage = Stage::Quiet;
                }
                Stage::Quiet => {
                    if self.skip_quiets || self.idx >= self.list.len() {
                        self.stage = Stage::Bad;
                        continue;
                    }
                    let e = self.select(self.list.len());
                    if e.score < UNDER_PROMO_BOUND {
                        // only under-promotions are left: they come after the losing captures
                        self.stage = Stage::Bad;
                        continue;
                    }
                    self.idx += 1;
                    return Some((e.mv, e.score));
                }
                Stage::Bad => {
                    while self.bad_idx < self.noisy_end {
                        let e = self.list[self.bad_idx];
                        self.bad_idx += 1;
                        if is_bad_noisy_score(e.score) {
                            return Some((e.mv, e.score));
                        }
                    }
                    self.stage = Stage::Under;
                }
                Stage::Under => {
                    // After skip_quiets the quiets may still be there: pick among the
                    // under-promotions only.
                    let end = self.list.len();
                    if self.idx >= end {
                        self.stage = Stage::Done;
                        continue;
                    }
                    let Some(e) = self.select_below(end, UNDER_PROMO_BOUND) else {
                        self.stage = Stage::Done;
                        continue;
                    };
                    self.idx += 1;
                    return Some((e.mv, e.score));
                }
                Stage::Done => return None,
            }
        }
    }

    /// Move the best entry of `list[idx..end]` (not empty) to `idx`, the first of equals (a
    /// stable selection: ties keep generation order), and return it.
    #[inline]
    fn select(&mut self, end: usize) -> Entry {
        let list = &mut self.list[self.idx..end];
        let (mut best, mut best_score) = (0, list[0].score);
        for (i, e) in list.iter().enumerate().skip(1) {
            if e.score > best_score {
                (best, best_score) = (i, e.score);
            }
        }
        if best > 0 {
            list[..=best].rotate_right(1);
        }
        list[0]
    }

    /// The same among the entries that score under `below`, if any.
    fn select_below(&mut self, end: usize, below: i32) -> Option<Entry> {
        let list = &mut self.list[self.idx..end];
        let best = (0..list.len())
            .filter(|&i| list[i].score < below)
            .reduce(|b, i| if list[i].score > list[b].score { i } else { b })?;
        list[..=best].rotate_right(1);
        Some(list[0])
    }

    /// Captures, en passant and queen promotions, scored by victim, capture history and
    /// attacker (all as winning: the static exchange is looked at when one is picked).
    ///
    /// Never inlined (nor [`Self::generate_quiet`]): each runs once a node, `next` runs once a
    /// move, and with the generation inlined `next` grew into a function whose every call paid
    /// for it (callgrind, `actuary bench 11`: 5.9 % fewer instructions for the whole search
    /// once out of line).
    #[inline(never)]
    fn generate_noisy(&mut self, board: &Board, hist: &History) {
        let stm = board.side_to_move();
        let them = board.colors(!stm);
        let tt = self.tt_move;
        let keep_sets = !self.noisy_only;
        let (list, sets) = (&mut self.list, &mut self.sets);
        let score = |mv: Move, piece: Piece| {
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
            let mvv = victim.map_or(0, |v| SEE_VALUE[v as usize])
                + mv.promotion.map_or(0, |_| SEE_VALUE[4]);
            let key = mvv * 16
                + hist.capture_score(pt, victim.unwrap_or(Piece::Pawn)) / CAPHIST_DIV
                - SEE_VALUE[piece as usize] / 100;
            list.push(Entry {
                mv,
                score: GOOD_NOISY + key,
            });
        };
        if keep_sets {
            generate_split::<true>(board, |pm| sets.push(pm), score);
        } else {
            generate_split::<false>(board, |_| {}, score);
        }
    }

    /// Every move the noisy stage did not take: quiets (killers, counter move, then history)
    /// and under-promotions (last). After [`skip_quiets`](Self::skip_quiets), only the latter.
    #[inline(never)]
    fn generate_quiet(&mut self, board: &Board, hist: &History, cont: [PieceTo; 2]) {
        let stm = board.side_to_move();
        let them = board.colors(!stm);
        let tt = self.tt_move;
        let (killers, counter, skip) = (self.killers, self.counter, self.skip_quiets);
        let list = &mut self.list;
        for &pm in &self.sets {
            let piece = pm.piece;
            let mut pm = pm;
            if piece != Piece::Pawn {
                // (a piece's captures were the noisy stage's; skipping them here keeps the order)
                if skip {
                    continue;
                }
                pm.to &= !them;
            }
            for mv in pm {
                let score = match mv.promotion {
                    Some(Piece::Queen) => continue,
                    Some(p) => UNDER_PROMO + SEE_VALUE[p as usize],
                    None => {
                        let capture = them.has(mv.to)
                            || (piece == Piece::Pawn && mv.from.file() != mv.to.file());
                        if capture || skip || mv == tt {
                            continue;
                        }
                        if mv == killers[0] {
                            KILLER_0
                        } else if mv == killers[1] {
                            KILLER_1
                        } else if mv == counter {
                            COUNTER
                        } else {
                            hist.quiet_score(stm, mv, piece_to(stm, piece, mv.to as usize), cont)
                        }
                    }
                };
                if mv != tt {
                    list.push(Entry { mv, score });
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::BENCH_FENS;
    use crate::board::{is_capture, parse_fen, parse_fen_960};

    /// Positions with en passant, promotions (quiet and capturing) and castling beside the
    /// bench positions.
    const EXTRA: &[&str] = &[
        "r3k2r/1P4P1/8/3pP3/8/8/1p4p1/R3K2R w KQkq d6 0 1",
        "1r2k1n1/P1P2P2/8/8/8/8/6pp/4K1NR b K - 0 1",
        "n1n1k3/1P6/8/2pP4/8/8/8/4K3 w - c6 0 1",
        // the king's only capture (quiescence's generation leaves a king out unless it has one)
        "4k3/8/8/8/8/8/5n2/4K3 w - - 0 1",
    ];

    /// Chess960 (castling onto the own rook's square, both sides possible) and in check.
    const CHESS960: &[&str] = &[
        "1r2k1r1/pppppppp/8/8/8/8/PPPPPPPP/1R2K1R1 w GBgb - 0 1",
        "4k3/8/8/8/8/8/4r3/R3K2R w AH - 0 1",
    ];

    /// A small linear congruential stream: the test needs varied, repeatable inputs only.
    struct Lcg(u64);
    impl Lcg {
        fn below(&mut self, n: usize) -> usize {
            self.0 = self
                .0
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            ((self.0 >> 33) as usize) % n.max(1)
        }
    }

    fn all_moves(board: &Board) -> Vec<(Move, Piece)> {
        let mut v = Vec::new();
        board.generate_moves(|pm| {
            for mv in pm {
                v.push((mv, pm.piece));
            }
            false
        });
        v
    }

    /// The order the picker promises, written out directly: every move scored at once, then a
    /// stable sort (ties keep generation order); with `noisy_only` (quiescence's picker) the
    /// noisy moves only, none set aside as losing. Each move comes with "is it a quiet one".
    #[allow(clippy::too_many_arguments)]
    fn expected(
        board: &Board,
        hist: &History,
        tt: Move,
        killers: [Move; 2],
        counter: Move,
        noisy_only: bool,
        cont: [PieceTo; 2],
    ) -> Vec<(Move, bool)> {
        let stm = board.side_to_move();
        // (class: 0 good noisy, 1 killer 0, 2 killer 1, 3 counter, 4 quiet, 5 bad, 6 under;
        // then the score within the class, higher first)
        let mut keyed = Vec::new();
        for (mv, piece) in all_moves(board) {
            if mv == tt {
                continue;
            }
            // a pawn for en passant
            let victim = captured_piece(board, mv);
            let pt = piece_to(stm, piece, mv.to as usize);
            let class_score = match mv.promotion {
                Some(p) if p != Piece::Queen => (6, SEE_VALUE[p as usize]),
                promo if victim.is_some() || promo.is_some() => {
                    let key = (victim.map_or(0, |v| SEE_VALUE[v as usize])
                        + promo.map_or(0, |_| SEE_VALUE[4]))
                        * 16
                        + hist.capture_score(pt, victim.unwrap_or(Piece::Pawn)) / CAPHIST_DIV
                        - SEE_VALUE[piece as usize] / 100;
                    if noisy_only || see_ge(board, mv, 0) {
                        (0, key)
                    } else {
                        (5, key)
                    }
                }
                _ if mv == killers[0] => (1, 0),
                _ if mv == killers[1] => (2, 0),
                _ if mv == counter => (3, 0),
                _ => (4, hist.quiet_score(stm, mv, pt, cont)),
            };
            if noisy_only && class_score.0 != 0 {
                continue;
            }
            keyed.push((class_score, mv));
        }
        keyed.sort_by_key(|&((class, score), _)| (class, -score));
        let mut out = Vec::new();
        if tt != NULL_MOVE
            && board.is_legal(tt)
            && (!noisy_only
                || captured_piece(board, tt).is_some()
                || tt.promotion == Some(Piece::Queen))
        {
            out.push((tt, false));
        }
        out.extend(
            keyed
                .into_iter()
                .map(|((class, _), mv)| (mv, (1..=4).contains(&class))),
        );
        out
    }

    /// The staged picker yields exactly the all-at-once order, with random histories (coarse
    /// bonuses, so ties occur), killers, counter and hash moves (sometimes a capture, sometimes
    /// illegal here), in both modes and with late move pruning switched on at every point.
    #[test]
    fn staged_order_is_the_all_at_once_order() {
        let mut rng = Lcg(7);
        let mut checked = 0;
        let boards = BENCH_FENS
            .iter()
            .chain(EXTRA)
            .map(|f| (*f, parse_fen(f).unwrap()))
            .chain(CHESS960.iter().map(|f| (*f, parse_fen_960(f).unwrap())));
        for (fen, board) in boards {
            let stm = board.side_to_move();
            let moves = all_moves(&board);
            for _ in 0..12 {
                let mut hist = History::default();
                for _ in 0..rng.below(60) {
                    let (mv, piece) = moves[rng.below(moves.len())];
                    let pt = piece_to(stm, piece, mv.to as usize);
                    let cont = [rng.below(768), NO_PIECE_TO_TEST];
                    let bonus = (rng.below(9) as i32 - 4) * 300;
                    hist.update_quiet(stm, mv, pt, [cont[0], cont[1]], bonus);
                    let victim = [Piece::Pawn, Piece::Knight, Piece::Queen][rng.below(3)];
                    hist.update_capture(pt, victim, bonus);
                }
                let pick = |rng: &mut Lcg| match rng.below(4) {
                    0 => NULL_MOVE,
                    _ => moves[rng.below(moves.len())].0,
                };
                // a move of the other side: illegal here
                let tt = if rng.below(8) == 0 {
                    Move {
                        from: Square::A1,
                        to: Square::H8,
                        promotion: None,
                    }
                } else {
                    pick(&mut rng)
                };
                // sometimes a move of the other side (illegal here, perhaps a capture there)
                let other = all_moves(&board.null_move().unwrap_or_else(|| board.clone()));
                let pick_any = |rng: &mut Lcg| match rng.below(5) {
                    0 => other[rng.below(other.len())].0,
                    _ => pick(rng),
                };
                let killers = [pick_any(&mut rng), pick_any(&mut rng)];
                let counter = pick(&mut rng);
                let cont = [rng.below(768), rng.below(768)];
                for noisy_only in [false, true] {
                    let want = expected(&board, &hist, tt, killers, counter, noisy_only, cont);
                    for skip_at in [usize::MAX, 0, 1, 2, 4, 8] {
                        let mut p = MovePicker::new(tt, killers, counter, noisy_only);
                        let mut got = Vec::new();
                        if skip_at == 0 {
                            p.skip_quiets();
                        }
                        while let Some((mv, score)) = p.next(&board, &hist, cont) {
                            got.push(mv);
                            // losing captures and under-promotions score as "bad" for the
                            // search's pruning of them
                            let bad = is_bad_noisy_score(score);
                            assert_eq!(
                                bad,
                                mv != tt
                                    && ((!noisy_only
                                        && is_noisy(&board, mv)
                                        && !see_ge(&board, mv, 0))
                                        || mv.promotion.is_some_and(|p| p != Piece::Queen)),
                                "{fen}: {mv} score {score}"
                            );
                            if got.len() == skip_at {
                                p.skip_quiets();
                            }
                        }
                        let want: Vec<Move> = want
                            .iter()
                            .enumerate()
                            .filter(|&(i, &(_, quiet))| !(quiet && i >= skip_at))
                            .map(|(_, &(mv, _))| mv)
                            .collect();
                        assert_eq!(got, want, "{fen} noisy_only {noisy_only} skip at {skip_at}");
                        checked += 1;
                    }
                }
            }
        }
        assert!(checked > 1000);
    }

    const NO_PIECE_TO_TEST: PieceTo = super::super::history::NO_PIECE_TO;

    /// Captures (en passant too) and queen promotions; not under-promotions.
    fn is_noisy(board: &Board, mv: Move) -> bool {
        match mv.promotion {
            Some(p) => p == Piece::Queen,
            None => {
                is_capture(board, mv)
                    || (board.piece_on(mv.from) == Some(Piece::Pawn)
                        && mv.from.file() != mv.to.file())
            }
        }
    }
}
