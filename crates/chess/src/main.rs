//! `actuary` binary: UCI by default; `bench [depth]`, `perft <depth> [fen]`,
//! `perft-suite <file> [depth]` and `suite <file.epd> [--depth N|--nodes N|--movetime MS]`.
#![forbid(unsafe_code)]

use chess::board::{Board, parse_fen};
use chess::tools::{bench, perft, suite};
use chess::uci::Engine;
use std::process::ExitCode;

fn usage() -> ExitCode {
    eprintln!(
        "usage: actuary [bench [depth] | perft <depth> [fen] | perft-suite <file> [max_depth] | \
         suite <file.epd> [--depth N | --nodes N | --movetime MS] [--hash MB] [--verbose]]"
    );
    ExitCode::from(2)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        None => {
            Engine::new().run_stdin();
            ExitCode::SUCCESS
        }
        Some("bench") => {
            let depth = match args.get(1).map(|d| d.parse::<i32>()) {
                None => bench::DEFAULT_BENCH_DEPTH,
                Some(Ok(d)) if d > 0 => d,
                _ => return usage(),
            };
            let r = bench::run_bench(depth, true);
            println!("Bench: {} nodes {} nps", r.nodes, r.nps);
            ExitCode::SUCCESS
        }
        Some("perft") => {
            let Some(Ok(depth)) = args.get(1).map(|d| d.parse::<u32>()) else {
                return usage();
            };
            let board = if args.len() > 2 {
                match parse_fen(&args[2..].join(" ")) {
                    Ok(b) => b,
                    Err(e) => {
                        eprintln!("error: {e}");
                        return ExitCode::from(2);
                    }
                }
            } else {
                Board::default()
            };
            let start = std::time::Instant::now();
            let (lines, total) = perft::perft_divide(&board, depth);
            for (m, n) in lines {
                println!("{m}: {n}");
            }
            println!();
            eprintln!("time {} ms", start.elapsed().as_millis());
            println!("Nodes searched: {total}");
            ExitCode::SUCCESS
        }
        Some("perft-suite") => {
            let Some(path) = args.get(1) else {
                return usage();
            };
            let depth = args.get(2).and_then(|d| d.parse().ok()).unwrap_or(5);
            let text = match std::fs::read_to_string(path) {
                Ok(t) => t,
                Err(e) => {
                    eprintln!("error: {path}: {e}");
                    return ExitCode::from(2);
                }
            };
            let start = std::time::Instant::now();
            match perft::run_perft_suite(&text, depth) {
                Ok(checks) => {
                    let bad: Vec<_> = checks.iter().filter(|c| c.got != c.expected).collect();
                    for c in &bad {
                        println!(
                            "FAIL line {} depth {}: expected {} got {} ({})",
                            c.line, c.depth, c.expected, c.got, c.fen
                        );
                    }
                    println!(
                        "perft suite: {}/{} checks correct up to depth {depth} in {} ms",
                        checks.len() - bad.len(),
                        checks.len(),
                        start.elapsed().as_millis()
                    );
                    if bad.is_empty() {
                        ExitCode::SUCCESS
                    } else {
                        ExitCode::FAILURE
                    }
                }
                Err(e) => {
                    eprintln!("error: {e}");
                    ExitCode::from(2)
                }
            }
        }
        Some("suite") => {
            let Some(path) = args.get(1) else {
                return usage();
            };
            let mut limit = suite::SuiteLimit::MoveTime(1000);
            let mut hash = 64;
            let mut verbose = false;
            let mut i = 2;
            while i < args.len() {
                let val = args.get(i + 1).and_then(|v| v.parse::<u64>().ok());
                match (args[i].as_str(), val) {
                    ("--depth", Some(v)) => limit = suite::SuiteLimit::Depth(v as i32),
                    ("--nodes", Some(v)) => limit = suite::SuiteLimit::Nodes(v),
                    ("--movetime", Some(v)) => limit = suite::SuiteLimit::MoveTime(v),
                    ("--hash", Some(v)) => hash = v as usize,
                    ("--verbose", _) => {
                        verbose = true;
                        i += 1;
                        continue;
                    }
                    _ => return usage(),
                }
                i += 2;
            }
            let text = match std::fs::read_to_string(path) {
                Ok(t) => t,
                Err(e) => {
                    eprintln!("error: {path}: {e}");
                    return ExitCode::from(2);
                }
            };
            let rep = suite::run_suite(&text, limit, hash, verbose);
            suite::print_report(&rep);
            ExitCode::SUCCESS
        }
        Some(_) => usage(),
    }
}
