//! The pruning calibration loop of issue 14 through the real binary, on a tiny pool: collect
//! both tables, read them back into the engine (library loader and UCI options), a surprise
//! report for every mechanism, `validate` of two configurations, and one-line errors for bad
//! input (unknown mechanism or switch, malformed pool line, foreign table file). Built only
//! with the feature `lab` (see `main.rs`).

use chess::search::prune::{PruneTables, fh_cell};
use std::io::Write as _;
use std::path::Path;

use crate::common::{fails, ok, uci_engine};

const POOL: &str = "\
# tiny pool
r1bq1rk1/pp2bppp/2n1pn2/3p4/2PP4/2N1PN2/PP3PPP/R2QKB1R w KQ - 0 8
2r2rk1/pp3ppp/2n1b3/3p4/3P4/2N1BN2/PP3PPP/2R2RK1 w - - 0 16
4r1k1/pp3ppp/2n5/3p4/3P4/2N5/PP3PPP/4R1K1 w - - 0 22
r4rk1/1pp2ppp/p1n5/4p3/2B1P1b1/2N2N2/PPP2PPP/R4RK1 b - - 0 11
";

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn collect_read_back_surprise_validate() {
    let _cpu = crate::common::shared();
    let dir = tempfile::tempdir().unwrap();
    let pool = dir.path().join("pool.epd");
    std::fs::write(&pool, POOL).unwrap();
    let fh = dir.path().join("fh.txt");
    let rfp = dir.path().join("rfp.txt");

    ok(&[
        "collect",
        "fh",
        "--pool",
        s(&pool),
        "--depth",
        "6",
        "--quiet",
        "--out",
        s(&fh),
    ]);
    let fh_text = std::fs::read_to_string(&fh).unwrap();
    assert!(fh_text.starts_with("actuary-fh-table v1\n# command: "));
    let cells: Vec<&str> = fh_text.lines().filter(|l| l.starts_with("cell ")).collect();
    assert!(cells.len() > 20, "{} cells", cells.len());

    ok(&[
        "collect",
        "rfp",
        "--pool",
        s(&pool),
        "--depth",
        "6",
        "--quiet",
        "--fh",
        s(&fh),
        "--min-samples",
        "1",
        "--out",
        s(&rfp),
    ]);
    let rfp_text = std::fs::read_to_string(&rfp).unwrap();
    assert_eq!(
        rfp_text
            .lines()
            .filter(|l| l.starts_with("margin "))
            .count(),
        40
    );

    // The engine reads back exactly what the file says.
    let t = PruneTables::load(Some(&fh), Some(&rfp)).unwrap();
    for line in &cells {
        let v: Vec<i64> = line[5..]
            .split_whitespace()
            .map(|x| x.parse().unwrap())
            .collect();
        let [d, h, g, l, i] = [v[0], v[1], v[2], v[3], v[4]];
        // Representative values inside each bucket.
        let gap = [0, 30, 60, 100, 150, 250, 400, 700, 1000][g as usize];
        let mv = [1, 2, 3, 4, 6, 9, 14, 22, 30][l as usize];
        let imp = [Some(-60), Some(0), Some(60)][i as usize];
        let c = fh_cell(d as i32, h as usize, gap, mv, imp);
        assert_eq!(t.fh(c) as i64, v[7], "{line}");
    }
    for line in rfp_text.lines().filter(|l| l.starts_with("margin ")) {
        let v: Vec<&str> = line.split_whitespace().collect();
        let (d, i, h): (usize, usize, usize) = (
            v[1].parse().unwrap(),
            v[2].parse().unwrap(),
            v[3].parse().unwrap(),
        );
        let want = match v[4] {
            "formula" => None,
            "never" => Some(chess::search::prune::RFP_NEVER),
            cp => Some(cp.parse::<i32>().unwrap()),
        };
        assert_eq!(t.rfp_margin[d - 1][i][h], want, "{line}");
    }

    // ... and through UCI, with table-driven LMP and RFP searching.
    let mut child = uci_engine();
    let mut stdin = child.stdin.take().unwrap();
    writeln!(
        stdin,
        "setoption name prune.fh-table value {}\nsetoption name prune.rfp-table value {}\n\
         setoption name prune.lmp value table\nsetoption name prune.rfp value table\n\
         position startpos\ngo depth 6\nisready\nquit",
        s(&fh),
        s(&rfp)
    )
    .unwrap();
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(!text.contains("error"), "{text}");
    assert!(text.contains("info string prune rfp="), "{text}");
    assert!(text.contains("bestmove "), "{text}");

    // Surprise reports for every mechanism.
    let rep = dir.path().join("surprise");
    let summary = ok(&[
        "calibrate",
        "surprise",
        "--mechanism",
        "all",
        "--pool",
        s(&pool),
        "--depth",
        "6",
        "--quiet",
        "--resamples",
        "50",
        "--out",
        s(&rep),
    ]);
    assert_eq!(
        std::fs::read_to_string(rep.join("summary.md")).unwrap(),
        summary
    );
    for m in [
        "rfp",
        "efp",
        "lmp",
        "qfutility",
        "nmp",
        "razor",
        "see",
        "lmr",
    ] {
        assert!(summary.contains(&format!("\n| {m} | ")), "{summary}");
        let json: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(rep.join(format!("{m}.json"))).unwrap())
                .unwrap();
        assert_eq!(json["mechanism"], m);
        let fired = json["total"]["fired"].as_u64().unwrap();
        let surprises = json["total"]["surprises"].as_u64().unwrap();
        assert!(fired > 0, "{m} never fired");
        assert!(surprises <= fired);
        let lines = std::fs::read_to_string(rep.join(format!("{m}.cells.jsonl"))).unwrap();
        assert_eq!(lines.lines().count(), 4, "{m}");
        assert!(
            std::fs::read_to_string(rep.join(format!("{m}.md")))
                .unwrap()
                .contains("clustered")
        );
    }

    // The variance study reads the surprise reports per material bucket.
    let var = dir.path().join("variance");
    let md = ok(&[
        "calibrate",
        "variance",
        "--pool",
        s(&pool),
        "--surprise",
        s(&rep),
        "--out",
        s(&var),
    ]);
    assert!(md.contains("| rfp |") || md.contains(" rfp |"), "{md}");
    assert!(md.contains("Pearson"), "{md}");
    let svg = std::fs::read_to_string(var.join("variance.svg")).unwrap();
    assert!(svg.starts_with("<svg") && svg.contains("<circle"), "{svg}");

    // validate: two configurations of this binary, a saved baseline, then reuse.
    let suite = dir.path().join("suite.epd");
    std::fs::write(
        &suite,
        "2rr3k/pp3pp1/1nnqbN1p/3pN3/2pP4/2P3Q1/PPB4P/R4RK1 w - - bm Qg6; id \"WAC.001\";\n",
    )
    .unwrap();
    let store = dir.path().join("store");
    let out = ok(&[
        "validate",
        "--baseline",
        "@prune.lmp=formula",
        "--candidate",
        "@prune.lmp=off",
        "--suites",
        &format!("{},{}", s(&suite), s(&pool)),
        "--depth",
        "5",
        "--save-baseline",
        "b1",
        "--store",
        s(&store),
    ]);
    assert!(out.contains("solved"), "{out}");
    assert!(out.contains("fired: lmp"), "{out}");
    let again = ok(&[
        "validate",
        "--baseline",
        "saved:b1",
        "--candidate",
        "@prune.lmp=off",
        "--suites",
        &format!("{},{}", s(&suite), s(&pool)),
        "--depth",
        "5",
        "--store",
        s(&store),
    ]);
    // Fixed depth, single thread: the same counts again (times and nps are the clock's).
    let counts = |t: &str| -> Vec<String> {
        t.lines()
            .skip(2)
            .filter(|l| !l.starts_with("nps") && !l.starts_with("time"))
            .map(str::to_string)
            .collect()
    };
    assert_eq!(counts(&out), counts(&again));
    fails(
        &[
            "validate",
            "--baseline",
            "saved:b1",
            "--candidate",
            "@prune.lmp=off",
            "--suites",
            s(&suite),
            "--depth",
            "6",
            "--store",
            s(&store),
        ],
        "has no results",
    );
    fails(
        &[
            "validate",
            "--baseline",
            "@prune.lmp=sometimes",
            "--candidate",
            "@",
            "--suites",
            s(&suite),
            "--depth",
            "3",
        ],
        "prune.lmp",
    );
}

#[test]
fn bad_input_is_one_line() {
    let _cpu = crate::common::shared();
    let dir = tempfile::tempdir().unwrap();
    let pool = dir.path().join("pool.epd");
    std::fs::write(&pool, format!("{POOL}this is not a fen\n")).unwrap();
    fails(
        &[
            "calibrate",
            "surprise",
            "--mechanism",
            "futility",
            "--pool",
            s(&pool),
        ],
        "unknown mechanism 'futility'",
    );
    fails(
        &["collect", "fh", "--pool", s(&pool), "--depth", "3"],
        &format!("{}:6", pool.display()),
    );
    std::fs::write(&pool, POOL).unwrap();
    fails(
        &[
            "collect",
            "fh",
            "--pool",
            s(&pool),
            "--depth",
            "3",
            "--set",
            "lmp=maybe",
        ],
        "--set: lmp",
    );
    fails(
        &["collect", "rfp", "--pool", s(&pool), "--allowance", "1,2,3"],
        "expected 10 values",
    );
    let foreign = dir.path().join("foreign.txt");
    std::fs::write(&foreign, "actuary-lazy-margins v1\n").unwrap();
    fails(
        &[
            "collect",
            "rfp",
            "--pool",
            s(&pool),
            "--depth",
            "2",
            "--fh",
            s(&foreign),
            "--quiet",
        ],
        "not a table file",
    );
}
