//! EPD suite runner: searches each position with a fixed limit and checks the `bm` (best
//! move) / `am` (avoid move) operations; for STS files also scores the `c8`/`c9` points.

use crate::board::{Move, Position, move_to_uci, parse_epd, parse_san, to_san, uci_to_move};
use crate::search::Worker;
use crate::search::smp::{SearchOptions, search};
use crate::search::time::Limits;
use crate::search::tt::Tt;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

/// Limit applied to every position.
#[derive(Clone, Copy, Debug)]
pub enum SuiteLimit {
    Depth(i32),
    Nodes(u64),
    MoveTime(u64),
}

pub struct SuiteReport {
    pub total: usize,
    pub solved: usize,
    pub nodes: u64,
    pub elapsed_ms: u64,
    /// Geometric mean of per-position EBF (last two iterations).
    pub ebf: Option<f64>,
    pub sts_points: Option<(u64, u64)>,
    pub failures: Vec<String>,
}

impl SuiteReport {
    pub(crate) fn sts_percent(&self) -> Option<f64> {
        self.sts_points
            .map(|(got, max)| 100.0 * got as f64 / max.max(1) as f64)
    }

    /// STS-Rating's linear fit from score percentage to rating.
    pub(crate) fn sts_rating(&self) -> Option<f64> {
        self.sts_percent().map(|p| 44.523 * p - 242.85)
    }
}

/// Run a suite from EPD text with the engine's defaults. Lines that fail to parse are
/// reported as failures.
#[cfg(test)]
pub(crate) fn run_suite(
    text: &str,
    limit: SuiteLimit,
    hash_mb: usize,
    verbose: bool,
) -> SuiteReport {
    run_suite_with(text, limit, hash_mb, verbose, SearchOptions::default())
}

/// `run_suite` with the given evaluation and pruning switches (`opts`), so that a number
/// measured on another configuration (the hand evaluation, a switch) can be measured again.
pub fn run_suite_with(
    text: &str,
    limit: SuiteLimit,
    hash_mb: usize,
    verbose: bool,
    opts: SearchOptions,
) -> SuiteReport {
    let tt = Tt::new(hash_mb);
    let stop = AtomicBool::new(false);
    // No GUI between us and the clock: use the whole move time.
    let opts = SearchOptions {
        move_overhead_ms: 0,
        verbose: false,
        ..opts
    };
    let limits = match limit {
        SuiteLimit::Depth(d) => Limits {
            depth: Some(d),
            ..Default::default()
        },
        SuiteLimit::Nodes(n) => Limits {
            nodes: Some(n),
            ..Default::default()
        },
        SuiteLimit::MoveTime(ms) => Limits {
            movetime: Some(ms),
            ..Default::default()
        },
    };
    let mut workers = vec![Worker::new(0)];
    let mut rep = SuiteReport {
        total: 0,
        solved: 0,
        nodes: 0,
        elapsed_ms: 0,
        ebf: None,
        sts_points: None,
        failures: Vec::new(),
    };
    let (mut ebf_log, mut ebf_n) = (0.0f64, 0usize);
    let mut sts: Option<(u64, u64)> = None;
    let start = Instant::now();
    for (lineno, line) in text.lines().enumerate() {
        if line.trim().is_empty() || line.trim_start().starts_with('#') {
            continue;
        }
        rep.total += 1;
        let epd = match parse_epd(line) {
            Ok(e) => e,
            Err(e) => {
                rep.failures
                    .push(format!("line {}: parse error: {e}", lineno + 1));
                continue;
            }
        };
        let board = &epd.board;
        // A `bm`/`am` move that is not a legal move here is a broken line, reported as one
        // (not scored as a miss that no search could avoid).
        let parse_list = |op: &str| -> Result<Vec<Move>, String> {
            epd.op(op)
                .unwrap_or_default()
                .iter()
                .map(|s| parse_san(board, s).map_err(|e| format!("bad {op} move '{s}': {e}")))
                .collect()
        };
        let (bm, am) = match (parse_list("bm"), parse_list("am")) {
            (Ok(bm), Ok(am)) => (bm, am),
            (Err(e), _) | (_, Err(e)) => {
                rep.failures
                    .push(format!("line {}: parse error: {e}", lineno + 1));
                continue;
            }
        };
        tt.clear();
        for w in &mut workers {
            w.clear();
        }
        let pos = Position {
            board: board.clone(),
            history: Vec::new(),
        };
        stop.store(false, std::sync::atomic::Ordering::Relaxed);
        let r = search(&pos, &limits, &opts, &mut workers, &tt, &stop);
        rep.nodes += r.nodes;
        if let Some(e) = r.ebf()
            && e > 0.0
        {
            ebf_log += e.ln();
            ebf_n += 1;
        }
        let played = r.best_move;
        let ok = played.is_some_and(|m| (bm.is_empty() || bm.contains(&m)) && !am.contains(&m))
            && !(bm.is_empty() && am.is_empty());
        // STS points: c9 lists UCI moves, c8 the points for each.
        // Both are quoted, space-separated lists: `c8 "10 2 3"; c9 "f4f5 d4e5 d4f2"`.
        let words = |op: &str| {
            epd.op(op).map(|v| {
                v.iter()
                    .flat_map(|s| s.split_whitespace())
                    .collect::<Vec<_>>()
            })
        };
        if let (Some(c8), Some(c9)) = (words("c8"), words("c9")) {
            let (got, max) = sts.get_or_insert((0, 0));
            *max += 10;
            if let Some(m) = played {
                for (pts, mv) in c8.iter().zip(c9.iter()) {
                    if uci_to_move(board, mv).ok() == Some(m) {
                        *got += pts.parse::<u64>().unwrap_or(0);
                    }
                }
            }
        }
        if ok {
            rep.solved += 1;
        } else {
            let played_s = played
                .map(|m| to_san(board, m))
                .unwrap_or_else(|| "none".into());
            let want: Vec<String> = epd.op("bm").map(|v| v.to_vec()).unwrap_or_default();
            let avoid: Vec<String> = epd.op("am").map(|v| v.to_vec()).unwrap_or_default();
            let mut s = format!("FAIL {} played {played_s}", epd.id());
            if !want.is_empty() {
                s += &format!(" bm {}", want.join(" "));
            }
            if !avoid.is_empty() {
                s += &format!(" am {}", avoid.join(" "));
            }
            s += &format!(
                " score {} depth {}",
                crate::search::uci_score(r.score),
                r.depth
            );
            rep.failures.push(s);
        }
        if verbose {
            let mv = played.map(|m| move_to_uci(board, m)).unwrap_or_default();
            eprintln!(
                "{:>4} {:<28} {} {mv} d{} n{}",
                rep.total,
                epd.id(),
                if ok { "ok  " } else { "FAIL" },
                r.depth,
                r.nodes
            );
        }
    }
    rep.elapsed_ms = start.elapsed().as_millis() as u64;
    rep.ebf = (ebf_n > 0).then(|| (ebf_log / ebf_n as f64).exp());
    rep.sts_points = sts;
    rep
}

/// Print a report in the format the issue asks for.
pub fn print_report(rep: &SuiteReport) {
    for f in &rep.failures {
        println!("{f}");
    }
    println!("solved {}/{}", rep.solved, rep.total);
    println!("total nodes {}", rep.nodes);
    println!("time {} ms", rep.elapsed_ms);
    println!("nps {}", rep.nodes * 1000 / rep.elapsed_ms.max(1));
    match rep.ebf {
        Some(e) => println!("ebf {e:.2}"),
        None => println!("ebf n/a"),
    }
    if let (Some((got, max)), Some(pct), Some(rating)) =
        (rep.sts_points, rep.sts_percent(), rep.sts_rating())
    {
        println!("sts score {got}/{max} ({pct:.2}%), rating estimate {rating:.0}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two middlegame positions a depth-7 search does not solve trivially.
    const EPD: &str = "r1bqkb1r/pppp1ppp/2n2n2/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w KQkq - bm Ng5; id \"a\";\n\
                       r2q1rk1/pp2bppp/2n1pn2/3p4/3P4/2NBPN2/PP3PPP/R2Q1RK1 w - - bm e4; id \"b\";\n";

    fn nodes(opts: SearchOptions) -> u64 {
        run_suite_with(EPD, SuiteLimit::Depth(7), 4, false, opts).nodes
    }

    #[test]
    fn the_evaluation_and_switches_reach_the_suites_searches() {
        let default = nodes(SearchOptions::default());
        assert_eq!(
            default,
            run_suite(EPD, SuiteLimit::Depth(7), 4, false).nodes,
            "run_suite is not run_suite_with on the defaults"
        );
        let hce = nodes(SearchOptions {
            net: None,
            ..Default::default()
        });
        assert_ne!(hce, default, "the hand evaluation searched the net's tree");
        let mut prune = crate::search::prune::PruneConfig::default();
        prune.set_all("lmr=off").unwrap();
        let no_lmr = nodes(SearchOptions {
            prune,
            ..Default::default()
        });
        assert!(
            no_lmr > default,
            "without LMR the tree did not grow: {no_lmr} against {default}"
        );
    }
}
