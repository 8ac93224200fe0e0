//! Iterative deepening, aspiration windows, MultiPV, and Lazy SMP: every thread runs the
//! same iterative deepening on its own copy of the position; they cooperate only through
//! the shared transposition table. The main thread (id 0) owns the clock and the output.

use super::params::*;
use super::time::{Limits, TimeManager};
use super::tt::Tt;
use super::{Probe, RootLine, SharedCtx, Worker, uci_score};
use crate::board::{Move, NULL_MOVE, Position, legal_moves, move_to_uci_with};
use crate::eval::LazyMargins;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};

/// Result of a whole search.
#[derive(Clone, Debug, Default)]
pub struct SearchResult {
    pub best_move: Option<Move>,
    pub ponder: Option<Move>,
    pub score: i32,
    pub depth: i32,
    pub seldepth: usize,
    pub nodes: u64,
    pub qnodes: u64,
    pub time_ms: u64,
    /// Total nodes (all threads) when each iteration finished, index = depth - 1.
    pub iteration_nodes: Vec<u64>,
    pub lines: Vec<RootLine>,
    /// Evaluation calls decided by each tier (super-lazy, lazy, full), all threads.
    pub exits: [u64; 3],
    /// How often each pruning rule fired, all threads.
    pub prunes: super::PruneStats,
    /// Threads that searched (fewer than the workers when a helper could not be spawned).
    pub threads: usize,
}

impl SearchResult {
    /// Effective branching factor of the last two completed iterations.
    pub(crate) fn ebf(&self) -> Option<f64> {
        let n = self.iteration_nodes.len();
        if n < 2 {
            return None;
        }
        let last = self.iteration_nodes[n - 1] - self.iteration_nodes[n - 2];
        let prev = if n >= 3 {
            self.iteration_nodes[n - 2] - self.iteration_nodes[n - 3]
        } else {
            self.iteration_nodes[0]
        };
        (prev > 0).then(|| last as f64 / prev as f64)
    }
}

/// Search options that are not part of `go`.
#[derive(Clone, Debug)]
pub struct SearchOptions {
    pub multipv: usize,
    pub move_overhead_ms: u64,
    /// Print UCI `info` lines.
    pub verbose: bool,
    /// Lazy evaluation exits with these margins (UCI `LazyEval`); `None` = off.
    pub lazy: Option<Arc<LazyMargins>>,
    /// The learned evaluation (UCI `Eval nnue`, the default: the embedded net); `None` = the
    /// hand evaluation (UCI `Eval hce`).
    pub net: Option<Arc<crate::nnue::Network>>,
    /// The network's lazy exits (UCI `LazyEval` with `Eval nnue`); `None` = off.
    pub net_lazy: Option<Arc<crate::eval::netlazy::NetLazyMargins>>,
    /// Pruning switches and tables (UCI `prune.*` options, tools' `--set`).
    pub prune: super::prune::PruneConfig,
    /// `go ponder`: no limit applies until the UCI loop sets this (`ponderhit`).
    pub ponder: Option<super::time::PonderHit>,
    /// `UCI_Chess960`: castling moves in `info ... pv` are written king-takes-rook.
    pub chess960: bool,
}

impl Default for SearchOptions {
    fn default() -> Self {
        Self {
            multipv: 1,
            move_overhead_ms: DEFAULT_MOVE_OVERHEAD_MS,
            verbose: false,
            lazy: None,
            net: Some(crate::nnue::Network::embedded()),
            net_lazy: None,
            prune: super::prune::PruneConfig::default(),
            ponder: None,
            chess960: false,
        }
    }
}

/// `super-lazy X% lazy Y% full Z% (N evals)`: the exit breakdown of `exits`.
pub fn exit_breakdown(exits: &[u64; 3]) -> String {
    let n: u64 = exits.iter().sum();
    let pct = |k: u64| 100.0 * k as f64 / n.max(1) as f64;
    format!(
        "super-lazy {:.1}% lazy {:.1}% full {:.1}% ({n} evals)",
        pct(exits[0]),
        pct(exits[1]),
        pct(exits[2])
    )
}

/// Run a search with `workers.len()` threads (the calling thread is the main one).
/// Returns when the limits are reached or `stop` is set; in `infinite` mode it keeps the
/// answer until `stop` arrives, as UCI requires.
pub fn search<P: Probe + Send>(
    pos: &Position,
    limits: &Limits,
    opts: &SearchOptions,
    workers: &mut [Worker<P>],
    tt: &Tt,
    stop: &AtomicBool,
) -> SearchResult {
    tt.new_search();
    let node_counters: Vec<AtomicU64> = (0..workers.len()).map(|_| AtomicU64::new(0)).collect();
    let ctx = SharedCtx {
        tt,
        stop,
        nodes: &node_counters,
        time: TimeManager::new(
            limits,
            super::white_to_move(&pos.board),
            opts.move_overhead_ms,
        )
        .pondering(opts.ponder.clone()),
        node_limit: limits.nodes,
    };
    let (main, helpers) = workers.split_first_mut().expect("at least one worker");
    let result = std::thread::scope(|s| {
        // A helper that cannot be spawned (no memory for its stack, a thread limit) is not
        // an error: the search goes on with the threads that started, and says how many.
        let mut started = 1;
        for w in helpers.iter_mut() {
            let ctx = &ctx;
            let spawned = std::thread::Builder::new()
                .stack_size(64 << 20)
                .spawn_scoped(s, move || {
                    iterate(w, ctx, pos, limits, opts);
                });
            if spawned.is_err() {
                break;
            }
            started += 1;
        }
        let mut r = iterate(main, &ctx, pos, limits, opts);
        r.threads = started;
        // Infinite searches must not answer before `stop`, ponder searches not before
        // `ponderhit` or `stop`.
        while (limits.infinite || ctx.time.is_pondering()) && !stop.load(Relaxed) {
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        stop.store(true, Relaxed);
        r
    });
    let mut result = result;
    // Only the threads that ran (a helper that could not start holds an older search's counts).
    for w in workers.iter().take(result.threads) {
        for (a, b) in result.exits.iter_mut().zip(w.exits) {
            *a += b;
        }
        result.prunes.add(&w.stats);
    }
    result.nodes = node_counters
        .iter()
        .map(|n| n.load(Relaxed))
        .sum::<u64>()
        .max(result.nodes);
    result
}

fn publish<P: Probe>(w: &Worker<P>, ctx: &SharedCtx) {
    ctx.nodes[w.id].store(w.nodes, Relaxed);
}

/// Iterative deepening on one thread.
fn iterate<P: Probe>(
    w: &mut Worker<P>,
    ctx: &SharedCtx,
    pos: &Position,
    limits: &Limits,
    opts: &SearchOptions,
) -> SearchResult {
    // The net first: resetting sets up its accumulators for the root.
    w.net = opts.net.clone();
    w.reset_for_search(&pos.history, &pos.board);
    w.lazy = opts.lazy.clone();
    w.net_lazy = opts.net_lazy.clone();
    w.prepare(opts.prune.clone());
    let board = &pos.board;
    let mut result = SearchResult::default();
    let mut root_moves = legal_moves(board);
    // `go searchmoves`: the other root moves are skipped the way MultiPV skips the
    // lines it already has (`root_excluded`, refilled every iteration).
    let mut outside = Vec::new();
    if !limits.searchmoves.is_empty() {
        (root_moves, outside) = root_moves
            .into_iter()
            .partition(|m| limits.searchmoves.contains(m));
    }
    if root_moves.is_empty() {
        publish(w, ctx);
        return result;
    }
    // A move to play even if the very first iteration is interrupted.
    result.best_move = Some(root_moves[0]);
    let multipv = opts.multipv.clamp(1, root_moves.len());
    let max_depth = limits
        .depth
        .unwrap_or(MAX_PLY as i32 - 4)
        .clamp(1, MAX_PLY as i32 - 4);
    let mut lines: Vec<RootLine> = vec![RootLine::default(); multipv];
    let mut stable = 0;
    let mut prev_best = NULL_MOVE;

    for depth in 1..=max_depth {
        w.root_depth = depth;
        w.seldepth = 0;
        w.root_excluded.clear();
        w.root_excluded.extend_from_slice(&outside);
        for line in lines.iter_mut().take(multipv) {
            let mut delta = w.cfg.tune.aspiration_delta;
            let (mut alpha, mut beta) = if depth >= ASPIRATION_MIN_DEPTH {
                (
                    (line.score - delta).max(-INFINITE),
                    (line.score + delta).min(INFINITE),
                )
            } else {
                (-INFINITE, INFINITE)
            };
            let score = loop {
                let s = w.negamax::<true>(ctx, board, alpha, beta, depth, 0, false);
                if w.stopped {
                    break s;
                }
                if s <= alpha {
                    beta = (alpha + beta) / 2;
                    alpha = (s - delta).max(-INFINITE);
                } else if s >= beta {
                    beta = (s + delta).min(INFINITE);
                } else {
                    break s;
                }
                delta += delta / 2 + 5;
                if delta > 1000 {
                    alpha = -INFINITE;
                    beta = INFINITE;
                }
            };
            if w.stopped {
                break;
            }
            line.score = score;
            line.pv = w.pv[0][..w.pv_len[0]].to_vec();
            if let Some(&m) = line.pv.first() {
                w.root_excluded.push(m);
            } else {
                break;
            }
        }
        if w.stopped {
            break;
        }
        w.completed_depth = depth;
        // Keep lines ordered by score for MultiPV output.
        lines.sort_by_key(|l| std::cmp::Reverse(l.score));
        publish(w, ctx);
        let total = ctx.total_nodes();
        result.iteration_nodes.push(total);
        result.depth = depth;
        result.seldepth = w.seldepth;
        result.score = lines[0].score;
        result.best_move = lines[0].pv.first().copied().or(result.best_move);
        result.ponder = lines[0].pv.get(1).copied();
        result.lines = lines.clone();
        if w.is_main() && opts.verbose {
            let ms = ctx.time.elapsed_ms();
            let nps = total * 1000 / ms.max(1);
            for (i, line) in lines.iter().enumerate() {
                let pv: Vec<String> = pv_to_uci(board, &line.pv, opts.chess960);
                println!(
                    "info depth {depth} seldepth {} multipv {} score {} nodes {total} nps {nps} hashfull {} time {ms} pv {}",
                    w.seldepth,
                    i + 1,
                    uci_score(line.score),
                    ctx.tt.hashfull(),
                    pv.join(" ")
                );
            }
        }
        if !w.is_main() {
            continue;
        }
        // Stop conditions between iterations (main thread only).
        let best = lines[0].pv.first().copied().unwrap_or(NULL_MOVE);
        if best == prev_best {
            stable += 1;
        } else {
            stable = 0;
        }
        prev_best = best;
        let scale = match stable {
            0 => 1.5,
            1 => 1.1,
            2..=3 => 0.9,
            _ => 0.6,
        };
        if ctx.time.is_timed()
            && (root_moves.len() == 1 && depth >= 6 || ctx.time.soft_exceeded(scale))
        {
            break;
        }
        if lines[0].score.abs() >= MATE_BOUND && depth >= 12 && ctx.time.is_timed() {
            break;
        }
        if limits.nodes.is_some_and(|n| total >= n) || limits.soft_nodes.is_some_and(|n| total >= n)
        {
            break;
        }
    }
    // The caller (`search`) raises the stop flag for the helpers once the answer may be
    // given; doing it here would end an `infinite` search before the GUI says `stop`.
    publish(w, ctx);
    result.nodes = w.nodes;
    result.qnodes = w.qnodes;
    result.time_ms = ctx.time.elapsed_ms();
    result
}

/// UCI strings of a PV (castling king-takes-rook when `chess960`), stopping at the first
/// move that is not legal (defensive).
pub(crate) fn pv_to_uci(board: &crate::board::Board, pv: &[Move], chess960: bool) -> Vec<String> {
    let mut b = board.clone();
    let mut out = Vec::with_capacity(pv.len());
    for &m in pv {
        if !b.is_legal(m) {
            break;
        }
        out.push(move_to_uci_with(&b, m, chess960));
        b.play_unchecked(m);
    }
    out
}
