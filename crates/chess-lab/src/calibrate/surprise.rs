//! `calibrate surprise`: how often each prune is wrong. The chosen mechanism prunes nothing:
//! where it would have fired, the search goes on and records whether the prune would have been
//! wrong. Rates per (depth, slack) with Wilson and position-clustered bootstrap intervals,
//! Markdown and JSON.

use crate::calibrate::probe::PositionCells;
use crate::calibrate::probe::{CollectError, EvalChoice, command_line, config, run_probe};
use crate::calibrate::runner::RunOpts;
use crate::data::pool::{PoolPosition, read_pool};
use chess::search::prune::{
    GAP_BUCKETS, GAP_EDGES, MATERIAL_BUCKETS, Mechanism, ProbeMode, PruneConfig,
    SURPRISE_DEPTH_SLACK, TABLE_DEPTHS, surprise_axes,
};
use evidence::Wilson;
use evidence::clustered::{ClusterBootstrapConfig, ClusterEntry, ClusteredRate, clustered_rates};
use serde::Serialize;
use std::fmt::Write as _;
use std::path::PathBuf;

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
              .range(1..=crate::calibrate::runner::MAX_RESAMPLES as u64))]
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
    use crate::calibrate::probe::fixtures::{cc, opts, tiny_pool};
    use crate::calibrate::probe::totals;
    use chess::search::prune::SURPRISE_CELLS;

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
