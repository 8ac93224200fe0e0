//! Issue 33, item 4: time management measured, not assumed. The engine plays itself through
//! the UCI protocol with a real clock (each side's time reduced by what its move took, plus
//! the increment), and no move may take more than the hard limit the engine sets itself
//! (70 % of the time left less the move overhead) plus a scheduling allowance, nor run a
//! clock out.

use std::io::{BufRead, BufReader, Write};
use std::time::{Duration, Instant};

use crate::common::uci_engine;

/// Play `plies` plies at `base_ms` + `inc_ms` from the start position; returns, per move,
/// (time it took, time its side had before it).
fn play(base_ms: u64, inc_ms: u64, plies: usize) -> Vec<(Duration, u64)> {
    let mut child = uci_engine();
    let mut stdin = child.stdin.take().unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap()).lines();
    writeln!(stdin, "uci").unwrap();
    writeln!(stdin, "isready").unwrap();
    for l in out.by_ref() {
        if l.unwrap() == "readyok" {
            break;
        }
    }
    let mut clock = [base_ms as i64, base_ms as i64];
    let mut moves: Vec<String> = Vec::new();
    let mut taken = Vec::new();
    for ply in 0..plies {
        let side = ply % 2;
        let before = clock[side];
        let pos = if moves.is_empty() {
            "position startpos".to_string()
        } else {
            format!("position startpos moves {}", moves.join(" "))
        };
        writeln!(stdin, "{pos}").unwrap();
        let t0 = Instant::now();
        writeln!(
            stdin,
            "go wtime {} btime {} winc {inc_ms} binc {inc_ms}",
            clock[0].max(1),
            clock[1].max(1)
        )
        .unwrap();
        let best = out
            .by_ref()
            .map(|l| l.unwrap())
            .find_map(|l| l.strip_prefix("bestmove ").map(str::to_owned))
            .expect("a bestmove");
        let took = t0.elapsed();
        let mv = best.split_whitespace().next().unwrap().to_owned();
        if mv == "0000" {
            break; // the game ended
        }
        clock[side] += inc_ms as i64 - took.as_millis() as i64;
        assert!(
            clock[side] > 0,
            "ply {ply}: the clock ran out ({before} ms before, the move took {took:?})"
        );
        taken.push((took, before as u64));
        moves.push(mv);
    }
    writeln!(stdin, "quit").ok();
    child.wait().unwrap();
    taken
}

/// The hard limit the engine gives itself with `avail` ms left (see `search/time.rs`):
/// 70 % of the time left after the 30 ms move overhead; plus 50 ms for the pipe and the
/// machine's scheduling, which is what this test can resolve.
fn allowed(avail: u64) -> Duration {
    Duration::from_millis((avail.saturating_sub(30) as f64 * 0.7) as u64 + 50)
}

#[test]
fn no_move_overruns_its_limit_at_1_plus_0_01() {
    let _cpu = crate::common::alone();
    let moves = play(1000, 10, 100);
    assert!(moves.len() >= 40, "only {} plies played", moves.len());
    for (i, (took, avail)) in moves.iter().enumerate() {
        assert!(
            *took <= allowed(*avail),
            "ply {i}: took {took:?} with {avail} ms left (allowed {:?})",
            allowed(*avail)
        );
    }
}

/// The same at 10+0.1 (about a minute: run with `--ignored`).
#[test]
#[ignore = "plays 100 plies at 10+0.1 (about a minute)"]
fn no_move_overruns_its_limit_at_10_plus_0_1() {
    let _cpu = crate::common::alone();
    let moves = play(10_000, 100, 100);
    assert!(moves.len() >= 40, "only {} plies played", moves.len());
    for (i, (took, avail)) in moves.iter().enumerate() {
        assert!(
            *took <= allowed(*avail),
            "ply {i}: took {took:?} with {avail} ms left"
        );
    }
}
