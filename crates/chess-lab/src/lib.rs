//! actuary's laboratory: everything that measures, calibrates, generates data for or tunes the
//! chess engine, kept out of the engine crate so that an engine build (OpenBench's `make`)
//! contains none of it. It drives the search through [`chess::search::Probe`]: the lazy-eval
//! [`calibrate::record::Recorder`] and the pruning [`calibrate::probe::CellProbe`] are its
//! two implementations.
//!
//! One module per `actuary` subcommand (`calibrate`, `collect`, `pool`, `datagen`, `tune`,
//! `validate`; `calibrate variance` in `variance`), each with its clap arguments, a `run` and
//! the library functions behind it; [`LabCommand`] lists them for the binary.
#![forbid(unsafe_code)]

use std::path::PathBuf;
use std::process::ExitCode;

pub mod calibrate;
pub mod data;
pub mod fit;
pub mod validate;

use calibrate::{CalibrateArgs, tables::CollectArgs};
use data::{corpus::CorpusArgs, datagen::DatagenArgs, merge::CorpusMergeArgs, pool::PoolArgs};
use fit::{nettrain::TrainNetArgs, tune::TuneArgs};

/// The laboratory's `actuary` subcommands.
#[derive(Debug, clap::Subcommand)]
pub enum LabCommand {
    /// Build calibration position pools from fixed-node self-play (stratified by material
    /// bucket, quiet, deduplicated; a calibration pool and a disjoint hold-out pool).
    Pool(PoolArgs),
    /// Lazy-evaluation calibration: residual histograms, percentiles, margin tables, margin
    /// safety (Wilson and position-clustered bootstrap) and exit rates.
    Calibrate(CalibrateArgs),
    /// Baseline vs candidate (a binary and/or UCI options) on several suites, side by side:
    /// solved, total nodes, median depth, EBF, time, nps and how often each prune fired.
    Validate(validate::ValidateArgs),
    /// Pruning tables: the alpha-side joint fail-high table (`collect fh`) and the beta-side
    /// RFP table with its margins (`collect rfp`), as generated data files the engine embeds.
    Collect(CollectArgs),
    /// Self-play training data: `--corpus DIR` writes every position of every game as
    /// compact binary records in checksummed chunks with a manifest (the corpus that grows in
    /// the repository); `--out FILE` writes quiet positions as `FEN | score | result` text.
    /// Resumable, deterministic per game id.
    Datagen(DatagenArgs),
    /// Check and count a self-play corpus: every chunk's SHA-256 and records, every game
    /// replayed, the positions each loader filter keeps and the hold-out split by game id.
    Corpus(CorpusArgs),
    /// Enter the closed chunks of other corpora (a Slurm job array's task directories, each
    /// written with `datagen --corpus SRC --first-id N`) into a corpus, under its lock: every
    /// chunk checked first; duplicates, shared game ids and torn or damaged chunks refused with
    /// nothing written; chunks entered already skipped, so a re-run finishes a stopped merge.
    CorpusMerge(CorpusMergeArgs),
    /// Fit every evaluation weight to game outcomes (Adam on the evaluation's linear trace,
    /// K fitted first, a hold-out split, an optional penalty on the cheap tiers' residual
    /// variance); writes a parameter file the engine embeds at build time. Resumable.
    Tune(TuneArgs),
    /// Train the engine's network ((768 → H)×2 → 1, SCReLU) on the self-play corpus: AdamW,
    /// threads, a hold-out split by game, the quantised net and the run's state written after
    /// every epoch. Resumable.
    TrainNet(TrainNetArgs),
}

impl LabCommand {
    /// Run the command; the exit code says whether its checks passed.
    pub fn run(&self) -> Result<ExitCode, LabError> {
        match self {
            LabCommand::Pool(a) => a.run(),
            LabCommand::Calibrate(a) => a.run(),
            LabCommand::Validate(a) => a.run(),
            LabCommand::Collect(a) => a.run(),
            // The corpus mode (`--corpus DIR`) is self-play's; the text mode datagen's own.
            LabCommand::Datagen(a) => match &a.corpus {
                Some(dir) => data::selfplay::run(a, dir),
                None => a.run(),
            },
            LabCommand::Corpus(a) => a.run(),
            LabCommand::CorpusMerge(a) => a.run(),
            LabCommand::Tune(a) => a.run(),
            LabCommand::TrainNet(a) => a.run(),
        }
    }
}

/// Why a laboratory command could not run.
#[derive(Debug, thiserror::Error)]
pub enum LabError {
    #[error("cannot read {}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(transparent)]
    Board(#[from] chess::board::BoardError),
    #[error(transparent)]
    Tt(#[from] chess::search::tt::TtError),
    #[error("--set: {0}")]
    Switch(String),
    #[error(transparent)]
    Pool(#[from] data::pool::PoolError),
    #[error(transparent)]
    Datagen(#[from] data::datagen::DatagenError),
    #[error(transparent)]
    Corpus(#[from] data::corpus::CorpusError),
    #[error(transparent)]
    Merge(#[from] data::merge::MergeError),
    #[error(transparent)]
    Tune(#[from] fit::tune::TuneError),
    #[error(transparent)]
    TrainNet(#[from] fit::nettrain::TrainError),
    #[error(transparent)]
    Validate(#[from] validate::ValidateError),
    #[error(transparent)]
    Tables(#[from] chess::eval::lazy::TablesError),
    #[error(transparent)]
    Calibrate(#[from] calibrate::runner::CalibError),
    #[error(transparent)]
    Collect(#[from] calibrate::probe::CollectError),
    #[error(transparent)]
    NetResidual(#[from] calibrate::netlazy::NetResidualError),
}
