//! `arbiter spsa` end to end on a scripted engine whose best setting is known
//! (`arbiter-fake-engine tune 60 100`: the farther its option `x` is from 60, the more often
//! it forfeits a move): the tune walks to it, a stopped run resumed ends exactly where an
//! uninterrupted one does, and what cannot be used is refused with one line.

use std::path::Path;
use std::process::{Command, Output};

use crate::common::{arbiter, book, fake, refused};

/// `arbiter spsa` on the fake engine (target 60, width 100) with `extra` arguments.
fn spsa(dir: &Path, params: &str, pairs: u32, extra: &[&str]) -> Output {
    let p = dir.join("params.txt");
    std::fs::write(&p, params).unwrap();
    let mut args: Vec<String> = [
        "spsa",
        "--engine",
        &format!("cmd={}", fake()),
        "arg=tune",
        "arg=60",
        "arg=100",
        "--params",
        p.to_str().unwrap(),
        "--pairs",
        &pairs.to_string(),
        "--depth",
        "1",
        // Draw once both sides have reported score 0 twice: a game is decided by the
        // forfeits of the first moves, or drawn.
        "--adjudicate",
        "1000,3,10,2,0",
        "--book",
        &book(),
        "--seed",
        "5",
        "--concurrency",
        "2",
        "--quiet",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    args.extend(extra.iter().map(|s| s.to_string()));
    Command::new(arbiter())
        .args(&args)
        .current_dir(dir)
        .output()
        .unwrap()
}

fn value(state: &Path, k: usize) -> f64 {
    let s: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(state).unwrap()).unwrap();
    s["params"][k]["value"].as_f64().unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A run all of whose `games` faulted: exit 1, its one `error:` line last, no values printed.
fn all_faulted(o: &Output, games: u64) {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    let last = err.lines().last().unwrap_or("");
    assert!(
        last.starts_with(&format!("error: all {games} games ended in a fault")),
        "{err}"
    );
    assert_eq!(err.matches("error:").count(), 1, "{err}");
    assert!(o.stdout.is_empty());
}

#[test]
fn walks_to_the_known_best_value_and_draws_its_trajectory() {
    let dir = tempfile::tempdir().unwrap();
    let o = spsa(
        dir.path(),
        "x, int, 20, 0, 100, 6, 0.05\n",
        200,
        &[
            "--state",
            "s.json",
            "--trajectory",
            "t.jsonl",
            "--svg",
            "t.svg",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let x = value(&dir.path().join("s.json"), 0);
    assert!((45.0..=75.0).contains(&x), "x = {x} (start 20, best 60)");
    // stdout: the continuation input, the start replaced by the tuned value.
    let out = String::from_utf8(o.stdout).unwrap();
    assert_eq!(out, format!("x, int, {}, 0, 100, 6, 0.05\n", x.round()));
    let lines = std::fs::read_to_string(dir.path().join("t.jsonl")).unwrap();
    assert_eq!(lines.lines().count(), 100, "one line per batch of 2 pairs");
    let last: serde_json::Value = serde_json::from_str(lines.lines().last().unwrap()).unwrap();
    assert_eq!(last["pairs"], 200);
    let svg = std::fs::read_to_string(dir.path().join("t.svg")).unwrap();
    assert!(svg.starts_with("<svg") && svg.contains("<polyline") && svg.contains("x: 20 →"));
}

#[test]
fn a_resumed_run_ends_where_an_uninterrupted_one_does() {
    let params = "x, int, 30, 0, 100, 6, 0.05\ny, float, 0.5, 0, 1, 0.05, 0.01\n";
    let whole = tempfile::tempdir().unwrap();
    let o = spsa(
        whole.path(),
        params,
        40,
        &["--state", "s.json", "--trajectory", "t.jsonl"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let parts = tempfile::tempdir().unwrap();
    let a = ["--state", "s.json", "--trajectory", "t.jsonl"];
    let o = spsa(
        parts.path(),
        params,
        40,
        &[&a[..], &["--stop-after", "13"]].concat(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let s: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(parts.path().join("s.json")).unwrap())
            .unwrap();
    // The stop falls at the end of the batch under way (concurrency 2).
    assert_eq!(s["pairs_done"], 14);
    // A batch lost to a kill: its trajectory line was written, the state was not.
    let t = parts.path().join("t.jsonl");
    let mut text = std::fs::read_to_string(&t).unwrap();
    text.push_str(
        "{\"pairs\":16,\"scores\":[2,2],\"values\":{\"x\":99.0,\"y\":0.9}}\n{\"pairs\":1",
    );
    std::fs::write(&t, text).unwrap();
    // Without --resume the state is not overwritten.
    let o = spsa(parts.path(), params, 40, &a);
    refused(o.status, &stderr(&o), "exists: give --resume");
    let o = spsa(parts.path(), params, 40, &[&a[..], &["--resume"]].concat());
    assert!(o.status.success(), "{}", stderr(&o));
    for f in ["s.json", "t.jsonl"] {
        assert_eq!(
            std::fs::read_to_string(whole.path().join(f)).unwrap(),
            std::fs::read_to_string(parts.path().join(f)).unwrap(),
            "{f}"
        );
    }
    // Another schedule length is another run.
    let o = spsa(parts.path(), params, 41, &[&a[..], &["--resume"]].concat());
    refused(o.status, &stderr(&o), "another schedule");
}

#[test]
fn refuses_bad_params_with_one_line() {
    let dir = tempfile::tempdir().unwrap();
    for (params, says) in [
        ("x, int, 20, 0, 100, 6\n", "params.txt: line 1: expected 7"),
        (
            "x, int, 200, 0, 100, 6, 0.05\n",
            "line 1: start 200 is outside",
        ),
        ("# only a comment\n", "no parameter"),
    ] {
        let o = spsa(dir.path(), params, 10, &["--state", "s.json"]);
        refused(o.status, &stderr(&o), says);
        assert!(!dir.path().join("s.json").exists());
    }
    let o = spsa(
        dir.path(),
        "x, int, 20, 0, 100, 6, 0.05\n",
        10,
        &["--state", "params.txt"],
    );
    refused(o.status, &stderr(&o), "different files");
}

/// Faulted games are counted by kind and kept as PGN; a state from before kinds were kept
/// resumes, its old faults reported as of unknown kind.
#[test]
fn faults_are_counted_by_kind_and_kept_as_pgn() {
    let dir = tempfile::tempdir().unwrap();
    // x = 0, 40 from the target: each move is forfeited with probability 0.4, so nearly
    // every game ends with an illegal move.
    let params = "x, int, 0, 0, 100, 1, 0.0001\n";
    let a = ["--state", "s.json", "--faults", "f.pgn"];
    let o = spsa(
        dir.path(),
        params,
        12,
        &[&a[..], &["--stop-after", "6"]].concat(),
    );
    // every game of this seed faults: the run says so and prints no values, but keeps its
    // state and the faulted games
    all_faulted(&o, 12);
    let read = |name: &str| -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(dir.path().join(name)).unwrap()).unwrap()
    };
    let s = read("s.json");
    let faults = s["faults"].as_u64().unwrap();
    assert!(faults >= 6, "{faults} faults in 12 games");
    assert_eq!(s["fault_kinds"]["illegal_move"].as_u64(), Some(faults));
    for k in ["time", "crash", "hang"] {
        assert_eq!(s["fault_kinds"][k].as_u64(), Some(0), "{k}");
    }
    let pgn = std::fs::read_to_string(dir.path().join("f.pgn")).unwrap();
    assert_eq!(
        pgn.matches("[Event \"arbiter spsa\"]").count() as u64,
        faults
    );
    assert_eq!(
        pgn.matches("[Termination \"rules infraction\"]").count() as u64,
        faults
    );
    assert!(pgn.contains("[Round \"1.1\"]") || pgn.contains("[Round \"1.2\"]"));
    // A state written before kinds were kept: no `fault_kinds`, so all its faults are of
    // unknown kind.
    let mut old = s.clone();
    old.as_object_mut().unwrap().remove("fault_kinds");
    std::fs::write(dir.path().join("s.json"), old.to_string()).unwrap();
    let o = spsa(dir.path(), params, 12, &[&a[..], &["--resume"]].concat());
    match o.status.code() {
        Some(1) => all_faulted(&o, 24),
        _ => assert!(o.status.success(), "{}", stderr(&o)),
    }
    assert!(
        stderr(&o).contains(&format!(", {faults} of unknown kind")),
        "{}",
        stderr(&o)
    );
    let s = read("s.json");
    assert_eq!(s["pairs_done"], 12);
    let (all, illegal) = (
        s["faults"].as_u64().unwrap(),
        s["fault_kinds"]["illegal_move"].as_u64().unwrap(),
    );
    assert_eq!(all, illegal + faults);
    // The PGN holds the faults of both calls.
    let pgn = std::fs::read_to_string(dir.path().join("f.pgn")).unwrap();
    assert_eq!(
        pgn.matches("[Event \"arbiter spsa\"]").count() as u64,
        illegal + faults
    );
}

/// Issue 68, serious item 5: two runs on one state both played and both wrote it (55–60
/// duplicate trajectory lines); now the second is refused while the first holds the lock,
/// and a run goes on once the lock is free (a killed run's lock goes with its process).
#[test]
fn a_second_run_on_one_state_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let params = "x, int, 20, 0, 100, 6, 0.05\n";
    let state = dir.path().join("s.json");
    let held = fileio::lock(&arbiter::spsa::lock_path(&state)).unwrap();
    let o = spsa(dir.path(), params, 4, &["--state", "s.json", "--resume"]);
    refused(o.status, &stderr(&o), "locked by another run");
    assert!(!state.exists(), "the refused run wrote a state");
    drop(held);
    let o = spsa(dir.path(), params, 4, &["--state", "s.json", "--resume"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(value_pairs(&state), 4);
}

fn value_pairs(state: &Path) -> u64 {
    let s: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(state).unwrap()).unwrap();
    s["pairs_done"].as_u64().unwrap()
}

/// Issue 68, defects 2 and 8: an option the engine does not declare, a range past its
/// declared one, and a --faults file that cannot be written are refused before any game
/// (they used to tune nothing and report success, or stop the tune at its first fault).
#[test]
fn undeclared_options_ranges_and_bad_outputs_are_refused_first() {
    let dir = tempfile::tempdir().unwrap();
    for (params, extra, says) in [
        (
            "z, int, 20, 0, 100, 6, 0.05\n",
            &[][..],
            "`z` is not an option",
        ),
        (
            "x, int, 20, 0, 200, 6, 0.05\n",
            &[],
            "leaves the engine's 0..=100",
        ),
        (
            "x, int, 20, 0, 100, 6, 0.05\n",
            &["--faults", "/nonexistent-arbiter/f.pgn"],
            "--faults /nonexistent-arbiter",
        ),
    ] {
        let o = spsa(
            dir.path(),
            params,
            4,
            &[&["--state", "s.json"], extra].concat(),
        );
        refused(o.status, &stderr(&o), says);
        assert!(!dir.path().join("s.json").exists(), "{says}");
    }
}

/// Issue 68, minor: a hand-edited state was resumed as it stood (`pairs_done` 10¹², 41 pairs
/// of 40); now counts that disagree are refused with one line, and the state is kept.
#[test]
fn a_state_whose_counts_disagree_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let params = "x, int, 20, 0, 100, 6, 0.05\n";
    let a = ["--state", "s.json"];
    let o = spsa(
        dir.path(),
        params,
        4,
        &[&a[..], &["--stop-after", "2"]].concat(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let path = dir.path().join("s.json");
    let good: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let edits: [(&str, serde_json::Value, &str); 4] = [
        (
            "/pairs_done",
            serde_json::json!(5),
            "5 pairs done of a run of 4",
        ),
        (
            "/plus/wins",
            serde_json::json!(1_000_000_000_000u64),
            "games scored for 2 pairs",
        ),
        ("/faults", serde_json::json!(9), "9 faults"),
        (
            "/params/0/value",
            serde_json::json!(1e30),
            "outside 0..=100",
        ),
    ];
    for (pointer, value, says) in edits {
        let mut s = good.clone();
        *s.pointer_mut(pointer).unwrap() = value;
        std::fs::write(&path, s.to_string()).unwrap();
        let o = spsa(dir.path(), params, 4, &[&a[..], &["--resume"]].concat());
        refused(o.status, &stderr(&o), says);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), s.to_string());
    }
    // an int parameter beyond any integer option
    let o = spsa(
        dir.path(),
        "x, int, 20, 0, 1e30, 6, 0.05\n",
        4,
        &["--state", "t.json"],
    );
    refused(o.status, &stderr(&o), "beyond what an integer option holds");
    // a second --engine merged into the first (its cmd= silently winning)
    let o = spsa(
        dir.path(),
        params,
        4,
        &["--state", "u.json", "--engine", "cmd=/bin/true"],
    );
    refused(o.status, &stderr(&o), "--engine given 2 times");
}
