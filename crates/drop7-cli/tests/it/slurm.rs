//! A real Slurm job array (ignored in the default run; needs root and Debian's slurm-wlm and
//! munge, which `scripts/slurm-single-node.sh` installs and starts):
//!
//! ```sh
//! cargo test --release -p drop7-cli --test it slurm -- --ignored
//! ```
//!
//! It brings up a single-node cluster, submits `drop7 screen --emit-slurm 4` as a job array and
//! the merge as a dependent job, waits, and compares the merged screen with the same screen
//! played by one process: games (but wall times), report.md and the figure byte for byte.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use crate::common::DROP7;

fn sh(cmd: &str, env: &[(&str, &str)]) -> String {
    let out = Command::new("bash")
        .args(["-c", cmd])
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

fn games_without_wall_time(p: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(p)
        .unwrap()
        .lines()
        .map(|l| {
            let mut v: serde_json::Value = serde_json::from_str(l).unwrap();
            v.as_object_mut().unwrap().remove("wallSeconds");
            v
        })
        .collect()
}

#[test]
#[ignore = "needs root and a single-node Slurm (scripts/slurm-single-node.sh)"]
fn slurm_job_array_matches_the_single_process_screen() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let up = sh(
        &format!("{}/scripts/slurm-single-node.sh", root.display()),
        &[],
    );
    let conf = up
        .lines()
        .find_map(|l| l.strip_prefix("SLURM_CONF="))
        .expect("the script prints SLURM_CONF")
        .to_owned();
    let env = [("SLURM_CONF", conf.as_str())];
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let exe = DROP7;
    let arms = "center,fair-d2s7";
    let seeds = "0x7100:24";
    let ledger = d.join("leases.json");
    let script = d.join("array.sh");
    sh(
        &format!(
            "{exe} screen --arms {arms} --seeds {seeds} --out {o} --ledger {l} --emit-slurm 4 --slurm-cpus 1 > {s}",
            o = d.join("array").display(),
            l = ledger.display(),
            s = script.display()
        ),
        &env,
    );
    let job = sh(&format!("sbatch --parsable {}", script.display()), &env);
    let merge = sh(
        &format!(
            "sbatch --parsable --dependency=afterok:{job} --output={} --wrap '{exe} merge screen {}'",
            d.join("merge.log").display(),
            d.join("array").display()
        ),
        &env,
    );
    let t0 = Instant::now();
    while !sh(&format!("squeue -h -j {job},{merge}"), &env).is_empty() {
        assert!(t0.elapsed() < Duration::from_secs(600), "jobs still queued");
        std::thread::sleep(Duration::from_secs(2));
    }
    let state = sh(
        &format!("scontrol show job {merge} | grep -o 'JobState=[A-Z]*'"),
        &env,
    );
    assert_eq!(
        state,
        "JobState=COMPLETED",
        "{}",
        d.join("merge.log").display()
    );
    sh(
        &format!(
            "{exe} screen --arms {arms} --seeds {seeds} --out {o} --ledger {l} --force --quiet",
            o = d.join("single").display(),
            l = ledger.display()
        ),
        &[],
    );
    let (a, s) = (d.join("array"), d.join("single"));
    for f in ["games-center.jsonl", "games-fair-d2s7.jsonl"] {
        assert_eq!(
            games_without_wall_time(&a.join(f)),
            games_without_wall_time(&s.join(f)),
            "{f}"
        );
    }
    for f in ["report.md", "paired-fair-d2s7-vs-center.svg"] {
        assert_eq!(
            std::fs::read(a.join(f)).unwrap(),
            std::fs::read(s.join(f)).unwrap(),
            "{f}"
        );
    }
    println!("{}", std::fs::read_to_string(a.join("report.md")).unwrap());
}

/// Issue 36, item 12: `slurm-single-node.sh stop` ends the daemons it started (their PIDs in
/// its directory) and no other process of the same name — on a real Slurm node it must not
/// stop the node's own daemons. Stand-ins: copies of `sleep` named like the daemons.
#[test]
fn stop_ends_only_the_test_clusters_own_daemons() {
    let d = tempfile::tempdir().unwrap();
    let run = d.path().join("run");
    std::fs::create_dir_all(&run).unwrap();
    let sleep = std::str::from_utf8(
        &Command::new("sh")
            .args(["-c", "command -v sleep"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap()
    .trim()
    .to_owned();
    let spawn = |who: &str, name: &str| {
        let dir = d.path().join(who);
        std::fs::create_dir_all(&dir).unwrap();
        let exe = dir.join(name);
        std::fs::copy(&sleep, &exe).unwrap();
        // Another test's fork may briefly hold the new file open for writing (ETXTBSY).
        let mut tries = 0;
        loop {
            match Command::new(&exe).arg("60").spawn() {
                Ok(c) => break c,
                Err(e) if e.raw_os_error() == Some(26) && tries < 50 => {
                    tries += 1;
                    std::thread::sleep(Duration::from_millis(20));
                }
                Err(e) => panic!("{}: {e}", exe.display()),
            }
        }
    };
    // ours: a slurmd and a munged with PID files; theirs: a slurmctld and a slurmd without
    let mut ours = [spawn("ours", "slurmd"), spawn("ours", "munged")];
    let mut theirs = [spawn("theirs", "slurmctld"), spawn("theirs", "slurmd")];
    std::fs::write(run.join("slurmd.pid"), ours[0].id().to_string()).unwrap();
    std::fs::write(run.join("munged.pid"), ours[1].id().to_string()).unwrap();
    // a stale PID file naming a process that is not that daemon is left alone too
    std::fs::write(run.join("slurmctld.pid"), theirs[1].id().to_string()).unwrap();
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../scripts/slurm-single-node.sh"
    );
    let out = Command::new("bash")
        .arg(script)
        .arg("stop")
        .env("SLURM_DIR", d.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for c in &mut ours {
        let st = c.wait().unwrap();
        assert!(!st.success(), "our daemon was not stopped");
    }
    for c in &mut theirs {
        assert!(
            c.try_wait().unwrap().is_none(),
            "a daemon the script did not start was stopped"
        );
        c.kill().unwrap();
        c.wait().unwrap();
    }
    assert!(!run.join("slurmd.pid").exists() && !run.join("munged.pid").exists());
}
