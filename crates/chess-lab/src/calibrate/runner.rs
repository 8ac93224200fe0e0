//! What the calibrations share: the pool and search options, the pool runner, the command line
//! recorded in every output, and the errors.

use crate::calibrate::record::{PositionRecord, Recorder, ResultsError, Totals};
use crate::data::pool::{PoolPosition, PoolSearch, read_pool, search_pool};
use chess::eval::LazyMargins;
use chess::eval::lazy::TablesError;
use chess::search::Worker;
use chess::search::smp::SearchOptions;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

/// The most bootstrap resamples `calibrate` and `calibrate surprise` take: far past where
/// an interval stops moving, and bounded so that memory (8 bytes per resample per bucket)
/// cannot exhaust the machine.
pub const MAX_RESAMPLES: usize = 100_000;
/// The pool and the searches (shared by the commands that search).
#[derive(Debug, Clone, clap::Args)]
pub struct RunOpts {
    /// Pool of positions (EPD/FEN per line; `#` comments and blank lines skipped).
    #[arg(long, value_name = "FILE")]
    pub pool: PathBuf,
    /// Fixed search depth for every position.
    #[arg(long, default_value_t = 6, value_parser = clap::value_parser!(i32).range(1..=64))]
    pub depth: i32,
    /// Positions searched at once (one search thread each; results do not depend on it).
    #[arg(long, value_name = "T", default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=256))]
    pub threads: u64,
    /// Use only the first N positions of the pool (pools are written stratified round-robin,
    /// so a prefix stays stratified).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub limit: Option<u64>,
    /// Transposition table per thread in MB (cleared before every position).
    #[arg(long, value_name = "MB", default_value_t = 4, value_parser = clap::value_parser!(u64).range(1..=4096))]
    pub hash: u64,
    /// Margin tables for the lazy exits [default: the tables built into the engine].
    #[arg(long, value_name = "FILE")]
    pub tables: Option<PathBuf>,
    /// No progress bar.
    #[arg(long)]
    pub quiet: bool,
}
/// A percentile 0–100.
pub fn parse_percentile(s: &str) -> Result<f64, String> {
    let p: f64 = s
        .trim_end_matches('%')
        .parse()
        .map_err(|_| format!("`{s}` is not a number"))?;
    if (0.0..=100.0).contains(&p) {
        Ok(p)
    } else {
        Err(format!("percentile {p} is outside 0–100"))
    }
}

/// `LO,HI` with LO + HI = 100 and LO < 50.
pub fn parse_pair(s: &str) -> Result<(f64, f64), String> {
    let (a, b) = s
        .split_once(',')
        .ok_or_else(|| format!("`{s}` is not LO,HI (e.g. 2,98)"))?;
    let (lo, hi) = (parse_percentile(a)?, parse_percentile(b)?);
    if (lo + hi - 100.0).abs() > 1e-9 || lo >= 50.0 {
        return Err(format!(
            "pair {lo},{hi} is not a matched symmetric pair (LO + HI = 100, LO < 50)"
        ));
    }
    Ok((lo, hi))
}

/// A rate: `1%` or `0.01`.
pub fn parse_rate(s: &str) -> Result<f64, String> {
    let v = if let Some(p) = s.strip_suffix('%') {
        p.parse::<f64>().map(|x| x / 100.0)
    } else {
        s.parse::<f64>()
    }
    .map_err(|_| format!("`{s}` is not a rate (e.g. 1% or 0.01)"))?;
    if v > 0.0 && v < 1.0 {
        Ok(v)
    } else {
        Err(format!("rate {s} is outside (0, 1)"))
    }
}

/// Why a calibration command failed.
#[derive(Debug, thiserror::Error)]
pub enum CalibError {
    #[error(transparent)]
    Pool(#[from] crate::data::pool::PoolError),
    #[error(transparent)]
    Tables(#[from] TablesError),
    #[error(transparent)]
    Results(#[from] ResultsError),
    #[error("{}: {source}", path.display())]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{0}")]
    Evidence(#[from] evidence::EvidenceError),
}

pub(crate) fn write(path: &Path, text: &str) -> Result<(), CalibError> {
    if let Some(dir) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|source| CalibError::Write {
            path: dir.to_owned(),
            source,
        })?;
    }
    evidence::atomic_write(path, text.as_bytes()).map_err(|e| CalibError::Write {
        path: path.to_owned(),
        source: e.into_io(),
    })
}

// ----- The pool runner -----------------------------------------------------------------

/// How to search a pool.
#[derive(Clone)]
pub struct RunConfig {
    pub depth: i32,
    pub threads: usize,
    pub hash_mb: usize,
    /// Lazy exits with these margins (`None`: off).
    pub lazy: Option<Arc<LazyMargins>>,
    /// Record residual histograms.
    pub residual: bool,
    pub per_position_samples: bool,
    pub progress: bool,
}

/// What a pool run measured.
pub struct RunResult {
    pub totals: Totals,
    /// One record per position, in pool order.
    pub records: Vec<PositionRecord>,
    pub seconds: f64,
}

/// Search every position of `positions` (see the module docs).
pub fn run_pool(positions: &[PoolPosition], cfg: &RunConfig) -> RunResult {
    let start = Instant::now();
    // The lazy tiers and the residuals measured here are the hand evaluation's: search with
    // it whatever the engine's default evaluation is.
    let opts = SearchOptions {
        lazy: cfg.lazy.clone(),
        net: None,
        ..Default::default()
    };
    let how = PoolSearch {
        depth: cfg.depth,
        threads: cfg.threads,
        hash_mb: cfg.hash_mb,
        progress: cfg.progress,
        opts: &opts,
    };
    let (done, _) = search_pool(
        positions,
        &how,
        || {
            let w = Worker::with_probe(0, Recorder::new(cfg.residual, cfg.per_position_samples));
            (w, Vec::new())
        },
        |w, i, p| w.probe.begin(i, p.line),
        |w, mine: &mut Vec<PositionRecord>, nodes| mine.push(w.probe.finish(nodes)),
    );
    let mut totals = Totals::new();
    let mut records = Vec::with_capacity(positions.len());
    for (w, mine) in done {
        if cfg.residual {
            totals.merge_histograms(&w.probe.hist);
        }
        records.extend(mine);
    }
    records.sort_by_key(|r| r.index);
    for r in &records {
        totals.add(r);
    }
    RunResult {
        totals,
        records,
        seconds: start.elapsed().as_secs_f64(),
    }
}

pub(crate) fn load_tables(
    path: &Option<PathBuf>,
) -> Result<(Arc<LazyMargins>, String), CalibError> {
    Ok(match path {
        Some(p) => (Arc::new(LazyMargins::load(p)?), p.display().to_string()),
        None => (LazyMargins::embedded(), "<embedded>".to_string()),
    })
}

pub(crate) fn pool_positions(run: &RunOpts) -> Result<Vec<PoolPosition>, CalibError> {
    Ok(read_pool(&run.pool, run.limit.map(|l| l as usize))?)
}
