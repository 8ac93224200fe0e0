//! The arbiter end to end with scripted engines (and our own engine when it is built):
//! faults are recorded as losses without stopping the match, a slow engine loses on time,
//! fixed-node matches reproduce, the SPRT stops, and python-chess reads every PGN game.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::{arbiter, book, fake, refused, stopped};

/// A fresh directory, removed with its contents when the guard drops.
fn tmp(name: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(&format!("arbiter-test-{name}-"))
        .tempdir()
        .unwrap()
}

/// Run a match: the JSON report from stdout (which must hold nothing else) and the human
/// text from stderr.
fn run(args: &[String]) -> (serde_json::Value, String) {
    let out = Command::new(arbiter())
        .args(args)
        .output()
        .expect("run arbiter");
    let text = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "arbiter failed: {text}");
    let json = String::from_utf8_lossy(&out.stdout);
    let report = serde_json::from_str(&json)
        .unwrap_or_else(|e| panic!("stdout is not only the JSON report ({e}):\n{json}"));
    assert!(
        text.contains("| pair | games |"),
        "no table on stderr: {text}"
    );
    (report, text)
}

fn engine(name: &str, cmd: &str, mode: Option<&str>) -> Vec<String> {
    let mut v = vec![
        "--engine".into(),
        format!("name={name}"),
        format!("cmd={cmd}"),
    ];
    if let Some(m) = mode {
        v.push(format!("arg={m}"));
    }
    v
}

fn s(v: &[&str]) -> Vec<String> {
    v.iter().map(|x| x.to_string()).collect()
}

#[test]
fn faults_are_losses_and_the_match_goes_on() {
    let tmp = tmp("faults");
    let d = tmp.path();
    let pgn = d.join("faults.pgn");
    let mut args = engine("ref", fake(), Some("random"));
    for m in ["illegal", "hang", "crash", "crash-late"] {
        args.extend(engine(m, fake(), Some(m)));
    }
    args.extend(s(&[
        "--nodes",
        "1000",
        "--hang-timeout",
        "2",
        "--games",
        "2",
        "--concurrency",
        "2",
        "--book",
        &book(),
        "--pgn",
    ]));
    args.push(pgn.display().to_string());
    let (report, text) = run(&args);
    let pairs = report["pairs"].as_array().unwrap();
    assert_eq!(pairs.len(), 4, "{text}");
    for p in pairs {
        let second = p["second"].as_str().unwrap();
        assert_eq!(
            (p["wins"].as_u64(), p["games"].as_u64()),
            (Some(2), Some(2)),
            "{second}: {text}"
        );
        let faults = |k: &str| p[k][1].as_u64().unwrap();
        match second {
            "illegal" => assert_eq!(faults("illegalMoves"), 2),
            "hang" => assert_eq!(faults("hangs"), 2),
            "crash" | "crash-late" => assert_eq!(faults("crashes"), 2),
            _ => unreachable!(),
        }
    }
    let games = std::fs::read_to_string(&pgn).unwrap();
    assert_eq!(games.matches("[Event ").count(), 8);
    assert!(games.contains("{illegal plays an illegal move (a1a1)}"));
    assert!(games.contains("{hang stopped answering}"));
    assert!(games.contains("{crash-late crashed}"));
    assert!(games.contains("[Termination \"rules infraction\"]"));
}

#[test]
fn a_slow_engine_loses_on_time_and_engine_stderr_is_logged() {
    let tmp = tmp("time");
    let d = tmp.path();
    let (pgn, logs) = (d.join("time.pgn"), d.join("logs"));
    // `slow` needs 3 s per move; the clock gives it 1 s (+ 50 ms margin) for the game.
    let mut args = engine("quick", fake(), Some("random"));
    args.extend(engine("slow", fake(), Some("slow")));
    args.extend(s(&[
        "--tc",
        "1+0",
        "--games",
        "2",
        "--concurrency",
        "2",
        "--quiet",
    ]));
    args.extend(["--pgn".into(), pgn.display().to_string()]);
    args.extend(["--log".into(), logs.display().to_string()]);
    let (report, text) = run(&args);
    let p = &report["pairs"][0];
    assert_eq!(p["second"], "slow", "{text}");
    assert_eq!(
        (
            p["wins"].as_u64(),
            p["losses"].as_u64(),
            p["games"].as_u64()
        ),
        (Some(2), Some(0), Some(2)),
        "{text}"
    );
    assert_eq!(p["timeLosses"], serde_json::json!([0, 2]), "{text}");
    let games = std::fs::read_to_string(&pgn).unwrap();
    assert_eq!(games.matches("{slow loses on time}").count(), 2, "{games}");
    assert_eq!(games.matches("[Termination \"time forfeit\"]").count(), 2);
    // One stderr log per engine process. Game 1: quick (White) moves, slow flags on its first
    // move. Game 2: slow (White) flags at once, so quick is never asked to move.
    let log = |name: &str, game: u32| {
        let p = logs.join(format!("{name}-game{game}.log"));
        std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
    };
    assert_eq!(log("quick", 1), "fake-random: go 1\n");
    assert_eq!(log("slow", 1), "fake-slow: go 1\n");
    assert_eq!(log("slow", 2), "fake-slow: go 1\n");
    assert_eq!(log("quick", 2), "");
    assert_eq!(std::fs::read_dir(&logs).unwrap().count(), 4);
}

fn movetext(pgn: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(pgn).unwrap();
    let mut games: Vec<String> = text
        .split("[Event ")
        .skip(1)
        .map(|g| {
            g.lines()
                .filter(|l| !l.starts_with('['))
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect();
    games.sort();
    games
}

#[test]
fn fixed_node_matches_reproduce_and_python_chess_reads_the_pgn() {
    let tmp = tmp("repro");
    let d = tmp.path();
    let mut engines = engine("a", fake(), Some("random"));
    engines.extend(engine("b", fake(), Some("random")));
    // Our own engine too, when the workspace has built it (cargo test --workspace does).
    let actuary = PathBuf::from(env!("CARGO_BIN_EXE_arbiter")).with_file_name("actuary");
    if actuary.exists() {
        engines.extend(engine("actuary", actuary.to_str().unwrap(), None));
    }
    let pgn = |k: usize| d.join(format!("run{k}.pgn"));
    for k in 0..2 {
        let mut args = engines.clone();
        args.extend(s(&[
            "--nodes",
            "2000",
            "--games",
            "4",
            "--concurrency",
            "2",
            "--book-order",
            "sequential",
            "--round-robin",
            "--book",
            &book(),
            "--quiet",
            "--pgn",
        ]));
        args.push(pgn(k).display().to_string());
        run(&args);
    }
    let (a, b) = (movetext(&pgn(0)), movetext(&pgn(1)));
    assert!(!a.is_empty());
    assert_eq!(
        a, b,
        "two identical fixed-node matches produced different games"
    );
    // python-chess must parse every game and replay it to the recorded result
    let script = format!("{}/tests/read_pgn.py", env!("CARGO_MANIFEST_DIR"));
    let out = Command::new("python3")
        .arg(&script)
        .arg(pgn(0))
        .output()
        .expect("python3");
    let says =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "python-chess check failed (pip install chess): {says}"
    );
    assert!(says.contains(&format!("games {}", a.len())), "{says}");
}

#[test]
fn sprt_stops_with_a_decision() {
    let mut args = engine("good", fake(), Some("random"));
    args.extend(engine("bad", fake(), Some("illegal")));
    args.extend(s(&[
        "--nodes", "100", "--games", "400", "--sprt", "elo0=0", "elo1=10", "--quiet",
    ]));
    let (report, text) = run(&args);
    assert_eq!(report["stoppedBySprt"], true, "{text}");
    let sprt = &report["pairs"][0]["sprt"];
    assert_eq!(sprt["decision"], "h1");
    assert!(sprt["llr"].as_f64().unwrap() >= 2.94);
    assert!((sprt["upperBound"].as_f64().unwrap() - 2.944).abs() < 1e-3);
    assert!(report["games"].as_u64().unwrap() < 400);
    assert!(
        text.contains("LLR") || text.contains("h1") || text.contains("H1"),
        "{text}"
    );
}

/// Run the arbiter with `args` through `sh -c "PREFIX; exec arbiter ARGS"`: (status, stdout,
/// stderr, seconds).
fn run_raw(prefix: &str, args: &[String]) -> (std::process::ExitStatus, String, String, f64) {
    let quoted: Vec<String> = std::iter::once(arbiter().to_owned())
        .chain(args.iter().cloned())
        .map(|a| format!("'{}'", a.replace('\'', "'\\''")))
        .collect();
    let t0 = std::time::Instant::now();
    let out = Command::new("sh")
        .arg("-c")
        .arg(format!("{prefix}\nexec {}", quoted.join(" ")))
        .output()
        .expect("sh");
    let (so, se) = (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    );
    assert!(!se.contains("panicked"), "{se}");
    (out.status, so, se, t0.elapsed().as_secs_f64())
}

#[test]
fn a_full_disk_stops_the_match_and_the_pgn_keeps_only_whole_games() {
    let tmp = tmp("full");
    let pgn = tmp.path().join("full.pgn");
    let mut args = engine("a", fake(), Some("random"));
    args.extend(engine("b", fake(), Some("random")));
    args.extend(s(&["--nodes", "10", "--games", "40", "--quiet", "--pgn"]));
    args.push(pgn.display().to_string());
    // A file-size limit of 25 kB (dash counts 512-byte blocks) plays the full disk: writes past it fail with EFBIG
    // (SIGXFSZ ignored, as the shell passes it on).
    let (status, stdout, stderr, _) = run_raw("trap '' XFSZ; ulimit -f 50", &args);
    let line = stopped(status, &stderr);
    assert!(stdout.is_empty(), "{stdout}");
    assert!(
        line.contains("cannot write the PGN") && line.contains("File too large"),
        "{stderr}"
    );
    let text = std::fs::read_to_string(&pgn).unwrap();
    let games = text.matches("[Event ").count();
    assert!(
        games >= 2 && games.is_multiple_of(2),
        "{games} games:\n{text}"
    );
    // Every game is whole (the torn write was cut back), and the message counts exactly them.
    assert!(text.ends_with("\n\n"));
    assert_eq!(
        text.matches("\n1-0\n\n").count()
            + text.matches("\n0-1\n\n").count()
            + text.matches("\n1/2-1/2\n\n").count()
            + text.matches(" 1-0\n\n").count()
            + text.matches(" 0-1\n\n").count()
            + text.matches(" 1/2-1/2\n\n").count(),
        games,
        "{text}"
    );
    assert!(
        line.contains(&format!("stopped after {games} games")),
        "{line}"
    );
}

#[test]
fn a_reader_that_goes_away_ends_the_report_quietly() {
    let mut args = engine("a", fake(), Some("random"));
    args.extend(engine("b", fake(), Some("random")));
    args.extend(s(&["--nodes", "10", "--games", "2", "--quiet"]));
    // stdout is a pipe whose reader has gone: writing the report meets EPIPE.
    let out = Command::new(arbiter())
        .args(&args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .map(|mut c| {
            drop(c.stdout.take()); // the reader goes away before the report is written
            c.wait_with_output().unwrap()
        })
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        !stderr.contains("panicked") && !stderr.contains("error"),
        "{stderr}"
    );
    assert!(stderr.contains("| a vs b | 2 |"), "{stderr}");
}

#[test]
fn in_game_handshakes_obey_the_hang_timeout_and_noisy_engines_play_on() {
    let tmp = tmp("handshake");
    let flag = tmp.path().join("first-start");
    // `once`: the check before the match passes, every later start never answers `uci`.
    let mut args = engine("a", fake(), Some("noisy"));
    args.extend([
        "--engine".into(),
        "name=b".into(),
        format!("cmd={}", fake()),
        "arg=once".into(),
        format!("arg={}", flag.display()),
    ]);
    args.extend(s(&[
        "--nodes",
        "10",
        "--games",
        "2",
        "--quiet",
        "--hang-timeout",
        "1",
    ]));
    let t0 = std::time::Instant::now();
    let (report, text) = run(&args);
    let secs = t0.elapsed().as_secs_f64();
    let p = &report["pairs"][0];
    assert_eq!(p["hangs"], serde_json::json!([0, 2]), "{text}");
    assert_eq!(p["crashes"], serde_json::json!([0, 0]), "{text}");
    assert_eq!(p["wins"], 2, "{text}");
    // Two handshakes of 1 s each, not the 10 s the arbiter used to wait.
    assert!(secs < 6.0, "took {secs:.1} s");
    // The noisy engine (invalid UTF-8, 300 kB lines) plays normal games.
    let mut args = engine("noisy", fake(), Some("noisy"));
    args.extend(engine("b", fake(), Some("random")));
    args.extend(s(&["--nodes", "10", "--games", "2", "--quiet"]));
    let (report, text) = run(&args);
    let p = &report["pairs"][0];
    for k in ["crashes", "hangs", "illegalMoves", "timeLosses"] {
        assert_eq!(p[k], serde_json::json!([0, 0]), "{k}: {text}");
    }
}

#[test]
fn an_engine_that_can_no_longer_be_started_stops_the_match_instead_of_losing() {
    let tmp = tmp("vanish");
    let copy = tmp.path().join("engine");
    std::fs::copy(fake(), &copy).unwrap();
    // `vanish` deletes its own file when started: the check before the match passes, the
    // first game cannot start it.
    let mut args = engine("a", fake(), Some("random"));
    args.extend(engine("b", copy.to_str().unwrap(), Some("vanish")));
    args.extend(s(&["--nodes", "10", "--games", "4", "--quiet"]));
    let (status, stdout, stderr, _) = run_raw("", &args);
    let line = stopped(status, &stderr);
    assert!(stdout.is_empty(), "{stdout}");
    assert!(
        line.starts_with("error: the match stopped after 0 games: engine `b`: cannot start"),
        "{stderr}"
    );
}

#[test]
fn a_report_that_cannot_be_written_after_the_match_goes_to_stdout() {
    let tmp = tmp("report");
    let sub = tmp.path().join("sub");
    std::fs::create_dir(&sub).unwrap();
    let report = sub.join("r.json");
    // The check before the match passes; then an engine removes the directory mid-match.
    let mut args = engine("a", fake(), Some("random"));
    args.extend([
        "--engine".into(),
        "name=b".into(),
        format!("cmd={}", fake()),
        "arg=remove".into(),
        format!("arg={}", sub.display()),
    ]);
    args.extend(s(&["--nodes", "10", "--games", "2", "--quiet", "--report"]));
    args.push(report.display().to_string());
    let (status, stdout, stderr, _) = run_raw("", &args);
    let line = stopped(status, &stderr);
    assert!(
        line.contains(&format!("--report {}", report.display()))
            && line.ends_with("the report was written to standard output instead"),
        "{stderr}"
    );
    let json: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(json["games"], 2);
}

/// The games of a PGN as (round, movetext), sorted: what was played, wherever it was played.
fn rounds(pgn: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(pgn).unwrap();
    let mut games: Vec<String> = text
        .split("[Event ")
        .skip(1)
        .map(|g| {
            let round = g.lines().find(|l| l.starts_with("[Round ")).unwrap_or("");
            let moves: Vec<&str> = g.lines().filter(|l| !l.starts_with('[')).collect();
            format!("{round} {}", moves.join(" ").trim())
        })
        .collect();
    games.sort();
    games
}

#[test]
fn a_resumed_match_counts_what_was_played_and_plays_only_the_rest() {
    let tmp = tmp("resume");
    let d = tmp.path();
    let mut engines = engine("a", fake(), Some("random"));
    engines.extend(engine("b", fake(), Some("random")));
    let args = |games: &str, pgn: &Path, extra: &[&str]| {
        let mut v = engines.clone();
        v.extend(s(&[
            "--nodes",
            "100",
            "--games",
            games,
            "--book",
            &book(),
            "--seed",
            "5",
            "--quiet",
        ]));
        v.extend(s(extra));
        v.push("--pgn".into());
        v.push(pgn.display().to_string());
        v
    };
    // The whole match in one run.
    let full = d.join("full.pgn");
    let (whole, _) = run(&args("8", &full, &[]));
    // The same match stopped after two pairs, the third cut off in the middle of a write.
    let part = d.join("part.pgn");
    run(&args("4", &part, &[]));
    let full_text = std::fs::read_to_string(&full).unwrap();
    let third = full_text.match_indices("[Event ").nth(4).unwrap().0;
    let mut cut = std::fs::read_to_string(&part).unwrap();
    cut.push_str(&full_text[third..third + 300]);
    std::fs::write(&part, &cut).unwrap();
    let logs = d.join("logs");
    let mut resumed = args("8", &part, &["--resume", "--log"]);
    resumed.insert(resumed.len() - 2, logs.display().to_string());
    let out = Command::new(arbiter()).args(&resumed).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("removed, that pair is played again"), "{err}");
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    for key in ["games", "wins", "draws", "losses", "pentanomial"] {
        assert_eq!(
            report["pairs"][0][key], whole["pairs"][0][key],
            "{key}: {err}"
        );
    }
    assert_eq!(rounds(&part), rounds(&full), "the resumed PGN differs");
    // Only games 5 to 8 were played: one log per engine per game.
    let mut played: Vec<String> = std::fs::read_dir(&logs)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    played.sort();
    assert_eq!(
        played,
        [
            "a-game5.log",
            "a-game6.log",
            "a-game7.log",
            "a-game8.log",
            "b-game5.log",
            "b-game6.log",
            "b-game7.log",
            "b-game8.log"
        ]
    );
    // Resuming a finished match plays nothing and reports the same.
    let (again, _) = run(&args("8", &part, &["--resume"]));
    assert_eq!(
        again["pairs"][0]["pentanomial"],
        whole["pairs"][0]["pentanomial"]
    );
    // The score of the files alone agrees.
    let (scored, _) = run(&s(&["--score", full.to_str().unwrap(), "--quiet"]));
    assert_eq!(
        scored["pairs"][0]["pentanomial"],
        whole["pairs"][0]["pentanomial"]
    );
    assert_eq!(scored["games"], 8);

    // A PGN that is not this match's is refused before any game, with its line.
    for (extra, games, says) in [
        (vec!["--seed", "6"], "8", "began from another opening"),
        (vec!["--event", "other"], "8", "is not this match's --event"),
        (vec![], "2", "beyond --games 2"),
    ] {
        let mut a = args(games, &part, &["--resume"]);
        let i = a.iter().position(|w| w == "--seed").unwrap();
        if extra.first() == Some(&"--seed") {
            a[i + 1] = extra[1].into();
        } else {
            a.extend(s(&extra));
        }
        let (status, _, err, _) = run_raw("true", &a);
        refused(status, &err, says);
        assert!(
            err.starts_with("error: --resume ") && err.contains("part.pgn line "),
            "{err}"
        );
    }
    let mut swapped = engine("b", fake(), Some("random"));
    swapped.extend(engine("a", fake(), Some("random")));
    swapped.extend(s(&[
        "--nodes",
        "100",
        "--games",
        "8",
        "--book",
        &book(),
        "--seed",
        "5",
        "--resume",
        "--pgn",
    ]));
    swapped.push(part.display().to_string());
    let (status, _, err, _) = run_raw("true", &swapped);
    refused(
        status,
        &err,
        "`a` vs `b` is not an engine pair of this match",
    );
    assert_eq!(
        rounds(&part),
        rounds(&full),
        "a refused resume changed the PGN"
    );
}

#[test]
fn score_finds_where_an_sprt_stopped() {
    let tmp = tmp("score");
    let pgn = tmp.path().join("sprt.pgn");
    let mut args = engine("good", fake(), Some("random"));
    args.extend(engine("bad", fake(), Some("illegal")));
    args.extend(s(&[
        "--nodes", "100", "--games", "400", "--sprt", "elo0=0", "elo1=10", "--quiet", "--pgn",
    ]));
    args.push(pgn.display().to_string());
    let (played, _) = run(&args);
    let stop = &played["pairs"][0]["sprtStop"];
    assert_eq!(stop["decision"], "h1", "{played}");
    // Scoring the games and a copy of them after: the decision point is where the match
    // stopped. (The same file named twice is refused: its games would count twice.)
    let p = pgn.to_str().unwrap();
    let copy = tmp.path().join("sprt-copy.pgn");
    std::fs::copy(&pgn, &copy).unwrap();
    let c = copy.to_str().unwrap();
    let (scored, text) = run(&s(&["--score", p, c, "--sprt", "elo0=0", "elo1=10"]));
    assert_eq!(
        scored["pairs"][0]["sprtStop"]["games"], stop["games"],
        "{text}"
    );
    assert_eq!(
        scored["games"].as_u64().unwrap(),
        2 * played["games"].as_u64().unwrap()
    );
    assert!(
        text.contains(&format!("H1 after {} games", stop["games"])),
        "{text}"
    );
    // Bad input: one line, status 2.
    for (bad, says) in [
        (s(&["--score", "/nonexistent.pgn"]), "not a readable file"),
        (s(&["--score", p, p]), "given twice"),
        (s(&["--score", p, "--tc", "1+0"]), "cannot be used with"),
    ] {
        let out = Command::new(arbiter()).args(&bad).output().unwrap();
        refused(out.status, &String::from_utf8_lossy(&out.stderr), says);
    }
}

#[test]
fn chess960_games_castle_king_takes_rook_and_python_chess_replays_them() {
    let tmp = tmp("chess960");
    let pgn = tmp.path().join("960.pgn");
    let book960 = format!(
        "{}/../../data/chess/books/chess960.epd",
        env!("CARGO_MANIFEST_DIR")
    );
    // Our engine when the workspace has built it (it castles often), else the fakes.
    let actuary = PathBuf::from(env!("CARGO_BIN_EXE_arbiter")).with_file_name("actuary");
    let (mut args, nodes) = if actuary.exists() {
        let a = actuary.to_str().unwrap();
        let mut v = engine("a", a, None);
        v.extend(engine("b", a, None));
        (v, "1000")
    } else {
        let mut v = engine("a", fake(), Some("random"));
        v.extend(engine("b", fake(), Some("random")));
        (v, "100")
    };
    args.extend(s(&[
        "--chess960",
        "--nodes",
        nodes,
        "--games",
        "8",
        "--concurrency",
        "2",
        "--book",
        &book960,
        "--seed",
        "9",
        "--adjudicate",
        "1000,3,0,0,0",
        "--quiet",
        "--pgn",
    ]));
    args.push(pgn.display().to_string());
    let (report, text) = run(&args);
    let p = &report["pairs"][0];
    assert_eq!(p["games"], 8, "{text}");
    assert_eq!(p["illegalMoves"], serde_json::json!([0, 0]), "{text}");
    assert_eq!(p["crashes"], serde_json::json!([0, 0]), "{text}");
    let games = std::fs::read_to_string(&pgn).unwrap();
    assert_eq!(games.matches("[Variant \"Chess960\"]").count(), 8);
    assert_eq!(games.matches("[SetUp \"1\"]").count(), 8);
    // python-chess reads the Variant tag and replays each game under Chess960 rules.
    let script = format!("{}/tests/read_pgn.py", env!("CARGO_MANIFEST_DIR"));
    let out = Command::new("python3")
        .arg(&script)
        .arg(&pgn)
        .output()
        .expect("python3");
    let says =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success() && says.contains("games 8"), "{says}");
    if actuary.exists() {
        assert!(
            games.contains("O-O"),
            "no game castled: the test would not see castling"
        );
    }
    // Without --chess960 a Shredder-FEN book is refused, with its line.
    let shredder = tmp.path().join("shredder.epd");
    std::fs::write(
        &shredder,
        "bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/NPP1P1PP/BQ1BNRKR w HFhf - 0 9\n",
    )
    .unwrap();
    let mut plain = engine("a", fake(), Some("random"));
    plain.extend(engine("b", fake(), Some("random")));
    plain.extend(s(&[
        "--nodes",
        "10",
        "--games",
        "2",
        "--book",
        shredder.to_str().unwrap(),
    ]));
    let (status, _, err, _) = run_raw("true", &plain);
    refused(status, &err, "add --chess960");
    assert!(err.contains("shredder.epd:1: "), "{err}");
}
