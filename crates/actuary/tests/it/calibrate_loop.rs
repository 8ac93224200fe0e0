//! The calibrate → tables → verify loop of issue 13 on a tiny pool (depth 3), through the
//! real binary: residual histograms, percentiles, tables, margin safety, exit rate, the
//! `--target-exceeded` iteration, and the generated table file read back by the engine
//! (`bench --tables`, UCI `LazyTables`). Bad inputs give one error line naming file and line.
//! Built only with the feature `lab` (see `main.rs`).

use std::io::{BufRead, BufReader, Write as _};
use std::path::Path;

use crate::common::{fails, ok, uci_engine};

/// Positions from several material buckets (quiet, not in check).
const POOL: &str = "\
# tiny pool for the loop test
r1bq1rk1/pp2bppp/2n1pn2/3p4/2PP4/2N1PN2/PP3PPP/R2QKB1R w KQ - 0 8 ; mb 7;
2r2rk1/pp3ppp/2n1b3/3p4/3P4/2N1BN2/PP3PPP/2R2RK1 w - - 0 16 ; mb 5;
4r1k1/pp3ppp/2n5/3p4/3P4/2N5/PP3PPP/4R1K1 w - - 0 22 ; mb 2;
8/5pk1/6p1/3R4/8/6P1/5PK1/3r4 b - - 0 40 ; mb 1;
8/5pk1/6p1/8/8/6P1/5PK1/8 w - - 0 50 ; mb 0;
r4rk1/1pp2ppp/p1n5/4p3/2B1P1b1/2N2N2/PPP2PPP/R4RK1 b - - 0 11 ; mb 6;
";

/// Nearest-rank percentile of one histogram section of residual.txt, read from the raw bin
/// lines directly (independent of `evidence::Histogram::percentile`).
fn raw_percentile(text: &str, section: &str, p: f64) -> f64 {
    let mut lines = text.lines().skip_while(|l| *l != section).skip(1);
    let mut bins = Vec::new();
    let (mut under, mut over, mut min, mut max) = (0u64, 0u64, 0.0, 0.0);
    for l in lines.by_ref() {
        if l.starts_with("==") {
            break;
        }
        let f: Vec<&str> = l.split_whitespace().collect();
        match f.first().copied() {
            Some("underflow") => under = f[1].parse().unwrap(),
            Some("overflow") => over = f[1].parse().unwrap(),
            Some("min") => min = f[1].parse().unwrap(),
            Some("max") => max = f[1].parse().unwrap(),
            Some(x) if x.chars().all(|c| c.is_ascii_digit()) && f.len() == 4 => {
                bins.push((f[1].parse::<f64>().unwrap(), f[3].parse::<u64>().unwrap()));
            }
            _ => {}
        }
    }
    let total: u64 = under + over + bins.iter().map(|b| b.1).sum::<u64>();
    let rank = ((p / 100.0 * total as f64).ceil() as u64).max(1);
    if rank <= under {
        return min;
    }
    let mut seen = under;
    for (lo, c) in bins {
        seen += c;
        if seen >= rank {
            return lo;
        }
    }
    max
}

fn table_row(text: &str, key: &str) -> Vec<i32> {
    let line = text
        .lines()
        .find(|l| l.split_whitespace().next() == Some(key))
        .unwrap_or_else(|| panic!("no `{key}` in tables"));
    line.split_whitespace()
        .skip(1)
        .map(|v| v.parse().unwrap())
        .collect()
}

#[test]
fn calibrate_tables_verify_loop() {
    let _cpu = crate::common::shared();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let pool = d.join("pool.epd");
    std::fs::write(&pool, POOL).unwrap();
    let s = |p: &Path| p.to_str().unwrap().to_owned();
    let res_dir = d.join("res");

    // 1. residual histograms
    ok(&[
        "calibrate",
        "residual",
        "--pool",
        &s(&pool),
        "--depth",
        "3",
        "--out",
        &s(&res_dir),
        "--quiet",
        "--threads",
        "2",
    ]);
    let residual = res_dir.join("residual.txt");
    let text = std::fs::read_to_string(&residual).unwrap();
    assert!(text.contains("# positions 6") && text.contains("# depth 3"));
    let positions = std::fs::read_to_string(res_dir.join("positions.txt")).unwrap();
    assert_eq!(positions.lines().filter(|l| l.starts_with("p ")).count(), 6);

    // 2. percentiles without re-running
    let out = ok(&["calibrate", "percentiles", &s(&residual), "5", "50", "95"]);
    assert!(out.contains("### king") && out.contains("p95"), "{out}");

    // 3. tables from the histograms
    let tables = d.join("margins.txt");
    ok(&[
        "calibrate",
        "tables",
        &s(&residual),
        "--pair",
        "5,95",
        "--out",
        &s(&tables),
    ]);
    let t = std::fs::read_to_string(&tables).unwrap();
    assert!(t.starts_with("actuary-lazy-margins v1"));
    assert!(
        t.contains(&s(&pool)) && t.contains("depth 3") && t.contains("5,95"),
        "{t}"
    );
    let (lo, hi, mid) = (
        table_row(&t, "king_lo"),
        table_row(&t, "king_hi"),
        table_row(&t, "king_p50"),
    );
    for b in 0..8 {
        assert!(
            lo[b] <= mid[b] && mid[b] <= hi[b],
            "bucket {b}: {lo:?} {mid:?} {hi:?}"
        );
    }
    // The table entries are the histogram percentiles (within a unit bin and rounding).
    for (key, section, p) in [
        ("superlazy_hi", "== superlazy 7", 95.0),
        ("lazy_lo", "== lazy 7", 5.0),
        ("king_p50", "== king 7", 50.0),
    ] {
        let want = raw_percentile(&text, section, p);
        let got = table_row(&t, key)[7] as f64;
        assert!(
            (got - want).abs() <= 1.5,
            "{key}[7] = {got}, bins say {want}"
        );
    }

    // 4. verify: margin safety and exit rate with the new tables
    let ms = d.join("ms");
    let md = ok(&[
        "calibrate",
        "marginsafety",
        "--pool",
        &s(&pool),
        "--depth",
        "3",
        "--tables",
        &s(&tables),
        "--out",
        &s(&ms),
        "--quiet",
        "--resamples",
        "200",
    ]);
    assert!(md.contains("clustered 95 %"), "{md}");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(ms.join("marginsafety.json")).unwrap())
            .unwrap();
    assert_eq!(json["byMaterial"].as_array().unwrap().len(), 16);
    assert_eq!(json["positions"], 6);
    assert_eq!(json["tables"], s(&tables));
    let ex = ok(&[
        "calibrate",
        "exitrate",
        "--pool",
        &s(&pool),
        "--depth",
        "3",
        "--tables",
        &s(&tables),
        "--out",
        &s(&d.join("ex")),
        "--quiet",
    ]);
    assert!(ex.contains("| all |"), "{ex}");

    // 5. the iteration toward a target exceeded rate
    let target = d.join("target.txt");
    ok(&[
        "calibrate",
        "tables",
        &s(&residual),
        "--target-exceeded",
        "1%",
        "--pool",
        &s(&pool),
        "--depth",
        "3",
        "--max-iterations",
        "2",
        "--out",
        &s(&target),
        "--quiet",
    ]);
    let tt = std::fs::read_to_string(&target).unwrap();
    // The loop stops at the first iteration that meets the target, at most --max-iterations
    // (2); which one depends on the evaluation's weights.
    assert!(
        tt.contains("--target-exceeded 1%: iteration 1")
            || tt.contains("--target-exceeded 1%: iteration 2"),
        "{tt}"
    );

    // 6. the engine reads the generated file back
    let bench = ok(&["bench", "3", "--lazy-eval", "--tables", &s(&tables)]);
    let exits = bench
        .lines()
        .find(|l| l.starts_with("Eval exits:"))
        .unwrap();
    assert!(!exits.contains("super-lazy 0.0% lazy 0.0%"), "{exits}");
    assert!(bench.lines().last().unwrap().starts_with("Bench: "));
    let broken = d.join("broken.txt");
    std::fs::write(&broken, t.replacen("\nqs_base ", "\nqs_bose ", 1)).unwrap();
    let mut uci = uci_engine();
    let mut stdin = uci.stdin.take().unwrap();
    writeln!(
        stdin,
        "setoption name LazyTables value {}\nsetoption name LazyTables value {}\n\
         setoption name LazyEval value true\nsetoption name Eval value hce\n\
         position startpos moves e2e4 e7e5\ngo depth 6",
        s(&broken),
        s(&tables)
    )
    .unwrap();
    let mut seen = Vec::new();
    for line in BufReader::new(uci.stdout.take().unwrap()).lines() {
        let line = line.unwrap();
        let done = line.starts_with("bestmove ");
        seen.push(line);
        if done {
            break;
        }
    }
    writeln!(stdin, "quit").unwrap();
    uci.wait().unwrap();
    let stdout = seen.join("\n");
    let errors: Vec<&String> = seen.iter().filter(|l| l.contains("error")).collect();
    assert_eq!(errors.len(), 1, "{stdout}");
    assert!(
        // A table edited after it was written breaks its seal (issue 36).
        errors[0].contains("broken.txt") && errors[0].contains("checksum mismatch"),
        "{}",
        errors[0]
    );
    let summary = seen
        .iter()
        .find(|l| l.starts_with("info string eval exits"))
        .unwrap_or_else(|| panic!("{stdout}"));
    assert!(!summary.contains("super-lazy 0.0% lazy 0.0%"), "{summary}");
    assert!(stdout.contains("info depth 6 "), "{stdout}");
}

#[test]
fn bad_inputs_name_file_and_line() {
    let _cpu = crate::common::shared();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let s = |p: &Path| p.to_str().unwrap().to_owned();
    let pool = d.join("bad.epd");
    std::fs::write(&pool, "# c\n8/8/8/8/8/8/8/K6k w - - 0 1\nnot a fen\n").unwrap();
    fails(
        &[
            "calibrate",
            "exitrate",
            "--pool",
            &s(&pool),
            "--depth",
            "1",
            "--quiet",
        ],
        "bad.epd:3:",
    );
    fails(
        &[
            "calibrate",
            "marginsafety",
            "--pool",
            &s(&d.join("missing.epd")),
            "--quiet",
        ],
        "missing.epd",
    );
    let foreign = d.join("foreign.txt");
    std::fs::write(&foreign, "hello\n").unwrap();
    fails(
        &["calibrate", "percentiles", &s(&foreign)],
        "foreign.txt:1:",
    );
    fails(&["calibrate", "tables", &s(&foreign)], "foreign.txt:1:");
    fails(
        &["calibrate", "percentiles", &s(&foreign), "101"],
        "outside 0–100",
    );
    fails(
        &["calibrate", "tables", &s(&foreign), "--pair", "2,95"],
        "symmetric",
    );
}

/// One UCI session on `script` (then `quit` once `bestmove` is printed): everything it printed.
fn uci_session(script: &str) -> String {
    let mut uci = uci_engine();
    let mut stdin = uci.stdin.take().unwrap();
    stdin.write_all(script.as_bytes()).unwrap();
    let mut seen = Vec::new();
    for line in BufReader::new(uci.stdout.take().unwrap()).lines() {
        let line = line.unwrap();
        let done = line.starts_with("bestmove ");
        seen.push(line);
        if done {
            break;
        }
    }
    writeln!(stdin, "quit").unwrap();
    uci.wait().unwrap();
    seen.join("\n")
}

/// `LazyEval` follows the evaluation: with the net (the default) its exits come from the
/// net's tables (`data/chess/net-lazy-margins.txt`) and only the super-lazy tier exits; with
/// `Eval hce` the hand evaluation's tiers exit. `bench --lazy-eval` keeps picking `hce` by
/// itself (as before the net had exits) and takes `--eval nnue` for the net's.
#[test]
fn lazy_eval_follows_the_evaluation() {
    let _cpu = crate::common::shared();
    let stdout = uci_session(
        "setoption name LazyEval value true\nposition startpos moves e2e4 d7d5 e4d5 d8d5 b1c3\ngo depth 7\n",
    );
    let seen: Vec<&str> = stdout.lines().collect();
    assert!(!stdout.contains("NetLazyTables were fitted to"), "{stdout}");
    let summary = seen
        .iter()
        .find(|l| l.starts_with("info string eval exits"))
        .unwrap_or_else(|| panic!("{stdout}"));
    assert!(!summary.contains("super-lazy 0.0%"), "{summary}");
    // Another net with the embedded net's margins: said, once per `go`.
    let other = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../data/chess/nets/actuary-2.nnue"
    );
    let out = uci_session(&format!(
        "setoption name EvalFile value {other}\nsetoption name LazyEval value true\nposition startpos\ngo depth 2\n"
    ));
    assert!(
        out.contains("info string NetLazyTables were fitted to nnue:"),
        "{out}"
    );
    assert!(summary.contains("lazy 0.0%"), "{summary}");
    let exits = |args: &[&str]| {
        ok(args)
            .lines()
            .find(|l| l.starts_with("Eval exits:"))
            .unwrap()
            .to_string()
    };
    let hce = exits(&["bench", "3", "--lazy-eval"]);
    assert!(!hce.contains("super-lazy 0.0% lazy 0.0%"), "{hce}");
    let net = exits(&["bench", "5", "--lazy-eval", "--eval", "nnue"]);
    assert!(!net.contains("super-lazy 0.0%"), "{net}");
    assert!(net.contains(" lazy 0.0%"), "{net}");
    let off = exits(&["bench", "5"]);
    assert!(off.contains("super-lazy 0.0% lazy 0.0%"), "{off}");
}
