//! Datagen that scales out (issue 67) on a real single-node Slurm: `scripts/datagen-slurm.sh`
//! submits a 2-task job array of `actuary datagen --corpus DIR/task-K --first-id ...` and the
//! dependent `actuary corpus-merge` into a main corpus that already holds games; the merged
//! corpus must hold exactly the games one process plays for the same ids. Ignored in the
//! default run, as the Drop7 array test is: it needs root, and installs and starts munge and
//! Slurm (`scripts/slurm-single-node.sh`). Run it with
//!
//! ```sh
//! cargo test --release -p actuary --test it datagen_slurm -- --ignored --nocapture
//! ```
//!
//! It skips, printing why, when it is not root or Slurm does not come up. Built only with
//! the feature `lab` (see `main.rs`).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use chess_lab::data::corpus::{Game, games_by_id, read_manifest};

use crate::common::{ACTUARY, fails, ok};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn text(p: &Path) -> String {
    p.display().to_string()
}

/// `bash -c CMD` in the repository root with `env`: its stdout, or a failed test naming the
/// command and its output.
fn sh(cmd: &str, env: &[(&str, &str)]) -> String {
    let out = Command::new("bash")
        .args(["-c", cmd])
        .current_dir(root())
        .envs(env.iter().copied())
        .output()
        .expect("bash");
    assert!(
        out.status.success(),
        "{cmd}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

/// `SLURM_CONF` of the throwaway cluster, or why there is none (not root; Slurm did not
/// come up).
fn slurm() -> Result<String, String> {
    let uid = Command::new("id")
        .arg("-u")
        .output()
        .map_err(|e| e.to_string())?;
    if String::from_utf8_lossy(&uid.stdout).trim() != "0" {
        return Err(
            "not root (scripts/slurm-single-node.sh starts munged, slurmctld and slurmd)".into(),
        );
    }
    let up = Command::new("bash")
        .arg(root().join("scripts/slurm-single-node.sh"))
        .output()
        .map_err(|e| e.to_string())?;
    let stdout = String::from_utf8_lossy(&up.stdout);
    match stdout.lines().find_map(|l| l.strip_prefix("SLURM_CONF=")) {
        Some(conf) if up.status.success() => Ok(conf.to_owned()),
        _ => Err(format!(
            "Slurm did not come up: {}",
            String::from_utf8_lossy(&up.stderr).trim()
        )),
    }
}

/// Every game of a corpus, by id, wall times cleared (the one field that differs between
/// two runs of the same game).
fn games(dir: &Path) -> Vec<Game> {
    games_by_id(dir).unwrap()
}

/// The logs of the array and the merge, for a failed assertion.
fn logs(dir: &Path) -> String {
    let mut text = String::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        if e.path().extension().is_some_and(|x| x == "log") {
            text.push_str(&format!("== {}\n", e.path().display()));
            text.push_str(&std::fs::read_to_string(e.path()).unwrap_or_default());
        }
    }
    text
}

/// Run the submitting `script`, wait until its array and merge jobs have left the queue,
/// and check that the merge completed (the logs in `out` otherwise).
fn submit_and_wait(script: &str, out: &Path, env: &[(&str, &str)]) {
    let submitted = sh(script, env);
    let job = |what: &str| {
        submitted
            .lines()
            .find_map(|l| l.strip_prefix(what))
            .unwrap_or_else(|| panic!("no `{what}` line in {submitted}"))
            .trim()
            .to_owned()
    };
    let (array_job, merge_job) = (job("array "), job("merge "));
    let t0 = Instant::now();
    while !sh(&format!("squeue -h -j {array_job},{merge_job}"), env).is_empty() {
        assert!(t0.elapsed() < Duration::from_secs(600), "jobs still queued");
        std::thread::sleep(Duration::from_secs(2));
    }
    let state = sh(
        &format!("scontrol show job {merge_job} | grep -o 'JobState=[A-Z]*'"),
        env,
    );
    assert_eq!(state, "JobState=COMPLETED", "{}", logs(out));
}

#[test]
#[ignore = "needs root and a single-node Slurm (scripts/slurm-single-node.sh)"]
fn a_slurm_job_array_merged_holds_the_games_of_one_process() {
    let conf = match slurm() {
        Ok(c) => c,
        Err(why) => {
            eprintln!("skipped: {why}");
            return;
        }
    };
    let _cpu = crate::common::shared();
    let env = [("SLURM_CONF", conf.as_str())];
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let (main, array, single) = (d.join("main"), d.join("array"), d.join("single"));
    let (main_s, single_s) = (text(&main), text(&single));
    let book = text(&root().join("data/chess/books/2moves_v1.epd"));
    // Small searches (the unit tests' settings); the book named the same way in every run,
    // since the settings (and so the games) include it.
    let play = [
        "--nodes",
        "300",
        "--hash",
        "1",
        "--seed",
        "7",
        "--book",
        book.as_str(),
    ];
    // The main corpus holds games 0 and 1 already: the array's base is 2 by default.
    let mut first = vec!["datagen", "--corpus", main_s.as_str(), "--games", "2"];
    first.extend(play);
    ok(&first);
    let script = format!(
        "scripts/datagen-slurm.sh --into {main_s} --out {} --tasks 2 --games 3 --actuary {ACTUARY} -- {}",
        text(&array),
        play.join(" ")
    );
    submit_and_wait(&script, &array, &env);
    // Task 0 played ids 2..=4, task 1 5..=7, each one chunk, entered after the main's.
    let ids: Vec<(u64, u64)> = read_manifest(&main)
        .unwrap()
        .iter()
        .map(|e| (e.first_game, e.last_game))
        .collect();
    assert_eq!(ids, [(0, 1), (2, 4), (5, 7)], "{}", logs(&array));
    let counts: serde_json::Value =
        serde_json::from_str(&ok(&["corpus", main_s.as_str(), "--json"])).unwrap();
    assert_eq!(counts["games"].as_u64(), Some(8), "{counts}");
    assert_eq!(counts["chunks"].as_u64(), Some(3), "{counts}");
    // One process playing ids 0..8 plays the same games.
    let mut one = vec!["datagen", "--corpus", single_s.as_str(), "--games", "8"];
    one.extend(play);
    ok(&one);
    let merged = games(&main);
    assert_eq!(
        merged.iter().map(|g| g.id).collect::<Vec<_>>(),
        [0, 1, 2, 3, 4, 5, 6, 7]
    );
    assert_eq!(merged, games(&single));
    merge_again(&main, &array, &single);
}

/// The array's merge run again through the command line: every chunk skipped, the manifest
/// unchanged. Into the single-process corpus the tasks' ids are taken: one error line, exit 2.
fn merge_again(main: &Path, array: &Path, single: &Path) {
    let manifest = std::fs::read(main.join("manifest.jsonl")).unwrap();
    let (main_s, single_s) = (text(main), text(single));
    let (task0, task1) = (text(&array.join("task-0")), text(&array.join("task-1")));
    let again = ok(&[
        "corpus-merge",
        "--into",
        main_s.as_str(),
        task0.as_str(),
        task1.as_str(),
    ]);
    assert!(
        again.contains("entered 0 chunks (0 games, 0 positions), skipped 2 already there"),
        "{again}"
    );
    assert_eq!(
        std::fs::read(main.join("manifest.jsonl")).unwrap(),
        manifest
    );
    fails(
        &["corpus-merge", "--into", single_s.as_str(), task0.as_str()],
        "game ids 2..=4 overlap",
    );
}
