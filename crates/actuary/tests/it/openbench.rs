//! OpenBench's contract, checked the way its client reads a bench (Client/bench.py in the
//! public OpenBench repository, read for its rules, not copied): it runs `./ENGINE bench`
//! with stderr merged into stdout, walks the output from the last line up, turns every
//! character that is not an ASCII letter, digit or space into a space, and takes the first
//! `N nps` / `nps N` / `nodes second N` and the first `N nodes` / `nodes N` / `nodes
//! searched N` it meets (case-insensitive); the bench must finish within 60 seconds.

use std::process::Command;
use std::time::{Duration, Instant};

use crate::common::ACTUARY;

/// The numbers OpenBench would read from `output`: (bench nodes, nps).
fn openbench_parse(output: &str) -> (Option<u64>, Option<u64>) {
    let (mut bench, mut nps) = (None, None);
    for line in output.trim().lines().rev() {
        let clean: String = line
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == ' ' {
                    c
                } else {
                    ' '
                }
            })
            .collect();
        let words: Vec<String> = clean.split_whitespace().map(str::to_lowercase).collect();
        let num = |i: usize| words.get(i).and_then(|w| w.parse::<u64>().ok());
        // the leftmost match in the line, as re.search finds it
        let find = |key: &str, second: &str| {
            (0..words.len()).find_map(|i| {
                if words[i] == key {
                    num(i + 1).or_else(|| (words.get(i + 1)? == second).then(|| num(i + 2))?)
                } else if words.get(i + 1).is_some_and(|w| w == key) {
                    num(i)
                } else {
                    None
                }
            })
        };
        if nps.is_none() {
            nps = find("nps", "").or_else(|| {
                (0..words.len()).find_map(|i| {
                    (words[i] == "nodes" && words.get(i + 1)? == "second").then(|| num(i + 2))?
                })
            });
        }
        if bench.is_none() {
            bench = find("nodes", "searched");
        }
    }
    (bench, nps)
}

#[test]
fn the_parser_follows_openbench_on_known_formats() {
    let _cpu = crate::common::shared();
    assert_eq!(
        openbench_parse("Bench: 123 nodes 45 nps\n"),
        (Some(123), Some(45))
    );
    assert_eq!(
        openbench_parse("Nodes searched  : 991\nNodes/second    : 17\n"),
        (Some(991), Some(17))
    );
    // the leftmost match wins: in `5 nps 7`, `5 nps` comes first
    assert_eq!(
        openbench_parse("info nodes 5 nps 7\nnothing\n"),
        (Some(5), Some(5))
    );
    assert_eq!(openbench_parse("no numbers here\n"), (None, None));
}

#[test]
fn actuary_bench_is_read_by_openbench() {
    let _cpu = crate::common::alone();
    let exe = ACTUARY;
    let t0 = Instant::now();
    let out = Command::new("sh")
        .args(["-c", &format!("'{exe}' bench 2>&1")])
        .output()
        .expect("run actuary bench");
    let took = t0.elapsed();
    assert!(out.status.success());
    assert!(
        took < Duration::from_secs(60),
        "OpenBench kills a bench after 60 s: {took:?}"
    );
    let text = String::from_utf8(out.stdout).expect("ASCII output");
    let last = text.trim().lines().last().expect("output");
    // the final line carries the signature; OpenBench must read exactly its numbers
    let words: Vec<&str> = last.split_whitespace().collect();
    assert_eq!(words.first(), Some(&"Bench:"), "{last}");
    let nodes: u64 = words[1].parse().unwrap();
    let nps: u64 = words[3].parse().unwrap();
    assert_eq!(openbench_parse(&text), (Some(nodes), Some(nps)));
    assert!(nodes > 1_000_000 && nps > 0, "{last}");
    // the OpenBench build: `make EXE=...` builds the engine alone and copies it there
    let mf = Command::new("make")
        .args([
            "-n",
            "-C",
            concat!(env!("CARGO_MANIFEST_DIR")),
            "EXE=/tmp/actuary-ob",
        ])
        .output()
        .expect("make");
    let plan = String::from_utf8_lossy(&mf.stdout);
    assert!(
        plan.contains("cargo build --release -p actuary --no-default-features"),
        "{plan}"
    );
    assert!(plan.contains("/tmp/actuary-ob"), "{plan}");
}

/// The packages a build of `package` (with `args`) links, from `cargo tree`.
fn linked(package: &str, args: &[&str]) -> Vec<String> {
    let out = Command::new(env!("CARGO"))
        .args([
            "tree",
            "--offline",
            "-e",
            "normal",
            "--prefix",
            "none",
            "-p",
            package,
        ])
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("run cargo tree");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().next().map(str::to_owned))
        .collect()
}

#[test]
fn the_engine_build_links_none_of_the_laboratory() {
    let _cpu = crate::common::shared();
    // The engine crate: the board library and error derives, nothing for measuring.
    let engine = linked("chess", &[]);
    for lab in [
        "chess-lab",
        "evidence",
        "serde",
        "indicatif",
        "anyhow",
        "clap",
    ] {
        assert!(
            !engine.iter().any(|p| p == lab),
            "chess links {lab}: {engine:?}"
        );
    }
    assert!(engine.iter().any(|p| p == "cozy-chess"), "{engine:?}");
    // OpenBench's build of the binary: no laboratory either.
    let openbench = linked("actuary", &["--no-default-features"]);
    for lab in ["chess-lab", "evidence", "serde", "indicatif"] {
        assert!(
            !openbench.iter().any(|p| p == lab),
            "the OpenBench build links {lab}: {openbench:?}"
        );
    }
    // The default build has the laboratory.
    assert!(linked("actuary", &[]).iter().any(|p| p == "chess-lab"));
}
