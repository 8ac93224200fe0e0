//! The node function, [`Worker::negamax`], in numbered steps (in the spirit of Stockfish's
//! `search.cpp`), and one method per step it delegates.
//!
//! Each forward-pruning decision is one call that asks the search's [`Rules`] (the margin or
//! allowance source chosen once per search), counts its firing in
//! [`PruneStats`](super::PruneStats), and, when the laboratory shadows it ("search anyway"),
//! hands back the probe cell to settle instead of pruning. With [`NoProbe`](super::NoProbe)
//! the probe paths compile away.

use super::history::{NO_PIECE_TO, PieceTo, piece_to};
use super::movepick::{MovePicker, is_bad_noisy_score};
use super::params::*;
use super::prune::{
    Efp, EfpInput, Gate, Mechanism, ProbeMode, TABLE_DEPTHS, fh_cell, hung_bucket, opponent_hung,
    rfp_cell, surprise_cell, surprise_cell_plies,
};
use super::see::see_ge;
use super::tt::{Bound, TtEntry};
use super::{
    EVAL_NONE, NodeProbe, Probe, SharedCtx, Worker, has_legal_move, tt_cutoff,
    update_capture_history,
};
use crate::board::{
    Board, Color, Move, NULL_MOVE, Piece, gives_check, has_non_pawn_material, is_drawish_material,
    is_tactical,
};

/// What the steps after the static evaluation know of the node.
#[derive(Clone, Copy)]
struct Node {
    depth: i32,
    ply: usize,
    beta: i32,
    /// The static evaluation, sharpened by a table bound where it has one.
    eval: i32,
    improving: bool,
    /// The mover's improvement over its last turn (the EFP estimate and a table axis).
    improvement: Option<i32>,
    cut_node: bool,
    in_check: bool,
    key: u64,
}

/// One move as the loop sees it before searching it.
#[derive(Clone, Copy)]
struct MoveInfo {
    mv: Move,
    quiet: bool,
    checks: bool,
    /// A killer or the counter move.
    refutation: bool,
    /// Passes the seed's one gate (quiet, no check given, not a hash, killer or counter
    /// move, the node not in check).
    gated: bool,
    hist: i32,
    order: i32,
}

/// What step 12 decides for a move.
enum Fate {
    Search,
    Skip,
    /// Skip this and every later quiet move (formula LMP).
    SkipQuiets,
}

/// What step 13 decides for a move.
enum Extension {
    By(i32),
    /// Multi-cut: the node fails high even without the hash move.
    Cut(i32),
    Stopped,
}

impl<P: Probe> Worker<P> {
    /// The main node function.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn negamax<const PV: bool>(
        &mut self,
        ctx: &SharedCtx,
        board: &Board,
        mut alpha: i32,
        mut beta: i32,
        mut depth: i32,
        ply: usize,
        cut_node: bool,
    ) -> i32 {
        let root = ply == 0;
        // Step 1. Horizon: hand over to quiescence.
        if depth <= 0 {
            return self.qsearch::<PV>(ctx, board, alpha, beta, ply);
        }

        // Step 2. Node bookkeeping and abort check.
        self.nodes += 1;
        if PV {
            self.pv_len[ply] = ply;
            self.seldepth = self.seldepth.max(ply + 1);
        }
        if self.should_stop(ctx) {
            return 0;
        }
        let in_check = !board.checkers().is_empty();
        let stm = board.side_to_move();

        // Steps 3–4. Draws, the ply limit, mate distance pruning.
        if !root
            && let Some(v) = self.draw_or_mate_distance(board, ply, in_check, &mut alpha, &mut beta)
        {
            return v;
        }

        // Step 5. Transposition table lookup; cut off at non-PV nodes when deep enough (not
        // in a singular-extension search: the entry is about the node with every move).
        let key = board.hash();
        let excluded = self.stack[ply].excluded;
        let tte = ctx.tt.probe(key, ply);
        let tt_move = tte.map_or(NULL_MOVE, |e| e.mv);
        // Near the fifty-move horizon a stored score may be a win the clock no longer allows.
        if !PV
            && excluded == NULL_MOVE
            && board.halfmove_clock() < 90
            && let Some(score) = tt_cutoff(tte, depth, alpha, beta)
        {
            return score;
        }

        // Step 6. Static evaluation and the improving flag.
        let (raw_eval, eval) = self.static_eval(board, ply, in_check, tte);
        self.stack[ply].static_eval = raw_eval;
        let before = if ply >= 2 {
            self.stack[ply - 2].static_eval
        } else {
            EVAL_NONE
        };
        let improving = !in_check && ply >= 2 && (before == EVAL_NONE || raw_eval > before);
        let improvement = (!in_check && ply >= 2 && before != EVAL_NONE).then(|| raw_eval - before);
        self.hist.killers[ply + 1] = [NULL_MOVE; 2];
        let alpha0 = alpha;
        let node = Node {
            depth,
            ply,
            beta,
            eval,
            improving,
            improvement,
            cut_node,
            in_check,
            key,
        };
        // A calibration probe on this node, settled with the node's result.
        let mut node_probe: Option<NodeProbe> = None;

        if !PV && !in_check && excluded == NULL_MOVE {
            // Step 7. Reverse futility pruning.
            if let Some(v) = self.reverse_futility(board, &node, &mut node_probe) {
                return v;
            }
            // Step 8. Razoring.
            if let Some(v) = self.razoring(ctx, board, &node, alpha, alpha0, &mut node_probe) {
                return v;
            }
            // Step 9. Null move with verification near zugzwang.
            if let Some(v) = self.null_move(ctx, board, &node, alpha0, &mut node_probe) {
                return v;
            }
        }

        // Step 10. Internal iterative reduction: without a hash move this node was never
        // searched well; search it shallower first.
        if depth >= IIR_MIN_DEPTH && tt_move == NULL_MOVE && (PV || cut_node) {
            depth -= 1;
        }
        let node = Node { depth, ..node };

        // Step 11. Move loop setup.
        let cont = self.cont_indices(ply);
        let counter = self.hist.counter(cont[0]);
        let killers = self.hist.killers[ply];
        let mut picker = MovePicker::new(tt_move, killers, counter, false);
        let mut best = -INFINITE;
        let mut best_move = NULL_MOVE;
        let mut searched = 0usize;
        let mut quiets_seen = 0usize;
        let mut moves_seen = 0u32;
        let mut skip_quiets = false;
        let mut quiets_tried: [Move; 64] = [NULL_MOVE; 64];
        let mut n_quiets = 0;
        let mut noisy_tried: [Move; 32] = [NULL_MOVE; 32];
        let mut n_noisy = 0;
        let tt_noisy = tt_move != NULL_MOVE && is_tactical(board, tt_move);
        let may_prune = !root && has_non_pawn_material(board, stm);

        while let Some((mv, order)) = picker.next(board, &self.hist, cont) {
            if (root && self.root_excluded.contains(&mv)) || mv == excluded {
                continue;
            }
            let quiet = !is_tactical(board, mv);
            if quiet && skip_quiets {
                continue;
            }
            let piece = board.piece_on(mv.from).unwrap_or(Piece::Pawn);
            let pt = piece_to(stm, piece, mv.to as usize);
            let refutation = mv == killers[0] || mv == killers[1] || mv == counter;
            let checks = gives_check(board, mv);
            let m = MoveInfo {
                mv,
                quiet,
                checks,
                refutation,
                gated: !in_check && quiet && !checks && !refutation && mv != tt_move,
                hist: if quiet {
                    self.hist.quiet_score(stm, mv, pt, cont)
                } else {
                    0
                },
                order,
            };
            quiets_seen += quiet as usize;
            moves_seen += 1;
            // A per-move calibration probe, settled with "the move raised alpha".
            let mut move_probe: Option<usize> = None;

            // Step 12. Shallow-depth pruning (never before one move has been searched, and
            // never when we might be getting mated).
            if may_prune && best > -MATE_BOUND {
                let seen = (searched, quiets_seen, moves_seen);
                match self.shallow_prune(board, &node, &m, alpha, seen, &mut move_probe) {
                    Fate::Search => {}
                    Fate::Skip => continue,
                    Fate::SkipQuiets => {
                        skip_quiets = true;
                        picker.skip_quiets();
                        continue;
                    }
                }
            }

            // Step 13. Extensions: check, and singular.
            let ext = match self.extension(ctx, board, &node, &m, tt_move, tte, &mut node_probe) {
                Extension::By(e) => e,
                Extension::Cut(v) => return v,
                Extension::Stopped => return 0,
            };

            // Step 14. Make the move; principal variation search with late move reductions.
            let mut child = board.clone();
            child.play_unchecked(mv);
            ctx.tt.prefetch(child.hash());
            self.stack[ply + 1].mat = self.stack[ply].mat.after(board, mv, piece);
            self.push_net_move(ply + 1, board, mv, &child);
            self.stack[ply].moved = pt;
            self.keys.push(key);
            searched += 1;
            let window = (alpha, best, searched, tt_noisy);
            let boards = (board, &child);
            let new_depth = depth - 1 + ext;
            let score =
                self.search_move::<PV>(ctx, boards, &node, &m, new_depth, window, &mut move_probe);
            self.keys.pop();
            if self.stopped {
                return 0;
            }
            if let Some(cell) = move_probe {
                self.probe.record(cell, score > alpha);
            }

            // Step 15. New best move?
            if score > best {
                best = score;
                if score > alpha {
                    best_move = mv;
                    if PV {
                        self.update_pv(ply, mv);
                    }
                    if score >= beta {
                        break;
                    }
                    alpha = score;
                }
            }
            if quiet {
                if n_quiets < quiets_tried.len() {
                    quiets_tried[n_quiets] = mv;
                    n_quiets += 1;
                }
            } else if n_noisy < noisy_tried.len() {
                noisy_tried[n_noisy] = mv;
                n_noisy += 1;
            }
        }

        // Step 16. No legal move: checkmate or stalemate.
        if searched == 0 {
            if (root && !self.root_excluded.is_empty()) || excluded != NULL_MOVE {
                return alpha;
            }
            let v = if in_check { -MATE + ply as i32 } else { DRAW };
            self.settle(node_probe, v, alpha0, beta);
            return v;
        }

        // Step 17. Reward the move that caused the cutoff, punish the ones tried before it.
        if best >= beta {
            let tried = (&quiets_tried[..n_quiets], &noisy_tried[..n_noisy]);
            self.update_histories(board, ply, depth, best_move, cont, tried);
        }

        // Step 18. Store in the transposition table (not a search that left a move out).
        if (!root || self.root_excluded.is_empty()) && excluded == NULL_MOVE {
            let bound = if best >= beta {
                Bound::Lower
            } else if best > alpha0 {
                Bound::Exact
            } else {
                Bound::Upper
            };
            ctx.tt
                .store(key, best_move, best, raw_eval, depth, bound, ply);
        }
        self.settle(node_probe, best, alpha0, beta);
        best
    }

    /// Steps 3–4: the fifty-move rule, repetition, dead material and the ply limit end the
    /// node; mate distance pruning narrows the window (no line can beat a shorter mate
    /// already found) and ends it when nothing is left.
    #[inline]
    fn draw_or_mate_distance(
        &mut self,
        board: &Board,
        ply: usize,
        in_check: bool,
        alpha: &mut i32,
        beta: &mut i32,
    ) -> Option<i32> {
        if board.halfmove_clock() >= 100 && (!in_check || has_legal_move(board)) {
            return Some(DRAW);
        }
        if self.is_repetition(board) || is_drawish_material(board) {
            return Some(DRAW);
        }
        if ply >= MAX_PLY - 2 {
            return Some(if in_check {
                DRAW
            } else {
                self.full_eval(board, ply)
            });
        }
        *alpha = (*alpha).max(-MATE + ply as i32);
        *beta = (*beta).min(MATE - ply as i32 - 1);
        (*alpha >= *beta).then_some(*alpha)
    }

    /// Step 6: the static evaluation (`EVAL_NONE` in check), from the table's entry where it
    /// has one, and the same sharpened by the entry's bound where that is tighter.
    #[inline]
    fn static_eval(
        &mut self,
        board: &Board,
        ply: usize,
        in_check: bool,
        tte: Option<TtEntry>,
    ) -> (i32, i32) {
        if in_check {
            return (EVAL_NONE, EVAL_NONE);
        }
        let raw = match tte {
            Some(e) if e.eval != EVAL_NONE => e.eval,
            _ => self.full_eval(board, ply),
        };
        let better = match tte {
            Some(e) if e.bound == Bound::Lower && e.score > raw => e.score,
            Some(e) if e.bound == Bound::Upper && e.score < raw => e.score,
            Some(e) if e.bound == Bound::Exact => e.score,
            _ => raw,
        };
        (raw, better)
    }

    /// Step 7. Reverse futility pruning: the position is so far above beta that no reply is
    /// expected to bring it back. Collecting the beta-side table looks at every depth the
    /// table covers and records each node whose eval clears beta.
    #[inline]
    fn reverse_futility(
        &mut self,
        board: &Board,
        n: &Node,
        node_probe: &mut Option<NodeProbe>,
    ) -> Option<i32> {
        let collecting = self.probe.mode() == Some(ProbeMode::Rfp);
        let max_depth = if collecting {
            TABLE_DEPTHS as i32
        } else {
            self.rules.rfp_max_depth
        };
        if n.depth > max_depth || n.eval >= MATE_BOUND || n.beta <= -MATE_BOUND || n.eval < n.beta {
            return None;
        }
        let opp_hung = (self.rules.rfp_reads_hung || collecting) && opponent_hung(board);
        let margin = self.rules.rfp_margin(n.depth, n.improving, opp_hung);
        if n.eval - margin >= n.beta {
            if !self.shadowing(Mechanism::Rfp) {
                self.stats.rfp += 1;
                return Some(self.rules.rfp_value(n.eval, n.beta, margin));
            }
            *node_probe = Some(NodeProbe {
                cell: surprise_cell(board, n.depth, n.eval - margin - n.beta),
                event_below_beta: true,
            });
        } else if collecting {
            *node_probe = Some(NodeProbe {
                cell: rfp_cell(n.depth, n.improving, opp_hung, n.eval - n.beta),
                event_below_beta: true,
            });
        }
        None
    }

    /// Step 8. Razoring: the eval is so far below alpha that only tactics could help; a
    /// quiescence search that finds none ends the node.
    #[inline]
    fn razoring(
        &mut self,
        ctx: &SharedCtx,
        board: &Board,
        n: &Node,
        alpha: i32,
        alpha0: i32,
        node_probe: &mut Option<NodeProbe>,
    ) -> Option<i32> {
        let margin = self.cfg.tune.razor_base + self.cfg.tune.razor_per_depth * n.depth;
        if !self.cfg.razor || n.depth > RAZOR_MAX_DEPTH || n.eval + margin >= alpha {
            return None;
        }
        let v = self.qsearch::<false>(ctx, board, alpha, alpha + 1, n.ply);
        if v > alpha {
            return None;
        }
        if !self.shadowing(Mechanism::Razor) {
            self.stats.razor += 1;
            self.settle(*node_probe, v, alpha0, n.beta);
            return Some(v);
        }
        node_probe.get_or_insert(NodeProbe {
            cell: surprise_cell(board, n.depth, alpha - n.eval - margin),
            event_below_beta: false,
        });
        None
    }

    /// Step 9. Null move: give the opponent a free move; if a reduced search still fails
    /// high, so would the node. At high depth, and when the mover has a single piece
    /// (zugzwang is likely), the cut is verified by a reduced search without null moves.
    /// `Some(0)` after an abort.
    #[inline]
    fn null_move(
        &mut self,
        ctx: &SharedCtx,
        board: &Board,
        n: &Node,
        alpha0: i32,
        node_probe: &mut Option<NodeProbe>,
    ) -> Option<i32> {
        let (ply, depth, beta) = (n.ply, n.depth, n.beta);
        if !self.cfg.nmp
            || depth < NMP_MIN_DEPTH
            || n.eval < beta
            || beta <= -MATE_BOUND
            || ply < self.nmp_min_ply
            || ply < 1
            || self.stack[ply - 1].moved == NO_PIECE_TO
            || !has_non_pawn_material(board, board.side_to_move())
        {
            return None;
        }
        let child = board.null_move()?;
        let t = &self.cfg.tune;
        let r = nmp_reduction(
            t.nmp_base,
            t.nmp_depth_div,
            t.nmp_eval_div,
            depth,
            n.eval,
            beta,
        );
        self.stack[ply].moved = NO_PIECE_TO;
        self.stack[ply + 1].mat = self.stack[ply].mat;
        if let Some(a) = &mut self.accs {
            a.push_null(ply + 1);
        }
        self.keys.push(n.key);
        let v = -self.negamax::<false>(
            ctx,
            &child,
            -beta,
            -beta + 1,
            depth - r,
            ply + 1,
            !n.cut_node,
        );
        self.keys.pop();
        if self.stopped {
            return Some(0);
        }
        if v < beta {
            return None;
        }
        let v = if v >= MATE_BOUND { beta } else { v };
        let stm = board.side_to_move();
        let pieces = board.colors(stm) & !(board.pieces(Piece::Pawn) | board.pieces(Piece::King));
        let verify = self.nmp_min_ply == 0 && (depth >= NMP_VERIFY_DEPTH || pieces.len() <= 1);
        if verify {
            self.nmp_min_ply = ply + (3 * (depth - r) / 4).max(1) as usize;
            let w = self.negamax::<false>(ctx, board, beta - 1, beta, depth - r, ply, false);
            self.nmp_min_ply = 0;
            if self.stopped {
                return Some(0);
            }
            self.stats.null_verify_fail += (w < beta) as u64;
            if w < beta {
                return None;
            }
        }
        if !self.shadowing(Mechanism::Nmp) {
            self.stats.null_move += 1;
            self.settle(*node_probe, v, alpha0, beta);
            return Some(v);
        }
        node_probe.get_or_insert(NodeProbe {
            cell: surprise_cell(board, depth, n.eval - beta),
            event_below_beta: true,
        });
        None
    }

    /// Step 12. Shallow-depth pruning of one move: late move pruning, futility pruning at
    /// the parent and SEE pruning, each asking the search's [`Rules`](super::prune::Rules).
    /// `seen` is (moves searched, quiets seen, moves seen) at this node.
    #[inline]
    fn shallow_prune(
        &mut self,
        board: &Board,
        n: &Node,
        m: &MoveInfo,
        alpha: i32,
        seen: (usize, usize, u32),
        move_probe: &mut Option<usize>,
    ) -> Fate {
        let (searched, quiets_seen, moves_seen) = seen;
        let depth = n.depth;
        let base_r = self.lmr[depth.min(63) as usize][(searched + 1).min(63)] as i32;
        let lmr_depth = (depth - 1 - base_r).max(0);
        // Who may prune: the one gate for all (`strict`), or each formula's own conditions
        // as in the build before the gate (`classic`). The tables were measured on gated
        // moves only, so their rules always keep to the gate.
        let (lmp_ok, efp_ok, see_ok) = match self.cfg.gate {
            Gate::Strict => (m.gated, m.gated, m.gated),
            Gate::Classic if matches!(self.rules.efp, Efp::Tiers { .. }) => {
                (true, m.gated, !m.checks)
            }
            Gate::Classic => (true, !m.checks && !n.in_check, !m.checks),
        };
        if !m.quiet {
            // SEE pruning of losing captures at low depth.
            let t = self.cfg.tune.see_noisy * depth * depth;
            if !m.checks && self.cfg.see && depth <= SEE_PRUNE_MAX_DEPTH && !see_ge(board, m.mv, t)
            {
                if !self.shadowing(Mechanism::See) {
                    self.stats.see_noisy += 1;
                    return Fate::Skip;
                }
                *move_probe = Some(surprise_cell(board, depth, alpha - n.eval));
            }
            return Fate::Search;
        }
        let in_table = depth <= TABLE_DEPTHS as i32;
        let fh_mode = self.probe.mode() == Some(ProbeMode::Fh);
        let (hung, cell) = if in_table && (self.rules.reads_fh_cell || fh_mode) {
            let hung = hung_bucket(board, m.mv);
            (
                hung,
                fh_cell(depth, hung, alpha - n.eval, moves_seen, n.improvement),
            )
        } else {
            (0, 0)
        };
        // Late move pruning: the formula (enough quiets tried: skip the rest), or the table
        // (this gated move's pessimistic fail-high bound is under the depth allowance).
        let formula_lmp = lmp_ok
            && self
                .rules
                .lmp_formula_skips(depth, n.improving, quiets_seen);
        let table_lmp = m.gated
            && in_table
            && self.rules.lmp_allowance.is_some()
            && self
                .rules
                .lmp_table_prunes(depth, m.hist, self.cfg.tables.fh(cell));
        if formula_lmp || table_lmp {
            if !self.shadowing(Mechanism::Lmp) {
                self.stats.lmp += 1;
                return if formula_lmp {
                    Fate::SkipQuiets
                } else {
                    Fate::Skip
                };
            }
            *move_probe = Some(surprise_cell(board, depth, alpha - n.eval));
        }
        // Futility pruning at the parent: even an optimistic estimate cannot reach alpha.
        let efp = EfpInput {
            depth,
            lmr_depth,
            eval: n.eval,
            alpha,
            improvement: n.improvement,
            hung,
            cell,
            tables: &self.cfg.tables,
        };
        if efp_ok && let Some(slack) = self.rules.efp_slack(efp) {
            if !self.shadowing(Mechanism::Efp) {
                self.stats.futility += 1;
                return Fate::Skip;
            }
            move_probe.get_or_insert(surprise_cell(board, depth, slack));
        }
        // SEE pruning of quiet moves that hang material at low depth.
        let t = self.cfg.tune.see_quiet * lmr_depth;
        if see_ok && self.cfg.see && depth <= SEE_PRUNE_MAX_DEPTH && !see_ge(board, m.mv, t) {
            if !self.shadowing(Mechanism::See) {
                self.stats.see_quiet += 1;
                return Fate::Skip;
            }
            move_probe.get_or_insert(surprise_cell(board, depth, alpha - n.eval));
        }
        if fh_mode && in_table && m.gated {
            move_probe.get_or_insert(cell);
        }
        Fate::Search
    }

    /// Step 13. Extensions: a check +1; the hash move +1 when singular (every other move
    /// fails below its score less a margin), the node cut when even without it the node
    /// fails high (multi-cut), −1 when it is not alone.
    #[allow(clippy::too_many_arguments)]
    #[inline]
    fn extension(
        &mut self,
        ctx: &SharedCtx,
        board: &Board,
        n: &Node,
        m: &MoveInfo,
        tt_move: Move,
        tte: Option<TtEntry>,
        node_probe: &mut Option<NodeProbe>,
    ) -> Extension {
        let (depth, ply) = (n.depth, n.ply);
        let check_ext = (m.checks && ply < 2 * self.root_depth as usize) as i32;
        // (Not while the laboratory calibrates, its probes count the plain search; except
        // when it calibrates multi-cut itself.)
        let Some(e) = tte.filter(|e| {
            self.cfg.singular
                && (self.probe.mode().is_none() || self.shadowing(Mechanism::MultiCut))
                && ply > 0
                && m.mv == tt_move
                && self.stack[ply].excluded == NULL_MOVE
                && depth >= SE_MIN_DEPTH
                && ply < 2 * self.root_depth as usize
                && e.depth >= depth - SE_TT_DEPTH_MARGIN
                && e.bound != Bound::Upper
                && e.score.abs() < MATE_BOUND
        }) else {
            return Extension::By(check_ext);
        };
        let s_beta = (e.score - SE_BETA_PER_DEPTH * depth).max(-MATE_BOUND);
        self.stack[ply].excluded = m.mv;
        let v = self.negamax::<false>(
            ctx,
            board,
            s_beta - 1,
            s_beta,
            (depth - 1) / 2,
            ply,
            n.cut_node,
        );
        self.stack[ply].excluded = NULL_MOVE;
        if self.stopped {
            return Extension::Stopped;
        }
        if v < s_beta {
            Extension::By(1)
        } else if s_beta >= n.beta && self.shadowing(Mechanism::MultiCut) {
            // Search anyway: does the node really fail high?
            node_probe.get_or_insert(NodeProbe {
                cell: surprise_cell(board, depth, s_beta - n.beta),
                event_below_beta: true,
            });
            Extension::By(check_ext)
        } else if s_beta >= n.beta {
            Extension::Cut(s_beta)
        } else if e.score >= n.beta && check_ext == 0 {
            Extension::By(-1)
        } else {
            Extension::By(check_ext)
        }
    }

    /// Step 14. Search a move already made (`boards`: the node's and the child's) to
    /// `new_depth`: late moves first with a reduced null window, re-searched at full depth
    /// when they beat alpha (one ply deeper or shallower by how far); then the full window at
    /// PV nodes. `window` is (alpha, best score so far, moves searched including this one,
    /// the hash move is tactical).
    #[allow(clippy::too_many_arguments)]
    #[inline]
    fn search_move<const PV: bool>(
        &mut self,
        ctx: &SharedCtx,
        (board, child): (&Board, &Board),
        n: &Node,
        m: &MoveInfo,
        mut new_depth: i32,
        window: (i32, i32, usize, bool),
        move_probe: &mut Option<usize>,
    ) -> i32 {
        let (alpha, best, searched, tt_noisy) = window;
        let (beta, ply, depth) = (n.beta, n.ply, n.depth);
        let mut score = 0;
        // Checking sacrifices (losing captures that give check) are searched at full depth:
        // they are the tactics that decide WAC-style positions.
        let full_window_needed = if self.cfg.lmr
            && searched > 1
            && depth >= LMR_MIN_DEPTH
            && (m.quiet || (is_bad_noisy_score(m.order) && !m.checks))
        {
            let relief = match self.cfg.gate {
                Gate::Strict => (m.quiet && !m.gated) as i32,
                Gate::Classic => m.refutation as i32 + m.checks as i32,
            };
            let r = self.reduction(depth, searched, PV, n.improving, n.cut_node, m.hist, relief)
                + (self.cfg.lmr_ttcap && m.quiet && tt_noisy) as i32;
            let reduced = (new_depth - r).clamp(1, new_depth.max(1));
            score = -self.negamax::<false>(ctx, child, -alpha - 1, -alpha, reduced, ply + 1, true);
            // Calibrating LMR: a reduced search that failed low is searched at full depth
            // anyway, and the probe records whether the full search disagreed.
            let recheck = score <= alpha
                && reduced < new_depth
                && self.shadowing(Mechanism::Lmr)
                && !self.stopped;
            if recheck {
                *move_probe = Some(surprise_cell_plies(board, depth, new_depth - reduced));
            }
            // The reduced search beat alpha: by far (search deeper than planned) or barely
            // (shallower). `best` is a searched move's score: this is not the first move.
            if self.cfg.lmr_deeper && score > alpha && reduced < new_depth {
                new_depth += (score > best + 43 + 2 * new_depth) as i32;
                new_depth -= (score < best + 9) as i32;
            }
            if (score > alpha || recheck) && reduced < new_depth {
                score = -self.negamax::<false>(
                    ctx,
                    child,
                    -alpha - 1,
                    -alpha,
                    new_depth,
                    ply + 1,
                    !n.cut_node,
                );
            }
            PV && score > alpha && score < beta
        } else if !PV || searched > 1 {
            score = -self.negamax::<false>(
                ctx,
                child,
                -alpha - 1,
                -alpha,
                new_depth,
                ply + 1,
                !n.cut_node,
            );
            PV && score > alpha && score < beta
        } else {
            true
        };
        if full_window_needed {
            score = -self.negamax::<true>(ctx, child, -beta, -alpha, new_depth, ply + 1, false);
        }
        score
    }

    /// Late move reduction for move number `n` (1-based) at `depth`: the log table, one
    /// more off the PV, when not improving and at expected cut nodes; `relief` plies less
    /// for a move the gate keeps, and less the better its history.
    #[inline]
    #[allow(clippy::too_many_arguments)]
    fn reduction(
        &self,
        depth: i32,
        n: usize,
        pv: bool,
        improving: bool,
        cut_node: bool,
        hist: i32,
        relief: i32,
    ) -> i32 {
        let mut r = self.lmr[depth.min(63) as usize][n.min(63)] as i32;
        r += !pv as i32;
        r += (!improving && !pv) as i32;
        r += cut_node as i32;
        r -= relief;
        r -= hist / self.cfg.tune.lmr_history_div;
        r.max(0)
    }

    /// Step 17. A cutoff: the move that caused it gains history (a quiet one also becomes a
    /// killer and the counter move), every move tried before it loses some.
    fn update_histories(
        &mut self,
        board: &Board,
        ply: usize,
        depth: i32,
        best_move: Move,
        cont: [PieceTo; 2],
        (quiets, noisy): (&[Move], &[Move]),
    ) {
        let stm: Color = board.side_to_move();
        let bonus = history_bonus(depth);
        let pt_of = |m: Move| {
            piece_to(
                stm,
                board.piece_on(m.from).unwrap_or(Piece::Pawn),
                m.to as usize,
            )
        };
        if !is_tactical(board, best_move) {
            self.hist
                .update_quiet(stm, best_move, pt_of(best_move), cont, bonus);
            self.hist.set_killer(ply, best_move);
            self.hist.set_counter(cont[0], best_move);
            for &q in quiets {
                self.hist.update_quiet(stm, q, pt_of(q), cont, -bonus);
            }
        } else {
            update_capture_history(&mut self.hist, board, best_move, bonus);
        }
        for &c in noisy {
            update_capture_history(&mut self.hist, board, c, -bonus);
        }
    }
}
