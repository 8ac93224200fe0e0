//! `collect` and `calibrate surprise`: the pruning calibration of issue 14 (docs/design/chess-DESIGN.md §3).
//!
//! ```text
//! actuary collect fh  --pool calib.epd --depth 8 --out data/chess/fh-table.txt   # alpha side
//! actuary collect rfp --pool calib.epd --depth 8 --out data/chess/rfp-table.txt  # beta side
//! actuary calibrate surprise --mechanism lmp --pool holdout.epd --depth 8 --out docs/pruning
//! ```
//!
//! Every pool position is searched to a fixed depth by one thread with a cleared table and
//! histories (as the lazy-evaluation calibration does), so a position's tree is one cluster
//! and the counts do not depend on `--threads`.
//!
//! * `collect fh` turns off every alpha-side prune (LMP, EFP, SEE) so each gate-eligible quiet
//!   move is searched, and counts per cell whether it raised alpha. The table stores the
//!   one-sided 95 % Wilson upper bound (the pessimistic fail-high rate) in thousandths of a
//!   percent; LMP prunes where it is below the depth allowance.
//! * `collect rfp` turns RFP off and, at every non-PV node whose eval clears beta (depth ≤ 10),
//!   counts whether the node still failed low. Per (depth, improving, opponent-hung) it writes
//!   the smallest gap whose pessimistic fail-low rate is under the allowance: that gap is the
//!   margin; where the samples are too thin the formula stays (and the file says so).
//! * `calibrate surprise` prunes nothing with the chosen mechanism: where it would have fired,
//!   the search goes on and records whether the prune would have been wrong. Rates per (depth,
//!   slack) with Wilson and position-clustered bootstrap intervals, Markdown and JSON.

use super::calibrate::RunOpts;
use super::pool::{PoolPosition, PoolSearch, read_pool, search_pool};
use crate::probe::{CellCount, CellProbe, PositionCells, totals};
use chess::search::Worker;
use chess::search::params::Tunables;
use chess::search::prune::{
    self, EfpMode, FH_CELLS, FH_MAGIC, GAP_BUCKETS, GAP_EDGES, HUNG_BUCKETS, IMPROVE_BUCKETS,
    LATE_BUCKETS, MATERIAL_BUCKETS, Mechanism, ProbeMode, PruneConfig, PruneTables, RFP_CELLS,
    RFP_GAP_BUCKETS, RFP_GAP_LOWER, RFP_MAGIC, SURPRISE_DEPTH_SLACK, Source, TABLE_DEPTHS, fh_axes,
    rfp_axes, surprise_axes,
};
use chess::search::smp::SearchOptions;
use evidence::Wilson;
use evidence::clustered::{ClusterBootstrapConfig, ClusterEntry, ClusteredRate, clustered_rates};
use serde::Serialize;
use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

/// `actuary collect <fh|rfp>`.
#[derive(Debug, clap::Args)]
pub struct CollectArgs {
    #[command(subcommand)]
    pub cmd: CollectCmd,
}

#[derive(Debug, clap::Subcommand)]
pub enum CollectCmd {
    /// Alpha-side joint fail-high table: does a gate-eligible quiet move raise alpha, by
    /// remaining depth, hung material, gap to alpha, lateness and improvement?
    Fh(CollectOpts),
    /// Beta-side table: does a node whose static eval clears beta still fail high, by gap
    /// above beta, depth, improving and "the opponent left something hanging"? Writes the RFP
    /// margins derived from it.
    Rfp(CollectRfpOpts),
}

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

/// Options shared by both tables.
#[derive(Debug, clap::Args)]
pub struct CollectOpts {
    #[command(flatten)]
    pub run: RunOpts,
    /// Pruning switches for the collection searches, `name=value[,...]` (see `actuary
    /// collect --help`); the mechanism being measured is turned off regardless.
    #[arg(long, value_name = "SWITCHES", default_value = "")]
    pub set: String,
    /// The evaluation the collection searches use.
    #[arg(long, value_enum, default_value_t = EvalChoice::Nnue)]
    pub eval: EvalChoice,
    /// The generated table file (written atomically) [default: print to stdout].
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
}

#[derive(Debug, clap::Args)]
pub struct CollectRfpOpts {
    #[command(flatten)]
    pub common: CollectOpts,
    /// Fail-low allowance by remaining depth 1..=10, thousandths of a percent (1000 = 1 %):
    /// the margin is the smallest gap whose pessimistic fail-low rate is under it.
    #[arg(long, value_name = "LIST", default_value = "2000,2000,1500,1200,1000,800,600,500,400,300", value_parser = parse_allowance, conflicts_with = "allowance_from")]
    pub allowance: Allowance,
    /// Take the allowance from a `calibrate surprise --mechanism rfp` report instead: each
    /// depth's measured surprise rate (depths it lacks get the deepest measured one). With
    /// the formula's report this keeps the formula's risk per depth and lets the table
    /// redistribute it across rows.
    #[arg(long, value_name = "JSON")]
    pub allowance_from: Option<PathBuf>,
    /// Fewest samples a gap bucket needs before it can set a margin.
    #[arg(long, value_name = "N", default_value_t = 200)]
    pub min_samples: u64,
    /// Alpha-side table to cross-check near gap zero [default: the embedded one].
    #[arg(long, value_name = "FILE")]
    pub fh: Option<PathBuf>,
    /// Re-derive the margins from the counts of an existing RFP table file (no searching:
    /// a new `--allowance` or `--min-samples` in a second); `--pool` is then only recorded.
    #[arg(long, value_name = "TABLE")]
    pub from: Option<PathBuf>,
}

/// Ten allowances (one per remaining depth).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Allowance(pub [u32; TABLE_DEPTHS]);

pub fn parse_allowance(s: &str) -> Result<Allowance, String> {
    let v: Vec<u32> = s
        .split(',')
        .map(|x| {
            x.trim()
                .parse::<u32>()
                .ok()
                .filter(|&a| a <= 100_000)
                .ok_or_else(|| format!("'{x}' is not 0..=100000 (thousandths of a percent)"))
        })
        .collect::<Result<_, _>>()?;
    let a: [u32; TABLE_DEPTHS] = v
        .try_into()
        .map_err(|v: Vec<u32>| format!("expected {TABLE_DEPTHS} values, got {}", v.len()))?;
    Ok(Allowance(a))
}

/// `actuary calibrate surprise`.
#[derive(Debug, clap::Args)]
pub struct SurpriseArgs {
    /// The mechanisms to search anyway, one run each: rfp, efp, lmp, qfutility, nmp, razor,
    /// see, lmr, multicut, a comma-separated list, or `all` (then `summary.md` lists every
    /// total).
    #[arg(long, value_parser = parse_mechanisms)]
    pub mechanism: Mechanisms,
    #[command(flatten)]
    pub run: RunOpts,
    /// Pruning switches (`name=value[,...]`): the configuration whose surprises are measured.
    #[arg(long, value_name = "SWITCHES", default_value = "")]
    pub set: String,
    /// The evaluation the searches use. The margins were first set on the hand evaluation's
    /// scale; measuring both on one pool says whether they mean the same risk for the net.
    #[arg(long, value_enum, default_value_t = EvalChoice::Nnue)]
    pub eval: EvalChoice,
    /// Bootstrap resamples (positions drawn with replacement), 1 to 100,000: memory is 8
    /// bytes per resample per cell.
    #[arg(long, value_name = "N", default_value_t = 1000,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new()
              .range(1..=crate::calibrate::MAX_RESAMPLES as u64))]
    pub resamples: usize,
    /// Directory for `<mechanism>.md`, `<mechanism>.json` and the per-position counts
    /// `<mechanism>.cells.jsonl` [default: Markdown on stdout only].
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
}

/// The mechanisms of one `surprise` command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mechanisms(pub Vec<Mechanism>);

pub fn parse_mechanisms(s: &str) -> Result<Mechanisms, String> {
    if s.trim().eq_ignore_ascii_case("all") {
        return Ok(Mechanisms(Mechanism::ALL.to_vec()));
    }
    let mut v = Vec::new();
    for m in s.split(',').map(str::trim) {
        let m = Mechanism::parse(m)?;
        if !v.contains(&m) {
            v.push(m);
        }
    }
    Ok(Mechanisms(v))
}

/// Why a collection could not run.
#[derive(Debug, thiserror::Error)]
pub enum CollectError {
    #[error(transparent)]
    Pool(#[from] super::pool::PoolError),
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

fn config(set: &str) -> Result<PruneConfig, CollectError> {
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
            let folded = vec![CellCount::default(); crate::probe::cells_of(mode)];
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

fn emit(out: &Option<PathBuf>, text: &str) -> Result<(), CollectError> {
    match out {
        Some(p) => {
            evidence::io::atomic_write(p, text.as_bytes())?;
            eprintln!("wrote {}", p.display());
        }
        None => print!("{text}"),
    }
    Ok(())
}

fn provenance(
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

// ----- collect fh ----------------------------------------------------------------------------

/// The alpha-side table file for `counts` (index = cell).
pub fn fh_table_text(counts: &[CellCount], header: &str) -> String {
    let mut s = format!("{FH_MAGIC}\n");
    s.push_str(header);
    s.push_str(
        "# Generated by `actuary collect fh`; do not edit (re-run the command).\n\
         # Each cell: a gate-eligible quiet move (not in check, no check, not hash/killer/counter)\n\
         # at remaining depth 1..10 (10 = deeper); hung = SEE-loss bucket (0, <=100, <=350, <=550,\n\
         # more); gap = alpha - eval bucket (<=0, <=30, <=60, <=100, <=150, <=250, <=400, <=700,\n\
         # more); late = move number bucket (1, 2, 3, 4, 5-6, 7-9, 10-14, 15-22, 23+);\n\
         # imp = mover's improvement (<=-50, between or unknown, >=50); n searched, raised = moves\n\
         # that raised alpha, upper = one-sided 95 % Wilson upper bound, thousandths of a percent.\n\
         # columns: cell depth hung gap late imp n raised upper\n",
    );
    for (cell, c) in counts.iter().enumerate() {
        if c.n == 0 {
            continue;
        }
        let [d, h, g, l, i] = fh_axes(cell);
        let ub = Wilson::one_sided_95(c.k, c.n).upper_milli_percent();
        let _ = writeln!(s, "cell {d} {h} {g} {l} {i} {} {} {ub}", c.n, c.k);
    }
    // Sealed: the engine refuses a table cut short or changed.
    chess::datafile::seal(&s)
}

/// Per depth: how many moves the table would let LMP prune at the default allowance, and the
/// fail-high rate among them (a summary printed after collection).
fn fh_summary(counts: &[CellCount], cfg: &PruneConfig) -> String {
    let mut s =
        String::from("depth  moves      raised%   prunable@allowance  raised% among them\n");
    for d in 1..=TABLE_DEPTHS {
        let (mut n, mut k, mut pn, mut pk) = (0u64, 0u64, 0u64, 0u64);
        for (cell, c) in counts.iter().enumerate() {
            if fh_axes(cell)[0] != d {
                continue;
            }
            n += c.n;
            k += c.k;
            if Wilson::one_sided_95(c.k, c.n).upper_milli_percent() < cfg.lmp_schedule()[d - 1] {
                pn += c.n;
                pk += c.k;
            }
        }
        let pct = |a: u64, b: u64| 100.0 * a as f64 / b.max(1) as f64;
        let _ = writeln!(
            s,
            "{d:>5}  {n:>9}  {:>7.3}%  {pn:>9} ({:>5.1}%)   {:.4}%",
            pct(k, n),
            pct(pn, n),
            pct(pk, pn)
        );
    }
    s
}

fn collect_fh(o: &CollectOpts) -> Result<(), CollectError> {
    let mut cfg = config(&o.set)?;
    cfg.lmp = Source::Off;
    cfg.efp = EfpMode::Off;
    cfg.see = false;
    let positions = read_pool(&o.run.pool, o.run.limit.map(|l| l as usize))?;
    let r = run_probe(&positions, &o.run, &cfg, o.eval, ProbeMode::Fh);
    let counts = totals(&r.records, FH_CELLS);
    let mut header = format!("# command: {}\n", command_line());
    header.push_str(&provenance(&o.run, positions.len(), &r, &cfg, o.eval));
    emit(&o.out, &fh_table_text(&counts, &header))?;
    eprint!("{}", fh_summary(&counts, &PruneConfig::default()));
    Ok(())
}

// ----- collect rfp ---------------------------------------------------------------------------

/// What a (depth, improving, hung) row of the beta-side table supports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RowMargin {
    /// The lower edge of the smallest gap bucket with enough samples whose pessimistic
    /// fail-low rate — and that of every sampled bucket above it — is under the allowance.
    Cp(i32),
    /// Sampled, but no gap is safe enough: RFP never fires in this row.
    Never,
    /// Too few samples to say: the formula decides.
    Thin,
}

pub fn rfp_row_margin(row: &[CellCount], allow: u32, min_samples: u64) -> RowMargin {
    let ok = |c: &CellCount| Wilson::one_sided_95(c.k, c.n).upper_milli_percent() <= allow;
    if row.iter().all(|c| c.n < min_samples) {
        return RowMargin::Thin;
    }
    (0..row.len())
        .find(|&g| row[g].n >= min_samples && row[g..].iter().all(|c| c.n < min_samples || ok(c)))
        .map_or(RowMargin::Never, |g| RowMargin::Cp(RFP_GAP_LOWER[g]))
}

pub fn rfp_table_text(
    counts: &[CellCount],
    allowance: &Allowance,
    min_samples: u64,
    header: &str,
) -> String {
    let mut s = format!("{RFP_MAGIC}\n");
    s.push_str(header);
    let _ = writeln!(
        s,
        "# Generated by `actuary collect rfp`; do not edit (re-run the command).\n\
         # Each cell: a non-PV node, not in check, depth 1..10 (10 = deeper), eval >= beta;\n\
         # improving; hung = the side to move can win a piece (attacked and undefended, or by a\n\
         # cheaper piece); gap = eval - beta bucket by lower edge {RFP_GAP_LOWER:?}; n nodes,\n\
         # failed_low = nodes whose search still came in below beta; upper = one-sided 95 %\n\
         # Wilson upper bound on the fail-low rate, thousandths of a percent.\n\
         # margin lines: the smallest gap edge whose bucket (>= {min_samples} nodes) and every\n\
         # sampled bucket above it have upper <= the depth's allowance {:?};\n\
         # 'never' = sampled but no gap that safe (RFP off in the row); 'formula' = too few\n\
         # samples, the engine uses {}*depth - {}*improving.\n\
         # columns: cell depth improving hung gap n failed_low upper | margin depth improving hung cp",
        allowance.0,
        Tunables::default().rfp_margin,
        Tunables::default().rfp_improving,
    );
    for (cell, c) in counts.iter().enumerate() {
        if c.n == 0 {
            continue;
        }
        let [d, i, h, g] = rfp_axes(cell);
        let ub = Wilson::one_sided_95(c.k, c.n).upper_milli_percent();
        let _ = writeln!(s, "cell {d} {i} {h} {g} {} {} {ub}", c.n, c.k);
    }
    for d in 1..=TABLE_DEPTHS {
        for i in 0..2 {
            for h in 0..2 {
                let base = ((d - 1) * 2 + i) * 2 + h;
                let row = &counts[base * RFP_GAP_BUCKETS..(base + 1) * RFP_GAP_BUCKETS];
                let m = match rfp_row_margin(row, allowance.0[d - 1], min_samples) {
                    RowMargin::Cp(cp) => cp.to_string(),
                    RowMargin::Never => "never".to_string(),
                    RowMargin::Thin => "formula".to_string(),
                };
                let _ = writeln!(s, "margin {d} {i} {h} {m}");
            }
        }
    }
    // Sealed: the engine refuses a table cut short or changed.
    chess::datafile::seal(&s)
}

/// The cross-check the seed asks for: near gap zero, the beta-side fail-high rate against the
/// alpha-side table's bucket 0 (eval ≥ alpha) for the earliest gate-eligible moves.
fn cross_check(counts: &[CellCount], fh_counts: Option<&[CellCount]>) -> String {
    let mut s = String::from(
        "cross-check near gap 0: beta side P(fail high | 0 <= eval-beta < 25) vs alpha side\n\
         (first move's P(raise alpha | gap bucket 0, hung 0, late 1-2) when the fh counts are given)\n",
    );
    for d in 1..=TABLE_DEPTHS {
        let (mut n, mut k) = (0u64, 0u64);
        for i in 0..2 {
            for h in 0..2 {
                let c = counts[(((d - 1) * 2 + i) * 2 + h) * RFP_GAP_BUCKETS];
                n += c.n;
                k += c.n - c.k;
            }
        }
        let mut line = format!(
            "depth {d:>2}: beta side {:>6.2}% of {n}",
            100.0 * k as f64 / n.max(1) as f64
        );
        if let Some(fc) = fh_counts {
            let (mut an, mut ak) = (0u64, 0u64);
            for (cell, c) in fc.iter().enumerate() {
                let [cd, h, g, l, _] = fh_axes(cell);
                if cd == d && h == 0 && g == 0 && l <= 1 {
                    an += c.n;
                    ak += c.k;
                }
            }
            let _ = write!(
                line,
                "   alpha side {:>6.2}% of {an}",
                100.0 * ak as f64 / an.max(1) as f64
            );
        }
        s.push_str(&line);
        s.push('\n');
    }
    s
}

/// Per-depth allowance (thousandths of a percent, rounded up) from a surprise report's
/// `by_depth` rates.
pub fn allowance_from_report(p: &std::path::Path) -> Result<Allowance, CollectError> {
    let bad = |m: String| CollectError::Input(format!("--allowance-from {}: {m}", p.display()));
    let text = std::fs::read_to_string(p).map_err(|e| bad(e.to_string()))?;
    let v: serde_json::Value = serde_json::from_str(&text).map_err(|e| bad(e.to_string()))?;
    if v["format"] != "actuary-surprise v1" || v["mechanism"] != "rfp" {
        return Err(bad("not an RFP surprise report".into()));
    }
    let mut a = [None; TABLE_DEPTHS];
    for r in v["by_depth"].as_array().into_iter().flatten() {
        if let (Some(d), Some(rate)) = (r["depth"].as_u64(), r["rate"].as_f64())
            && (1..=TABLE_DEPTHS as u64).contains(&d)
        {
            a[d as usize - 1] = Some((rate * 100_000.0).ceil() as u32);
        }
    }
    let mut last = a
        .iter()
        .flatten()
        .next()
        .copied()
        .ok_or_else(|| bad("no depth rows".into()))?;
    let mut out = [0; TABLE_DEPTHS];
    for (o, x) in out.iter_mut().zip(a) {
        last = x.unwrap_or(last);
        *o = last;
    }
    Ok(Allowance(out))
}

/// Counts read back from an RFP table file's `cell` lines.
pub fn rfp_counts_from_text(text: &str) -> Vec<CellCount> {
    let mut out = vec![CellCount::default(); RFP_CELLS];
    for line in text.lines() {
        let Some(rest) = line.strip_prefix("cell ") else {
            continue;
        };
        let t: Vec<usize> = rest
            .split_whitespace()
            .filter_map(|x| x.parse().ok())
            .collect();
        if t.len() != 7 || t[0] == 0 || t[0] > TABLE_DEPTHS || t[1] > 1 || t[2] > 1 {
            continue;
        }
        let cell = ((t[0] - 1) * 2 + t[1]) * 2 + t[2];
        if t[3] < RFP_GAP_BUCKETS {
            out[cell * RFP_GAP_BUCKETS + t[3]] = CellCount {
                n: t[4] as u64,
                k: t[5] as u64,
            };
        }
    }
    out
}

/// Counts read back from a table file's `cell` lines (for the cross-check).
pub fn fh_counts_from_text(text: &str) -> Vec<CellCount> {
    let mut out = vec![CellCount::default(); FH_CELLS];
    for line in text.lines() {
        let t: Vec<u64> = match line.strip_prefix("cell ") {
            Some(rest) => rest
                .split_whitespace()
                .filter_map(|x| x.parse().ok())
                .collect(),
            None => continue,
        };
        if t.len() != 8 || t[0] == 0 {
            continue;
        }
        let cell = ((((t[0] as usize - 1) * HUNG_BUCKETS + t[1] as usize) * GAP_BUCKETS
            + t[2] as usize)
            * LATE_BUCKETS
            + t[3] as usize)
            * IMPROVE_BUCKETS
            + t[4] as usize;
        if cell < FH_CELLS {
            out[cell] = CellCount { n: t[5], k: t[6] };
        }
    }
    out
}

fn collect_rfp(o: &CollectRfpOpts) -> Result<(), CollectError> {
    let mut cfg = config(&o.common.set)?;
    cfg.rfp = Source::Off;
    // Check the cross-check table before spending the search time.
    let fh_text = match &o.fh {
        Some(p) => {
            let t = std::fs::read_to_string(p).map_err(|source| prune::PruneTableError::Io {
                file: p.display().to_string(),
                source,
            })?;
            PruneTables::parse(
                &t,
                &p.display().to_string(),
                prune::EMBEDDED_RFP,
                "<embedded>",
            )?;
            t
        }
        None => prune::EMBEDDED_FH.to_string(),
    };
    let mut header = format!("# command: {}\n", command_line());
    let allowance = match &o.allowance_from {
        None => o.allowance,
        Some(p) => {
            let a = allowance_from_report(p)?;
            header.push_str(&format!(
                "# allowance from {} (its per-depth surprise rates): {:?}\n",
                p.display(),
                a.0
            ));
            a
        }
    };
    let counts = match &o.from {
        Some(p) => {
            let text = std::fs::read_to_string(p).map_err(|source| prune::PruneTableError::Io {
                file: p.display().to_string(),
                source,
            })?;
            // The file must be an RFP table the engine accepts.
            PruneTables::parse(
                prune::EMBEDDED_FH,
                "<embedded>",
                &text,
                &p.display().to_string(),
            )?;
            let old = text.lines().nth(2).unwrap_or("").trim_start_matches("# ");
            header.push_str(&format!("# counts from {} ({old})\n", p.display()));
            rfp_counts_from_text(&text)
        }
        None => {
            let positions = read_pool(&o.common.run.pool, o.common.run.limit.map(|l| l as usize))?;
            let r = run_probe(
                &positions,
                &o.common.run,
                &cfg,
                o.common.eval,
                ProbeMode::Rfp,
            );
            header.push_str(&provenance(
                &o.common.run,
                positions.len(),
                &r,
                &cfg,
                o.common.eval,
            ));
            totals(&r.records, RFP_CELLS)
        }
    };
    emit(
        &o.common.out,
        &rfp_table_text(&counts, &allowance, o.min_samples, &header),
    )?;
    let fh_counts = fh_counts_from_text(&fh_text);
    let any = fh_counts.iter().any(|c| c.n > 0);
    eprint!("{}", cross_check(&counts, any.then_some(&fh_counts[..])));
    Ok(())
}

impl CollectArgs {
    pub fn run(&self) -> Result<ExitCode, crate::LabError> {
        match &self.cmd {
            CollectCmd::Fh(o) => collect_fh(o)?,
            CollectCmd::Rfp(o) => collect_rfp(o)?,
        }
        Ok(ExitCode::SUCCESS)
    }
}

// ----- calibrate surprise --------------------------------------------------------------------

/// One surprise statistic with both intervals (`None` on an axis = rolled up over it).
#[derive(Debug, Clone, Serialize)]
pub struct SurpriseRow {
    /// Material bucket (both armies / 8).
    pub material: Option<usize>,
    /// Remaining depth (0 = quiescence).
    pub depth: Option<usize>,
    /// Slack bucket.
    pub slack: Option<usize>,
    pub fired: u64,
    pub surprises: u64,
    pub rate: f64,
    pub wilson_lower: f64,
    pub wilson_upper: f64,
    pub clustered: ClusteredRate,
}

#[derive(Debug, Clone, Serialize)]
pub struct SurpriseReport {
    pub format: &'static str,
    pub mechanism: &'static str,
    pub slack: &'static str,
    pub slack_edges: Vec<i32>,
    pub command: String,
    pub pool: String,
    pub positions: usize,
    pub depth: i32,
    pub nodes: u64,
    pub seconds: f64,
    pub switches: String,
    /// The evaluation searched with: `hce` or the embedded net's identity.
    pub eval: String,
    pub resamples: usize,
    pub total: SurpriseRow,
    pub by_depth: Vec<SurpriseRow>,
    pub by_material: Vec<SurpriseRow>,
    /// Depth × slack, rolled up over material.
    pub cells: Vec<SurpriseRow>,
}

/// The rows of a surprise report.
pub struct SurpriseRows {
    pub total: SurpriseRow,
    pub by_depth: Vec<SurpriseRow>,
    pub by_material: Vec<SurpriseRow>,
    pub cells: Vec<SurpriseRow>,
}

/// Rates and intervals of a surprise run: every depth × slack cell, each depth, each
/// material bucket and the total, all over the same position resamples.
pub fn surprise_rows(
    records: &[PositionCells],
    resamples: usize,
) -> Result<SurpriseRows, CollectError> {
    let depths = TABLE_DEPTHS + 1;
    let (ds, d0, m0) = (
        SURPRISE_DEPTH_SLACK,
        SURPRISE_DEPTH_SLACK,
        SURPRISE_DEPTH_SLACK + depths,
    );
    let t0 = m0 + MATERIAL_BUCKETS;
    let n_stats = t0 + 1;
    let clusters: Vec<Vec<ClusterEntry>> = records
        .iter()
        .map(|r| {
            let mut acc = vec![(0u64, 0u64); n_stats];
            for &(c, v) in &r.cells {
                let [m, d, _] = surprise_axes(c as usize);
                for i in [c as usize % ds, d0 + d, m0 + m, t0] {
                    acc[i].0 += v.k;
                    acc[i].1 += v.n;
                }
            }
            acc.iter()
                .enumerate()
                .filter(|(_, c)| c.1 > 0)
                .map(|(i, &(k, n))| (i, k, n))
                .collect()
        })
        .collect();
    let cfg = ClusterBootstrapConfig {
        resamples,
        ..Default::default()
    };
    let rates = clustered_rates(&clusters, n_stats, cfg)?;
    let row = |i: usize, material: Option<usize>, depth: Option<usize>, slack: Option<usize>| {
        let c = rates[i];
        let w = Wilson::two_sided_95(c.successes, c.trials);
        SurpriseRow {
            material,
            depth,
            slack,
            fired: c.trials,
            surprises: c.successes,
            rate: c.estimate,
            wilson_lower: w.lower,
            wilson_upper: w.upper,
            clustered: c,
        }
    };
    let has = |i: usize| rates[i].trials > 0;
    Ok(SurpriseRows {
        cells: (0..ds)
            .filter(|&i| has(i))
            .map(|i| row(i, None, Some(i / GAP_BUCKETS), Some(i % GAP_BUCKETS)))
            .collect(),
        by_depth: (0..depths)
            .filter(|&d| has(d0 + d))
            .map(|d| row(d0 + d, None, Some(d), None))
            .collect(),
        by_material: (0..MATERIAL_BUCKETS)
            .filter(|&m| has(m0 + m))
            .map(|m| row(m0 + m, Some(m), None, None))
            .collect(),
        total: row(t0, None, None, None),
    })
}

fn pct(x: f64) -> String {
    format!("{:.3}%", 100.0 * x)
}

fn slack_label(m: Mechanism, b: usize) -> String {
    if m == Mechanism::Lmr {
        return format!("{b} ply");
    }
    match b {
        0 => "≤ 0".into(),
        b if b < GAP_BUCKETS - 1 => format!("{}–{}", GAP_EDGES[b - 1] + 1, GAP_EDGES[b]),
        _ => format!("> {}", GAP_EDGES[GAP_BUCKETS - 2]),
    }
}

pub fn surprise_markdown(r: &SurpriseReport, m: Mechanism) -> String {
    let mut s = format!(
        "# Surprise rate: {} (search anyway)\n\n`{}`\n\nPool `{}` ({} positions), depth {}, {} nodes, {:.0} s; evaluation `{}`; switches `{}`.\n\
         A surprise: the prune would have been wrong (the move or node searched anyway came out\n\
         on the other side of the bound). Intervals: Wilson 95 % (nodes as independent draws)\n\
         and position-clustered bootstrap 95 % ({} resamples of the positions).\n\
         Slack axis: {}.\n\n",
        m.name(),
        r.command,
        r.pool,
        r.positions,
        r.depth,
        r.nodes,
        r.seconds,
        r.eval,
        r.switches,
        r.resamples,
        r.slack
    );
    let head = "| material | depth | slack | fired | surprises | rate | Wilson 95 % | clustered 95 % | positions | largest share |\n|---|---|---|---:|---:|---:|---|---|---:|---:|\n";
    let line = |row: &SurpriseRow| {
        format!(
            "| {} | {} | {} | {} | {} | {} | {}–{} | {}–{} | {} | {:.1}% |\n",
            row.material.map_or("all".into(), |m| m.to_string()),
            row.depth.map_or("all".into(), |d| if d == 0 {
                "QS".to_string()
            } else {
                d.to_string()
            }),
            row.slack.map_or("all".into(), |b| slack_label(m, b)),
            row.fired,
            row.surprises,
            pct(row.rate),
            pct(row.wilson_lower),
            pct(row.wilson_upper),
            pct(row.clustered.lower),
            pct(row.clustered.upper),
            row.clustered.clusters_with_trials,
            100.0 * row.clustered.largest_cluster_share
        )
    };
    s.push_str("## By depth\n\n");
    s.push_str(head);
    for row in &r.by_depth {
        s.push_str(&line(row));
    }
    s.push_str(&line(&r.total));
    s.push_str("\n## By material bucket (both armies / 8)\n\n");
    s.push_str(head);
    for row in &r.by_material {
        s.push_str(&line(row));
    }
    s.push_str("\n## By depth and slack\n\n");
    s.push_str(head);
    for row in &r.cells {
        s.push_str(&line(row));
    }
    s
}

pub fn surprise_cmd(a: &SurpriseArgs) -> Result<(), CollectError> {
    let cfg = config(&a.set)?;
    let positions = read_pool(&a.run.pool, a.run.limit.map(|l| l as usize))?;
    if let Some(dir) = &a.out {
        std::fs::create_dir_all(dir).map_err(|source| CollectError::Dir {
            path: dir.clone(),
            source,
        })?;
    }
    let mut summary = Vec::new();
    for &m in &a.mechanism.0 {
        let report = surprise_one(a, &cfg, &positions, m)?;
        summary.push(report);
    }
    if summary.len() > 1 {
        let md = surprise_summary(&summary);
        match &a.out {
            Some(dir) => {
                evidence::io::atomic_write(&dir.join("summary.md"), md.as_bytes())?;
                print!("{md}");
            }
            None => print!("{md}"),
        }
    }
    Ok(())
}

/// One line per mechanism: its totals with both intervals.
pub fn surprise_summary(reports: &[SurpriseReport]) -> String {
    let first = &reports[0];
    let mut s = format!(
        "# Surprise rates, every mechanism searched anyway\n\nPool `{}` ({} positions), depth {}; evaluation `{}`; switches `{}`; {} bootstrap resamples.\nPer-mechanism detail (by depth, material, slack): `<mechanism>.md`.\n\n| mechanism | fired | surprises | rate | Wilson 95 % | clustered 95 % | nodes | seconds |\n|---|---:|---:|---:|---|---|---:|---:|\n",
        first.pool, first.positions, first.depth, first.eval, first.switches, first.resamples
    );
    for r in reports {
        let t = &r.total;
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {}–{} | {}–{} | {} | {:.0} |",
            r.mechanism,
            t.fired,
            t.surprises,
            pct(t.rate),
            pct(t.wilson_lower),
            pct(t.wilson_upper),
            pct(t.clustered.lower),
            pct(t.clustered.upper),
            r.nodes,
            r.seconds
        );
    }
    s
}

fn surprise_one(
    a: &SurpriseArgs,
    cfg: &PruneConfig,
    positions: &[PoolPosition],
    m: Mechanism,
) -> Result<SurpriseReport, CollectError> {
    // A mechanism that is off by default is calibrated switched on (else it never fires).
    let mut live = cfg.clone();
    if let Some(switch) = m.needs_switch() {
        live.set(switch, "on").map_err(CollectError::Input)?;
    }
    let cfg = &live;
    let r = run_probe(positions, &a.run, cfg, a.eval, ProbeMode::Surprise(m));
    let SurpriseRows {
        total,
        by_depth,
        by_material,
        cells,
    } = surprise_rows(&r.records, a.resamples)?;
    let report = SurpriseReport {
        format: "actuary-surprise v1",
        mechanism: m.name(),
        slack: m.slack_meaning(),
        slack_edges: GAP_EDGES.to_vec(),
        command: command_line(),
        pool: a.run.pool.display().to_string(),
        positions: positions.len(),
        depth: a.run.depth,
        nodes: r.nodes,
        seconds: r.seconds,
        switches: cfg.describe(),
        eval: a.eval.describe(),
        resamples: a.resamples,
        total,
        by_depth,
        by_material,
        cells,
    };
    let md = surprise_markdown(&report, m);
    match &a.out {
        None => print!("{md}"),
        Some(dir) => {
            let name = m.name();
            evidence::io::atomic_write(&dir.join(format!("{name}.md")), md.as_bytes())?;
            let json = serde_json::to_string_pretty(&report).expect("report serialises");
            evidence::io::atomic_write(&dir.join(format!("{name}.json")), json.as_bytes())?;
            let mut lines = String::new();
            for p in &r.records {
                let cells: Vec<[u64; 3]> =
                    p.cells.iter().map(|&(c, v)| [c as u64, v.n, v.k]).collect();
                let _ = writeln!(
                    lines,
                    "{{\"index\":{},\"line\":{},\"nodes\":{},\"cells\":{}}}",
                    p.index,
                    p.line,
                    p.nodes,
                    serde_json::to_string(&cells).expect("cells serialise")
                );
            }
            evidence::io::atomic_write(&dir.join(format!("{name}.cells.jsonl")), lines.as_bytes())?;
            if a.mechanism.0.len() == 1 {
                print!("{md}");
            }
            eprintln!("wrote {}/{name}.{{md,json,cells.jsonl}}", dir.display());
        }
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;
    use chess::search::prune::SURPRISE_CELLS;

    fn cc(n: u64, k: u64) -> CellCount {
        CellCount { n, k }
    }

    fn tiny_pool() -> Vec<PoolPosition> {
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

    fn opts(depth: i32) -> RunOpts {
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

    /// "Search anyway" must prune nothing: with a mechanism shadowed, the tree is exactly the
    /// tree with that mechanism switched off (same node count), and the probe saw it fire.
    #[test]
    fn shadowed_mechanisms_prune_nothing() {
        let pool = tiny_pool();
        for (m, off) in [
            (Mechanism::Rfp, "rfp=off"),
            (Mechanism::Lmp, "lmp=off"),
            (Mechanism::Efp, "efp=off"),
            (Mechanism::QFutility, "qfutility=off"),
        ] {
            let on = PruneConfig::default();
            let shadow = run_probe(
                &pool,
                &opts(7),
                &on,
                EvalChoice::Nnue,
                ProbeMode::Surprise(m),
            );
            let plain = run_probe(
                &pool,
                &opts(7),
                &config(off).unwrap(),
                EvalChoice::Nnue,
                ProbeMode::Surprise(m),
            );
            assert_eq!(shadow.nodes, plain.nodes, "{m:?}");
            let fired: u64 = totals(&shadow.records, SURPRISE_CELLS)
                .iter()
                .map(|c| c.n)
                .sum();
            assert!(fired > 0, "{m:?} never fired");
            let none: u64 = totals(&plain.records, SURPRISE_CELLS)
                .iter()
                .map(|c| c.n)
                .sum();
            assert_eq!(none, 0, "{m:?} recorded while off");
            // And the live mechanism does prune: fewer nodes than without it.
            let live = run_probe(&pool, &opts(7), &on, EvalChoice::Nnue, ProbeMode::Fh);
            assert!(
                live.nodes < plain.nodes,
                "{m:?}: {} vs {}",
                live.nodes,
                plain.nodes
            );
        }
    }

    /// Multi-cut (issue 33), searched anyway, fires.
    #[test]
    fn shadowed_multi_cut_fires() {
        let pool = tiny_pool();
        let shadow = run_probe(
            &pool,
            &opts(9),
            &PruneConfig::default(),
            EvalChoice::Nnue,
            ProbeMode::Surprise(Mechanism::MultiCut),
        );
        let fired: u64 = totals(&shadow.records, SURPRISE_CELLS)
            .iter()
            .map(|c| c.n)
            .sum();
        assert!(fired > 0, "multi-cut never fired");
    }

    #[test]
    fn mechanism_lists_parse() {
        assert_eq!(parse_mechanisms("all").unwrap().0.len(), 9);
        assert_eq!(
            parse_mechanisms("lmp, rfp,lmp").unwrap().0,
            vec![Mechanism::Lmp, Mechanism::Rfp]
        );
        assert!(parse_mechanisms("lmp,bogus").unwrap_err().contains("bogus"));
    }

    #[test]
    fn allowance_lists_parse_and_reject() {
        assert_eq!(
            parse_allowance("1,2,3,4,5,6,7,8,9,10").unwrap().0,
            [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]
        );
        assert!(
            parse_allowance("1,2,3")
                .unwrap_err()
                .contains("expected 10")
        );
        assert!(parse_allowance("1,2,3,4,5,6,7,8,9,x").is_err());
        assert!(parse_allowance("1,2,3,4,5,6,7,8,9,100001").is_err());
    }

    #[test]
    fn rfp_margin_is_the_first_safe_sampled_gap() {
        // 10 gap buckets: fail-low rates fall with the gap.
        let row = [
            cc(10_000, 3_000),
            cc(10_000, 900),
            cc(10_000, 200),
            cc(10_000, 40),
            cc(10_000, 10),
            cc(50, 0),
            cc(10_000, 2),
            cc(10_000, 1),
            cc(0, 0),
            cc(0, 0),
        ];
        // 1 % allowance: bucket 2 (2 %) fails, bucket 3 (0.4 %, UB ≈ 0.51 %) holds.
        assert_eq!(
            rfp_row_margin(&row, 1000, 200),
            RowMargin::Cp(RFP_GAP_LOWER[3])
        );
        // 0.2 %: bucket 4 (0.1 %) holds; the thin bucket 5 is skipped.
        assert_eq!(
            rfp_row_margin(&row, 200, 200),
            RowMargin::Cp(RFP_GAP_LOWER[4])
        );
        // Nothing is that safe: never.
        assert_eq!(rfp_row_margin(&row, 5, 200), RowMargin::Never);
        // Nothing sampled enough: the formula.
        assert_eq!(rfp_row_margin(&[cc(10, 0); 10], 1000, 200), RowMargin::Thin);
        // A bad sampled bucket above a good one moves the margin up.
        let mut bad = row;
        bad[6] = cc(10_000, 500);
        assert_eq!(
            rfp_row_margin(&bad, 1000, 200),
            RowMargin::Cp(RFP_GAP_LOWER[7])
        );
    }

    #[test]
    fn table_texts_read_back_into_the_engine() {
        let mut fh = vec![CellCount::default(); FH_CELLS];
        let cell = prune::fh_cell(3, 0, 250, 12, None);
        fh[cell] = cc(100_000, 20);
        let text = fh_table_text(&fh, "# test\n");
        let mut rfp = vec![CellCount::default(); RFP_CELLS];
        for g in 0..RFP_GAP_BUCKETS {
            rfp[prune::rfp_cell(2, true, false, RFP_GAP_LOWER[g])] =
                cc(10_000, [4000, 2000, 800, 100, 20, 5, 1, 0, 0, 0][g]);
        }
        let allow = Allowance([1000; TABLE_DEPTHS]);
        let rtext = rfp_table_text(&rfp, &allow, 200, "# test\n");
        let t = PruneTables::parse(&text, "fh", &rtext, "rfp").unwrap();
        let ub = t.fh(cell);
        // 20 in 100,000 = 0.02 % = 20 thousandths of a percent; the upper bound is above it.
        assert!(ub > 20 && ub < 40, "{ub}");
        assert_eq!(t.fh_cells_with_data(), 1);
        // Bucket 3 is 1 % exactly (its upper bound is above the 1 % allowance); 4 is 0.2 %.
        assert_eq!(t.rfp_margin[1][1][0], Some(RFP_GAP_LOWER[4]));
        assert_eq!(t.rfp_margin[1][0][0], None);
        // Sampled and never safe: RFP off in the row.
        let mut never = rfp.clone();
        for g in 0..RFP_GAP_BUCKETS {
            never[prune::rfp_cell(5, false, false, RFP_GAP_LOWER[g])] = cc(10_000, 3_000);
        }
        let ntext = rfp_table_text(&never, &allow, 200, "# test\n");
        let nt = PruneTables::parse(&text, "fh", &ntext, "rfp").unwrap();
        assert_eq!(nt.rfp_margin[4][0][0], Some(prune::RFP_NEVER));
        assert_eq!(fh_counts_from_text(&text)[cell], cc(100_000, 20));
        assert_eq!(rfp_counts_from_text(&rtext), rfp);
    }

    #[test]
    fn surprise_rows_pool_positions_as_clusters() {
        let recs = vec![
            PositionCells {
                index: 0,
                line: 1,
                nodes: 10,
                cells: vec![(GAP_BUCKETS as u32 + 2, cc(100, 1))],
            },
            PositionCells {
                index: 1,
                line: 2,
                nodes: 10,
                cells: vec![
                    (GAP_BUCKETS as u32 + 2, cc(10, 5)),
                    (3, cc(4, 0)),
                    // The same depth-1 slack-2 cell in material bucket 7.
                    (
                        (7 * SURPRISE_DEPTH_SLACK + GAP_BUCKETS + 2) as u32,
                        cc(6, 1),
                    ),
                ],
            },
        ];
        let SurpriseRows {
            total,
            by_depth,
            by_material,
            cells,
        } = surprise_rows(&recs, 200).unwrap();
        assert_eq!((by_material[1].fired, by_material[1].surprises), (6, 1));
        assert_eq!(by_material[1].material, Some(7));
        assert_eq!((by_material[0].fired, by_material[0].surprises), (114, 6));
        assert_eq!((total.fired, total.surprises), (120, 7));
        assert_eq!(by_depth.len(), 2);
        assert_eq!(by_depth[1].depth, Some(1));
        assert_eq!((by_depth[1].fired, by_depth[1].surprises), (116, 7));
        assert_eq!(cells.len(), 2);
        assert_eq!(cells[1].slack, Some(2));
        // Two clusters, one of them 5/10: the clustered interval is far wider than Wilson's.
        assert!(cells[1].clustered.upper > cells[1].wilson_upper);
    }
}
