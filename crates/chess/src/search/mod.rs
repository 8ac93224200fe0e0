//! Alpha-beta search: one node function with numbered steps (in the spirit of Stockfish's
//! `search.cpp`), quiescence search, and the per-thread [`Worker`] that runs iterative
//! deepening with aspiration windows. Threads share only the transposition table and the
//! stop flag ([`smp`]).
//!
//! Every pruning decision is a separate, named method (`rfp_prunes`, `late_move_prunes`,
//! ...) that reads its margins from [`params`], and counts how often it fires in
//! [`PruneStats`], so the calibration issues can instrument or override one rule at a time.

pub mod history;
pub mod movepick;
pub mod params;
pub mod prune;
pub mod see;
pub mod smp;
pub mod time;
pub mod tt;

use crate::board::{
    Board, Color, Move, NULL_MOVE, Piece, gives_check, has_non_pawn_material, is_drawish_material,
    is_tactical,
};
use crate::eval::netlazy::NetLazyMargins;
use crate::eval::pst::SEE_VALUE;
use crate::eval::{EvalOutcome, Evaluator, LazyMargins, Material, Tier};
use history::{CorrKeys, History, NO_PIECE_TO, PieceTo, non_pawn_key, piece_to};
use movepick::{MovePicker, is_bad_noisy_score};
use params::*;
use prune::{
    EFP_TIER_MARGIN, EFP_VETO, EfpMode, Gate, HUNG_VALUE, Mechanism, ProbeMode, PruneConfig,
    RfpReturn, Source, TABLE_DEPTHS, fh_cell, hung_bucket, opponent_hung, rfp_cell, surprise_cell,
    surprise_cell_plies,
};
use see::see_ge;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use time::TimeManager;
use tt::{Bound, Tt, TtEntry};

/// Marker for "no static eval" (in check).
pub const EVAL_NONE: i32 = -INFINITE;

/// Everything threads share during one search.
pub struct SharedCtx<'a> {
    pub tt: &'a Tt,
    pub stop: &'a AtomicBool,
    /// Published node counts, one per thread (updated every few thousand nodes).
    pub nodes: &'a [AtomicU64],
    pub time: TimeManager,
    pub node_limit: Option<u64>,
}

impl SharedCtx<'_> {
    pub fn total_nodes(&self) -> u64 {
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
    pub probcut: u64,
    pub hist_prune: u64,
}

impl PruneStats {
    pub fn add(&mut self, o: &PruneStats) {
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
        self.probcut += o.probcut;
        self.hist_prune += o.hist_prune;
    }

    /// `rfp=N razor=N ...`: the counters as `key=value` pairs (the UCI `info string prune`
    /// line; `actuary validate` reads it back).
    pub fn pairs(&self) -> String {
        format!(
            "rfp={} razor={} nmp={} nmp-verify-fail={} lmp={} efp={} see-quiet={} see-noisy={} qfutility={} qs-see={} probcut={} hp={}",
            self.rfp,
            self.razor,
            self.null_move,
            self.null_verify_fail,
            self.lmp,
            self.futility,
            self.see_quiet,
            self.see_noisy,
            self.qs_futility,
            self.qs_see,
            self.probcut,
            self.hist_prune
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
    /// How many of `keys` are the game before the root (the rest is the search path).
    root_keys: usize,
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
    /// The laboratory's recorder ([`NoProbe`] in the engine).
    pub probe: P,
    stopped: bool,
    root_depth: i32,
    completed_depth: i32,
    nmp_min_ply: usize,
    root_excluded: Vec<Move>,
    /// Nodes spent under each root move this iteration (time management by node share).
    pub(crate) root_nodes: Vec<(Move, u64)>,
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
            lmr: lmr_table(LMR_BASE_CENTI, LMR_DIVISOR_CENTI),
            lmr_params: (LMR_BASE_CENTI, LMR_DIVISOR_CENTI),
            stack: vec![EMPTY_FRAME; MAX_PLY + 8],
            pv: vec![[NULL_MOVE; MAX_PLY + 1]; MAX_PLY + 2],
            pv_len: vec![0; MAX_PLY + 2],
            keys: Vec::with_capacity(1024),
            root_keys: 0,
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
            probe,
            stopped: false,
            root_depth: 0,
            completed_depth: 0,
            nmp_min_ply: 0,
            root_excluded: Vec::new(),
            root_nodes: Vec::with_capacity(256),
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
        self.root_keys = history.len();
        self.nodes = 0;
        self.qnodes = 0;
        self.seldepth = 0;
        self.stats = PruneStats::default();
        self.exits = [0; 3];
        self.stopped = false;
        self.completed_depth = 0;
        self.nmp_min_ply = 0;
        self.root_excluded.clear();
        self.root_nodes.clear();
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

    /// Record the network's feature changes of `mv` (played from `board`) for ply `ply`: a
    /// few stores, no arithmetic; the accumulator is brought up to date only if the node is
    /// evaluated ([`crate::nnue::AccStack::evaluate`]).
    #[inline]
    fn push_net_move(&mut self, ply: usize, board: &Board, mv: Move) {
        if let Some(a) = &mut self.accs {
            a.push(ply, crate::nnue::Delta::of_move(board, mv));
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
            let v = if self.cfg.rule50_damp {
                v * (200 - i32::from(board.halfmove_clock()).min(100)) / 200
            } else {
                v
            };
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
            // With `rule50` the net's score is damped by the fifty-move counter; the margins
            // bound the undamped net, so the bounds are damped the same way (a positive
            // factor keeps each bound on its side of the net).
            let hmc = i32::from(board.halfmove_clock()).min(100);
            let damp = self.cfg.rule50_damp;
            let scale = move |v: i32| if damp { v * (200 - hmc) / 200 } else { v };
            if let Some(out) = m.exit_scaled(my, opp, sl, alpha, beta, scale) {
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

    /// Has the current position occurred before within the reversible-move window? Without
    /// switch `draws`, any earlier occurrence counts as a draw. With it, one repetition counts
    /// only when the earlier occurrence is on the search path after the root; an occurrence
    /// at the root or in the game before it needs a second one (the real threefold rule): a
    /// position seen once in the game is not a draw to aim for or avoid.
    #[inline]
    fn is_repetition(&self, board: &Board) -> bool {
        let key = board.hash();
        let window = board.halfmove_clock() as usize;
        let n = self.keys.len();
        let mut before_root = false;
        let mut i = 2;
        while i <= window && i <= n {
            let at = n - i;
            if self.keys[at] == key {
                if !self.cfg.draws || at > self.root_keys || before_root {
                    return true;
                }
                before_root = true;
            }
            i += 2;
        }
        false
    }

    /// The score of a repetition draw: 0, or with switch `draws` ±1 by the node count
    /// (dithering keeps the search from treating every drawn line as equal and exactly zero,
    /// which blinds it to the difference between a repetition and a real plan).
    #[inline]
    fn repetition_draw(&self) -> i32 {
        if self.cfg.draws {
            DRAW - 1 + (self.nodes & 2) as i32
        } else {
            DRAW
        }
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

    // ----- Pruning rules: one function each, margins from params.rs or the tables -------

    /// The one gate every reduce/prune decision on a move passes first (the seed's
    /// `CanWeReduceOrPruneMove`): a quiet move that does not give check, is not the hash,
    /// killer or counter move, at a node not in check.
    #[inline]
    fn gate(in_check: bool, quiet: bool, checks: bool, special: bool) -> bool {
        !in_check && quiet && !checks && !special
    }

    /// RFP margin at `depth`: the beta-side table's where it has the samples, else the
    /// formula (`union`: the smaller of the two — the formula, widened where the table
    /// found it safe).
    #[inline]
    fn rfp_margin_for(&self, depth: i32, improving: bool, opp_hung: bool) -> i32 {
        let formula = rfp_margin_with(
            self.cfg.rfp_margin,
            self.cfg.rfp_improving,
            depth,
            improving,
        );
        let table = || {
            self.cfg.tables.rfp_margin[prune::depth_index(depth)][improving as usize]
                [opp_hung as usize]
        };
        match self.cfg.rfp {
            Source::Table => table().unwrap_or(formula),
            Source::Union => table().map_or(formula, |t| t.min(formula)),
            _ => formula,
        }
    }

    #[inline]
    fn rfp_value(&self, eval: i32, beta: i32, margin: i32) -> i32 {
        match self.cfg.rfp_return {
            RfpReturn::Beta => beta,
            RfpReturn::Blend => rfp_return(eval, beta),
            RfpReturn::EvalMinusMargin => eval - margin,
        }
    }

    /// Razoring margin at `depth` (1..=3).
    #[inline]
    fn razor_margin(&self, depth: i32) -> i32 {
        self.cfg.razor_base + self.cfg.razor_per_depth * depth
    }

    /// The reduction table for this search's LMR constants (rebuilt only when they change).
    pub(crate) fn sync_lmr_table(&mut self) {
        let want = (self.cfg.lmr_base, self.cfg.lmr_divisor);
        if self.lmr_params != want {
            self.lmr = lmr_table(want.0, want.1);
            self.lmr_params = want;
        }
    }

    /// Razoring gate: eval so far below alpha that only tactics could help.
    #[inline]
    fn razor_candidate(&self, depth: i32, eval: i32, alpha: i32) -> bool {
        depth <= RAZOR_MAX_DEPTH && eval + self.razor_margin(depth) < alpha
    }

    /// May we try a null move here?
    #[inline]
    fn null_move_allowed(
        &self,
        board: &Board,
        depth: i32,
        eval: i32,
        beta: i32,
        ply: usize,
    ) -> bool {
        depth >= NMP_MIN_DEPTH
            && eval >= beta
            && beta > -MATE_BOUND
            && ply >= self.nmp_min_ply
            && ply >= 1
            && self.stack[ply - 1].moved != NO_PIECE_TO
            && has_non_pawn_material(board, board.side_to_move())
    }

    /// Does a null-move cutoff need a verification search? At high depth, and when the
    /// mover has a single non-pawn piece (zugzwang is likely).
    #[inline]
    fn null_move_needs_verification(&self, board: &Board, depth: i32) -> bool {
        let stm = board.side_to_move();
        let pieces = board.colors(stm) & !(board.pieces(Piece::Pawn) | board.pieces(Piece::King));
        depth >= NMP_VERIFY_DEPTH || pieces.len() <= 1
    }

    /// Late move reduction for move number `n` (1-based) at `depth`.
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
        // A move the gate keeps from pruning is reduced less (`relief` plies).
        r -= relief;
        r -= hist / self.cfg.lmr_history_div;
        r.max(0)
    }

    fn update_pv(&mut self, ply: usize, mv: Move) {
        let (head, tail) = self.pv.split_at_mut(ply + 1);
        let child_len = self.pv_len[ply + 1].max(ply + 1);
        head[ply][ply] = mv;
        head[ply][ply + 1..child_len].copy_from_slice(&tail[0][ply + 1..child_len]);
        self.pv_len[ply] = child_len;
    }

    /// The main node function.
    #[allow(clippy::too_many_arguments)]
    fn negamax<const PV: bool>(
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

        if !root {
            // Step 3. Draws: fifty-move rule, repetition, dead material; ply limit.
            if board.halfmove_clock() >= 100 && (!in_check || has_legal_move(board)) {
                return DRAW;
            }
            if self.is_repetition(board) {
                return self.repetition_draw();
            }
            if is_drawish_material(board) {
                return DRAW;
            }
            if ply >= MAX_PLY - 2 {
                return if in_check {
                    DRAW
                } else {
                    self.full_eval(board, ply)
                };
            }
            // Step 4. Mate distance pruning: no line can beat an already-found shorter mate.
            alpha = alpha.max(-MATE + ply as i32);
            beta = beta.min(MATE - ply as i32 - 1);
            if alpha >= beta {
                return alpha;
            }
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
        // With correction history (switch `corr`) the static evaluation is corrected by what
        // searches of positions with the same pawns found it to miss (`corr-all`: also the
        // same pieces of either side, the same last two moves); the table keeps the raw.
        let correct = self.cfg.correction || self.cfg.correction_all;
        let corr_keys = if correct && !in_check {
            let all = self.cfg.correction_all;
            CorrKeys {
                pawn: crate::eval::pawns::pawn_key(board),
                non_pawn: if all {
                    [Color::White, Color::Black].map(|c| non_pawn_key(board, c))
                } else {
                    [0; 2]
                },
                cont: if all {
                    self.cont_indices(ply)
                } else {
                    [NO_PIECE_TO; 2]
                },
            }
        } else {
            CorrKeys::default()
        };
        let (raw_eval, static_eval, eval) = if in_check {
            (EVAL_NONE, EVAL_NONE, EVAL_NONE)
        } else {
            let raw = match tte {
                Some(e) if e.eval != EVAL_NONE => e.eval,
                _ => self.full_eval(board, ply),
            };
            let corrected = if correct {
                let c = self
                    .hist
                    .correction(stm, &corr_keys, self.cfg.correction_all);
                (raw + c).clamp(-MATE_BOUND + 1, MATE_BOUND - 1)
            } else {
                raw
            };
            // A bound from the table that is tighter than static eval is a better estimate.
            let better = match tte {
                Some(e) if e.bound == Bound::Lower && e.score > corrected => e.score,
                Some(e) if e.bound == Bound::Upper && e.score < corrected => e.score,
                Some(e) if e.bound == Bound::Exact => e.score,
                _ => corrected,
            };
            (raw, corrected, better)
        };
        self.stack[ply].static_eval = static_eval;
        let improving = !in_check
            && ply >= 2
            && (self.stack[ply - 2].static_eval == EVAL_NONE
                || static_eval > self.stack[ply - 2].static_eval);
        // The mover's improvement over its last turn (the EFP estimate and a table axis).
        let improvement = (!in_check && ply >= 2 && self.stack[ply - 2].static_eval != EVAL_NONE)
            .then(|| static_eval - self.stack[ply - 2].static_eval);
        self.hist.killers[ply + 1] = [NULL_MOVE; 2];
        let alpha0 = alpha;
        // A calibration probe on this node, settled with the node's result.
        let mut node_probe: Option<NodeProbe> = None;
        let probe = self.probe_mode();

        if !PV && !in_check && excluded == NULL_MOVE {
            // Step 7. Reverse futility pruning: the position is so far above beta that no
            // reply is expected to bring it back. The margin is the beta-side table's where
            // it has the samples (the formula elsewhere); collection looks at every depth.
            let collecting = probe == Some(ProbeMode::Rfp);
            let max_depth = if collecting {
                TABLE_DEPTHS as i32
            } else {
                self.cfg.rfp_max_depth
            };
            if (self.cfg.rfp != Source::Off || collecting)
                && depth <= max_depth
                && eval < MATE_BOUND
                && beta > -MATE_BOUND
                && eval >= beta
            {
                let opp_hung = (matches!(self.cfg.rfp, Source::Table | Source::Union)
                    || collecting)
                    && opponent_hung(board);
                let margin = self.rfp_margin_for(depth, improving, opp_hung);
                let fires = self.cfg.rfp != Source::Off && eval - margin >= beta;
                if fires && !self.shadowing(Mechanism::Rfp) {
                    self.stats.rfp += 1;
                    return self.rfp_value(eval, beta, margin);
                }
                if fires {
                    node_probe = Some(NodeProbe {
                        cell: surprise_cell(board, depth, eval - margin - beta),
                        event_below_beta: true,
                    });
                } else if collecting {
                    node_probe = Some(NodeProbe {
                        cell: rfp_cell(depth, improving, opp_hung, eval - beta),
                        event_below_beta: true,
                    });
                }
            }

            // Step 8. Razoring: verify with quiescence that nothing tactical saves us.
            if self.cfg.razor && self.razor_candidate(depth, eval, alpha) {
                let v = self.qsearch::<false>(ctx, board, alpha, alpha + 1, ply);
                if v <= alpha {
                    if !self.shadowing(Mechanism::Razor) {
                        self.stats.razor += 1;
                        self.settle(node_probe, v, alpha0, beta);
                        return v;
                    }
                    node_probe.get_or_insert(NodeProbe {
                        cell: surprise_cell(board, depth, alpha - eval - self.razor_margin(depth)),
                        event_below_beta: false,
                    });
                }
            }

            // Step 9. Null move with verification near zugzwang.
            if self.cfg.nmp
                && self.null_move_allowed(board, depth, eval, beta, ply)
                && let Some(child) = board.null_move()
            {
                let r = nmp_reduction(
                    self.cfg.nmp_base,
                    self.cfg.nmp_depth_div,
                    self.cfg.nmp_eval_div,
                    depth,
                    eval,
                    beta,
                );
                self.stack[ply].moved = NO_PIECE_TO;
                self.stack[ply + 1].mat = self.stack[ply].mat;
                if let Some(a) = &mut self.accs {
                    a.push(ply + 1, crate::nnue::Delta::default());
                }
                self.keys.push(key);
                let v = -self.negamax::<false>(
                    ctx,
                    &child,
                    -beta,
                    -beta + 1,
                    depth - r,
                    ply + 1,
                    !cut_node,
                );
                self.keys.pop();
                if self.stopped {
                    return 0;
                }
                if v >= beta {
                    let v = if v >= MATE_BOUND { beta } else { v };
                    let cuts = if self.nmp_min_ply > 0
                        || !self.null_move_needs_verification(board, depth)
                    {
                        true
                    } else {
                        // Verification: search this node without null moves for a few plies.
                        self.nmp_min_ply = ply + (3 * (depth - r) / 4).max(1) as usize;
                        let w = self.negamax::<false>(
                            ctx,
                            board,
                            beta - 1,
                            beta,
                            depth - r,
                            ply,
                            false,
                        );
                        self.nmp_min_ply = 0;
                        if self.stopped {
                            return 0;
                        }
                        self.stats.null_verify_fail += (w < beta) as u64;
                        w >= beta
                    };
                    if cuts && !self.shadowing(Mechanism::Nmp) {
                        self.stats.null_move += 1;
                        self.settle(node_probe, v, alpha0, beta);
                        return v;
                    }
                    if cuts {
                        node_probe.get_or_insert(NodeProbe {
                            cell: surprise_cell(board, depth, eval - beta),
                            event_below_beta: true,
                        });
                    }
                }
            }
        }

        // Step 9b. ProbCut (switch `probcut`): a good capture whose shallow search beats beta
        // by a margin would, very probably, beat beta at full depth too. Skipped when the
        // table already holds a search about this deep that stayed under that bar.
        let cont = self.cont_indices(ply);
        if self.cfg.probcut
            && !PV
            && !in_check
            && excluded == NULL_MOVE
            && depth >= PROBCUT_MIN_DEPTH
            && beta.abs() < MATE_BOUND
        {
            let pc_beta = (beta + self.cfg.probcut_margin).min(MATE_BOUND - 1);
            let table_says_no = tte.is_some_and(|e| {
                e.depth >= depth - (PROBCUT_REDUCTION - 1)
                    && e.score < pc_beta
                    && e.bound != Bound::Lower
            });
            if !table_says_no {
                let tt_noisy = if tt_move != NULL_MOVE && is_tactical(board, tt_move) {
                    tt_move
                } else {
                    NULL_MOVE
                };
                let mut picker = MovePicker::new(
                    tt_noisy,
                    [NULL_MOVE; 2],
                    NULL_MOVE,
                    true,
                    self.cfg.caphist_div,
                );
                while let Some((mv, _)) = picker.next(board, &self.hist, cont) {
                    if !see_ge(board, mv, pc_beta - static_eval) {
                        continue;
                    }
                    let piece = board.piece_on(mv.from).unwrap_or(Piece::Pawn);
                    let mut child = board.clone();
                    child.play_unchecked(mv);
                    self.stack[ply + 1].mat = self.stack[ply].mat.after(board, mv, piece);
                    self.push_net_move(ply + 1, board, mv);
                    self.stack[ply].moved = piece_to(stm, piece, mv.to as usize);
                    self.keys.push(key);
                    let mut v =
                        -self.qsearch::<false>(ctx, &child, -pc_beta, -pc_beta + 1, ply + 1);
                    if v >= pc_beta && !self.stopped {
                        v = -self.negamax::<false>(
                            ctx,
                            &child,
                            -pc_beta,
                            -pc_beta + 1,
                            depth - PROBCUT_REDUCTION,
                            ply + 1,
                            !cut_node,
                        );
                    }
                    self.keys.pop();
                    if self.stopped {
                        return 0;
                    }
                    if v >= pc_beta && self.shadowing(Mechanism::ProbCut) {
                        // Search anyway: was the node really at or above beta?
                        node_probe.get_or_insert(NodeProbe {
                            cell: surprise_cell(board, depth, eval - beta),
                            event_below_beta: true,
                        });
                        break;
                    }
                    if v >= pc_beta {
                        self.stats.probcut += 1;
                        ctx.tt.store(
                            key,
                            mv,
                            v,
                            raw_eval,
                            depth - (PROBCUT_REDUCTION - 1),
                            Bound::Lower,
                            ply,
                        );
                        self.settle(node_probe, v, alpha0, beta);
                        return v;
                    }
                }
            }
        }

        // Step 10. Internal iterative reduction: without a hash move this node was never
        // searched well; search it shallower first.
        if depth >= IIR_MIN_DEPTH && tt_move == NULL_MOVE && (PV || cut_node) {
            depth -= 1;
        }

        // Step 11. Move loop setup.
        let counter = self.hist.counter(cont[0]);
        let mut picker = MovePicker::new(
            tt_move,
            self.hist.killers[ply],
            counter,
            false,
            self.cfg.caphist_div,
        );
        let original_alpha = alpha;
        let mut best = -INFINITE;
        let mut best_move = NULL_MOVE;
        let mut searched = 0usize;
        let mut quiets_seen = 0usize;
        let mut skip_quiets = false;
        let mut quiets_tried: [Move; 64] = [NULL_MOVE; 64];
        let mut n_quiets = 0;
        let mut noisy_tried: [Move; 32] = [NULL_MOVE; 32];
        let mut n_noisy = 0;
        let mut moves_seen = 0u32;
        let killers = self.hist.killers[ply];
        let tt_noisy = tt_move != NULL_MOVE && is_tactical(board, tt_move);

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
            let hist_score = if quiet {
                self.hist.quiet_score(stm, mv, pt, cont)
            } else {
                0
            };
            let refutation = mv == killers[0] || mv == killers[1] || mv == counter;
            let special = refutation || mv == tt_move;
            if quiet {
                quiets_seen += 1;
            }
            moves_seen += 1;
            let checks = gives_check(board, mv);
            let gated = Self::gate(in_check, quiet, checks, special);
            // A per-move calibration probe: (cell, settled with "the move raised alpha").
            let mut move_probe: Option<usize> = None;

            // Step 12. Shallow-depth pruning, behind the gate (never before one move has
            // been searched, and never when we might be getting mated).
            if !root && best > -MATE_BOUND && has_non_pawn_material(board, stm) {
                let base_r = self.lmr[depth.min(63) as usize][(searched + 1).min(63)] as i32;
                let lmr_depth = (depth - 1 - base_r).max(0);
                // Who may prune this quiet move: the one gate for all (`strict`), or each
                // formula's own conditions as in the build before the gate (`classic`).
                // The tables were measured on gated moves only, so their variants always keep
                // to the gate.
                let (lmp_ok, efp_ok, see_ok) = match self.cfg.gate {
                    Gate::Strict => (gated, gated, gated),
                    Gate::Classic => (
                        true,
                        if self.cfg.efp == EfpMode::Tiers {
                            gated
                        } else {
                            !checks && !in_check
                        },
                        !checks,
                    ),
                };
                if quiet {
                    let in_table = depth <= TABLE_DEPTHS as i32;
                    let wants_cell = in_table
                        && (matches!(self.cfg.lmp, Source::Table | Source::Union)
                            || (self.cfg.efp == EfpMode::Tiers && depth <= 2)
                            || probe == Some(ProbeMode::Fh));
                    let hung = if wants_cell {
                        hung_bucket(board, mv)
                    } else {
                        0
                    };
                    let cell = if wants_cell {
                        fh_cell(depth, hung, alpha - eval, moves_seen, improvement)
                    } else {
                        0
                    };
                    // Late move pruning: the formula (enough quiets tried: skip the rest), the
                    // table (this gated move's pessimistic fail-high bound is under the depth
                    // allowance: skip this move), or either (`union`).
                    let formula_lmp = lmp_ok
                        && matches!(self.cfg.lmp, Source::Formula | Source::Union)
                        && depth <= LMP_MAX_DEPTH
                        && quiets_seen >= lmp_limit(self.cfg.lmp_base, depth, improving);
                    let table_lmp = gated
                        && in_table
                        && matches!(self.cfg.lmp, Source::Table | Source::Union)
                        && self.cfg.tables.fh(cell) < self.cfg.lmp_allowance(depth, hist_score);
                    if formula_lmp || table_lmp {
                        if !self.shadowing(Mechanism::Lmp) {
                            self.stats.lmp += 1;
                            skip_quiets = formula_lmp;
                            if skip_quiets {
                                picker.skip_quiets();
                            }
                            continue;
                        }
                        move_probe = Some(surprise_cell(board, depth, alpha - eval));
                    }
                    // History pruning (switch `hp`): at low depth, a quiet move that has
                    // failed in this context again and again is not worth a search. Before
                    // futility (as Stockfish orders them): behind it, the moves it could
                    // take were mostly gone already (2 firings in the depth-8 hold-out).
                    if self.cfg.hist_prune
                        && gated
                        && lmr_depth <= HP_MAX_LMR_DEPTH
                        && hist_score < -self.cfg.hp_margin * depth
                    {
                        if !self.shadowing(Mechanism::Hp) {
                            self.stats.hist_prune += 1;
                            continue;
                        }
                        move_probe.get_or_insert(surprise_cell(board, depth, alpha - eval));
                    }
                    // Futility pruning at the parent: even an optimistic estimate of the
                    // move cannot reach alpha.
                    let efp_slack = match self.cfg.efp {
                        _ if !efp_ok => None,
                        EfpMode::Off => None,
                        EfpMode::Formula => {
                            let bound = eval
                                + futility_margin(
                                    self.cfg.fp_base,
                                    self.cfg.fp_per_depth,
                                    lmr_depth,
                                );
                            (lmr_depth <= FP_MAX_DEPTH && bound <= alpha).then_some(alpha - bound)
                        }
                        EfpMode::Tiers => {
                            let estimate = eval + improvement.unwrap_or(0) - HUNG_VALUE[hung];
                            (depth <= 2)
                                .then(|| estimate + EFP_TIER_MARGIN[depth as usize - 1])
                                .filter(|&b| {
                                    b <= alpha
                                        && self.cfg.tables.fh(cell) < EFP_VETO * self.cfg.risk / 100
                                })
                                .map(|b| alpha - b)
                        }
                    };
                    if let Some(slack) = efp_slack {
                        if !self.shadowing(Mechanism::Efp) {
                            self.stats.futility += 1;
                            continue;
                        }
                        move_probe.get_or_insert(surprise_cell(board, depth, slack));
                    }
                    // SEE pruning of quiet moves that hang material at low depth.
                    if see_ok
                        && self.cfg.see
                        && depth <= SEE_PRUNE_MAX_DEPTH
                        && !see_ge(board, mv, self.cfg.see_quiet * lmr_depth)
                    {
                        if !self.shadowing(Mechanism::See) {
                            self.stats.see_quiet += 1;
                            continue;
                        }
                        move_probe.get_or_insert(surprise_cell(board, depth, alpha - eval));
                    }
                    if probe == Some(ProbeMode::Fh) && in_table && gated {
                        move_probe.get_or_insert(cell);
                    }
                } else if !quiet
                    && !checks
                    && self.cfg.see
                    && depth <= SEE_PRUNE_MAX_DEPTH
                    && !see_ge(board, mv, self.cfg.see_noisy * depth * depth)
                {
                    // SEE pruning of losing captures at low depth.
                    if !self.shadowing(Mechanism::See) {
                        self.stats.see_noisy += 1;
                        continue;
                    }
                    move_probe = Some(surprise_cell(board, depth, alpha - eval));
                }
            }

            // Step 13. Extensions: check, and singular (the hash move is the only good one:
            // +1; the node fails high even without it: multi-cut; it is not alone: -1).
            let gives_check = checks;
            let check_ext = (gives_check && ply < 2 * self.root_depth as usize) as i32;
            let mut ext = check_ext;
            // (Not while the laboratory calibrates, its probes count the plain search; except
            // when it calibrates multi-cut itself.)
            if self.cfg.singular
                && (probe.is_none() || self.shadowing(Mechanism::MultiCut))
                && !root
                && mv == tt_move
                && excluded == NULL_MOVE
                && depth >= SE_MIN_DEPTH
                && ply < 2 * self.root_depth as usize
                && let Some(e) = tte
                && e.depth >= depth - SE_TT_DEPTH_MARGIN
                && e.bound != Bound::Upper
                && e.score.abs() < MATE_BOUND
            {
                let s_beta = (e.score - SE_BETA_PER_DEPTH * depth).max(-MATE_BOUND);
                self.stack[ply].excluded = mv;
                let v = self.negamax::<false>(
                    ctx,
                    board,
                    s_beta - 1,
                    s_beta,
                    (depth - 1) / 2,
                    ply,
                    cut_node,
                );
                self.stack[ply].excluded = NULL_MOVE;
                if self.stopped {
                    return 0;
                }
                if v < s_beta {
                    ext = 1;
                } else if s_beta >= beta && self.shadowing(Mechanism::MultiCut) {
                    // Search anyway: does the node really fail high?
                    node_probe.get_or_insert(NodeProbe {
                        cell: surprise_cell(board, depth, s_beta - beta),
                        event_below_beta: true,
                    });
                } else if s_beta >= beta {
                    return s_beta;
                } else if e.score >= beta && check_ext == 0 {
                    ext = -1;
                }
            }
            // Step 14a. Make the move.
            let root_nodes_before = self.nodes;
            let mut child = board.clone();
            child.play_unchecked(mv);
            ctx.tt.prefetch(child.hash());
            self.stack[ply + 1].mat = self.stack[ply].mat.after(board, mv, piece);
            self.push_net_move(ply + 1, board, mv);
            let mut new_depth = depth - 1 + ext;
            self.stack[ply].moved = pt;
            self.keys.push(key);
            searched += 1;

            // Step 14. Principal variation search with late move reductions.
            let mut score = 0;
            let full_window_needed;
            // Checking sacrifices (losing captures that give check) are searched at full
            // depth: they are the tactics that decide WAC-style positions.
            if self.cfg.lmr
                && searched > 1
                && depth >= LMR_MIN_DEPTH
                && (quiet || (is_bad_noisy_score(order) && !gives_check))
            {
                let r = self.reduction(
                    depth,
                    searched,
                    PV,
                    improving,
                    cut_node,
                    hist_score,
                    match self.cfg.gate {
                        Gate::Strict => (quiet && !gated) as i32,
                        Gate::Classic => refutation as i32 + gives_check as i32,
                    },
                ) + (self.cfg.lmr_ttcap && quiet && tt_noisy) as i32;
                let reduced = (new_depth - r).clamp(1, new_depth.max(1));
                score =
                    -self.negamax::<false>(ctx, &child, -alpha - 1, -alpha, reduced, ply + 1, true);
                // Calibrating LMR: a reduced search that failed low is searched at full
                // depth anyway, and the probe records whether the full search disagreed.
                let recheck = score <= alpha
                    && reduced < new_depth
                    && self.shadowing(Mechanism::Lmr)
                    && !self.stopped;
                if recheck {
                    move_probe = Some(surprise_cell_plies(board, depth, new_depth - reduced));
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
                        &child,
                        -alpha - 1,
                        -alpha,
                        new_depth,
                        ply + 1,
                        !cut_node,
                    );
                }
                full_window_needed = PV && score > alpha && score < beta;
            } else if !PV || searched > 1 {
                score = -self.negamax::<false>(
                    ctx,
                    &child,
                    -alpha - 1,
                    -alpha,
                    new_depth,
                    ply + 1,
                    !cut_node,
                );
                full_window_needed = PV && score > alpha && score < beta;
            } else {
                full_window_needed = true;
            }
            if full_window_needed {
                score =
                    -self.negamax::<true>(ctx, &child, -beta, -alpha, new_depth, ply + 1, false);
            }
            self.keys.pop();
            if root {
                let spent = self.nodes - root_nodes_before;
                match self.root_nodes.iter_mut().find(|(m, _)| *m == mv) {
                    Some((_, n)) => *n += spent,
                    None => self.root_nodes.push((mv, spent)),
                }
            }
            if self.stopped {
                return 0;
            }
            if let Some(cell) = move_probe {
                self.probe_record(cell, score > alpha);
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
            let bonus = history_bonus(depth);
            if !is_tactical(board, best_move) {
                let pt = piece_to(
                    stm,
                    board.piece_on(best_move.from).unwrap_or(Piece::Pawn),
                    best_move.to as usize,
                );
                self.hist.update_quiet(stm, best_move, pt, cont, bonus);
                self.hist.set_killer(ply, best_move);
                self.hist.set_counter(cont[0], best_move);
                for &q in &quiets_tried[..n_quiets] {
                    let qp = piece_to(
                        stm,
                        board.piece_on(q.from).unwrap_or(Piece::Pawn),
                        q.to as usize,
                    );
                    self.hist.update_quiet(stm, q, qp, cont, -bonus);
                }
            } else {
                update_capture_history(&mut self.hist, board, best_move, bonus);
            }
            for &c in &noisy_tried[..n_noisy] {
                update_capture_history(&mut self.hist, board, c, -bonus);
            }
        }

        // Step 18. Store in the transposition table (not a search that left a move out).
        if (!root || self.root_excluded.is_empty()) && excluded == NULL_MOVE {
            let bound = if best >= beta {
                Bound::Lower
            } else if best > original_alpha {
                Bound::Exact
            } else {
                Bound::Upper
            };
            ctx.tt
                .store(key, best_move, best, raw_eval, depth, bound, ply);
            // Correction history learns from a quiet (or no) best move whose result the
            // bound says is on the far side of the static evaluation.
            if correct
                && !in_check
                && (best_move == NULL_MOVE || !is_tactical(board, best_move))
                && !(bound == Bound::Lower && best <= static_eval)
                && !(bound == Bound::Upper && best >= static_eval)
                && best.abs() < MATE_BOUND
            {
                self.hist.update_correction(
                    stm,
                    &corr_keys,
                    self.cfg.correction_all,
                    depth,
                    best - raw_eval,
                );
            }
        }
        self.settle(node_probe, best, alpha0, beta);
        best
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
        let mut picker = MovePicker::new(
            tt_move,
            [NULL_MOVE; 2],
            NULL_MOVE,
            !in_check,
            self.cfg.caphist_div,
        );
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
            self.push_net_move(ply + 1, board, mv);
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
pub fn uci_score(score: i32) -> String {
    if score >= MATE_BOUND {
        format!("mate {}", (MATE - score + 1) / 2)
    } else if score <= -MATE_BOUND {
        format!("mate -{}", (MATE + score) / 2)
    } else {
        format!("cp {score}")
    }
}

/// Side to move as a bool (for the time manager).
pub fn white_to_move(board: &Board) -> bool {
    board.side_to_move() == Color::White
}
