//! Command-line tools, one module each: `bench` (the OpenBench contract), `perft`,
//! `perft-suite`, the EPD `suite` runner and the calibration `pool` builder. Each module holds its clap arguments, a `run`
//! and the library functions behind it; a new tool is one module here plus one [`Tool`]
//! variant (and its arm in [`Tool::run`]).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use crate::board::BoardError;

pub mod bench;
#[cfg(feature = "calibration")]
pub mod calibrate;
#[cfg(feature = "calibration")]
pub mod collect;
pub mod datagen;
pub mod perft;
pub mod pool;
pub mod suite;
pub mod tune;
pub mod validate;
#[cfg(feature = "calibration")]
pub mod variance;

/// The `actuary` subcommands (UCI when none is given).
#[derive(Debug, clap::Subcommand)]
pub enum Tool {
    /// Search the fixed bench positions to a fixed depth; the last line is
    /// "Bench: <nodes> nodes <nps> nps" (the node count is the build's signature for OpenBench).
    Bench(bench::BenchArgs),
    /// Count the leaf nodes of the legal move tree, per root move and in total.
    Perft(perft::PerftArgs),
    /// Check every position of a perft suite (`FEN ;D1 n ;D2 n ...`) up to a depth.
    PerftSuite(perft::PerftSuiteArgs),
    /// Search every position of an EPD test suite and check its `bm`/`am` moves (and the
    /// `c8`/`c9` points of STS files).
    Suite(suite::SuiteArgs),
    /// Build calibration position pools from fixed-node self-play (stratified by material
    /// bucket, quiet, deduplicated; a calibration pool and a disjoint hold-out pool).
    Pool(pool::PoolArgs),
    /// Lazy-evaluation calibration: residual histograms, percentiles, margin tables, margin
    /// safety (Wilson and position-clustered bootstrap) and exit rates.
    #[cfg(feature = "calibration")]
    Calibrate(calibrate::CalibrateArgs),
    /// Baseline vs candidate (a binary and/or UCI options) on several suites, side by side:
    /// solved, total nodes, median depth, EBF, time, nps and how often each prune fired.
    Validate(validate::ValidateArgs),
    /// Pruning tables: the alpha-side joint fail-high table (`collect fh`) and the beta-side
    /// RFP table with its margins (`collect rfp`), as generated data files the engine embeds.
    #[cfg(feature = "calibration")]
    Collect(collect::CollectArgs),
    /// Labelled positions for the evaluation tuner: fixed-node self-play from a book plus
    /// random plies, every quiet position with its search score and the game's result
    /// (`FEN | score | result`, resumable).
    Datagen(datagen::DatagenArgs),
    /// Fit every evaluation weight to game outcomes (Adam on the evaluation's linear trace,
    /// K fitted first, a hold-out split, an optional penalty on the cheap tiers' residual
    /// variance); writes a parameter file the engine embeds at build time. Resumable.
    Tune(tune::TuneArgs),
}

impl Tool {
    /// Run the tool; the exit code says whether its checks passed.
    pub fn run(&self) -> Result<ExitCode, ToolError> {
        match self {
            Tool::Bench(a) => a.run(),
            Tool::Perft(a) => a.run(),
            Tool::PerftSuite(a) => a.run(),
            Tool::Suite(a) => a.run(),
            Tool::Pool(a) => a.run(),
            #[cfg(feature = "calibration")]
            Tool::Calibrate(a) => a.run(),
            Tool::Validate(a) => a.run(),
            #[cfg(feature = "calibration")]
            Tool::Collect(a) => a.run(),
            Tool::Datagen(a) => a.run(),
            Tool::Tune(a) => a.run(),
        }
    }
}

/// Why a tool could not run.
#[derive(Debug, thiserror::Error)]
pub enum ToolError {
    #[error("cannot read {}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(transparent)]
    Board(#[from] BoardError),
    #[error(transparent)]
    Tt(#[from] crate::search::tt::TtError),
    #[error("--set: {0}")]
    Switch(String),
    #[error(transparent)]
    PerftSuite(#[from] perft::PerftSuiteError),
    #[error(transparent)]
    Pool(#[from] pool::PoolError),
    #[error(transparent)]
    Datagen(#[from] datagen::DatagenError),
    #[error(transparent)]
    Tune(#[from] tune::TuneError),
    #[error(transparent)]
    Validate(#[from] validate::ValidateError),
    #[error(transparent)]
    Tables(#[from] crate::eval::lazy::TablesError),
    #[cfg(feature = "calibration")]
    #[error(transparent)]
    Calibrate(#[from] calibrate::CalibError),
    #[cfg(feature = "calibration")]
    #[error(transparent)]
    Collect(#[from] collect::CollectError),
}

/// A whole input file, or an error naming it.
fn read(path: &Path) -> Result<String, ToolError> {
    std::fs::read_to_string(path).map_err(|source| ToolError::Read {
        path: path.to_owned(),
        source,
    })
}
