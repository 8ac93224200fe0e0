//! Pruning calibration probes (issue 14): what a search worker records while `actuary
//! collect` or `actuary calibrate surprise` runs. The search decides *where* a probe fires and
//! whether its event happened ([`chess::search::prune::ProbeMode`]); this module only counts,
//! per cell and per pool position, so every rate can be bounded by Wilson (nodes as draws)
//! and by the position-clustered bootstrap (positions as draws: one tree is one cluster).

use crate::calibrate::runner::RunOpts;
use crate::data::pool::{PoolPosition, PoolSearch, search_pool};
use chess::search::Worker;
use chess::search::prune::{self, FH_CELLS, ProbeMode, PruneConfig, RFP_CELLS};
use chess::search::smp::SearchOptions;
use std::path::PathBuf;
use std::time::Instant;

use chess::search::Probe;
use chess::search::prune::SURPRISE_CELLS;

/// Counts of one cell: trials and events.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CellCount {
    pub n: u64,
    pub k: u64,
}

/// What one pool position contributed: its non-empty cells.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PositionCells {
    pub index: usize,
    pub line: usize,
    pub nodes: u64,
    pub cells: Vec<(u32, CellCount)>,
}

/// The recorder a worker carries during a pruning calibration run.
#[derive(Clone, Debug)]
pub struct CellProbe {
    pub mode: ProbeMode,
    current: Vec<CellCount>,
    touched: Vec<u32>,
    index: usize,
    line: usize,
}

/// Cells of a mode's table.
pub fn cells_of(mode: ProbeMode) -> usize {
    match mode {
        ProbeMode::Fh => FH_CELLS,
        ProbeMode::Rfp => RFP_CELLS,
        ProbeMode::Surprise(_) => SURPRISE_CELLS,
    }
}

impl CellProbe {
    pub fn new(mode: ProbeMode) -> Self {
        Self {
            mode,
            current: vec![CellCount::default(); cells_of(mode)],
            touched: Vec::new(),
            index: 0,
            line: 0,
        }
    }

    /// Start recording pool position `index` (from file line `line`).
    pub fn begin(&mut self, index: usize, line: usize) {
        self.index = index;
        self.line = line;
    }

    #[inline]
    pub fn record(&mut self, cell: usize, event: bool) {
        let c = &mut self.current[cell];
        if c.n == 0 {
            self.touched.push(cell as u32);
        }
        c.n += 1;
        c.k += event as u64;
    }

    /// The finished position's cells (sorted), and a clean slate for the next.
    pub fn finish(&mut self, nodes: u64) -> PositionCells {
        self.touched.sort_unstable();
        let cells = self
            .touched
            .drain(..)
            .map(|c| {
                let v = std::mem::take(&mut self.current[c as usize]);
                (c, v)
            })
            .collect();
        PositionCells {
            index: self.index,
            line: self.line,
            nodes,
            cells,
        }
    }
}

impl Probe for CellProbe {
    #[inline]
    fn mode(&self) -> Option<ProbeMode> {
        Some(self.mode)
    }
    #[inline]
    fn record(&mut self, cell: usize, event: bool) {
        CellProbe::record(self, cell, event);
    }
}

/// Pool totals per cell.
pub fn totals(records: &[PositionCells], cells: usize) -> Vec<CellCount> {
    let mut t = vec![CellCount::default(); cells];
    for r in records {
        for &(c, v) in &r.cells {
            t[c as usize].n += v.n;
            t[c as usize].k += v.k;
        }
    }
    t
}

// ----- The probe runner: a pool searched with one mechanism probed ------------------------

/// The static evaluation a calibration search uses (UCI `Eval`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum EvalChoice {
    /// The embedded network (the engine's default).
    Nnue,
    /// The hand-written evaluation.
    Hce,
}

impl EvalChoice {
    /// The search options' network for this choice.
    pub fn net(self) -> Option<std::sync::Arc<chess::nnue::Network>> {
        match self {
            EvalChoice::Nnue => Some(chess::nnue::Network::embedded()),
            EvalChoice::Hce => None,
        }
    }

    /// How reports name it: the hand evaluation's identity (its weights), or the embedded
    /// net's.
    pub fn describe(self) -> String {
        match self {
            EvalChoice::Nnue => chess::nnue::embedded_id(),
            EvalChoice::Hce => chess::eval::params::embedded_id(),
        }
    }
}

/// Why a collection could not run.
#[derive(Debug, thiserror::Error)]
pub enum CollectError {
    #[error(transparent)]
    Pool(#[from] crate::data::pool::PoolError),
    #[error("--set: {0}")]
    Switch(String),
    /// A bad argument or input file other than `--set` (the message names it).
    #[error("{0}")]
    Input(String),
    #[error(transparent)]
    Tables(#[from] prune::PruneTableError),
    #[error(transparent)]
    Evidence(#[from] evidence::io::EvidenceError),
    #[error("cannot create {}: {source}", path.display())]
    Dir {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

pub(crate) fn config(set: &str) -> Result<PruneConfig, CollectError> {
    let mut c = PruneConfig::default();
    c.set_all(set).map_err(CollectError::Switch)?;
    Ok(c)
}

// ----- The probe runner ----------------------------------------------------------------------

/// What a probe run measured: one record per position in pool order (or, for the tables,
/// one folded record per thread), total nodes, seconds.
pub struct ProbeRun {
    pub records: Vec<PositionCells>,
    pub nodes: u64,
    pub seconds: f64,
}

/// Search every position with a probe of `mode` and the switches `cfg`. Surprise runs keep
/// every position's counts (the clustered bootstrap resamples them); table runs fold them.
pub fn run_probe(
    positions: &[PoolPosition],
    run: &RunOpts,
    cfg: &PruneConfig,
    eval: EvalChoice,
    mode: ProbeMode,
) -> ProbeRun {
    let keep_positions = matches!(mode, ProbeMode::Surprise(_));
    let start = Instant::now();
    let opts = SearchOptions {
        prune: cfg.clone(),
        net: eval.net(),
        ..Default::default()
    };
    let how = PoolSearch {
        depth: run.depth,
        threads: run.threads as usize,
        hash_mb: run.hash as usize,
        progress: !run.quiet,
        opts: &opts,
    };
    // Per thread: the positions' records (surprise runs) or the folded counts (tables).
    let (done, nodes) = search_pool(
        positions,
        &how,
        || {
            let w = Worker::with_probe(0, CellProbe::new(mode));
            let folded = vec![CellCount::default(); crate::calibrate::probe::cells_of(mode)];
            (w, (Vec::new(), folded))
        },
        |w, i, p| w.probe.begin(i, p.line),
        |w, (mine, folded): &mut (Vec<PositionCells>, Vec<CellCount>), nodes| {
            let rec = w.probe.finish(nodes);
            if keep_positions {
                mine.push(rec);
            } else {
                // Tables need only the totals: fold, keep memory flat.
                for (c, v) in rec.cells {
                    folded[c as usize].n += v.n;
                    folded[c as usize].k += v.k;
                }
            }
        },
    );
    let mut records = Vec::with_capacity(positions.len());
    for (_, (mine, folded)) in done {
        records.extend(mine);
        if !keep_positions {
            records.push(PositionCells {
                index: usize::MAX,
                line: 0,
                nodes: 0,
                cells: folded
                    .iter()
                    .enumerate()
                    .filter(|(_, c)| c.n > 0)
                    .map(|(i, &c)| (i as u32, c))
                    .collect(),
            });
        }
    }
    records.sort_by_key(|r| r.index);
    ProbeRun {
        records,
        nodes,
        seconds: start.elapsed().as_secs_f64(),
    }
}

/// The command as typed (arguments with spaces quoted), for provenance lines.
/// The program is written `actuary` whatever path ran it, so the line can be re-run as given.
pub(crate) fn command_line() -> String {
    std::env::args()
        .enumerate()
        .map(|(i, a)| match i {
            0 => "actuary".to_string(),
            _ if a.contains(' ') => format!("'{a}'"),
            _ => a,
        })
        .collect::<Vec<_>>()
        .join(" ")
}

pub(crate) fn emit(out: &Option<PathBuf>, text: &str) -> Result<(), CollectError> {
    match out {
        Some(p) => {
            evidence::io::atomic_write(p, text.as_bytes())?;
            eprintln!("wrote {}", p.display());
        }
        None => print!("{text}"),
    }
    Ok(())
}

pub(crate) fn provenance(
    run: &RunOpts,
    n_pos: usize,
    r: &ProbeRun,
    cfg: &PruneConfig,
    eval: EvalChoice,
) -> String {
    format!(
        "# pool {} ({} positions), depth {}, {} nodes, {:.0} s on {} thread(s); evaluation {}; switches: {}\n",
        run.pool.display(),
        n_pos,
        run.depth,
        r.nodes,
        r.seconds,
        run.threads,
        eval.describe(),
        cfg.describe()
    )
}

/// The pool and options the calibrations' tests search.
#[cfg(test)]
pub(crate) mod fixtures {
    use crate::calibrate::probe::CellCount;
    use crate::calibrate::runner::RunOpts;
    use crate::data::pool::PoolPosition;
    use std::path::PathBuf;

    pub(crate) fn cc(n: u64, k: u64) -> CellCount {
        CellCount { n, k }
    }

    pub(crate) fn tiny_pool() -> Vec<PoolPosition> {
        [
            "r1bqkb1r/pppp1ppp/2n2n2/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 4 4",
            "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
            "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
            "2rq1rk1/pp1bppbp/3p1np1/4n3/3NP3/1BN1BP2/PPPQ2PP/2KR3R w - - 0 12",
        ]
        .iter()
        .enumerate()
        .map(|(i, f)| PoolPosition {
            line: i + 1,
            board: f.parse().unwrap(),
        })
        .collect()
    }

    pub(crate) fn opts(depth: i32) -> RunOpts {
        RunOpts {
            pool: PathBuf::from("<tiny>"),
            depth,
            threads: 1,
            limit: None,
            hash: 4,
            tables: None,
            quiet: true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::calibrate::probe::fixtures::{opts, tiny_pool};
    use chess::search::prune::Mechanism;

    /// `--eval hce` searches with the hand evaluation: another tree than the net's (a choice
    /// the probe ignored would search the same nodes), and shadowing still prunes nothing.
    #[test]
    fn the_evaluation_choice_reaches_the_search() {
        let pool = tiny_pool();
        let on = PruneConfig::default();
        let m = Mechanism::Rfp;
        let net = run_probe(
            &pool,
            &opts(6),
            &on,
            EvalChoice::Nnue,
            ProbeMode::Surprise(m),
        );
        let hce = run_probe(
            &pool,
            &opts(6),
            &on,
            EvalChoice::Hce,
            ProbeMode::Surprise(m),
        );
        assert_ne!(net.nodes, hce.nodes);
        let plain = run_probe(
            &pool,
            &opts(6),
            &config("rfp=off").unwrap(),
            EvalChoice::Hce,
            ProbeMode::Surprise(m),
        );
        assert_eq!(hce.nodes, plain.nodes);
        assert!(EvalChoice::Hce.describe().starts_with("hce:"));
        assert!(EvalChoice::Nnue.describe().starts_with("nnue:"));
    }

    #[test]
    fn records_per_position_and_resets() {
        let mut p = CellProbe::new(ProbeMode::Surprise(Mechanism::Rfp));
        p.begin(3, 10);
        p.record(5, true);
        p.record(5, false);
        p.record(2, false);
        let r = p.finish(100);
        assert_eq!(r.index, 3);
        assert_eq!(r.line, 10);
        assert_eq!(
            r.cells,
            vec![(2, CellCount { n: 1, k: 0 }), (5, CellCount { n: 2, k: 1 })]
        );
        p.begin(4, 11);
        p.record(5, false);
        let r2 = p.finish(7);
        assert_eq!(r2.cells, vec![(5, CellCount { n: 1, k: 0 })]);
        let t = totals(&[r, r2], SURPRISE_CELLS);
        assert_eq!(t[5], CellCount { n: 3, k: 1 });
        assert_eq!(t[2], CellCount { n: 1, k: 0 });
    }
}
