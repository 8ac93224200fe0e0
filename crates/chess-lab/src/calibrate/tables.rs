//! `collect`: the pruning tables of issue 14 (docs/design/chess-DESIGN.md §3); their
//! surprise rates are `calibrate surprise` ([`super::surprise`]).
//!
//! ```text
//! actuary collect fh  --pool calib.epd --depth 8 --out data/chess/fh-table.txt   # alpha side
//! actuary collect rfp --pool calib.epd --depth 8 --out data/chess/rfp-table.txt  # beta side
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

use crate::calibrate::probe::{CellCount, totals};
use crate::calibrate::probe::{
    CollectError, EvalChoice, command_line, config, emit, provenance, run_probe,
};
use crate::calibrate::runner::RunOpts;
use crate::data::pool::read_pool;
use chess::search::params::Tunables;
use chess::search::prune::{
    self, EfpMode, FH_CELLS, FH_MAGIC, GAP_BUCKETS, HUNG_BUCKETS, IMPROVE_BUCKETS, LATE_BUCKETS,
    ProbeMode, PruneConfig, PruneTables, RFP_CELLS, RFP_GAP_BUCKETS, RFP_GAP_LOWER, RFP_MAGIC,
    Source, TABLE_DEPTHS, fh_axes, rfp_axes,
};
use evidence::Wilson;
use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

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
    // A surprise report is a small JSON summary (kilobytes); 64 MB is far past any real one.
    let text = fileio::read_to_string(p, 64 << 20).map_err(|e| bad(e.into_io().to_string()))?;
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

/// The most bytes a pruning table file read here may have: the generated tables are well
/// under 1 MB, and the engine reads them with the same limit (`chess::datafile`).
const MAX_TABLE_BYTES: u64 = 16 << 20;

fn collect_rfp(o: &CollectRfpOpts) -> Result<(), CollectError> {
    let mut cfg = config(&o.common.set)?;
    cfg.rfp = Source::Off;
    // Check the cross-check table before spending the search time.
    let fh_text = match &o.fh {
        Some(p) => {
            let t = fileio::read_to_string(p, MAX_TABLE_BYTES).map_err(|e| {
                prune::PruneTableError::Io {
                    file: p.display().to_string(),
                    source: e.into_io(),
                }
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
            let text = fileio::read_to_string(p, MAX_TABLE_BYTES).map_err(|e| {
                prune::PruneTableError::Io {
                    file: p.display().to_string(),
                    source: e.into_io(),
                }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::calibrate::probe::CellCount;

    use crate::calibrate::probe::fixtures::cc;

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
}
