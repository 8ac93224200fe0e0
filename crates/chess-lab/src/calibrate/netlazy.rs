//! `actuary calibrate net-residual`: the network's lazy-exit margins (issue 34, item 3),
//! measured the way the hand evaluation's are.
//!
//! The pool is searched with the net and lazy exits off. At every evaluation the search asks
//! for with a window (quiescence's stand-pat, where an exit could happen) the probe records
//! the residual `net − super_lazy` in the cell of the per-side army buckets `(my, opp)`. The
//! table's margins are the `--tail` and `100 − tail` percentiles of each cell (cells with
//! fewer than `--min-samples` evaluations never exit), the median its positional estimate.
//!
//! `--check TABLE` measures a table on a pool instead (use one the table was not fitted on):
//! at every recorded evaluation, would the table have exited, and was the exit wrong (the net
//! on the other side of the bound it returned)? Rates per exit with Wilson and
//! position-clustered bootstrap intervals; the design's bound is 1 % on the hold-out pool.

use crate::calibrate::runner::RunOpts;
use crate::data::pool::{PoolPosition, PoolSearch, read_pool, search_pool};
use chess::board::Board;
use chess::eval::netlazy::{NET_TABLES_MAGIC, NEVER, NetCell, NetLazyMargins};
use chess::eval::{Material, side_bucket};
use chess::search::smp::SearchOptions;
use chess::search::{Probe, Worker};
use evidence::Wilson;
use evidence::clustered::{ClusterBootstrapConfig, clustered_rate};
use std::fmt::Write as _;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

/// Residuals beyond this are clamped into the end bins (they only ever widen a margin).
const RANGE: i32 = 2000;
const BINS: usize = (2 * RANGE + 1) as usize;

/// `actuary calibrate net-residual`.
#[derive(Debug, clap::Args)]
pub struct NetResidualArgs {
    #[command(flatten)]
    pub run: RunOpts,
    /// Percent of each cell's residuals beyond each margin (the low margin is this
    /// percentile, the high one `100 −` it).
    #[arg(long, value_name = "PCT", default_value_t = 0.5, value_parser = parse_tail)]
    pub tail: f64,
    /// Fewest evaluations a bucket pair needs to get margins (fewer: it never exits).
    #[arg(long, value_name = "N", default_value_t = 2000)]
    pub min_samples: u64,
    /// Measure this table's exits on the pool instead of fitting one.
    #[arg(long, value_name = "TABLE", conflicts_with = "out")]
    pub check: Option<PathBuf>,
    /// The table file to write (atomically) [default: print it].
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
}

fn parse_tail(s: &str) -> Result<f64, String> {
    s.parse::<f64>()
        .ok()
        .filter(|t| *t > 0.0 && *t < 50.0)
        .ok_or_else(|| format!("'{s}' is not a percent in (0, 50)"))
}

/// Why a net-residual run failed.
#[derive(Debug, thiserror::Error)]
pub enum NetResidualError {
    #[error(transparent)]
    Pool(#[from] crate::data::pool::PoolError),
    #[error(transparent)]
    Tables(#[from] chess::eval::netlazy::NetTablesError),
    #[error(transparent)]
    Evidence(#[from] evidence::EvidenceError),
}

/// One thread's recorder: a residual histogram per bucket pair, and (with a table to check)
/// the exits it would have taken and the wrong ones, for the position being searched.
pub struct NetProbe {
    /// `[my * 8 + opp][residual + RANGE]`.
    pub hist: Vec<Vec<u64>>,
    check: Option<Arc<NetLazyMargins>>,
    /// This position's (wrong exits, exits).
    pub position: (u64, u64),
    /// Exits whose returned bound the net broke (all positions).
    pub violated: u64,
}

impl NetProbe {
    pub fn new(check: Option<Arc<NetLazyMargins>>) -> Self {
        Self {
            hist: vec![vec![0; BINS]; 64],
            check,
            position: (0, 0),
            violated: 0,
        }
    }
}

impl Probe for NetProbe {
    #[inline]
    fn observe_net_eval(&mut self, board: &Board, mat: &Material, net: i32, alpha: i32, beta: i32) {
        let sl = chess::eval::super_lazy_score(board, mat);
        let stm = board.side_to_move();
        let (my, opp) = (side_bucket(mat.army(stm)), side_bucket(mat.army(!stm)));
        let r = (net - sl).clamp(-RANGE, RANGE);
        self.hist[my * 8 + opp][(r + RANGE) as usize] += 1;
        if let Some(t) = &self.check
            && let Some(out) = t.exit(my, opp, sl, alpha, beta)
        {
            // A fail-high exit (bound ≥ beta) decides wrongly when the net is below beta, a
            // fail-low one (bound ≤ alpha) when the net is above alpha. Its bound (the
            // stand-pat the search goes on with) is violated in those cases and also when
            // the net lies between the window and the bound.
            let (wrong, violated) = if out.score >= beta {
                (net < beta, net < out.score)
            } else {
                (net > alpha, net > out.score)
            };
            self.position.0 += u64::from(wrong);
            self.position.1 += 1;
            self.violated += u64::from(violated);
        }
    }
}

/// The `q`-quantile (0..=1) of a histogram, cp (nearest rank).
fn quantile(h: &[u64], q: f64) -> i32 {
    let n: u64 = h.iter().sum();
    if n == 0 {
        return 0;
    }
    let rank = ((q * n as f64).ceil() as u64).clamp(1, n);
    let mut seen = 0;
    for (i, &c) in h.iter().enumerate() {
        seen += c;
        if seen >= rank {
            return i as i32 - RANGE;
        }
    }
    RANGE
}

/// The table of `hist` (64 cells) at `tail` percent.
pub fn fit(
    hist: &[Vec<u64>],
    tail: f64,
    min_samples: u64,
    comments: Vec<String>,
) -> NetLazyMargins {
    let mut cells = [[NetCell::NEVER_EXITS; 8]; 8];
    for my in 0..8 {
        for opp in 0..8 {
            let h = &hist[my * 8 + opp];
            let n: u64 = h.iter().sum();
            cells[my][opp] = if n < min_samples {
                NetCell {
                    samples: n,
                    ..NetCell::NEVER_EXITS
                }
            } else {
                let lo = quantile(h, tail / 100.0);
                let hi = quantile(h, 1.0 - tail / 100.0);
                // A margin at the histogram's clamp is no measurement: never exit there.
                NetCell {
                    lo: if lo <= -RANGE { -NEVER } else { lo },
                    p50: quantile(h, 0.5),
                    hi: if hi >= RANGE { NEVER } else { hi },
                    samples: n,
                }
            };
        }
    }
    NetLazyMargins { cells, comments }
}

/// What one pool run measured.
pub struct NetRun {
    pub hist: Vec<Vec<u64>>,
    /// Per position: (wrong exits, exits).
    pub positions: Vec<(u64, u64)>,
    /// Exits whose returned bound the net broke.
    pub violated: u64,
    pub nodes: u64,
    pub seconds: f64,
}

/// Search the pool with the net (lazy exits off), recording every windowed evaluation.
pub fn run(
    positions: &[PoolPosition],
    run: &RunOpts,
    check: Option<Arc<NetLazyMargins>>,
) -> NetRun {
    let start = Instant::now();
    let opts = SearchOptions::default();
    let how = PoolSearch {
        depth: run.depth,
        threads: run.threads as usize,
        hash_mb: run.hash as usize,
        progress: !run.quiet,
        opts: &opts,
    };
    let (done, nodes) = search_pool(
        positions,
        &how,
        || {
            (
                Worker::with_probe(0, NetProbe::new(check.clone())),
                Vec::new(),
            )
        },
        |w, _, _| w.probe.position = (0, 0),
        |w, mine: &mut Vec<(u64, u64)>, _| mine.push(w.probe.position),
    );
    let mut hist = vec![vec![0u64; BINS]; 64];
    let mut per_position = Vec::new();
    let mut violated = 0;
    for (w, mine) in done {
        violated += w.probe.violated;
        for (a, b) in hist.iter_mut().zip(&w.probe.hist) {
            for (x, y) in a.iter_mut().zip(b) {
                *x += y;
            }
        }
        per_position.extend(mine);
    }
    NetRun {
        hist,
        positions: per_position,
        violated,
        nodes,
        seconds: start.elapsed().as_secs_f64(),
    }
}

impl NetResidualArgs {
    pub fn run(&self) -> Result<(), NetResidualError> {
        let positions = read_pool(&self.run.pool, self.run.limit.map(|l| l as usize))?;
        let check = match &self.check {
            Some(p) => Some(Arc::new(NetLazyMargins::load(p)?)),
            None => None,
        };
        let r = run(&positions, &self.run, check);
        let evals: u64 = r.hist.iter().flatten().sum();
        let provenance = format!(
            "pool {} ({} positions), depth {}, {} nodes, {:.0} s on {} thread(s), evaluation {}, lazy exits off; {} windowed evaluations",
            self.run.pool.display(),
            positions.len(),
            self.run.depth,
            r.nodes,
            r.seconds,
            self.run.threads,
            chess::nnue::embedded_id(),
            evals
        );
        if let Some(p) = &self.check {
            let (wrong, exits) = r
                .positions
                .iter()
                .fold((0, 0), |(k, n), &(a, b)| (k + a, n + b));
            let w = Wilson::two_sided_95(wrong, exits);
            let c = clustered_rate(&r.positions, ClusterBootstrapConfig::default())?;
            println!(
                "# Net lazy exits of {} on {}\n\n`{}`\n\nexits {} of {} windowed evaluations ({:.2} %); wrong {} = {:.3} % (Wilson 95 % {:.3}–{:.3} %, clustered 95 % {:.3}–{:.3} %, {} positions with exits); the returned bound broken (the net between the window and the bound, or wrong) {} = {:.3} %",
                p.display(),
                provenance,
                crate::calibrate::probe::command_line(),
                exits,
                evals,
                100.0 * exits as f64 / evals.max(1) as f64,
                wrong,
                100.0 * w.estimate,
                100.0 * w.lower,
                100.0 * w.upper,
                100.0 * c.lower,
                100.0 * c.upper,
                c.clusters_with_trials,
                r.violated,
                100.0 * r.violated as f64 / exits.max(1) as f64
            );
            return Ok(());
        }
        let comments = vec![
            "Generated by `actuary calibrate net-residual`; do not edit (re-run the command)."
                .to_string(),
            format!("command: {}", crate::calibrate::probe::command_line()),
            provenance,
            format!(
                "lo, hi: the {}th and {}th percentiles of net − super-lazy per (my, opp) army bucket pair; p50 the median; cells under {} samples never exit (±{NEVER})",
                self.tail,
                100.0 - self.tail,
                self.min_samples
            ),
        ];
        let table = fit(&r.hist, self.tail, self.min_samples, comments);
        let text = table.to_text();
        debug_assert!(text.starts_with(NET_TABLES_MAGIC));
        match &self.out {
            Some(p) => {
                evidence::io::atomic_write(p, text.as_bytes())?;
                eprintln!("wrote {}", p.display());
            }
            None => print!("{text}"),
        }
        let mut s = String::new();
        let _ = writeln!(
            s,
            "cells with margins: {}",
            table
                .cells
                .iter()
                .flatten()
                .filter(|c| c.hi < NEVER)
                .count()
        );
        eprint!("{s}");
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hist_of(values: &[i32]) -> Vec<u64> {
        let mut h = vec![0; BINS];
        for &v in values {
            h[(v.clamp(-RANGE, RANGE) + RANGE) as usize] += 1;
        }
        h
    }

    #[test]
    fn quantiles_are_nearest_rank() {
        let v: Vec<i32> = (1..=100).collect();
        let h = hist_of(&v);
        assert_eq!(quantile(&h, 0.01), 1);
        assert_eq!(quantile(&h, 0.5), 50);
        assert_eq!(quantile(&h, 0.99), 99);
        assert_eq!(quantile(&h, 1.0), 100);
        assert_eq!(quantile(&vec![0; BINS], 0.5), 0);
    }

    #[test]
    fn fitted_cells_bound_all_but_the_tails_and_thin_cells_never_exit() {
        let mut hist = vec![vec![0u64; BINS]; 64];
        // Cell (2, 3): residuals −300..=300 in steps of 1, 601 samples.
        hist[2 * 8 + 3] = hist_of(&(-300..=300).collect::<Vec<_>>());
        // Cell (0, 0): too few samples.
        hist[0] = hist_of(&[5, 6, 7]);
        // Cell (7, 7): a tail at the clamp is no measurement.
        hist[63] = hist_of(&[-5000; 1000]);
        let t = fit(&hist, 1.0, 100, vec![]);
        let c = t.cells[2][3];
        // Nearest rank of 601 values: the 7th (ceil 6.01) and the 595th (ceil 594.99).
        assert_eq!((c.lo, c.p50, c.hi, c.samples), (-294, 0, 294, 601));
        assert_eq!(t.cells[0][0].hi, NEVER);
        assert_eq!(t.cells[0][0].samples, 3);
        assert_eq!(t.cells[7][7].lo, -NEVER);
        // The table it writes is one the engine reads back.
        let back = NetLazyMargins::from_text(&t.to_text()).unwrap();
        assert_eq!(back.cells, t.cells);
    }

    /// On a tiny pool: every windowed evaluation is recorded, and a table whose margins are
    /// zero (the net equals the super-lazy score) exits and is often wrong, while a table
    /// that never exits takes no exit.
    #[test]
    fn the_probe_sees_the_search_and_check_counts_wrong_exits() {
        let pool: Vec<PoolPosition> = [
            "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3",
            "r3k2r/pp1n1ppp/2p1pn2/q7/1bPP4/2N1PN2/PP1B1PPP/R2QKB1R w KQkq - 0 10",
        ]
        .iter()
        .enumerate()
        .map(|(i, f)| PoolPosition {
            line: i + 1,
            board: f.parse().unwrap(),
        })
        .collect();
        let opts = RunOpts {
            pool: PathBuf::from("<tiny>"),
            depth: 5,
            threads: 1,
            limit: None,
            hash: 4,
            tables: None,
            quiet: true,
        };
        let zero = NetLazyMargins {
            cells: [[NetCell {
                lo: 0,
                p50: 0,
                hi: 0,
                samples: 1,
            }; 8]; 8],
            comments: vec![],
        };
        let r = run(&pool, &opts, Some(Arc::new(zero)));
        let evals: u64 = r.hist.iter().flatten().sum();
        assert!(evals > 100, "{evals}");
        let (wrong, exits) = r
            .positions
            .iter()
            .fold((0, 0), |(k, n), &(a, b)| (k + a, n + b));
        assert!(exits > 0 && wrong > 0 && wrong < exits, "{wrong}/{exits}");
        // A broken bound includes every wrong decision.
        assert!(r.violated >= wrong && r.violated <= exits, "{}", r.violated);
        let never = NetLazyMargins {
            cells: [[NetCell::NEVER_EXITS; 8]; 8],
            comments: vec![],
        };
        let r2 = run(&pool, &opts, Some(Arc::new(never)));
        assert_eq!(r2.positions.iter().map(|p| p.1).sum::<u64>(), 0);
        // Lazy exits are off in calibration runs: the tree does not depend on the table.
        assert_eq!(r.nodes, r2.nodes);
    }
}
