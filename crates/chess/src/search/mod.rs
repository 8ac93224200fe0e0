//! Alpha-beta search: one node function with numbered steps (in the spirit of Stockfish's
//! `search.cpp`), quiescence search, and the per-thread [`Worker`] that runs iterative
//! deepening with aspiration windows. Threads share only the transposition table and the
//! stop flag ([`smp`]).
//!
//! The node function lives in `node.rs`, one method per step; every pruning decision asks
//! the search's `prune::Rules` (its margin sources, chosen once per search) and counts how
//! often it fires in [`PruneStats`], so the laboratory can instrument one rule at a time.

pub(crate) mod history;
pub(crate) mod movepick;
mod node;
pub mod params;
pub mod prune;
pub mod see;
pub mod smp;
pub mod time;
pub mod tt;

use crate::board::{Board, Color, Move, NULL_MOVE, Piece, is_drawish_material, is_tactical};
use crate::eval::netlazy::NetLazyMargins;
use crate::eval::pst::SEE_VALUE;
use crate::eval::{EvalOutcome, Evaluator, LazyMargins, Material, Tier};
use history::{History, NO_PIECE_TO, PieceTo, piece_to};
use movepick::MovePicker;
use params::*;
use prune::{Mechanism, ProbeMode, PruneConfig, Rules, surprise_cell};
use see::see_ge;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use time::TimeManager;
use tt::{Bound, Tt, TtEntry};

/// Marker for "no static eval" (in check).
pub(crate) const EVAL_NONE: i32 = -INFINITE;

/// Everything threads share during one search.
pub(crate) struct SharedCtx<'a> {
    pub tt: &'a Tt,
    pub stop: &'a AtomicBool,
    /// Published node counts, one per thread (updated every few thousand nodes).
    pub nodes: &'a [AtomicU64],
    pub time: TimeManager,
    pub node_limit: Option<u64>,
}

impl SharedCtx<'_> {
    pub(crate) fn total_nodes(&self) -> u64 {
        self.nodes.iter().map(|n| n.load(Relaxed)).sum()
    }
}

/// How often each pruning rule fired (per worker, reset per search). Cheap counters; the
/// calibration issues turn these into per-bucket surprise rates.
#[derive(Clone, Copy, Default, Debug)]
pub struct PruneStats {
    pub rfp: u64,
    pub razor: u64,
    pub null_move: u64,
    pub null_verify_fail: u64,
    pub lmp: u64,
    pub futility: u64,
    pub see_quiet: u64,
    pub see_noisy: u64,
    pub qs_futility: u64,
    pub qs_see: u64,
}

impl PruneStats {
    pub(crate) fn add(&mut self, o: &PruneStats) {
        self.rfp += o.rfp;
        self.razor += o.razor;
        self.null_move += o.null_move;
        self.null_verify_fail += o.null_verify_fail;
        self.lmp += o.lmp;
        self.futility += o.futility;
        self.see_quiet += o.see_quiet;
        self.see_noisy += o.see_noisy;
        self.qs_futility += o.qs_futility;
        self.qs_see += o.qs_see;
    }

    /// `rfp=N razor=N ...`: the counters as `key=value` pairs (the UCI `info string prune`
    /// line; `actuary validate` reads it back).
    pub(crate) fn pairs(&self) -> String {
        format!(
            "rfp={} razor={} nmp={} nmp-verify-fail={} lmp={} efp={} see-quiet={} see-noisy={} qfutility={} qs-see={}",
            self.rfp,
            self.razor,
            self.null_move,
            self.null_verify_fail,
            self.lmp,
            self.futility,
            self.see_quiet,
            self.see_noisy,
            self.qs_futility,
            self.qs_see
        )
    }
}

#[derive(Clone, Copy)]
struct Frame {
    static_eval: i32,
    /// (piece, to) of the move made from this ply, for continuation history.
    moved: PieceTo,
    /// Material + PST, phase and armies of the position at this ply (incremental).
    mat: Material,
    /// The move a singular-extension search at this ply leaves out (`NULL_MOVE`: none).
    excluded: Move,
}

/// A node-level calibration probe waiting for the node's result.
#[derive(Clone, Copy)]
struct NodeProbe {
    cell: usize,
    /// The event is "the node fails low" (RFP, NMP); otherwise "it raises alpha" (razoring).
    event_below_beta: bool,
}

const EMPTY_FRAME: Frame = Frame {
    static_eval: EVAL_NONE,
    moved: NO_PIECE_TO,
    mat: Material {
        psqt: crate::eval::S::new(0, 0),
        phase_sum: 0,
        army_sum: [0, 0],
    },
    excluded: NULL_MOVE,
};

/// What a search reports to the laboratory: which pruning calibration runs (if any), each
/// probe's cell and outcome, and every evaluation the search asks for. The engine's searches
/// use [`NoProbe`], whose methods are empty and whose `mode` is always `None`, so after
/// monomorphisation the node function carries no instrumentation at all (as Stockfish's
/// `dbg_*` calls compile out); `chess-lab` implements it to record fail-high tables,
/// surprise rates and evaluation residuals.
pub trait Probe {
    /// The pruning calibration running in this search (`None`: prune as configured).
    #[inline(always)]
    fn mode(&self) -> Option<ProbeMode> {
        None
    }
    /// One trial of table cell `cell`; `event` is what the cell counts.
    #[inline(always)]
    fn record(&mut self, _cell: usize, _event: bool) {}
    /// An evaluation the search asked for: the window it was asked with (`-INFINITE..INFINITE`
    /// for a full evaluation), the tier that decided it, and the evaluator (to re-evaluate).
    #[inline(always)]
    fn observe_eval(
        &mut self,
        _board: &Board,
        _mat: &Material,
        _alpha: i32,
        _beta: i32,
        _out: &EvalOutcome,
        _eval: &mut Evaluator,
    ) {
    }
    /// A network evaluation asked for with a window (quiescence's stand-pat) and not
    /// decided by a lazy exit: the net's score `net` (side to move's view, as the search
    /// uses it) and the incremental material of the node.
    #[inline(always)]
    fn observe_net_eval(
        &mut self,
        _board: &Board,
        _mat: &Material,
        _net: i32,
        _alpha: i32,
        _beta: i32,
    ) {
    }
}

/// The engine's probe: records nothing, costs nothing.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoProbe;

impl Probe for NoProbe {}

/// One principal variation result at the root.
#[derive(Clone, Debug, Default)]
pub struct RootLine {
    pub score: i32,
    pub pv: Vec<Move>,
}

/// Per-thread search state. Kept between moves of a game (histories carry over). `P` is the
/// laboratory's recorder; the engine's workers are `Worker<NoProbe>`.
pub struct Worker<P: Probe = NoProbe> {
    pub id: usize,
    pub eval: Evaluator,
    pub hist: History,
    lmr: Box<[[u8; 64]; 64]>,
    /// (base, divisor) the `lmr` table was built for (rebuilt when the options change).
    lmr_params: (i32, i32),
    stack: Vec<Frame>,
    pv: Vec<[Move; MAX_PLY + 1]>,
    pv_len: Vec<usize>,
    /// Zobrist keys of the game so far plus the current search path (for repetitions).
    keys: Vec<u64>,
    pub nodes: u64,
    pub qnodes: u64,
    pub seldepth: usize,
    pub stats: PruneStats,
    /// Evaluation calls decided by each tier (super-lazy, lazy, full) in this search.
    pub exits: [u64; 3],
    /// Lazy exits with these margins; `None` = always the full evaluation.
    pub lazy: Option<Arc<LazyMargins>>,
    /// The learned evaluation (UCI `Eval nnue`); `None` = the hand evaluation.
    pub net: Option<Arc<crate::nnue::Network>>,
    /// The network's lazy exits (UCI `LazyEval` with `Eval nnue`); `None` = always the net.
    pub net_lazy: Option<Arc<NetLazyMargins>>,
    /// The network's accumulators per ply (present while `net` is).
    accs: Option<crate::nnue::AccStack>,
    /// Pruning switches and tables for this search (from [`smp::SearchOptions`]).
    pub cfg: PruneConfig,
    /// The margin sources `cfg` chooses, built once per search ([`Worker::prepare`]).
    rules: Rules,
    /// The laboratory's recorder ([`NoProbe`] in the engine).
    pub probe: P,
    stopped: bool,
    root_depth: i32,
    completed_depth: i32,
    nmp_min_ply: usize,
    root_excluded: Vec<Move>,
    others_nodes: u64,
}

impl Worker<NoProbe> {
    /// An engine worker (no instrumentation).
    pub fn new(id: usize) -> Self {
        Self::with_probe(id, NoProbe)
    }
}

impl<P: Probe> Worker<P> {
    /// A worker whose searches report to `probe`.
    pub fn with_probe(id: usize, probe: P) -> Self {
        Self {
            id,
            eval: Evaluator::default(),
            hist: History::default(),
            lmr: lmr_table(
                Tunables::default().lmr_base,
                Tunables::default().lmr_divisor,
            ),
            lmr_params: (
                Tunables::default().lmr_base,
                Tunables::default().lmr_divisor,
            ),
            stack: vec![EMPTY_FRAME; MAX_PLY + 8],
            pv: vec![[NULL_MOVE; MAX_PLY + 1]; MAX_PLY + 2],
            pv_len: vec![0; MAX_PLY + 2],
            keys: Vec::with_capacity(1024),
            nodes: 0,
            qnodes: 0,
            seldepth: 0,
            stats: PruneStats::default(),
            exits: [0; 3],
            lazy: None,
            net: None,
            net_lazy: None,
            accs: None,
            cfg: PruneConfig::default(),
            rules: Rules::new(&PruneConfig::default()),
            probe,
            stopped: false,
            root_depth: 0,
            completed_depth: 0,
            nmp_min_ply: 0,
            root_excluded: Vec::new(),
            others_nodes: 0,
        }
    }

    /// Forget everything learned (new game).
    pub fn clear(&mut self) {
        self.hist.clear();
        self.eval.pawns.clear();
    }

    fn reset_for_search(&mut self, history: &[u64], root: &Board) {
        self.keys.clear();
        self.keys.extend_from_slice(history);
        self.nodes = 0;
        self.qnodes = 0;
        self.seldepth = 0;
        self.stats = PruneStats::default();
        self.exits = [0; 3];
        self.stopped = false;
        self.completed_depth = 0;
        self.nmp_min_ply = 0;
        self.root_excluded.clear();
        for k in self.hist.killers.iter_mut() {
            *k = [NULL_MOVE; 2];
        }
        for f in self.stack.iter_mut() {
            *f = EMPTY_FRAME;
        }
        self.stack[0].mat = Material::from_board(root);
        self.accs = match (self.net.as_deref(), self.accs.take()) {
            (None, _) => None,
            (Some(net), old) => {
                let mut a = old
                    .filter(|a| a.fits(net))
                    .unwrap_or_else(|| crate::nnue::AccStack::new(net, MAX_PLY + 8));
                a.reset(net, root);
                Some(a)
            }
        };
    }

    /// Record the network's feature changes of `mv` (played from `board` to `child`) for ply
    /// `ply`: a few stores, no arithmetic; the accumulator is brought up to date only if the
    /// node is evaluated ([`crate::nnue::AccStack::evaluate`]).
    #[inline]
    fn push_net_move(&mut self, ply: usize, board: &Board, mv: Move, child: &Board) {
        if let Some(a) = &mut self.accs {
            a.push_move(ply, board, mv, child);
        }
    }

    /// The full evaluation at `ply` (where no window is known or lazy exits are not used).
    #[inline]
    fn full_eval(&mut self, board: &Board, ply: usize) -> i32 {
        if let (Some(net), Some(accs)) = (self.net.as_deref(), self.accs.as_mut()) {
            self.exits[Tier::Full as usize] += 1;
            let v = accs.evaluate(net, ply, board);
            #[cfg(debug_assertions)]
            {
                let mut fresh = vec![0i16; 2 * net.hidden()];
                net.refresh(board, &mut fresh);
                debug_assert_eq!(
                    accs.slot(ply),
                    &fresh[..],
                    "incremental accumulator drifted"
                );
            }
            return v.clamp(-MATE_BOUND + 1, MATE_BOUND - 1);
        }
        let mat = self.stack[ply].mat;
        let v = self.eval.evaluate(board, &mat);
        self.exits[Tier::Full as usize] += 1;
        let out = EvalOutcome {
            score: v,
            tier: Tier::Full,
            tier_score: v,
        };
        self.probe
            .observe_eval(board, &mat, -INFINITE, INFINITE, &out, &mut self.eval);
        v
    }

    /// The evaluation at `ply` for the window `(alpha, beta)`: with lazy exits on, the first
    /// tier that decides the node; otherwise the full evaluation.
    #[inline]
    fn bounded_eval(&mut self, board: &Board, ply: usize, alpha: i32, beta: i32) -> EvalOutcome {
        if self.net.is_some() {
            return self.bounded_net_eval(board, ply, alpha, beta);
        }
        let margins = self.lazy.as_deref();
        let Some(margins) = margins else {
            let v = self.full_eval(board, ply);
            return EvalOutcome {
                score: v,
                tier: Tier::Full,
                tier_score: v,
            };
        };
        let mat = self.stack[ply].mat;
        let out = self.eval.bounded(board, &mat, alpha, beta, margins);
        self.exits[out.tier as usize] += 1;
        self.probe
            .observe_eval(board, &mat, alpha, beta, &out, &mut self.eval);
        out
    }

    /// The network's evaluation for the window `(alpha, beta)`: with its lazy exits on, the
    /// incremental material + PSQT score may decide the node before the accumulators are
    /// brought up to date ([`NetLazyMargins`]); the laboratory sees every full evaluation
    /// with the super-lazy score beside it.
    #[inline]
    fn bounded_net_eval(
        &mut self,
        board: &Board,
        ply: usize,
        alpha: i32,
        beta: i32,
    ) -> EvalOutcome {
        let mat = self.stack[ply].mat;
        if let Some(m) = self.net_lazy.as_deref() {
            let sl = crate::eval::super_lazy_score(board, &mat);
            let stm = board.side_to_move();
            let (my, opp) = (
                crate::eval::side_bucket(mat.army(stm)),
                crate::eval::side_bucket(mat.army(!stm)),
            );
            if let Some(out) = m.exit(my, opp, sl, alpha, beta) {
                self.exits[Tier::SuperLazy as usize] += 1;
                return out;
            }
        }
        let v = self.full_eval(board, ply);
        self.probe.observe_net_eval(board, &mat, v, alpha, beta);
        EvalOutcome {
            score: v,
            tier: Tier::Full,
            tier_score: v,
        }
    }

    fn is_main(&self) -> bool {
        self.id == 0
    }

    /// Abort check, called at every node. The main thread polls the clock every
    /// `TIME_CHECK_NODES` nodes; all threads read the shared stop flag.
    #[inline]
    fn should_stop(&mut self, ctx: &SharedCtx) -> bool {
        if self.stopped {
            return true;
        }
        if self.nodes.is_multiple_of(TIME_CHECK_NODES) {
            ctx.nodes[self.id].store(self.nodes, Relaxed);
            if self.is_main() {
                self.others_nodes = ctx.total_nodes() - self.nodes;
                if self.completed_depth >= 1 && ctx.time.hard_exceeded() {
                    ctx.stop.store(true, Relaxed);
                }
            }
        }
        if self.is_main()
            && self.completed_depth >= 1
            && ctx
                .node_limit
                .is_some_and(|l| self.nodes + self.others_nodes >= l)
        {
            ctx.stop.store(true, Relaxed);
        }
        if ctx.stop.load(Relaxed) {
            self.stopped = true;
        }
        self.stopped
    }

    /// Has the current position occurred before within the reversible-move window? One
    /// earlier occurrence, in the game or on the search path, counts as a draw.
    #[inline]
    fn is_repetition(&self, board: &Board) -> bool {
        let key = board.hash();
        let window = board.halfmove_clock() as usize;
        let n = self.keys.len();
        let mut i = 2;
        while i <= window && i <= n {
            if self.keys[n - i] == key {
                return true;
            }
            i += 2;
        }
        false
    }

    #[inline]
    fn cont_indices(&self, ply: usize) -> [PieceTo; 2] {
        let a = if ply >= 1 {
            self.stack[ply - 1].moved
        } else {
            NO_PIECE_TO
        };
        let b = if ply >= 2 {
            self.stack[ply - 2].moved
        } else {
            NO_PIECE_TO
        };
        [a, b]
    }

    // ----- Calibration probes (compiled away for `NoProbe`) ------------------------------

    #[inline(always)]
    fn probe_mode(&self) -> Option<ProbeMode> {
        self.probe.mode()
    }

    /// Is `m` being calibrated ("search anyway": it must not prune, only record)?
    #[inline(always)]
    fn shadowing(&self, m: Mechanism) -> bool {
        matches!(self.probe_mode(), Some(ProbeMode::Surprise(x)) if x == m)
    }

    #[inline(always)]
    fn probe_record(&mut self, cell: usize, event: bool) {
        self.probe.record(cell, event);
    }

    /// Record a node-level probe with the node's result (`value`, window `alpha0..beta`).
    #[inline]
    fn settle(&mut self, probe: Option<NodeProbe>, value: i32, alpha0: i32, beta: i32) {
        if let Some(p) = probe {
            let event = if p.event_below_beta {
                value < beta
            } else {
                value > alpha0
            };
            self.probe_record(p.cell, event);
        }
    }

    /// Take this search's configuration: its rules, and the reduction table for its LMR
    /// constants (rebuilt only when they change).
    pub(crate) fn prepare(&mut self, cfg: PruneConfig) {
        self.rules = Rules::new(&cfg);
        self.cfg = cfg;
        let want = (self.cfg.tune.lmr_base, self.cfg.tune.lmr_divisor);
        if self.lmr_params != want {
            self.lmr = lmr_table(want.0, want.1);
            self.lmr_params = want;
        }
    }

    fn update_pv(&mut self, ply: usize, mv: Move) {
        let (head, tail) = self.pv.split_at_mut(ply + 1);
        let child_len = self.pv_len[ply + 1].max(ply + 1);
        head[ply][ply] = mv;
        head[ply][ply + 1..child_len].copy_from_slice(&tail[0][ply + 1..child_len]);
        self.pv_len[ply] = child_len;
    }

    /// Quiescence search: captures and queen promotions (all evasions when in check), with
    /// stand-pat, delta pruning and SEE pruning.
    fn qsearch<const PV: bool>(
        &mut self,
        ctx: &SharedCtx,
        board: &Board,
        mut alpha: i32,
        beta: i32,
        ply: usize,
    ) -> i32 {
        self.nodes += 1;
        self.qnodes += 1;
        if PV {
            self.pv_len[ply] = ply;
            self.seldepth = self.seldepth.max(ply + 1);
        }
        if self.should_stop(ctx) {
            return 0;
        }
        let in_check = !board.checkers().is_empty();
        if ply >= MAX_PLY - 2 {
            return if in_check {
                DRAW
            } else {
                self.full_eval(board, ply)
            };
        }
        if board.halfmove_clock() >= 100 || is_drawish_material(board) {
            return DRAW;
        }

        let key = board.hash();
        let tte = ctx.tt.probe(key, ply);
        // Every entry has searched at least quiescence depth (0).
        if !PV && let Some(score) = tt_cutoff(tte, 0, alpha, beta) {
            return score;
        }

        let raw_eval;
        let mut best;
        // With lazy exits a cheap tier may decide the stand-pat: then `best` is the bound
        // it proved and the table keeps no static eval for this position.
        let mut early: Option<EvalOutcome> = None;
        if in_check {
            raw_eval = EVAL_NONE;
            best = -INFINITE;
        } else {
            raw_eval = match tte {
                Some(e) if e.eval != EVAL_NONE => e.eval,
                _ => {
                    let out = self.bounded_eval(board, ply, alpha, beta);
                    if out.tier == Tier::Full {
                        out.score
                    } else {
                        early = Some(out);
                        EVAL_NONE
                    }
                }
            };
            best = early.map_or(raw_eval, |o| o.score);
            if let Some(e) = tte
                && ((e.bound == Bound::Lower && e.score > best)
                    || (e.bound == Bound::Upper && e.score < best))
            {
                best = e.score;
            }
            // Stand pat: the side to move can usually do at least as well as doing nothing.
            if best >= beta {
                return best;
            }
            alpha = alpha.max(best);
        }
        let futility_base = match early {
            _ if in_check => -INFINITE,
            // After an early exit: the tier's own score, its median missing terms and the
            // tier's base margin (docs/design/chess-DESIGN.md §2; `qs_base` comes with the margin tables).
            Some(o) if o.score == best => {
                let mat = &self.stack[ply].mat;
                let stm = board.side_to_move();
                let (my, opp) = (
                    crate::eval::side_bucket(mat.army(stm)),
                    crate::eval::side_bucket(mat.army(!stm)),
                );
                match self.net_lazy.as_deref().filter(|_| self.net.is_some()) {
                    // The net's exit: its median residual is the positional estimate.
                    Some(m) => o.tier_score + m.p50(my, opp) + QS_FUTILITY_MARGIN,
                    None => {
                        let m = self.lazy.as_deref().expect("early exits need margins");
                        o.tier_score + m.positional(o.tier, my, opp) + m.qs_base[o.tier as usize]
                    }
                }
            }
            _ => best + QS_FUTILITY_MARGIN,
        };
        let original_alpha = alpha;
        let tt_move = tte.map_or(NULL_MOVE, |e| e.mv);
        let mut picker = MovePicker::new(tt_move, [NULL_MOVE; 2], NULL_MOVE, !in_check);
        let cont = self.cont_indices(ply);
        let mut best_move = NULL_MOVE;
        let mut searched = 0;
        let stm = board.side_to_move();

        while let Some((mv, _)) = picker.next(board, &self.hist, cont) {
            let mut move_probe: Option<usize> = None;
            if !in_check {
                // Delta pruning: even winning the victim for free cannot reach alpha.
                if self.cfg.qfutility && mv.promotion.is_none() {
                    let victim = crate::board::captured_piece(board, mv)
                        .map_or(0, |p| SEE_VALUE[p as usize]);
                    if futility_base + victim <= alpha {
                        if !self.shadowing(Mechanism::QFutility) {
                            self.stats.qs_futility += 1;
                            best = best.max(futility_base + victim);
                            continue;
                        }
                        move_probe = Some(surprise_cell(board, 0, alpha - futility_base - victim));
                    }
                }
                if self.cfg.see && !see_ge(board, mv, 0) {
                    if !self.shadowing(Mechanism::See) {
                        self.stats.qs_see += 1;
                        continue;
                    }
                    move_probe.get_or_insert(surprise_cell(board, 0, 0));
                }
            } else if best > -MATE_BOUND && searched >= 3 && !is_tactical(board, mv) {
                // Enough evasions tried; quiet ones after the first few rarely matter.
                continue;
            }
            let mut child = board.clone();
            child.play_unchecked(mv);
            ctx.tt.prefetch(child.hash());
            let piece = board.piece_on(mv.from).unwrap_or(Piece::Pawn);
            self.stack[ply].moved = piece_to(stm, piece, mv.to as usize);
            self.stack[ply + 1].mat = self.stack[ply].mat.after(board, mv, piece);
            self.push_net_move(ply + 1, board, mv, &child);
            searched += 1;
            let score = -self.qsearch::<PV>(ctx, &child, -beta, -alpha, ply + 1);
            if self.stopped {
                return 0;
            }
            if let Some(cell) = move_probe {
                self.probe_record(cell, score > alpha);
            }
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
        }
        if in_check && searched == 0 {
            return -MATE + ply as i32;
        }
        let bound = if best >= beta {
            Bound::Lower
        } else if PV && best > original_alpha {
            Bound::Exact
        } else {
            Bound::Upper
        };
        ctx.tt.store(key, best_move, best, raw_eval, 0, bound, ply);
        best
    }
}

/// The table cutoff shared by `negamax` and `qsearch` (non-PV nodes only; the caller checks
/// that): an entry that searched at least `depth` ends the node with its score when the
/// score is exact or a bound on the far side of the window (a lower bound ≥ beta, an upper
/// bound ≤ alpha).
#[inline]
fn tt_cutoff(tte: Option<TtEntry>, depth: i32, alpha: i32, beta: i32) -> Option<i32> {
    let e = tte?;
    let usable = match e.bound {
        Bound::Exact => true,
        Bound::Lower => e.score >= beta,
        Bound::Upper => e.score <= alpha,
        Bound::None => false,
    };
    (e.depth >= depth && usable).then_some(e.score)
}

fn update_capture_history(hist: &mut History, board: &Board, mv: Move, bonus: i32) {
    let stm = board.side_to_move();
    let piece = board.piece_on(mv.from).unwrap_or(Piece::Pawn);
    let victim = crate::board::captured_piece(board, mv).unwrap_or(Piece::Pawn);
    hist.update_capture(piece_to(stm, piece, mv.to as usize), victim, bonus);
}

/// Does the side to move have at least one legal move?
pub fn has_legal_move(board: &Board) -> bool {
    let mut any = false;
    board.generate_moves(|_| {
        any = true;
        true
    });
    any
}

/// Format a score for UCI: `cp N` or `mate N` (moves, negative when we are mated).
pub(crate) fn uci_score(score: i32) -> String {
    if score >= MATE_BOUND {
        format!("mate {}", (MATE - score + 1) / 2)
    } else if score <= -MATE_BOUND {
        format!("mate -{}", (MATE + score) / 2)
    } else {
        format!("cp {score}")
    }
}

/// Side to move as a bool (for the time manager).
pub(crate) fn white_to_move(board: &Board) -> bool {
    board.side_to_move() == Color::White
}
