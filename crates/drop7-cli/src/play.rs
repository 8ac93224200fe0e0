//! `drop7 play`: whole games in parallel, one JSON line per game, resumable.

use std::path::PathBuf;

use anyhow::bail;
use clap::Args;
use drop7::SeedBlock;
use drop7::runner::{RunOptions, run_block};
use drop7::screen::{CohortSummary, MAX_BLOCK_GAMES};
use drop7::seeds::Shard;
use ntuple::policy::PolicySpec;

use crate::args::ModelArg;
use crate::output::print_line;
use crate::progress::BlockBar;

#[derive(Args)]
pub struct PlayArgs {
    /// Policy: random, center, leftmost, fair-dNsK (e.g. fair-d3s7), ntuple-1ply or
    /// ntuple-dNsK (optionally @MODEL-FILE; else --model).
    #[arg(long)]
    pub policy: PolicySpec,
    /// Seed block START:COUNT, e.g. 0xa52f2140:256 (start decimal or 0x-hex).
    #[arg(long)]
    pub seeds: SeedBlock,
    /// Worker threads (0 = all cores).
    #[arg(long, allow_negative_numbers = true, default_value_t = 0)]
    pub threads: usize,
    /// Append one JSON line per game here; seeds already in the file are skipped (resume).
    /// One process at a time: a second writer is refused.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// No progress bar or notes on stderr.
    #[arg(long)]
    pub quiet: bool,
    /// Print the summary as one JSON object instead of a line of text.
    #[arg(long)]
    pub json: bool,
    /// Play only shard K of N of the block (0 ≤ K < N; contiguous sub-blocks), or `slurm`
    /// for the job-array task's shard; results go to OUT.shard-K-of-N, joined by
    /// `drop7 merge play OUT --seeds BLOCK`.
    #[arg(long)]
    pub shard: Option<Shard>,
    #[command(flatten)]
    pub model: ModelArg,
}

pub fn play(a: PlayArgs) -> anyhow::Result<()> {
    if a.seeds.count() > MAX_BLOCK_GAMES {
        bail!(
            "--seeds {}: at most {MAX_BLOCK_GAMES} games per block",
            a.seeds
        );
    }
    let factory = a.model.factory(&a.policy)?;
    let bar = BlockBar::new(a.quiet);
    let (block, out) = match a.shard {
        Some(shard) => (
            shard.of(a.seeds)?,
            a.out
                .as_deref()
                .map(|o| drop7::runner::shard_file(o, shard)),
        ),
        None => (a.seeds, a.out.clone()),
    };
    let opts = RunOptions {
        threads: a.threads,
        out: out.as_deref(),
    };
    let run = run_block(&factory, block, &opts, &bar)?;
    bar.finish();
    if !a.quiet && run.played > 0 {
        eprintln!("{} games in {:.1} s", run.played, run.seconds);
    }
    let s = CohortSummary::of(&run.arm, block, &run.records);
    if a.json {
        return print_line(&serde_json::to_string(&s).expect("a summary serialises"));
    }
    print_line(&format!(
        "{} on {}: {} games  mean {:.2}  median {:.0}  Q25 {:.0}  max {:.0}  moves {:.2}  work/move {:.1}  censored {}  incomplete {}  illegal {}",
        s.scores.name,
        s.seeds,
        s.scores.games,
        s.scores.mean,
        s.scores.median,
        s.scores.q25,
        s.scores.max,
        s.mean_moves,
        s.work_per_move,
        s.censored,
        s.incomplete,
        s.illegal
    ))
}
