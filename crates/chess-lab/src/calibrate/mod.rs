//! The laboratory's calibrations: every measured table and rate of the engine's risky
//! shortcuts, each re-derivable by one command (docs/design/chess-DESIGN.md §2–3).
//!
//! * [`lazy`]: the lazy-evaluation loop (`calibrate residual|percentiles|tables|marginsafety|exitrate`);
//! * [`netlazy`]: the network's lazy exits (`calibrate net-residual`);
//! * [`tables`]: the pruning tables (`collect fh|rfp`);
//! * [`surprise`]: how often each prune is wrong (`calibrate surprise`);
//! * [`variance`]: the evaluation's variance by material (`calibrate variance`);
//! * [`probe`] and [`record`]: what a search records for them; [`runner`]: the pool runs, the
//!   options and the errors they share.
//!
//! Every command searches pool positions to a fixed depth with one thread, a cleared table and
//! cleared histories, so a position's tree is one cluster and no result depends on `--threads`.

pub mod lazy;
pub mod netlazy;
pub mod probe;
pub mod record;
pub mod runner;
pub mod surprise;
pub mod tables;
pub mod variance;

use std::process::ExitCode;

/// `actuary calibrate <residual|percentiles|tables|marginsafety|exitrate>`.
#[derive(Debug, clap::Args)]
pub struct CalibrateArgs {
    #[command(subcommand)]
    pub cmd: CalibrateCmd,
}

#[derive(Debug, clap::Subcommand)]
pub enum CalibrateCmd {
    /// Search a pool and histogram what each cheap tier missed at every evaluation (per side
    /// and bucket); writes every raw bin to DIR/residual.txt and per-position tallies to
    /// DIR/positions.txt.
    Residual(lazy::ResidualArgs),
    /// Any percentile of a saved residual file, per histogram and bucket, without re-running.
    Percentiles(lazy::PercentilesArgs),
    /// Write the margin tables (a matched percentile pair per bucket, p50 positional tables,
    /// quiescence base margins) as the data file the engine embeds.
    Tables(lazy::TablesArgs),
    /// How often a lazy exit was wrong (the full evaluation on the other side of the bound):
    /// per material bucket and tier, with Wilson and position-clustered bootstrap intervals,
    /// and per per-side bucket pair.
    Marginsafety(lazy::SafetyArgs),
    /// % super-lazy / lazy / full exits per material bucket, and the headroom view.
    Exitrate(lazy::ExitRateArgs),
    /// Pruning "search anyway": the chosen mechanism prunes nothing; where it would have, the
    /// search goes on and records whether the prune would have been wrong. Surprise rates per
    /// depth and slack with Wilson and position-clustered bootstrap intervals.
    Surprise(surprise::SurpriseArgs),
    /// The eval-variance study: tier disagreement and sibling-eval spread per material
    /// bucket, set against the surprise rates of saved `surprise` reports (Markdown, JSON, SVG).
    Variance(variance::VarianceArgs),
    /// The network's lazy-exit margins: search a pool with the net and histogram what the
    /// material + PSQT score missed at every windowed evaluation, per army bucket pair; write
    /// the percentile table the engine embeds (`--out`), or measure a table's wrong-exit
    /// rate on a pool (`--check`).
    NetResidual(netlazy::NetResidualArgs),
}

impl CalibrateArgs {
    pub fn run(&self) -> Result<ExitCode, crate::LabError> {
        match &self.cmd {
            CalibrateCmd::Residual(a) => lazy::residual_cmd(a)?,
            CalibrateCmd::Percentiles(a) => lazy::percentiles_cmd(a)?,
            CalibrateCmd::Tables(a) => lazy::tables_cmd(a)?,
            CalibrateCmd::Marginsafety(a) => lazy::safety_cmd(a)?,
            CalibrateCmd::Exitrate(a) => lazy::exitrate_cmd(a)?,
            CalibrateCmd::Surprise(a) => surprise::surprise_cmd(a)?,
            CalibrateCmd::Variance(a) => a.run()?,
            CalibrateCmd::NetResidual(a) => a.run()?,
        }
        Ok(ExitCode::SUCCESS)
    }
}
