//! Parity and debugging tools: `drop7 leaf`, `drop7 search` (single state or `--batch` JSON
//! lines on stdin) and the D7P protocol server.

use std::io::{BufRead, Write};

use clap::Args;
use drop7::board::Board;
use drop7::fair_leaf::{TERM_NAMES, WEIGHTS, combine, fair_terms};
use drop7::game::PublicState;
use drop7::policy::parse_depth_samples;
use drop7::search::{FairLeaf, SearchConfig, Searcher, TableKind};
use serde_json::{Value, json};

use crate::mechanics::{CliResult, quiet_on_broken_pipe};

#[derive(Args)]
pub struct StateArgs {
    /// 49 digits, row-major from the top (or `startpos`).
    #[arg(long, required_unless_present = "batch")]
    board: Option<String>,
    /// The disc to drop, 1-7.
    #[arg(long, required_unless_present = "batch")]
    next: Option<u8>,
    /// Moves until the next rise, 1-5.
    #[arg(long, required_unless_present = "batch")]
    rise: Option<u8>,
    /// Read JSON lines {"board","next","rise"[,"policy"]} on stdin; one JSON line out per line in.
    #[arg(long)]
    batch: bool,
}

#[derive(Args)]
pub struct SearchArgs {
    #[command(flatten)]
    state: StateArgs,
    /// fair-dNsK (e.g. fair-d3s7); a batch line's "policy" field overrides it.
    #[arg(long, default_value = "fair-d3s7")]
    policy: String,
    /// Transposition table: none (reference work counts), exact, or a size (direct-mapped).
    #[arg(long, default_value = "default")]
    table: String,
}

fn parse_state(board: &str, next: u64, rise: u64) -> Result<PublicState, String> {
    let b = if board == "startpos" {
        Board::start()
    } else {
        Board::parse(board).map_err(|e| e.to_string())?
    };
    if !(1..=7).contains(&next) {
        return Err(format!("bad next disc {next}: discs are 1-7"));
    }
    if !(1..=5).contains(&rise) {
        return Err(format!("bad rise {rise}: moves until the rise is 1-5"));
    }
    Ok(PublicState {
        board: b,
        next: next as u8,
        moves_remaining: rise as u8,
    })
}

fn state_from_json(v: &Value) -> Result<PublicState, String> {
    let board = v["board"]
        .as_str()
        .ok_or("missing \"board\" (a 49-digit string)")?;
    let next = v["next"].as_u64().ok_or("missing \"next\" (1-7)")?;
    let rise = v["rise"].as_u64().ok_or("missing \"rise\" (1-5)")?;
    parse_state(board, next, rise)
}

/// A number as the reference prints it (`%.17g`): integral values without a fraction.
fn num(x: f64) -> Value {
    if x.fract() == 0.0 && x.abs() < 9e15 {
        json!(x as i64)
    } else {
        json!(x)
    }
}

fn leaf_json(s: &PublicState) -> Value {
    let terms = fair_terms(&s.board, s.next, s.moves_remaining);
    let list: Vec<Value> = (0..18)
        .map(|i| json!({"name": TERM_NAMES[i], "weight": num(WEIGHTS[i]), "raw": num(terms[i])}))
        .collect();
    json!({"board": s.board.to_string(), "next": s.next, "rise": s.moves_remaining, "leaf": num(combine(&terms)), "terms": list})
}

fn search_config(policy: &str, table: &str) -> Result<SearchConfig, String> {
    let (d, k) = policy
        .strip_prefix("fair-")
        .and_then(parse_depth_samples)
        .ok_or_else(|| {
            format!("bad search policy `{policy}`: expected fair-dNsK, e.g. fair-d3s7")
        })?;
    let mut cfg = SearchConfig::fair(d, k);
    cfg.table = match table {
        "default" => cfg.table,
        "none" => TableKind::None,
        "exact" => TableKind::Exact,
        n => TableKind::Direct(
            n.parse()
                .map_err(|_| format!("bad --table `{n}`: none, exact, default or a size"))?,
        ),
    };
    Ok(cfg)
}

fn search_json(s: &PublicState, cfg: SearchConfig) -> Value {
    let t0 = std::time::Instant::now();
    let d = Searcher::new(FairLeaf::default(), cfg).decide(s);
    json!({
        "board": s.board.to_string(), "next": s.next, "rise": s.moves_remaining,
        "depth": cfg.depth, "samples": cfg.samples,
        "column": d.column, "columnCanonical": d.column_canonical,
        "mirrored": d.mirrored, "canonicalBoard": d.canonical_board.to_string(),
        "q": d.q.map(|q| q.map(num)), "qCanonical": d.q_canonical.map(|q| q.map(num)),
        "work": d.work, "workByDepth": d.work_by_depth, "nodes": d.nodes,
        "completedDepth": d.completed_depth, "completed": d.completed(cfg.depth),
        "maxWork": cfg.max_work, "seconds": t0.elapsed().as_secs_f64(),
    })
}

/// Run `f` on one state from the flags, or on every stdin line with `--batch`. A bad batch
/// line gets {"error": …} on its own output line; the batch goes on.
fn each_state(
    a: &StateArgs,
    mut f: impl FnMut(&PublicState, &Value) -> Result<Value, String>,
) -> CliResult {
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    if !a.batch {
        let s = parse_state(
            a.board.as_deref().unwrap_or(""),
            a.next.unwrap_or(0) as u64,
            a.rise.unwrap_or(0) as u64,
        )?;
        let v = f(&s, &Value::Null)?;
        return writeln!(out, "{v}").or_else(quiet_on_broken_pipe);
    }
    for (i, line) in std::io::stdin().lock().lines().enumerate() {
        let line = line.map_err(|e| e.to_string())?;
        if line.trim().is_empty() {
            continue;
        }
        let result = serde_json::from_str::<Value>(&line)
            .map_err(|e| format!("not JSON: {e}"))
            .and_then(|v| state_from_json(&v).and_then(|s| f(&s, &v)));
        let v = result.unwrap_or_else(|e| json!({"line": i + 1, "error": e}));
        if let Err(e) = writeln!(out, "{v}").and_then(|()| out.flush()) {
            return quiet_on_broken_pipe(e);
        }
    }
    Ok(())
}

pub fn leaf(a: StateArgs) -> CliResult {
    each_state(&a, |s, _| Ok(leaf_json(s)))
}

pub fn search(a: SearchArgs) -> CliResult {
    let default_cfg = search_config(&a.policy, &a.table)?;
    each_state(&a.state, |s, v| {
        let cfg = match v["policy"].as_str() {
            Some(p) => search_config(p, &a.table)?,
            None => default_cfg,
        };
        Ok(search_json(s, cfg))
    })
}

#[derive(Args)]
pub struct D7pArgs {
    /// The policy that answers `go`.
    #[arg(long)]
    policy: String,
}

/// The D7P line protocol: `d7p`, `isready`, `position startpos|board <49> next D rise R`,
/// `go` → `bestmove C|none`, `quit`; anything else → `info unknown command …`.
pub fn d7p(a: D7pArgs) -> CliResult {
    let factory = crate::policies::factory(&a.policy)?;
    let mut policy = factory();
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let mut state: Option<PublicState> = None;
    for line in std::io::stdin().lock().lines() {
        let line = line.map_err(|e| e.to_string())?;
        let words: Vec<&str> = line.split_whitespace().collect();
        let reply = match words.as_slice() {
            [] => continue,
            ["quit"] => break,
            ["d7p"] => format!(
                "id name actuary-drop7 {}\nid family {}\nid public-information true\nd7pok",
                a.policy,
                a.policy.split('-').next().unwrap_or(&a.policy)
            ),
            ["isready"] => "readyok".to_owned(),
            ["position", rest @ ..] => match parse_position(rest) {
                Ok(s) => {
                    state = Some(s);
                    continue;
                }
                Err(e) => format!("info string error: {e}"),
            },
            ["go", ..] => match &state {
                None => "info string error: go before position\nbestmove none".to_owned(),
                Some(s) => match policy.choose(s).column {
                    Some(c) => format!("bestmove {c}"),
                    None => "bestmove none".to_owned(),
                },
            },
            _ => format!("info unknown command {line}"),
        };
        if let Err(e) = writeln!(out, "{reply}").and_then(|()| out.flush()) {
            return quiet_on_broken_pipe(e);
        }
    }
    Ok(())
}

fn parse_position(words: &[&str]) -> Result<PublicState, String> {
    let (board, rest) = match words {
        ["startpos", rest @ ..] => ("startpos", rest),
        ["board", b, rest @ ..] => (*b, rest),
        _ => {
            return Err(
                "expected `position startpos|board <49 digits> next <1-7> rise <1-5>`".into(),
            );
        }
    };
    match rest {
        ["next", n, "rise", r] => {
            let n = n.parse::<u64>().map_err(|_| format!("bad next `{n}`"))?;
            let r = r.parse::<u64>().map_err(|_| format!("bad rise `{r}`"))?;
            parse_state(board, n, r)
        }
        _ => Err("expected `... next <1-7> rise <1-5>`".into()),
    }
}
