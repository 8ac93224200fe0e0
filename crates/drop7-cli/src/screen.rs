//! `drop7 screen`: every arm on identical seeds, then paired contrasts with bounds, a gate
//! and a verdict (SPEC §8), as Markdown, JSON and an SVG figure per contrast.

use std::fmt::Write as _;
use std::path::PathBuf;

use clap::Args;
use drop7::lease::{Ledger, Role};
use drop7::runner::GameRecord;
use evidence::{Arm, BootstrapConfig, PairedScreen, paired_screen};

use crate::mechanics::CliResult;
use crate::play::{CohortSummary, SeedBlock, run_block, summarize};

#[derive(Args)]
pub struct ScreenArgs {
    /// Comma-separated policies, e.g. fair-d3s7,fair-d2s7. The first is the reference.
    #[arg(long, value_delimiter = ',', required = true)]
    arms: Vec<String>,
    /// Contrasts as CANDIDATE:REFERENCE (repeatable); default: every other arm against the first.
    #[arg(long)]
    contrast: Vec<String>,
    /// Seed block <start>:<count>, identical for every arm.
    #[arg(long)]
    seeds: String,
    /// Output directory (per-arm game files, report.md, report.json, figures). Re-running
    /// with the same directory resumes.
    #[arg(long)]
    out: PathBuf,
    /// Worker threads (default: all cores).
    #[arg(long)]
    threads: Option<usize>,
    /// Seed ledger (JSON) that guards screen blocks.
    #[arg(long, env = "DROP7_LEDGER", default_value = "drop7-leases.json")]
    ledger: PathBuf,
    /// Open the block even if another screen already read it (it is then no longer fresh).
    #[arg(long)]
    force: bool,
    #[arg(long)]
    quiet: bool,
}

#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct Report {
    format: &'static str,
    seeds: String,
    lease: String,
    arms: Vec<CohortSummary>,
    contrasts: Vec<PairedScreen>,
}

fn file_name(policy: &str) -> String {
    policy
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

pub fn screen(a: ScreenArgs) -> CliResult {
    let block = SeedBlock::parse(&a.seeds)?;
    let mut arms = a.arms.clone();
    arms.dedup();
    if arms.len() < 2 {
        return Err("a screen needs at least two different arms".into());
    }
    let factories = arms
        .iter()
        .map(|p| crate::policies::factory(p))
        .collect::<Result<Vec<_>, _>>()?;
    let contrasts: Vec<(usize, usize)> = if a.contrast.is_empty() {
        (1..arms.len()).map(|i| (i, 0)).collect()
    } else {
        a.contrast
            .iter()
            .map(|c| {
                let (x, y) = c
                    .split_once(':')
                    .ok_or_else(|| format!("bad --contrast `{c}`: CANDIDATE:REFERENCE"))?;
                let find = |n: &str| {
                    arms.iter()
                        .position(|p| p == n)
                        .ok_or_else(|| format!("--contrast names `{n}`, which is not an arm"))
                };
                Ok((find(x)?, find(y)?))
            })
            .collect::<Result<_, String>>()?
    };
    std::fs::create_dir_all(&a.out).map_err(|e| format!("{}: {e}", a.out.display()))?;
    let opener = std::fs::canonicalize(&a.out)
        .unwrap_or(a.out.clone())
        .display()
        .to_string();
    let mut ledger = Ledger::load(&a.ledger)?;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let lease = ledger.open(
        Role::Screen,
        block.start,
        block.count,
        &opener,
        a.force,
        now,
    )?;
    ledger.save(&a.ledger)?;

    let mut records: Vec<Vec<GameRecord>> = Vec::new();
    for (name, factory) in arms.iter().zip(&factories) {
        let path = a.out.join(format!("games-{}.jsonl", file_name(name)));
        records.push(run_block(
            factory,
            name,
            block,
            a.threads,
            Some(&path),
            a.quiet,
        )?);
    }
    let summaries: Vec<CohortSummary> = arms
        .iter()
        .zip(&records)
        .map(|(n, r)| summarize(n, block, r))
        .collect();
    let mut results = Vec::new();
    for &(c, r) in &contrasts {
        let scores = |i: usize| {
            records[i]
                .iter()
                .map(|g| g.score as f64)
                .collect::<Vec<f64>>()
        };
        let (cs, rs) = (scores(c), scores(r));
        let faults = |i: usize| summaries[i].incomplete + summaries[i].illegal;
        let s = paired_screen(
            &Arm {
                name: &arms[c],
                scores: &cs,
                faults: faults(c),
            },
            &Arm {
                name: &arms[r],
                scores: &rs,
                faults: faults(r),
            },
            BootstrapConfig::default(),
        )
        .map_err(|e| e.to_string())?;
        let deltas: Vec<f64> = cs.iter().zip(&rs).map(|(x, y)| x - y).collect();
        let svg = figure(&arms[c], &arms[r], block, &deltas, &s);
        let path = a.out.join(format!(
            "paired-{}-vs-{}.svg",
            file_name(&arms[c]),
            file_name(&arms[r])
        ));
        evidence::atomic_write(&path, svg.as_bytes()).map_err(|e| e.to_string())?;
        results.push(s);
    }
    let report = Report {
        format: "actuary-drop7-screen-v1",
        seeds: block.to_string(),
        lease,
        arms: summaries,
        contrasts: results,
    };
    let md = markdown(&report, &arms, &contrasts);
    evidence::atomic_write(&a.out.join("report.md"), md.as_bytes()).map_err(|e| e.to_string())?;
    let json = serde_json::to_string_pretty(&report).map_err(|e| e.to_string())? + "\n";
    evidence::atomic_write(&a.out.join("report.json"), json.as_bytes())
        .map_err(|e| e.to_string())?;
    print!("{md}");
    Ok(())
}

fn markdown(r: &Report, arms: &[String], contrasts: &[(usize, usize)]) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "# Screen on seeds {} (lease `{}`)\n", r.seeds, r.lease);
    let _ = writeln!(
        s,
        "| arm | games | mean | median | Q25 | max | moves | clears/move | reveals/move | work/game | incomplete | illegal |"
    );
    let _ = writeln!(s, "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|");
    for a in &r.arms {
        let _ = writeln!(
            s,
            "| {} | {} | {:.0} | {:.0} | {:.0} | {:.0} | {:.2} | {:.3} | {:.3} | {:.4e} | {} | {} |",
            a.policy,
            a.games,
            a.mean,
            a.median,
            a.q25,
            a.max,
            a.mean_moves,
            a.clears_per_move,
            a.reveals_per_move,
            a.work_per_game,
            a.incomplete,
            a.illegal
        );
    }
    let _ = writeln!(s);
    let _ = writeln!(
        s,
        "| contrast | delta | bootstrap LB95 | UB95 | t LB95 | W-T-L | halves | floor | gate | verdict |"
    );
    let _ = writeln!(s, "|---|--:|--:|--:|--:|--:|--:|--:|:-:|---|");
    for (p, &(c, rf)) in r.contrasts.iter().zip(contrasts) {
        let _ = writeln!(
            s,
            "| {} − {} | {:+.0} | {:+.0} | {:+.0} | {:+.0} | {}-{}-{} | {:+.0} / {:+.0} | {:.0}{} | {} | {} |",
            arms[c],
            arms[rf],
            p.delta_mean,
            p.bootstrap_lb95,
            p.bootstrap_ub95,
            p.t_lb95,
            p.wins,
            p.ties,
            p.losses,
            p.first_half_mean,
            p.second_half_mean,
            p.detection_floor,
            if p.measured { "" } else { " (below floor)" },
            if p.gate.passed { "pass" } else { "fail" },
            p.verdict
        );
    }
    let _ = writeln!(
        s,
        "\nBootstrap: 20,000 resamples, NumPy default_rng(0xB0071EAF), 0.05/0.95 quantiles (each a one-sided 95 % bound). t LB95 uses the exact t quantile at n−1 df. Gate: no faults, LB > 0, t LB > 0, both halves > 0, candidate Q25 ≥ reference Q25."
    );
    s
}

/// Per-game paired differences in seed order, with the halves divider and the mean.
fn figure(cand: &str, refr: &str, block: SeedBlock, d: &[f64], s: &PairedScreen) -> String {
    let (w, h, ml, mr, mt, mb) = (900.0, 420.0, 80.0, 20.0, 50.0, 40.0);
    let pw = w - ml - mr;
    let ph = h - mt - mb;
    let lo = d.iter().cloned().fold(0.0f64, f64::min);
    let hi = d.iter().cloned().fold(0.0f64, f64::max);
    let span = if hi > lo { hi - lo } else { 1.0 };
    let y = |v: f64| mt + (hi - v) / span * ph;
    let n = d.len().max(1) as f64;
    let bw = pw / n;
    let mut o = String::new();
    let _ = writeln!(
        o,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(o, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let _ = writeln!(
        o,
        r#"<text x="{ml}" y="20" font-size="14">{cand} − {refr}, seeds {block}: mean {:+.0}, bootstrap LB95 {:+.0}, W-T-L {}-{}-{}, {}</text>"#,
        s.delta_mean, s.bootstrap_lb95, s.wins, s.ties, s.losses, s.verdict
    );
    for (i, &v) in d.iter().enumerate() {
        let x = ml + i as f64 * bw;
        let (top, bottom) = (y(v.max(0.0)), y(v.min(0.0)));
        let color = if v >= 0.0 { "#2b7bb9" } else { "#d9534f" };
        let _ = writeln!(
            o,
            r#"<rect x="{x:.2}" y="{top:.2}" width="{:.2}" height="{:.2}" fill="{color}"/>"#,
            (bw * 0.85).max(0.5),
            (bottom - top).max(0.5)
        );
    }
    let _ = writeln!(
        o,
        r#"<line x1="{ml}" x2="{}" y1="{:.2}" y2="{:.2}" stroke="black"/>"#,
        ml + pw,
        y(0.0),
        y(0.0)
    );
    let _ = writeln!(
        o,
        r#"<line x1="{ml}" x2="{}" y1="{:.2}" y2="{:.2}" stroke="dimgray" stroke-dasharray="6,3"/>"#,
        ml + pw,
        y(s.delta_mean),
        y(s.delta_mean)
    );
    let xm = ml + (d.len() / 2) as f64 * bw;
    let _ = writeln!(
        o,
        r#"<line x1="{xm:.2}" x2="{xm:.2}" y1="{mt}" y2="{}" stroke="darkgray" stroke-dasharray="2,4"/>"#,
        mt + ph
    );
    let _ = writeln!(
        o,
        r#"<text x="{:.2}" y="{}" fill="dimgray">first half {:+.0}</text>"#,
        ml + 4.0,
        mt + ph + 16.0,
        s.first_half_mean
    );
    let _ = writeln!(
        o,
        r#"<text x="{:.2}" y="{}" fill="dimgray">second half {:+.0}</text>"#,
        xm + 4.0,
        mt + ph + 16.0,
        s.second_half_mean
    );
    for v in [lo, 0.0, hi] {
        let _ = writeln!(
            o,
            r#"<text x="{}" y="{:.2}" text-anchor="end">{v:.0}</text>"#,
            ml - 6.0,
            y(v) + 4.0
        );
    }
    let _ = writeln!(
        o,
        r#"<text x="{}" y="{}" text-anchor="middle">game (seed order)</text>"#,
        ml + pw / 2.0,
        h - 6.0
    );
    o.push_str("</svg>\n");
    o
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

#[derive(clap::Subcommand)]
enum LeaseAction {
    /// List the leases.
    List,
    /// Reserve a block for a role (training, validation, screen); refuses any overlap.
    Reserve {
        #[arg(long)]
        id: String,
        #[arg(long)]
        role: Role,
        /// <start>:<count>
        #[arg(long)]
        seeds: String,
        #[arg(long, default_value = "")]
        notes: String,
    },
}

pub fn lease(a: LeaseArgs) -> CliResult {
    let mut ledger = Ledger::load(&a.ledger)?;
    match a.action {
        LeaseAction::List => {
            println!(
                "{:<28} {:<10} {:<12} {:<12} {:<9} opened by",
                "id", "role", "start", "end (excl)", "state"
            );
            for l in &ledger.leases {
                println!(
                    "{:<28} {:<10} {:<12} {:<12} {:<9} {}",
                    l.id,
                    l.role,
                    l.range_start_hex,
                    l.range_end_exclusive_hex,
                    format!("{:?}", l.state).to_lowercase(),
                    l.opened_by.as_deref().unwrap_or("-")
                );
            }
            Ok(())
        }
        LeaseAction::Reserve {
            id,
            role,
            seeds,
            notes,
        } => {
            let b = SeedBlock::parse(&seeds)?;
            ledger.reserve(&id, role, b.start, b.count, &notes)?;
            ledger.save(&a.ledger)?;
            println!("reserved `{id}` ({role}) {b} in {}", a.ledger.display());
            Ok(())
        }
    }
}
