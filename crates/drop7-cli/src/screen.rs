//! `drop7 screen` and `drop7 lease`: argument mapping over `drop7::screen` and
//! `drop7::lease`.

use std::path::PathBuf;

use anyhow::anyhow;
use clap::{Args, Subcommand};
use drop7::SeedBlock;
use drop7::lease::{Ledger, Role};
use drop7::screen::{ScreenPlan, markdown, run_screen};
use ntuple::policy::PolicySpec;

use crate::args::{BlockBar, ModelArg};
use crate::output::{print_line, print_text};

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
    /// Seed block <start>:<count>, identical for every arm (at least 2 games).
    #[arg(long)]
    seeds: SeedBlock,
    /// Output directory: per-arm game files, report.md, report.json, one SVG per contrast.
    /// Re-running the same screen into it resumes; another screen there is refused.
    #[arg(long)]
    out: PathBuf,
    /// Worker threads (0 = all cores).
    #[arg(long, default_value_t = 0)]
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
    #[command(flatten)]
    model: ModelArg,
}

pub fn screen(a: ScreenArgs) -> anyhow::Result<()> {
    let find = |n: &str| -> anyhow::Result<usize> {
        let spec: PolicySpec = n.parse()?;
        a.arms
            .iter()
            .position(|p| *p == spec)
            .ok_or_else(|| anyhow!("--contrast names `{n}`, which is not one of --arms"))
    };
    let contrasts = a
        .contrast
        .iter()
        .map(|c| {
            let (x, y) = c
                .split_once(':')
                .ok_or_else(|| anyhow!("bad --contrast `{c}`: expected CANDIDATE:REFERENCE"))?;
            Ok((find(x)?, find(y)?))
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
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
    };
    let report = run_screen(&plan, &bar)?;
    bar.finish();
    if a.json {
        print_line(&serde_json::to_string_pretty(&report).expect("a report serialises"))
    } else {
        print_text(&markdown(&report))
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
        /// Seed block <start>:<count>.
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
            if json {
                return print_line(&serde_json::to_string_pretty(&ledger).expect("ledger"));
            }
            let mut t = format!(
                "{:<28} {:<10} {:<12} {:<12} {:<9} opened by\n",
                "id", "role", "start", "end (excl)", "state"
            );
            for l in &ledger.leases {
                t += &format!(
                    "{:<28} {:<10} {:<12} {:<12} {:<9} {}\n",
                    l.id,
                    l.role,
                    l.range_start_hex,
                    l.range_end_exclusive_hex,
                    format!("{:?}", l.state).to_lowercase(),
                    l.opened_by.as_deref().unwrap_or("-")
                );
            }
            print_text(&t)
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
