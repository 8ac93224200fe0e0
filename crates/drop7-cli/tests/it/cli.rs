//! The `drop7` binary end to end: output formats, bad input, resume, screens, leases, D7P,
//! training and model files.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use crate::common::{DROP7, fails, ok, refused, text};

fn drop7_stdin(args: &[&str], input: &str) -> Output {
    let mut child = Command::new(DROP7)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn drop7");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

/// A fresh directory, removed with everything in it when the guard drops (these tests write
/// model files of hundreds of megabytes).
fn tmpdir(name: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(&format!("drop7-cli-{name}-"))
        .tempdir()
        .unwrap()
}

fn vectors(name: &str) -> String {
    std::fs::read_to_string(format!(
        "{}/../../data/drop7/vectors/{name}",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap()
}

#[test]
fn trace_is_byte_identical_to_the_reference() {
    let out = ok(&["trace", "--seed", "0x2d700005", "--policy", "trace-random"]);
    let want: Vec<String> = vectors("traces-random.jsonl")
        .lines()
        .filter(|l| l.contains("\"seedHex\":\"0x2d700005\""))
        .map(|l| l.replace("\"seedHex\":\"0x2d700005\",\"policy\":\"random\",", ""))
        .collect();
    assert!(!want.is_empty());
    assert_eq!(text(&out.stdout).lines().collect::<Vec<_>>(), want);
}

#[test]
fn bad_input_is_one_line_and_exit_2() {
    let start = "0000000000000000000000000000000000000000008888888";
    let full = "8000000800000080000008000000800000080000008888888";
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["trace", "--seed", "0xZZ"], "bad seed"),
        (
            vec![
                "step", "--board", "12345", "--next", "1", "--rise", "5", "--column", "0",
            ],
            "49 digits",
        ),
        (
            vec![
                "step", "--board", start, "--next", "8", "--rise", "5", "--column", "0",
            ],
            "bad disc",
        ),
        (
            vec![
                "step", "--board", start, "--next", "1", "--rise", "5", "--column", "9",
            ],
            "columns are 0-6",
        ),
        (
            vec![
                "step", "--board", full, "--next", "1", "--rise", "5", "--column", "0",
            ],
            "full",
        ),
        (
            vec![
                "show",
                "--board",
                "0000000000000000000000000000000000000000008888x88",
            ],
            "character 46",
        ),
        (
            vec!["play", "--policy", "fair-dXs7", "--seeds", "1:2"],
            "'--policy <POLICY>': bad search `dXs7`: expected dNsK",
        ),
        (
            vec!["play", "--policy", "center", "--seeds", "1"],
            "seed block",
        ),
        (
            vec!["play", "--policy", "ntuple-d3s7", "--seeds", "1:1"],
            "needs a model",
        ),
    ];
    for (args, needle) in cases {
        fails(&args, needle);
    }
}

#[test]
fn leaf_and_search_batch_reproduce_vectors() {
    let leaf_lines: Vec<&str> = vectors("leaf.jsonl").leak().lines().take(20).collect();
    let input: String = leaf_lines
        .iter()
        .map(|l| l.to_string() + "\n")
        .collect::<String>()
        + "{\"board\":\"1\",\"next\":1,\"rise\":1}\n";
    let out = drop7_stdin(&["leaf", "--batch"], &input);
    let got: Vec<serde_json::Value> = text(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(got.len(), 21);
    for (g, w) in got.iter().zip(&leaf_lines) {
        let w: serde_json::Value = serde_json::from_str(w).unwrap();
        assert_eq!(
            g["leaf"].as_f64().unwrap().to_bits(),
            w["leaf"].as_f64().unwrap().to_bits()
        );
        assert_eq!(g["terms"], w["terms"]);
    }
    assert!(got[20]["error"].as_str().unwrap().contains("49 digits"));
    let search: Vec<serde_json::Value> = vectors("search.jsonl")
        .lines()
        .filter(|l| l.contains("\"depth\":2"))
        .take(6)
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let input: String = search
        .iter()
        .map(|v| serde_json::json!({"board": v["board"], "next": v["next"], "rise": v["rise"], "policy": "fair-d2s7"}).to_string() + "\n")
        .collect();
    assert_eq!(search.len(), 6, "the vectors hold six depth-2 searches");
    let out = drop7_stdin(&["search", "--batch", "--table", "none"], &input);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), search.len(), "one output line per input line");
    for (line, want) in lines.into_iter().zip(&search) {
        let g: serde_json::Value = serde_json::from_str(line).unwrap();
        for k in ["column", "q", "work", "nodes", "canonicalBoard"] {
            assert_eq!(g[k], want[k], "{k}");
        }
    }
}

fn lines_of(p: &Path) -> Vec<String> {
    std::fs::read_to_string(p)
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect()
}

#[test]
fn play_resumes_and_survives_a_torn_line() {
    let tmp = tmpdir("play");
    let d = tmp.path();
    let f = d.join("games.jsonl");
    let f = f.to_str().unwrap();
    ok(&[
        "play", "--policy", "center", "--seeds", "0x100:6", "--out", f, "--quiet",
    ]);
    let first = lines_of(Path::new(f));
    assert_eq!(first.len(), 6);
    // a crash leaves half a line: it is dropped and the game replayed
    let mut keep = first[..4].join("\n");
    keep.push('\n');
    keep.push_str(&first[4][..10]);
    std::fs::write(f, keep).unwrap();
    ok(&[
        "play", "--policy", "center", "--seeds", "0x100:6", "--out", f, "--quiet",
    ]);
    let mut again = lines_of(Path::new(f));
    assert_eq!(again.len(), 6);
    let key = |l: &String| {
        serde_json::from_str::<serde_json::Value>(l).unwrap()["seed"]
            .as_u64()
            .unwrap()
    };
    again.sort_by_key(key);
    let mut first_sorted = first.clone();
    first_sorted.sort_by_key(key);
    let strip = |l: &String| {
        let mut v: serde_json::Value = serde_json::from_str(l).unwrap();
        v.as_object_mut().unwrap().remove("wallSeconds");
        v
    };
    assert_eq!(
        again.iter().map(strip).collect::<Vec<_>>(),
        first_sorted.iter().map(strip).collect::<Vec<_>>()
    );
    // a file from another policy is refused
    fails(
        &[
            "play", "--policy", "leftmost", "--seeds", "0x100:6", "--out", f, "--quiet",
        ],
        "not `leftmost`",
    );
}

#[test]
fn screen_report_figure_and_lease() {
    let tmp = tmpdir("screen");
    let d = tmp.path();
    let ledger = d.join("leases.json");
    let args = |out: &str| {
        vec![
            "screen".to_owned(),
            "--arms".into(),
            "center,fair-d1s7".into(),
            "--seeds".into(),
            "0x3000:16".into(),
            "--out".into(),
            d.join(out).display().to_string(),
            "--ledger".into(),
            ledger.display().to_string(),
            "--quiet".into(),
        ]
    };
    let md = text(&ok(&args("a")).stdout);
    assert!(md.contains("| fair-d1s7 − center |"), "{md}");
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(d.join("a/report.json")).unwrap()).unwrap();
    let c = &report["contrasts"][0];
    assert_eq!(c["games"], 16);
    assert!(["supported", "refuted", "inconclusive"].contains(&c["verdict"].as_str().unwrap()));
    let svg = std::fs::read_to_string(d.join("a/paired-fair-d1s7-vs-center.svg")).unwrap();
    assert!(svg.starts_with("<svg") && svg.contains("first half"));
    // resuming the same screen is fine; a second screen on the block is refused
    ok(&args("a"));
    fails(&args("b"), "already opened");
    // a training reservation that overlaps is refused by the screen
    fails(
        &[
            "lease",
            "reserve",
            "--id",
            "t",
            "--role",
            "training",
            "--seeds",
            "0x3008:100",
            "--ledger",
            ledger.to_str().unwrap(),
        ],
        "overlap lease `screen-0x00003000-16`",
    );
    let out = ok(&["lease", "list", "--ledger", ledger.to_str().unwrap()]);
    assert!(text(&out.stdout).contains("screen-0x00003000-16"));
}

#[test]
fn d7p_protocol() {
    let out = drop7_stdin(
        &["d7p", "--policy", "fair-d1s7"],
        "d7p\nisready\nposition startpos next 3 rise 5\ngo\nposition board 000 next 1 rise 1\nhello\nposition board 1111111111111111111111111111111111111111111111111 next 2 rise 3\ngo\nquit\ngo\n",
    );
    let t = text(&out.stdout);
    let lines: Vec<&str> = t.lines().collect();
    assert_eq!(
        lines[..4],
        [
            "id name actuary-drop7 fair-d1s7",
            "id family fair",
            "id public-information true",
            "d7pok"
        ]
    );
    assert_eq!(lines[4], "readyok");
    assert!(lines[5].starts_with("bestmove ") && lines[5][9..].parse::<u8>().unwrap() < 7);
    assert!(lines[6].starts_with("info string error: bad board"));
    assert_eq!(lines[7], "info unknown command hello");
    assert_eq!(lines[8], "bestmove none");
    assert_eq!(lines.len(), 9, "nothing after quit: {t}");
}

#[test]
fn train_resume_and_model_files() {
    let tmp = tmpdir("train");
    let d = tmp.path();
    let out_dir = d.join("run");
    let ledger = d.join("l.json");
    let base = |moves: &str| {
        vec![
            "train".to_owned(),
            "--layout".into(),
            "win23,phase=none".into(),
            "--moves".into(),
            moves.into(),
            "--threads".into(),
            "1".into(),
            "--out".into(),
            out_dir.display().to_string(),
            "--validate-every".into(),
            "0".into(),
            "--checkpoint-every".into(),
            "1e4".into(),
            "--report-every".into(),
            "5e3".into(),
            "--ledger".into(),
            ledger.display().to_string(),
        ]
    };
    ok(&base("2e4"));
    // refuses to overwrite a run without --resume
    fails(&base("3e4"), "pass --resume");
    let mut resume = base("3e4");
    resume.push("--resume".into());
    ok(&resume);
    let state: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out_dir.join("checkpoint.json")).unwrap())
            .unwrap();
    assert!(state["moves"].as_u64().unwrap() >= 30_000);
    assert!(
        std::fs::read_to_string(out_dir.join("training-curve.svg"))
            .unwrap()
            .starts_with("<svg")
    );
    let model = out_dir.join("final-weights.bin");
    let out = ok(&["model", "info", model.to_str().unwrap()]);
    let info: serde_json::Value = serde_json::from_str(&text(&out.stdout)).unwrap();
    assert_eq!(info["stats"]["layout"], "win23,phase=none");
    assert_eq!(info["verified"], true);
    let zeroed = d.join("zeroed.bin.zst");
    ok(&[
        "model",
        "edit",
        model.to_str().unwrap(),
        "--zero-untouched",
        "--out",
        zeroed.to_str().unwrap(),
    ]);
    // the average of the model and its zeroed edit: no entry is left at the starting value
    // (each never-updated one is half of it), and it plays
    let avg = d.join("avg.bin.zst");
    let out = ok(&[
        "model",
        "average",
        model.to_str().unwrap(),
        zeroed.to_str().unwrap(),
        "--out",
        avg.to_str().unwrap(),
    ]);
    assert!(text(&out.stdout).contains("entries changed"));
    let out = ok(&["model", "info", avg.to_str().unwrap()]);
    let info: serde_json::Value = serde_json::from_str(&text(&out.stdout)).unwrap();
    assert_eq!(info["stats"]["untouched"], 0);
    let arm = format!("ntuple-1ply@{}", avg.display());
    ok(&["play", "--policy", &arm, "--seeds", "0x77:2", "--quiet"]);
    // the n-tuple policies play from a model file
    let arm = format!("ntuple-1ply@{}", zeroed.display());
    ok(&["play", "--policy", &arm, "--seeds", "0x77:2", "--quiet"]);
    // a corrupted model is a clear error
    let mut bytes = std::fs::read(&model).unwrap();
    let n = bytes.len();
    bytes.truncate(n - 7);
    std::fs::write(&model, bytes).unwrap();
    fails(&["model", "info", model.to_str().unwrap()], "truncated");
}

/// Output errors are errors (a full disk is not success), a reader that leaves early is not,
/// and hostile bytes on stdin get an answer instead of ending the session.
#[test]
fn output_errors_closed_pipes_and_hostile_bytes() {
    let exe = DROP7;
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .unwrap();
    let out = Command::new(exe)
        .args(["leaf", "--board", "startpos", "--next", "3", "--rise", "5"])
        .stdout(full)
        .output()
        .unwrap();
    refused(&out, "standard output");
    for cmd in [
        format!("{exe} show --board startpos | true"),
        format!("{exe} trace --seed 7 | head -c 10 >/dev/null"),
    ] {
        let out = Command::new("sh").args(["-c", &cmd]).output().unwrap();
        assert!(out.status.success(), "{cmd}");
        assert!(
            !text(&out.stderr).contains("panicked"),
            "{cmd}: {}",
            text(&out.stderr)
        );
    }
    let mut input = b"\xff\xfe not utf-8\n".to_vec();
    input.extend_from_slice(b"{\"board\":\"startpos\",\"next\":3,\"rise\":5}\n");
    let mut child = Command::new(exe)
        .args(["leaf", "--batch"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(&input).unwrap();
    let out = child.wait_with_output().unwrap();
    let lines: Vec<String> = text(&out.stdout).lines().map(str::to_owned).collect();
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert!(lines[0].contains("not UTF-8"));
    assert!(lines[1].contains("\"leaf\""));
    let d7p = drop7_stdin(&["d7p", "--policy", "center"], "\u{fffd}\nisready\n");
    assert!(text(&d7p.stdout).contains("readyok"));
    for (args, want) in [
        (
            vec![
                "search",
                "--board",
                "startpos",
                "--next",
                "3",
                "--rise",
                "5",
                "--table",
                "99999999999999",
            ],
            "use 1 to 67108864",
        ),
        (
            vec![
                "play",
                "--policy",
                "center",
                "--seeds",
                "0x10:2",
                "--out",
                "/dev/null",
            ],
            "must be a regular file",
        ),
        (
            vec![
                "play",
                "--policy",
                "center",
                "--seeds",
                "0x10:2",
                "--threads",
                "100000",
            ],
            "--threads 100000",
        ),
        (
            vec!["play", "--policy", "trace-random", "--seeds", "0x10:2"],
            "only for `drop7 trace`",
        ),
        (
            vec!["play", "--policy", "center", "--seeds", "0xfffffff0:32"],
            "past 0xffffffff",
        ),
        (
            vec![
                "train", "--moves", "1e3", "--out", "/tmp/x", "--alpha", "NaN",
            ],
            "--alpha NaN",
        ),
    ] {
        fails(&args, want);
    }
}

/// Three shard processes at once, then `merge screen`: the games files (but wall times),
/// report.md and figure equal the single-process screen's; a shard cut short is refused
/// until it is resumed; `merge play` joins `play --shard` files the same way.
#[test]
fn shards_as_processes_merge_to_the_single_process_screen() {
    let tmp = tmpdir("shards");
    let d = tmp.path();
    let ledger = d.join("leases.json");
    let screen = |out: &str, extra: &[&str]| {
        let mut a: Vec<String> = [
            "screen",
            "--arms",
            "leftmost,fair-d1s7",
            "--seeds",
            "0x6000:10",
            "--quiet",
            "--threads",
            "1",
            "--force",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        a.extend(["--out".into(), d.join(out).display().to_string()]);
        a.extend(["--ledger".into(), ledger.display().to_string()]);
        a.extend(extra.iter().map(|s| s.to_string()));
        a
    };
    ok(&screen("one", &[]));
    let children: Vec<_> = (0..3)
        .map(|k| {
            Command::new(DROP7)
                .args(screen("many", &["--shard", &format!("{k}/3")]))
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for c in children {
        let o = c.wait_with_output().unwrap();
        assert!(o.status.success(), "{}", text(&o.stderr));
    }
    // kill one shard's work: the merge refuses, a re-run of the shard resumes it
    let g = d.join("many/shards/2-of-3/games-fair-d1s7.jsonl");
    let kept: String = lines_of(&g)[..2].iter().map(|l| l.clone() + "\n").collect();
    std::fs::write(&g, kept).unwrap();
    fails(
        &["merge", "screen", d.join("many").to_str().unwrap()],
        "resume it",
    );
    ok(&screen("many", &["--shard", "2/3"]));
    ok(&["merge", "screen", d.join("many").to_str().unwrap()]);
    let strip = |p: &Path| {
        lines_of(p)
            .iter()
            .map(|l| {
                let mut v: serde_json::Value = serde_json::from_str(l).unwrap();
                v.as_object_mut().unwrap().remove("wallSeconds");
                v
            })
            .collect::<Vec<_>>()
    };
    for f in ["games-leftmost.jsonl", "games-fair-d1s7.jsonl"] {
        assert_eq!(
            strip(&d.join("one").join(f)),
            strip(&d.join("many").join(f)),
            "{f}"
        );
    }
    for f in ["report.md", "paired-fair-d1s7-vs-leftmost.svg"] {
        assert_eq!(
            std::fs::read(d.join("one").join(f)).unwrap(),
            std::fs::read(d.join("many").join(f)).unwrap(),
            "{f}"
        );
    }
    // play shards
    let p = d.join("p.jsonl");
    for k in 0..2 {
        ok(&[
            "play",
            "--policy",
            "center",
            "--seeds",
            "0x10:7",
            "--quiet",
            "--shard",
            &format!("{k}/2"),
            "--out",
            p.to_str().unwrap(),
        ]);
    }
    ok(&["merge", "play", p.to_str().unwrap(), "--seeds", "0x10:7"]);
    let seeds: Vec<u64> = lines_of(&p)
        .iter()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["seed"]
                .as_u64()
                .unwrap()
        })
        .collect();
    assert_eq!(seeds, (0x10..0x17).collect::<Vec<u64>>());
    // Merging again over its own result is fine; over a file holding another arm's games it
    // is refused (issue 36: merge destroyed them), unless forced.
    ok(&["merge", "play", p.to_str().unwrap(), "--seeds", "0x10:7"]);
    let own = std::fs::read_to_string(&p).unwrap();
    ok(&[
        "play",
        "--policy",
        "leftmost",
        "--seeds",
        "0x40:2",
        "--quiet",
        "--out",
        d.join("other.jsonl").to_str().unwrap(),
    ]);
    let other = std::fs::read_to_string(d.join("other.jsonl")).unwrap();
    std::fs::write(&p, format!("{own}{other}")).unwrap();
    fails(
        &["merge", "play", p.to_str().unwrap(), "--seeds", "0x10:7"],
        "holds 2 line(s) the shards do not",
    );
    assert_eq!(
        std::fs::read_to_string(&p).unwrap(),
        format!("{own}{other}")
    );
    ok(&[
        "merge",
        "play",
        p.to_str().unwrap(),
        "--seeds",
        "0x10:7",
        "--force",
    ]);
    assert_eq!(std::fs::read_to_string(&p).unwrap(), own);
    // A `play` holding FILE's lock: the merge is refused and the file left alone.
    let held = std::fs::OpenOptions::new().append(true).open(&p).unwrap();
    held.lock().unwrap();
    fails(
        &["merge", "play", p.to_str().unwrap(), "--seeds", "0x10:7"],
        "is locked",
    );
    drop(held);
}

/// The memory check honours `ulimit -v` (RLIMIT_AS), not only MemAvailable and the cgroup:
/// under a 2 GB address-space limit a 3.2 GB search table is refused with the one-line error
/// naming what the limit leaves, where MemAvailable alone would let it through (on a machine
/// with more than 4.2 GB free) to a failed allocation (issue 36).
#[test]
fn table_memory_check_honours_the_address_space_limit() {
    let search_under = |limit: &str| {
        Command::new("sh")
            .arg("-c")
            .arg(format!(
                "{limit} exec \"$0\" search --board startpos --next 3 --rise 5 --table 67108864",
            ))
            .arg(DROP7)
            .output()
            .unwrap()
    };
    let e = refused(
        &search_under("ulimit -v 2000000 &&"),
        "needs 3.2 GB and only ",
    );
    // What is left under the limit is at most its 2.0 GB (less on a machine with less).
    let left: f64 = e
        .split("needs 3.2 GB and only ")
        .nth(1)
        .and_then(|r| r.split(' ').next())
        .and_then(|x| x.parse().ok())
        .unwrap_or_else(|| panic!("{e}"));
    assert!(left <= 2.05, "{e}");
}
