//! `calibrate`: the lazy-evaluation calibration loop of issue 13 (docs/design/chess-DESIGN.md §2).
//!
//! ```text
//! actuary calibrate residual    --pool calib.epd   --depth 6 --out DIR   # histograms → DIR/residual.txt
//! actuary calibrate percentiles DIR/residual.txt 2 50 98                 # any percentile, no re-run
//! actuary calibrate tables      DIR/residual.txt --pair 2,98             # → data/chess/lazy-margins.txt
//! actuary calibrate marginsafety --pool holdout.epd --depth 6           # wrong exits, Wilson + clustered
//! actuary calibrate exitrate     --pool holdout.epd --depth 6           # % exits per bucket, headroom
//! ```
//!
//! Every pool position is searched to a fixed depth with one thread, a cleared table and
//! cleared histories, so each position is an independent cluster and the results do not
//! depend on `--threads`. `residual` searches with lazy exits off (all nodes, unbiased)
//! unless `--lazy-eval`; `marginsafety` and `exitrate` search with them on.

use super::runner::*;
use crate::calibrate::record::{Count, Kind, PositionRecord, ResidualFile, positions_text};
use crate::data::pool::read_pool;
use chess::eval::LazyMargins;
use chess::search::params::QS_FUTILITY_MARGIN;
use evidence::Wilson;
use evidence::clustered::{ClusterBootstrapConfig, ClusterEntry, ClusteredRate, clustered_rates};
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// `actuary calibrate residual`.
#[derive(Debug, clap::Args)]
pub struct ResidualArgs {
    #[command(flatten)]
    pub run: RunOpts,
    /// Results directory (created): residual.txt, positions.txt, residual.md.
    #[arg(long, value_name = "DIR", default_value = "calibration/residual")]
    pub out: PathBuf,
    /// Search with lazy exits on (samples then come only from nodes the cheap tiers did not
    /// decide); default off: every evaluation is a sample.
    #[arg(long)]
    pub lazy_eval: bool,
    /// Also write every position's raw samples (value:count) to positions.txt (large).
    #[arg(long)]
    pub per_position_samples: bool,
}

/// `actuary calibrate percentiles`.
#[derive(Debug, clap::Args)]
pub struct PercentilesArgs {
    /// A residual.txt written by `calibrate residual`.
    pub file: PathBuf,
    /// Percentiles to print (0–100) [default: 1 2 5 10 50 90 95 98 99].
    #[arg(value_parser = parse_percentile)]
    pub percentiles: Vec<f64>,
}

/// `actuary calibrate tables`.
#[derive(Debug, clap::Args)]
pub struct TablesArgs {
    /// A residual.txt written by `calibrate residual`.
    pub file: PathBuf,
    /// Matched percentile pair LO,HI (symmetric: LO + HI = 100) used for every bucket (with
    /// --target-exceeded only for the quiescence base margins).
    #[arg(long, value_name = "LO,HI", default_value = "2,98", value_parser = parse_pair)]
    pub pair: (f64, f64),
    /// Table file to write (the engine embeds data/chess/lazy-margins.txt at build time).
    #[arg(
        long,
        value_name = "FILE",
        default_value = "data/chess/lazy-margins.txt"
    )]
    pub out: PathBuf,
    /// Choose per per-side bucket the narrowest pair of the ladder 10,90 5,95 2,98 1,99 0.5,99.5
    /// ... 0,100 whose exceeded rate (the worse tier's, over exits where the bucket is either
    /// side's) stays under this target, iterating tables → marginsafety on --pool and widening
    /// the buckets above it until none is (e.g. `0.3%`).
    #[arg(long, value_name = "RATE", value_parser = parse_rate, requires = "pool")]
    pub target_exceeded: Option<f64>,
    /// Pool for the --target-exceeded iterations.
    #[arg(long, value_name = "FILE")]
    pub pool: Option<PathBuf>,
    /// Search depth of the --target-exceeded iterations.
    #[arg(long, default_value_t = 6, value_parser = clap::value_parser!(i32).range(1..=64))]
    pub depth: i32,
    /// Threads of the --target-exceeded iterations.
    #[arg(long, value_name = "T", default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=256))]
    pub threads: u64,
    /// First N positions of --pool only.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub limit: Option<u64>,
    /// Most tables → verify rounds of --target-exceeded.
    #[arg(long, value_name = "N", default_value_t = 8, value_parser = clap::value_parser!(u64).range(1..=100))]
    pub max_iterations: u64,
    /// No progress bar.
    #[arg(long)]
    pub quiet: bool,
}

/// `actuary calibrate marginsafety`.
#[derive(Debug, clap::Args)]
pub struct SafetyArgs {
    #[command(flatten)]
    pub run: RunOpts,
    /// Results directory (created): marginsafety.json, marginsafety.md, positions.txt.
    #[arg(long, value_name = "DIR", default_value = "calibration/marginsafety")]
    pub out: PathBuf,
    /// Bootstrap resamples (positions drawn with replacement), at most 100,000: memory is
    /// 8 bytes per resample per bucket.
    #[arg(long, default_value_t = 2000, value_parser = clap::value_parser!(u64).range(1..=MAX_RESAMPLES as u64))]
    pub resamples: u64,
    /// Bootstrap seed (NumPy `default_rng` stream).
    #[arg(long, default_value_t = ClusterBootstrapConfig::default().seed)]
    pub seed: u64,
}

/// `actuary calibrate exitrate`.
#[derive(Debug, clap::Args)]
pub struct ExitRateArgs {
    #[command(flatten)]
    pub run: RunOpts,
    /// Results directory (created): exitrate.json, exitrate.md.
    #[arg(long, value_name = "DIR", default_value = "calibration/exitrate")]
    pub out: PathBuf,
    /// Headroom: a bucket whose exceeded rate is below this (e.g. `0.5%`) and whose exit
    /// rate is below the overall one has untapped speed.
    #[arg(long, value_name = "RATE", default_value = "0.5%", value_parser = parse_rate)]
    pub low_exceeded: f64,
}

// ----- residual --------------------------------------------------------------------------

/// Default percentiles of `percentiles` and the summaries.
pub const DEFAULT_PERCENTILES: [f64; 9] = [1.0, 2.0, 5.0, 10.0, 50.0, 90.0, 95.0, 98.0, 99.0];

pub(crate) fn residual_cmd(a: &ResidualArgs) -> Result<(), CalibError> {
    let positions = pool_positions(&a.run)?;
    let (tables, tables_name) = load_tables(&a.run.tables)?;
    let cfg = RunConfig {
        depth: a.run.depth,
        threads: a.run.threads as usize,
        hash_mb: a.run.hash as usize,
        lazy: a.lazy_eval.then_some(tables),
        residual: true,
        per_position_samples: a.per_position_samples,
        progress: !a.run.quiet,
    };
    let r = run_pool(&positions, &cfg);
    let file = ResidualFile {
        meta: vec![
            ("pool".into(), a.run.pool.display().to_string()),
            ("positions".into(), positions.len().to_string()),
            ("depth".into(), a.run.depth.to_string()),
            (
                "lazy".into(),
                if a.lazy_eval {
                    format!("on ({tables_name})")
                } else {
                    "off".into()
                },
            ),
            ("nodes".into(), r.totals.nodes.to_string()),
            ("seconds".into(), format!("{:.1}", r.seconds)),
            ("threads".into(), a.run.threads.to_string()),
        ],
        hist: r.totals.hist.clone(),
    };
    let res_path = a.out.join("residual.txt");
    write(&res_path, &file.to_text())?;
    write(&a.out.join("positions.txt"), &positions_text(&r.records))?;
    let md = percentiles_markdown(&file, &DEFAULT_PERCENTILES);
    write(&a.out.join("residual.md"), &md)?;
    println!("{md}");
    eprintln!(
        "calibrate residual: {} positions, {} nodes in {:.1} s ({} threads) -> {}",
        positions.len(),
        r.totals.nodes,
        r.seconds,
        a.run.threads,
        res_path.display()
    );
    Ok(())
}

// ----- percentiles -----------------------------------------------------------------------

fn percentiles_markdown(f: &ResidualFile, ps: &[f64]) -> String {
    let mut s = String::new();
    let meta: Vec<String> = f.meta.iter().map(|(k, v)| format!("{k} {v}")).collect();
    s.push_str(&format!("Residual percentiles ({})\n", meta.join(", ")));
    for kind in Kind::ALL {
        s.push_str(&format!(
            "\n### {} — by {}\n\n| bucket | n |",
            kind.name(),
            kind.bucketing()
        ));
        for p in ps {
            s.push_str(&format!(" p{p} |"));
        }
        s.push_str("\n|---|---|");
        s.push_str(&"---|".repeat(ps.len()));
        s.push('\n');
        for (b, h) in f.hist[kind as usize].iter().enumerate() {
            s.push_str(&format!("| {b} | {} |", h.total()));
            for &p in ps {
                match h.percentile(p) {
                    Some(v) => s.push_str(&format!(" {v:.1} |")),
                    None => s.push_str(" – |"),
                }
            }
            s.push('\n');
        }
    }
    s
}

pub(crate) fn percentiles_cmd(a: &PercentilesArgs) -> Result<(), CalibError> {
    let f = ResidualFile::load(&a.file)?;
    let ps = if a.percentiles.is_empty() {
        DEFAULT_PERCENTILES.to_vec()
    } else {
        a.percentiles.clone()
    };
    println!("{}", percentiles_markdown(&f, &ps));
    Ok(())
}

// ----- tables ----------------------------------------------------------------------------

/// The pair ladder of --target-exceeded: low percentiles, narrowest first.
pub const PAIR_LADDER: [f64; 11] = [10.0, 5.0, 2.0, 1.0, 0.5, 0.2, 0.1, 0.05, 0.02, 0.01, 0.0];

/// Percentile `p` of histogram `[kind][b]`, or of the nearest non-empty bucket (with a note).
fn pct(f: &ResidualFile, kind: Kind, b: usize, p: f64, notes: &mut Vec<String>) -> i32 {
    let hs = &f.hist[kind as usize];
    let mut order: Vec<usize> = (0..8).collect();
    order.sort_by_key(|&c| (c.abs_diff(b), c));
    for c in order {
        if let Some(v) = hs[c].percentile(p) {
            if c != b {
                let note = format!("{} bucket {b} has no samples: bucket {c} used", kind.name());
                if !notes.contains(&note) {
                    notes.push(note);
                }
            }
            return v.round() as i32;
        }
    }
    0
}

/// Build the tables from a residual file with the low percentile `pair_lo[b]` per per-side
/// bucket (high = 100 − low) and `pair_hi_qs` for the quiescence base margins.
pub fn build_tables(
    f: &ResidualFile,
    source: &Path,
    pair_lo: [f64; 8],
    qs_pair_lo: f64,
    command: &str,
) -> LazyMargins {
    let mut notes = Vec::new();
    let mut table = |kind: Kind| -> [[i32; 8]; 3] {
        let lo = std::array::from_fn(|b| pct(f, kind, b, pair_lo[b], &mut notes));
        let hi = std::array::from_fn(|b| pct(f, kind, b, 100.0 - pair_lo[b], &mut notes));
        let mid = std::array::from_fn(|b| pct(f, kind, b, 50.0, &mut notes));
        [lo, hi, mid]
    };
    let king = table(Kind::King);
    let lazy = table(Kind::Lazy);
    let sl = table(Kind::SuperLazy);
    // Quiescence base margins: the full-eval margin plus how far the node-level miss of the
    // tier reaches above its median (pooled over material buckets) at the high percentile.
    let spread = |kind: Kind| -> i32 {
        let mut h = f.hist[kind as usize][0].clone();
        for b in 1..8 {
            h.merge(&f.hist[kind as usize][b]).expect("same binning");
        }
        match (h.percentile(100.0 - qs_pair_lo), h.percentile(50.0)) {
            (Some(hi), Some(mid)) => (hi - mid).ceil().max(0.0) as i32,
            _ => 0,
        }
    };
    let qs_sl = spread(Kind::MissedSuperLazy);
    let qs_l = spread(Kind::MissedLazy);
    let meta = |k: &str| f.meta(k).unwrap_or("?").to_string();
    let mut comments = vec![
        "Generated by `actuary calibrate tables`; do not edit (re-run the command).".into(),
        format!("command: {command}"),
        format!(
            "histograms: {} (pool {}, {} positions, depth {}, lazy exits {}, {} nodes, {} s)",
            source.display(),
            meta("pool"),
            meta("positions"),
            meta("depth"),
            meta("lazy"),
            meta("nodes"),
            meta("seconds")
        ),
        format!(
            "percentile pair per per-side bucket (low, high = 100 - low): {}",
            pair_lo
                .iter()
                .map(|p| format!("{p},{}", 100.0 - p))
                .collect::<Vec<_>>()
                .join(" ")
        ),
        "king_*: percentiles of a side's own king term by the attacker's bucket; lazy_*/superlazy_*: of the".into(),
        "side's other missing terms by its own bucket; *_p50: medians (the positional estimate).".into(),
        format!(
            "qs_base (super-lazy, lazy, full): full = QS_FUTILITY_MARGIN = {QS_FUTILITY_MARGIN}; each cheap tier adds"
        ),
        format!(
            "p{} - p50 of its pooled node-level miss (full - tier): super-lazy +{qs_sl}, lazy +{qs_l}.",
            100.0 - qs_pair_lo
        ),
    ];
    comments.extend(notes);
    LazyMargins::new(
        king,
        lazy,
        sl,
        pair_lo,
        [
            QS_FUTILITY_MARGIN + qs_sl,
            QS_FUTILITY_MARGIN + qs_l,
            QS_FUTILITY_MARGIN,
        ],
        comments,
    )
}

/// Exceeded counts per cheap tier (0 super-lazy, 1 lazy) and per-side bucket: the exits
/// whose side to move or opponent is in the bucket (a same-bucket pair counted once).
pub fn side_bucket_rates(s: &crate::calibrate::record::Safety) -> [[Count; 8]; 2] {
    let mut out = [[Count::default(); 8]; 2];
    for (t, tier) in out.iter_mut().enumerate() {
        for my in 0..8 {
            for opp in 0..8 {
                let c = s.by_pair[t][my][opp];
                tier[my].exits += c.exits;
                tier[my].wrong += c.wrong;
                if opp != my {
                    tier[opp].exits += c.exits;
                    tier[opp].wrong += c.wrong;
                }
            }
        }
    }
    out
}

/// The rate a per-side bucket is judged by: the worse of its two tiers' rates (a safe tier
/// must not dilute an unsafe one: the bucket's pair sets both tiers' tables).
pub fn bucket_rate(rates: &[[Count; 8]; 2], b: usize) -> f64 {
    rates
        .iter()
        .map(|t| t[b].wrong as f64 / t[b].exits.max(1) as f64)
        .fold(0.0, f64::max)
}

pub(crate) fn tables_cmd(a: &TablesArgs) -> Result<(), CalibError> {
    let f = ResidualFile::load(&a.file)?;
    let cmd = crate::calibrate::probe::command_line();
    let Some(target) = a.target_exceeded else {
        let t = build_tables(&f, &a.file, [a.pair.0; 8], a.pair.0, &cmd);
        write(&a.out, &t.to_text())?;
        println!("{}", t.to_text());
        eprintln!("calibrate tables: wrote {}", a.out.display());
        return Ok(());
    };
    let pool = a.pool.as_ref().expect("clap requires --pool");
    let positions = read_pool(pool, a.limit.map(|l| l as usize))?;
    let mut idx = [0usize; 8];
    let mut last = None;
    for iter in 1..=a.max_iterations {
        let pair_lo: [f64; 8] = std::array::from_fn(|b| PAIR_LADDER[idx[b]]);
        let mut t = build_tables(&f, &a.file, pair_lo, a.pair.0, &cmd);
        let r = run_pool(
            &positions,
            &RunConfig {
                depth: a.depth,
                threads: a.threads as usize,
                hash_mb: 4,
                lazy: Some(Arc::new(t.clone())),
                residual: false,
                per_position_samples: false,
                progress: !a.quiet,
            },
        );
        let rates = side_bucket_rates(&r.totals.safety);
        let line: Vec<String> = (0..8)
            .map(|b| {
                format!(
                    "{b}:{}/{}={:.3}%",
                    pair_lo[b],
                    100.0 - pair_lo[b],
                    100.0 * bucket_rate(&rates, b)
                )
            })
            .collect();
        eprintln!("iteration {iter}: {}", line.join("  "));
        let widen: Vec<usize> = (0..8)
            .filter(|&b| bucket_rate(&rates, b) > target && idx[b] + 1 < PAIR_LADDER.len())
            .collect();
        t.comments.push(format!(
            "--target-exceeded {}%: iteration {iter}, worse tier's exceeded rate per per-side bucket on {} ({} positions, depth {}): {}",
            target * 100.0,
            pool.display(),
            positions.len(),
            a.depth,
            line.join(" ")
        ));
        let settled = widen.is_empty();
        if settled {
            t.comments
                .push("settled: no bucket above the target".into());
        }
        last = Some(t);
        if settled {
            break;
        }
        for b in widen {
            idx[b] += 1;
        }
    }
    let t = last.expect("at least one iteration");
    write(&a.out, &t.to_text())?;
    println!("{}", t.to_text());
    eprintln!("calibrate tables: wrote {}", a.out.display());
    Ok(())
}

// ----- marginsafety -----------------------------------------------------------------------

/// One row of the safety report.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SafetyRow {
    pub tier: &'static str,
    /// Material bucket, or the per-side pair `my,opp`.
    pub bucket: String,
    pub n: u64,
    pub exceeded: u64,
    pub rate: f64,
    pub wilson: Wilson,
    pub clustered: ClusteredRate,
}

/// The marginsafety report.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SafetyReport {
    pub pool: String,
    pub positions: usize,
    pub depth: i32,
    pub tables: String,
    pub nodes: u64,
    pub seconds: f64,
    pub bootstrap: ClusterBootstrapConfig,
    pub by_material: Vec<SafetyRow>,
    pub by_pair: Vec<SafetyRow>,
}

const TIER_NAMES: [&str; 2] = ["super-lazy", "lazy"];

/// Statistic ids: material rows `t * 8 + b`, pair rows `16 + t * 64 + my * 8 + opp`.
fn safety_rows(
    records: &[PositionRecord],
    cfg: ClusterBootstrapConfig,
) -> Result<(Vec<SafetyRow>, Vec<SafetyRow>), CalibError> {
    let clusters: Vec<Vec<ClusterEntry>> = records
        .iter()
        .map(|r| {
            let mut v = Vec::new();
            for t in 0..2 {
                for b in 0..8 {
                    let c = r.safety.by_material[t][b];
                    if c.exits > 0 {
                        v.push((t * 8 + b, c.wrong, c.exits));
                    }
                    for o in 0..8 {
                        let c = r.safety.by_pair[t][b][o];
                        if c.exits > 0 {
                            v.push((16 + t * 64 + b * 8 + o, c.wrong, c.exits));
                        }
                    }
                }
            }
            v
        })
        .collect();
    let ci = clustered_rates(&clusters, 16 + 128, cfg)?;
    let row = |tier: usize, bucket: String, c: &ClusteredRate| SafetyRow {
        tier: TIER_NAMES[tier],
        bucket,
        n: c.trials,
        exceeded: c.successes,
        rate: c.estimate,
        wilson: Wilson::two_sided_95(c.successes, c.trials),
        clustered: *c,
    };
    let mut mat = Vec::new();
    let mut pair = Vec::new();
    for t in 0..2 {
        for b in 0..8 {
            mat.push(row(t, b.to_string(), &ci[t * 8 + b]));
        }
        for my in 0..8 {
            for opp in 0..8 {
                let c = &ci[16 + t * 64 + my * 8 + opp];
                if c.trials > 0 {
                    pair.push(row(t, format!("{my},{opp}"), c));
                }
            }
        }
    }
    Ok((mat, pair))
}

fn pct_str(x: f64) -> String {
    format!("{:.3}%", 100.0 * x)
}

fn safety_markdown(r: &SafetyReport) -> String {
    let mut s = format!(
        "Margin safety: pool {} ({} positions), depth {}, tables {}, {} nodes, {:.1} s.\n\
         Exceeded = the full evaluation lands on the other side of the bound the exit used.\n\
         Intervals 95 %: Wilson (nodes as independent trials) and position-clustered bootstrap \
         ({} resamples of the positions, seed {}).\n\n\
         Check: n ≥ 1000 and the larger of the two upper bounds ≤ 1 % (with no exceeded exit at \
         all the clustered interval collapses to [0, 0]; Wilson's upper bound is then the honest one).\n\n\
         | tier | material bucket | n | exceeded | rate | Wilson 95 % | clustered 95 % | largest position share | check |\n\
         |---|---|---|---|---|---|---|---|---|\n",
        r.pool,
        r.positions,
        r.depth,
        r.tables,
        r.nodes,
        r.seconds,
        r.bootstrap.resamples,
        r.bootstrap.seed
    );
    for row in &r.by_material {
        let verdict = if row.n < 1000 {
            "n < 1000"
        } else if row.clustered.upper.max(row.wilson.upper) <= 0.01 {
            "yes"
        } else {
            "**NO**"
        };
        s.push_str(&format!(
            "| {} | {} | {} | {} | {} | [{}, {}] | [{}, {}] | {:.1}% | {} |\n",
            row.tier,
            row.bucket,
            row.n,
            row.exceeded,
            pct_str(row.rate),
            pct_str(row.wilson.lower),
            pct_str(row.wilson.upper),
            pct_str(row.clustered.lower),
            pct_str(row.clustered.upper),
            100.0 * row.clustered.largest_cluster_share,
            verdict
        ));
    }
    s.push_str(
        "\nBy per-side bucket pair (side to move's bucket, opponent's bucket; the table entries \
         that drive a material bucket):\n\n| tier | my,opp | n | exceeded | rate | Wilson 95 % | clustered 95 % |\n|---|---|---|---|---|---|---|\n",
    );
    for row in &r.by_pair {
        s.push_str(&format!(
            "| {} | {} | {} | {} | {} | [{}, {}] | [{}, {}] |\n",
            row.tier,
            row.bucket,
            row.n,
            row.exceeded,
            pct_str(row.rate),
            pct_str(row.wilson.lower),
            pct_str(row.wilson.upper),
            pct_str(row.clustered.lower),
            pct_str(row.clustered.upper)
        ));
    }
    s
}

pub(crate) fn safety_cmd(a: &SafetyArgs) -> Result<(), CalibError> {
    let positions = pool_positions(&a.run)?;
    let (tables, tables_name) = load_tables(&a.run.tables)?;
    let r = run_pool(
        &positions,
        &RunConfig {
            depth: a.run.depth,
            threads: a.run.threads as usize,
            hash_mb: a.run.hash as usize,
            lazy: Some(tables),
            residual: false,
            per_position_samples: false,
            progress: !a.run.quiet,
        },
    );
    let cfg = ClusterBootstrapConfig {
        resamples: a.resamples as usize,
        seed: a.seed,
        ..Default::default()
    };
    let (by_material, by_pair) = safety_rows(&r.records, cfg)?;
    let report = SafetyReport {
        pool: a.run.pool.display().to_string(),
        positions: positions.len(),
        depth: a.run.depth,
        tables: tables_name,
        nodes: r.totals.nodes,
        seconds: r.seconds,
        bootstrap: cfg,
        by_material,
        by_pair,
    };
    let md = safety_markdown(&report);
    let json = serde_json::to_string_pretty(&report).expect("serializable");
    write(&a.out.join("marginsafety.json"), &json)?;
    write(&a.out.join("marginsafety.md"), &md)?;
    write(&a.out.join("positions.txt"), &positions_text(&r.records))?;
    println!("{md}");
    eprintln!(
        "calibrate marginsafety: {} positions in {:.1} s -> {}",
        positions.len(),
        r.seconds,
        a.out.display()
    );
    Ok(())
}

// ----- exitrate ----------------------------------------------------------------------------

/// One material bucket of the exit-rate report.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ExitRow {
    pub bucket: usize,
    pub evals: u64,
    pub super_lazy: f64,
    pub lazy: f64,
    pub full: f64,
    /// Exceeded rate of the bucket's exits (both cheap tiers).
    pub exceeded_rate: f64,
    /// Low exit rate and low exceeded rate: room for narrower margins.
    pub headroom: bool,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ExitReport {
    pub pool: String,
    pub positions: usize,
    pub depth: i32,
    pub tables: String,
    pub nodes: u64,
    pub seconds: f64,
    pub overall: ExitRow,
    pub by_material: Vec<ExitRow>,
}

fn exit_row(bucket: usize, e: [u64; 3], c: Count) -> ExitRow {
    let n: u64 = e.iter().sum();
    let f = |k: u64| k as f64 / n.max(1) as f64;
    ExitRow {
        bucket,
        evals: n,
        super_lazy: f(e[0]),
        lazy: f(e[1]),
        full: f(e[2]),
        exceeded_rate: c.wrong as f64 / c.exits.max(1) as f64,
        headroom: false,
    }
}

pub(crate) fn exitrate_cmd(a: &ExitRateArgs) -> Result<(), CalibError> {
    let positions = pool_positions(&a.run)?;
    let (tables, tables_name) = load_tables(&a.run.tables)?;
    let r = run_pool(
        &positions,
        &RunConfig {
            depth: a.run.depth,
            threads: a.run.threads as usize,
            hash_mb: a.run.hash as usize,
            lazy: Some(tables),
            residual: false,
            per_position_samples: false,
            progress: !a.run.quiet,
        },
    );
    let s = &r.totals.safety;
    let count = |b: usize| {
        let mut c = s.by_material[0][b];
        c.exits += s.by_material[1][b].exits;
        c.wrong += s.by_material[1][b].wrong;
        c
    };
    let mut all_e = [0u64; 3];
    let mut all_c = Count::default();
    for b in 0..8 {
        for (a, e) in all_e.iter_mut().zip(r.totals.exits[b]) {
            *a += e;
        }
        let c = count(b);
        all_c.exits += c.exits;
        all_c.wrong += c.wrong;
    }
    let overall = exit_row(8, all_e, all_c);
    let by_material: Vec<ExitRow> = (0..8)
        .map(|b| {
            let mut row = exit_row(b, r.totals.exits[b], count(b));
            row.headroom =
                row.evals > 0 && row.full > overall.full && row.exceeded_rate < a.low_exceeded;
            row
        })
        .collect();
    let report = ExitReport {
        pool: a.run.pool.display().to_string(),
        positions: positions.len(),
        depth: a.run.depth,
        tables: tables_name,
        nodes: r.totals.nodes,
        seconds: r.seconds,
        overall,
        by_material,
    };
    let mut md = format!(
        "Exit rate: pool {} ({} positions), depth {}, tables {}, {} nodes, {:.1} s.\n\
         Headroom = exit rate below the overall one and exceeded rate below {}.\n\n\
         | material bucket | evals | super-lazy | lazy | full | exceeded | headroom |\n|---|---|---|---|---|---|---|\n",
        report.pool,
        report.positions,
        report.depth,
        report.tables,
        report.nodes,
        report.seconds,
        pct_str(a.low_exceeded)
    );
    for row in report.by_material.iter().chain([&report.overall]) {
        md.push_str(&format!(
            "| {} | {} | {:.1}% | {:.1}% | {:.1}% | {} | {} |\n",
            if row.bucket == 8 {
                "all".to_string()
            } else {
                row.bucket.to_string()
            },
            row.evals,
            100.0 * row.super_lazy,
            100.0 * row.lazy,
            100.0 * row.full,
            pct_str(row.exceeded_rate),
            if row.headroom { "yes" } else { "" }
        ));
    }
    let json = serde_json::to_string_pretty(&report).expect("serializable");
    write(&a.out.join("exitrate.json"), &json)?;
    write(&a.out.join("exitrate.md"), &md)?;
    println!("{md}");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::calibrate::record::Safety;

    #[test]
    fn argument_parsers() {
        assert_eq!(parse_pair("2,98"), Ok((2.0, 98.0)));
        assert!(parse_pair("2,95").unwrap_err().contains("symmetric"));
        assert!(parse_pair("98,2").is_err());
        assert!(
            parse_percentile("101")
                .unwrap_err()
                .contains("outside 0–100")
        );
        assert!(parse_percentile("-1").is_err());
        assert_eq!(parse_rate("1%"), Ok(0.01));
        assert_eq!(parse_rate("0.02"), Ok(0.02));
        assert!(parse_rate("150%").is_err());
    }

    #[test]
    fn side_bucket_rates_count_each_pair_once_per_bucket() {
        let c = |exits, wrong| Count { exits, wrong };
        let mut s = Safety::default();
        s.by_pair[0][2][5] = c(10, 1);
        s.by_pair[1][3][3] = c(7, 2);
        s.by_pair[1][2][2] = c(1000, 0);
        let r = side_bucket_rates(&s);
        assert_eq!(r[0][2], c(10, 1));
        assert_eq!(r[0][5], c(10, 1));
        assert_eq!(r[1][3], c(7, 2));
        assert_eq!(r[1][2], c(1000, 0));
        assert_eq!(r[0][0], Count::default());
        // bucket 2: super-lazy 1/10 is not diluted by lazy 0/1000
        assert_eq!(bucket_rate(&r, 2), 0.1);
        assert_eq!(bucket_rate(&r, 3), 2.0 / 7.0);
    }
}
