//! A scripted UCI engine for the arbiter's tests: `arbiter-fake-engine MODE`.
//!
//! Modes: `random` (a legal move chosen by a hash of the position: deterministic),
//! `illegal` (answers a1a1), `hang` (never answers `go`), `crash` (exits on `go`),
//! `crash-late` (plays legal moves, exits on its 5th `go`), `slow` (sleeps 3 s per move:
//! loses on time at any clock under 3 s), `mute` (never answers anything), `exit` (writes a
//! line to stderr and exits at once), `noisy` (plays like `random` but writes invalid UTF-8
//! and lines of hundreds of kilobytes), `once FILE` (the first process started with FILE plays
//! like `random` and creates FILE; every later one is `mute`), `vanish` (deletes its own
//! executable file at start, then plays like `random`), `remove PATH` (plays like `random`
//! and removes the directory PATH at its first `go`), `tune TARGET WIDTH` (a spin option `x`;
//! at each `go` it plays an illegal move, losing, with probability min(1, |x − TARGET| /
//! WIDTH), drawn from a hash of the position and x, else a legal move with score 0: an
//! engine whose best setting is known, for `arbiter spsa`). Each `go` is noted on stderr
//! (`fake-MODE: go N`), for the tests of `arbiter --log`.

use std::io::{BufRead, Write};

use arbiter::rules::{
    STARTPOS, from_uci_with, legal_moves, parse_position, parse_position_with, to_uci_with,
};

fn main() {
    let mut mode = std::env::args().nth(1).unwrap_or_else(|| "random".into());
    if mode == "exit" {
        eprintln!("fake-exit: missing network file");
        std::process::exit(1);
    }
    if mode == "once" {
        let flag = std::env::args().nth(2).expect("once FILE");
        let first = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(flag)
            .is_ok();
        mode = if first { "random" } else { "mute" }.into();
    }
    let mut remove = None;
    if mode == "remove" {
        remove = std::env::args().nth(2);
        mode = "random".into();
    }
    if mode == "vanish" {
        let me = std::env::current_exe().expect("own path");
        std::fs::remove_file(me).expect("remove own executable");
        mode = "random".into();
    }
    // `tune TARGET WIDTH`: the known best value of option `x`, and how fast strength falls.
    let mut tune: Option<(f64, f64)> = None;
    if mode == "tune" {
        let arg = |i: usize| -> f64 {
            std::env::args()
                .nth(i)
                .and_then(|a| a.parse().ok())
                .expect("tune TARGET WIDTH")
        };
        tune = Some((arg(2), arg(3)));
        mode = "random".into();
    }
    let mut x = 0.0f64;
    let stdin = std::io::stdin();
    let mut out = std::io::stdout();
    let noisy = mode == "noisy";
    let long = "info string ".to_owned() + &"x".repeat(300_000);
    let mut board = parse_position(STARTPOS).expect("startpos");
    let mut gos = 0;
    let mut chess960 = false;
    for line in stdin.lock().lines() {
        let Ok(line) = line else { break };
        let words: Vec<&str> = line.split_whitespace().collect();
        if mode == "mute" {
            continue;
        }
        if noisy {
            let _ = out.write_all(b"info string \xff\xfe not UTF-8\n");
            let _ = writeln!(out, "{long}");
        }
        match words.first().copied() {
            Some("uci") => {
                let _ = writeln!(out, "id name fake-{mode}\nid author actuary tests");
                if tune.is_some() {
                    // The tuned options, declared as engines declare theirs (y is taken and
                    // ignored: a second parameter for the tests' schedules).
                    let _ = writeln!(out, "option name x type spin default 50 min 0 max 100");
                    let _ = writeln!(out, "option name y type string default 0.5");
                }
                let _ = writeln!(out, "uciok");
            }
            Some("setoption") if tune.is_some() && words.get(2) == Some(&"x") => {
                x = words.get(4).and_then(|v| v.parse().ok()).unwrap_or(x);
            }
            Some("setoption")
                if line
                    .to_ascii_lowercase()
                    .contains("name uci_chess960 value true") =>
            {
                chess960 = true;
            }
            Some("isready") => {
                let _ = writeln!(out, "readyok");
            }
            Some("position") => {
                let moves_at = words.iter().position(|w| *w == "moves");
                let fen_end = moves_at.unwrap_or(words.len());
                board = if words.get(1) == Some(&"startpos") {
                    parse_position(STARTPOS).expect("startpos")
                } else {
                    parse_position_with(&words[2..fen_end].join(" "), chess960)
                        .expect("arbiter sends valid FEN")
                };
                if let Some(i) = moves_at {
                    for m in &words[i + 1..] {
                        let mv =
                            from_uci_with(&board, m, chess960).expect("arbiter sends legal moves");
                        board.play(mv);
                    }
                }
            }
            Some("go") => {
                gos += 1;
                if let Some(dir) = remove.take() {
                    let _ = std::fs::remove_dir_all(dir);
                }
                eprintln!("fake-{mode}: go {gos}");
                match mode.as_str() {
                    "hang" => continue,
                    "crash" => std::process::exit(3),
                    "crash-late" if gos >= 5 => std::process::exit(3),
                    "illegal" => {
                        let _ = writeln!(out, "bestmove a1a1");
                    }
                    _ if tune.is_some_and(|(target, width)| {
                        let mut h = board.hash() ^ x.to_bits().rotate_left(17);
                        h = (h ^ (h >> 31)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
                        h ^= h >> 29;
                        let u = (h >> 11) as f64 / (1u64 << 53) as f64;
                        u < ((x - target).abs() / width).min(1.0)
                    }) =>
                    {
                        let _ = writeln!(out, "bestmove a1a1");
                    }
                    _ => {
                        if mode == "slow" {
                            std::thread::sleep(std::time::Duration::from_secs(3));
                        }
                        let moves = legal_moves(&board);
                        let pick = moves[(board.hash() % moves.len() as u64) as usize];
                        let _ = writeln!(
                            out,
                            "info depth 1 score cp 0\nbestmove {}",
                            to_uci_with(&board, pick, chess960)
                        );
                    }
                }
            }
            Some("quit") => break,
            _ => {}
        }
        let _ = out.flush();
    }
}
