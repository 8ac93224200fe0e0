//! `drop7 screen` and `drop7 lease`: argument mapping over `drop7::screen` and
//! `drop7::lease`.

use std::path::PathBuf;

use anyhow::{Context, bail};
use clap::{Args, Subcommand};
use drop7::SeedBlock;
use drop7::lease::{Ledger, Role};
use drop7::screen::{
    ScreenOutcome, ScreenPlan, ScreenReport, markdown, prepare_screen, run_screen,
};
use drop7::seeds::Shard;
use drop7::slurm::ScreenJob;
use ntuple::policy::{PolicySpec, contrast_indices};

use crate::args::ModelArg;
use crate::output::{print_line, print_text};
use crate::progress::BlockBar;

#[derive(Args)]
pub struct ScreenArgs {
    /// Comma-separated policies, e.g. fair-d2s7,fair-d3s7 (any `play` policy); each at most
    /// once. The first is the reference unless --contrast says otherwise.
    #[arg(long, value_delimiter = ',', required = true)]
    arms: Vec<PolicySpec>,
    /// A contrast CANDIDATE:REFERENCE, each written as in --arms (repeatable); default: every
    /// other arm against the first.
    #[arg(long)]
    contrast: Vec<String>,
    /// Seed block START:COUNT, identical for every arm (at least 2 games).
    #[arg(long)]
    seeds: SeedBlock,
    /// Output directory: per-arm game files, report.md, report.json, one SVG per contrast.
    /// Re-running the same screen into it resumes; another screen there is refused.
    #[arg(long)]
    out: PathBuf,
    /// Worker threads (0 = all cores).
    #[arg(long, allow_negative_numbers = true, default_value_t = 0)]
    threads: usize,
    /// Seed ledger (JSON) that guards screen blocks.
    #[arg(long, env = "DROP7_LEDGER", default_value = "drop7-leases.json")]
    ledger: PathBuf,
    /// Open the block even if another screen already read it (it is then no longer fresh),
    /// or reuse an output directory that holds another screen.
    #[arg(long)]
    force: bool,
    /// No progress bars or notes on stderr.
    #[arg(long)]
    quiet: bool,
    /// Print report.json instead of the Markdown report.
    #[arg(long)]
    json: bool,
    /// Play only shard K of N (0 ≤ K < N; contiguous sub-blocks) into OUT/shards/K-of-N/,
    /// or `slurm` for the job-array task's shard (SLURM_ARRAY_TASK_ID − SLURM_ARRAY_TASK_MIN
    /// of SLURM_ARRAY_TASK_COUNT); `drop7 merge screen OUT` then writes the report.
    #[arg(long, conflicts_with = "emit_slurm")]
    shard: Option<Shard>,
    /// Open the block and record the screen now, then print a Slurm job-array script that
    /// plays it as N shards (submit it with sbatch; merge with `drop7 merge screen OUT`).
    #[arg(long, allow_negative_numbers = true, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    emit_slurm: Option<u32>,
    /// Time limit per shard for --emit-slurm (HH:MM:SS, or Slurm's MM, MM:SS, D-HH,
    /// D-HH:MM, D-HH:MM:SS); default: an estimate from the arms' measured decision times,
    /// doubled, plus 10 minutes.
    #[arg(long, value_name = "HH:MM:SS", requires = "emit_slurm", value_parser = drop7::slurm::slurm_time)]
    slurm_time: Option<String>,
    /// CPUs per shard for --emit-slurm (each shard plays with that many threads), 1-1024.
    #[arg(long, allow_negative_numbers = true, default_value_t = 2, requires = "emit_slurm",
        value_parser = clap::value_parser!(u32).range(1..=1024))]
    slurm_cpus: u32,
    #[command(flatten)]
    model: ModelArg,
}

/// `drop7 screen`: map the flags to a [`ScreenPlan`], then run it (or one shard of it), or
/// record it and print a Slurm script with `--emit-slurm`.
pub fn screen(a: ScreenArgs) -> anyhow::Result<()> {
    if a.out.exists() && !a.out.is_dir() {
        bail!(
            "--out {}: exists and is not a directory (a screen writes a directory)",
            a.out.display()
        );
    }
    let contrasts = a
        .contrast
        .iter()
        .map(|c| contrast_indices(c, &a.arms))
        .collect::<Result<Vec<_>, _>>()?;
    let mut models = a.model.models();
    let arms = a
        .arms
        .iter()
        .map(|p| p.factory(&mut models))
        .collect::<Result<Vec<_>, _>>()?;
    let bar = BlockBar::new(a.quiet);
    let plan = ScreenPlan {
        arms,
        contrasts,
        block: a.seeds,
        out: &a.out,
        ledger: &a.ledger,
        force: a.force,
        threads: a.threads,
        shard: a.shard,
    };
    if let Some(n) = a.emit_slurm {
        return emit_slurm(&a, &plan, n);
    }
    let outcome = run_screen(&plan, &bar)?;
    bar.finish();
    match outcome {
        ScreenOutcome::Report(r) => print_report(&r, a.json),
        ScreenOutcome::Shard { shard, block, dir } => print_line(&format!(
            "shard {shard} ({block}) done in {}; merge with `drop7 merge screen {}` when every shard is",
            dir.display(),
            a.out.display()
        )),
    }
}

/// `screen --emit-slurm N`: everything the script needs is checked, then the block is opened
/// and the screen recorded (so the shards resume one screen), then the script is printed.
fn emit_slurm(a: &ScreenArgs, plan: &ScreenPlan<'_>, n: u32) -> anyhow::Result<()> {
    if a.seeds.count() < n as u64 {
        bail!(
            "--emit-slurm {n}: the block {} has fewer seeds than shards",
            a.seeds
        );
    }
    // everything the script needs is checked before the block is opened
    let script = slurm_script(a, n)?;
    let lease = prepare_screen(plan)?;
    // Slurm opens the tasks' log files there before the first task starts
    let shards = a.out.join("shards");
    std::fs::create_dir_all(&shards).with_context(|| shards.display().to_string())?;
    eprintln!(
        "opened lease `{lease}` and recorded the screen in {}",
        a.out.display()
    );
    print_text(&script)
}

/// A screen's report on stdout: report.json's text with `--json`, else the Markdown report
/// (`screen` and `merge screen` print the same).
fn print_report(report: &ScreenReport, json: bool) -> anyhow::Result<()> {
    if json {
        print_line(&serde_json::to_string_pretty(report).expect("a report serialises"))
    } else {
        print_text(&markdown(report))
    }
}

/// A Slurm job-array script for this screen, one task per shard ([`drop7::slurm`]).
fn slurm_script(a: &ScreenArgs, n: u32) -> anyhow::Result<String> {
    let job = ScreenJob {
        exe: std::env::current_exe()?,
        arms: a.arms.iter().map(|p| p.to_string()).collect(),
        seeds: a.seeds,
        out: a.out.clone(),
        ledger: a.ledger.clone(),
        model: a.model.model.clone(),
        shards: n,
        cpus: a.slurm_cpus,
        time: a.slurm_time.clone(),
        ms_per_decision: a.arms.iter().map(PolicySpec::ms_per_decision).sum(),
    };
    Ok(job.script()?)
}

#[derive(Args)]
pub struct MergeArgs {
    #[command(subcommand)]
    what: MergeWhat,
}

#[derive(Subcommand)]
enum MergeWhat {
    /// Join the shards of a screen (OUT/shards/K-of-N/) into the games files, report and
    /// figures one process would have written.
    Screen {
        /// The screen's output directory.
        out: PathBuf,
        /// Print report.json instead of the Markdown report.
        #[arg(long)]
        json: bool,
    },
    /// Join `FILE.shard-K-of-N` files of `drop7 play --shard` into FILE (seed order).
    Play {
        /// The results file the shards were written for.
        file: PathBuf,
        /// The whole seed block the shards split.
        #[arg(long)]
        seeds: SeedBlock,
        /// Replace FILE even if it holds records the shards do not (another arm's games, or
        /// games played into it).
        #[arg(long)]
        force: bool,
    },
}

pub fn merge(a: MergeArgs) -> anyhow::Result<()> {
    match a.what {
        MergeWhat::Screen { out, json } => print_report(&drop7::screen::merge_screen(&out)?, json),
        MergeWhat::Play { file, seeds, force } => {
            let m = drop7::runner::merge_play_file(&file, seeds, force)?;
            print_line(&format!(
                "merged {} shards into {} ({} games)",
                m.shards,
                file.display(),
                m.games
            ))
        }
    }
}

#[derive(Args)]
pub struct LeaseArgs {
    #[command(subcommand)]
    action: LeaseAction,
    /// Seed ledger (JSON).
    #[arg(
        long,
        env = "DROP7_LEDGER",
        default_value = "drop7-leases.json",
        global = true
    )]
    ledger: PathBuf,
}

#[derive(Subcommand)]
enum LeaseAction {
    /// List the leases (id, role, range, state, who opened it).
    List {
        /// Print the ledger as JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Reserve a block for a role; refuses any overlap with an existing lease.
    Reserve {
        /// The lease's name (unique in the ledger).
        #[arg(long)]
        id: String,
        /// training, validation or screen.
        #[arg(long)]
        role: Role,
        /// Seed block START:COUNT.
        #[arg(long)]
        seeds: SeedBlock,
        /// Free text kept with the lease.
        #[arg(long, default_value = "")]
        notes: String,
    },
}

pub fn lease(a: LeaseArgs) -> anyhow::Result<()> {
    match a.action {
        LeaseAction::List { json } => {
            let ledger = Ledger::load(&a.ledger)?;
            if !a.ledger.exists() {
                eprintln!(
                    "note: no ledger at {} yet (an empty list)",
                    a.ledger.display()
                );
            }
            if json {
                return print_line(&serde_json::to_string_pretty(&ledger).expect("ledger"));
            }
            print_text(&ledger.table())
        }
        LeaseAction::Reserve {
            id,
            role,
            seeds,
            notes,
        } => {
            Ledger::update(&a.ledger, |l| l.reserve(&id, role, seeds, &notes))?;
            print_line(&format!(
                "reserved `{id}` ({role}) {seeds} in {}",
                a.ledger.display()
            ))
        }
    }
}
