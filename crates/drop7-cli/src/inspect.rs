//! Parity and debugging tools: `drop7 leaf`, `drop7 search` (single state or `--batch` JSON
//! lines on stdin) and the D7P protocol server.

use std::str::FromStr;

use anyhow::{Context, anyhow, bail};
use clap::Args;
use drop7::board::Board;
use drop7::fair_leaf::{TERM_NAMES, WEIGHTS, combine, fair_terms};
use drop7::game::PublicState;
use drop7::policy::BuiltinPolicy;
use drop7::search::{FairLeaf, SearchConfig, Searcher, TableKind};
use ntuple::policy::PolicySpec;
use serde_json::{Value, json};

use crate::args::{BoardArg, ModelArg};
use crate::output::{Line, MAX_LINE, bounded_lines, flush, write_line};

#[derive(Args)]
pub struct StateArgs {
    /// 49 digits, row-major from the top (or `startpos`).
    #[arg(long, required_unless_present = "batch")]
    board: Option<BoardArg>,
    /// The disc to drop, 1-7.
    #[arg(long, allow_negative_numbers = true, required_unless_present = "batch", value_parser = clap::value_parser!(u8).range(1..=7))]
    next: Option<u8>,
    /// Moves until the next rise, 1-5.
    #[arg(long, allow_negative_numbers = true, required_unless_present = "batch", value_parser = clap::value_parser!(u8).range(1..=5))]
    rise: Option<u8>,
    /// Read JSON lines {"board","next","rise"[,"policy"]} on stdin; one JSON line out per line
    /// in (a bad line gets {"line","error"} and the batch goes on).
    #[arg(long, conflicts_with_all = ["board", "next", "rise"])]
    batch: bool,
}

/// The fair search at depth N with K samples: `fair-dNsK`.
fn fair_search(s: &str) -> anyhow::Result<(u32, u32)> {
    match s.parse::<BuiltinPolicy>()? {
        BuiltinPolicy::Fair { depth, samples } => Ok((depth, samples)),
        other => bail!("`{other}` is not a search: expected fair-dNsK, e.g. fair-d3s7"),
    }
}

/// The largest direct-mapped table `search --table` allocates: 2²⁶ entries, 3.2 GB (the
/// reference's largest is 2²⁰).
const MAX_TABLE: usize = 1 << 26;

/// Transposition table choice for `search`.
#[derive(Debug, Clone, Copy)]
pub struct TableArg(Option<TableKind>);

impl FromStr for TableArg {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Ok(Self(match s {
            "default" => None,
            "none" => Some(TableKind::None),
            "exact" => Some(TableKind::Exact),
            n => {
                let size: usize = n
                    .parse()
                    .map_err(|_| format!("`{n}` is not none, exact, default or an entry count"))?;
                if !(1..=MAX_TABLE).contains(&size) {
                    return Err(format!("a table of {n} entries: use 1 to {MAX_TABLE}"));
                }
                let bytes = drop7::search::direct_table_bytes(size);
                if let Some(free) = ntuple::tables::available_memory()
                    && bytes + (1 << 30) > free
                {
                    return Err(format!(
                        "a table of {n} entries needs {:.1} GB and only {:.1} GB is available",
                        bytes as f64 / 1e9,
                        free as f64 / 1e9
                    ));
                }
                Some(TableKind::Direct(size))
            }
        }))
    }
}

#[derive(Args)]
pub struct SearchArgs {
    #[command(flatten)]
    state: StateArgs,
    /// The search, fair-dNsK (e.g. fair-d3s7); a batch line's "policy" field overrides it.
    #[arg(long, default_value = "fair-d3s7", value_parser = fair_search)]
    policy: (u32, u32),
    /// Transposition table: none (the reference's table-free work counts), exact (the
    /// reference LRU's counts), default (the deployment table), or a direct-mapped size of
    /// 1 to 67108864 entries (48 bytes each, rounded up to a power of two).
    #[arg(long, allow_negative_numbers = true, default_value = "default")]
    table: TableArg,
}

fn parse_state(board: Board, next: u64, rise: u64) -> anyhow::Result<PublicState> {
    Ok(PublicState::checked(board, next, rise)?)
}

fn state_from_json(v: &Value) -> anyhow::Result<PublicState> {
    if !v.is_object() {
        bail!("expected a JSON object {{\"board\", \"next\", \"rise\"}}, got {v}");
    }
    let board = match &v["board"] {
        Value::Null => bail!("missing \"board\" (a 49-digit string)"),
        b => b
            .as_str()
            .ok_or_else(|| anyhow!("\"board\" is {b}: expected a 49-digit string"))?,
    };
    let int = |key: &str, range: &str| -> anyhow::Result<u64> {
        match &v[key] {
            Value::Null => bail!("missing \"{key}\" ({range})"),
            x => x
                .as_u64()
                .ok_or_else(|| anyhow!("\"{key}\" is {x}: expected an integer {range}")),
        }
    };
    let next = int("next", "1-7")?;
    let rise = int("rise", "1-5")?;
    parse_state(board.parse::<BoardArg>()?.0, next, rise)
}

/// A batch line's "policy": absent, or a `fair-dNsK` string.
fn line_policy(v: &Value) -> anyhow::Result<Option<(u32, u32)>> {
    match &v["policy"] {
        Value::Null => Ok(None),
        Value::String(p) => fair_search(p).map(Some),
        p => bail!("\"policy\" is {p}: expected a string such as \"fair-d3s7\""),
    }
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

fn search_config((d, k): (u32, u32), table: TableArg) -> SearchConfig {
    let mut cfg = SearchConfig::fair(d, k);
    if let Some(t) = table.0 {
        cfg.table = t;
    }
    cfg
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
/// line gets {"line", "error"} on its own output line; the batch goes on.
fn each_state(
    a: &StateArgs,
    mut f: impl FnMut(&PublicState, &Value) -> anyhow::Result<Value>,
) -> anyhow::Result<()> {
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    if !a.batch {
        let (Some(b), Some(n), Some(r)) = (a.board, a.next, a.rise) else {
            bail!("--board, --next and --rise are required without --batch");
        };
        let s = parse_state(b.0, n as u64, r as u64)?;
        let v = f(&s, &Value::Null)?;
        if write_line(&mut out, &v.to_string())? {
            flush(&mut out)?;
        }
        return Ok(());
    }
    for (i, line) in bounded_lines(std::io::stdin().lock()).enumerate() {
        let refused = |why: String| json!({"line": i + 1, "error": why});
        let line = match line.context("reading standard input")? {
            Line::Text(bytes) => {
                String::from_utf8(bytes).map_err(|_| refused("the line is not UTF-8".into()))
            }
            Line::TooLong(n) => Err(refused(format!(
                "the line is {n} bytes long; at most {MAX_LINE}"
            ))),
        };
        let line = match line {
            Ok(line) => line,
            Err(v) => {
                if !write_line(&mut out, &v.to_string())? {
                    return Ok(());
                }
                flush(&mut out)?;
                continue;
            }
        };
        if line.trim().is_empty() {
            continue;
        }
        let result = serde_json::from_str::<Value>(&line)
            .map_err(|e| anyhow!("not JSON: {e}"))
            .and_then(|v| state_from_json(&v).and_then(|s| f(&s, &v)));
        let v = result.unwrap_or_else(|e| json!({"line": i + 1, "error": format!("{e:#}")}));
        if !write_line(&mut out, &v.to_string())? {
            return Ok(());
        }
        flush(&mut out)?;
    }
    flush(&mut out)
}

pub fn leaf(a: StateArgs) -> anyhow::Result<()> {
    each_state(&a, |s, _| Ok(leaf_json(s)))
}

pub fn search(a: SearchArgs) -> anyhow::Result<()> {
    let default_cfg = search_config(a.policy, a.table);
    each_state(&a.state, |s, v| {
        let cfg = match line_policy(v)? {
            Some(p) => search_config(p, a.table),
            None => default_cfg,
        };
        Ok(search_json(s, cfg))
    })
}

#[derive(Args)]
pub struct D7pArgs {
    /// The policy that answers `go` (any `play` policy).
    #[arg(long)]
    policy: PolicySpec,
    #[command(flatten)]
    model: ModelArg,
}

/// The D7P line protocol: `d7p`, `isready`, `position startpos|board <49> next D rise R`,
/// `go` → `bestmove C|none`, `quit`; anything else → `info unknown command …`.
pub fn d7p(a: D7pArgs) -> anyhow::Result<()> {
    let mut policy = a.model.factory(&a.policy)?();
    let name = a.policy.to_string();
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let mut state: Option<PublicState> = None;
    for line in bounded_lines(std::io::stdin().lock()) {
        // a line that is not UTF-8 is answered like any unknown command, never fatal; so is
        // one too long to read whole
        let line = match line.context("reading standard input")? {
            Line::Text(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
            Line::TooLong(n) => {
                if !write_line(
                    &mut out,
                    &format!("info string error: a line of {n} bytes (at most {MAX_LINE})"),
                )? {
                    return Ok(());
                }
                flush(&mut out)?;
                continue;
            }
        };
        let words: Vec<&str> = line.split_whitespace().collect();
        let reply = match words.as_slice() {
            [] => continue,
            ["quit"] => break,
            ["d7p"] => format!(
                "id name actuary-drop7 {name}\nid family {}\nid public-information true\nd7pok",
                name.split('-').next().unwrap_or(&name)
            ),
            ["isready"] => "readyok".to_owned(),
            ["position", rest @ ..] => match parse_position(rest) {
                Ok(s) => {
                    state = Some(s);
                    continue;
                }
                Err(e) => format!("info string error: {e:#}"),
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
        if !write_line(&mut out, &reply)? {
            return Ok(());
        }
        flush(&mut out)?;
    }
    Ok(())
}

fn parse_position(words: &[&str]) -> anyhow::Result<PublicState> {
    let (board, rest) = match words {
        ["startpos", rest @ ..] => ("startpos", rest),
        ["board", b, rest @ ..] => (*b, rest),
        _ => bail!("expected `position startpos|board <49 digits> next <1-7> rise <1-5>`"),
    };
    match rest {
        ["next", n, "rise", r] => {
            let n = n.parse::<u64>().map_err(|_| anyhow!("bad next `{n}`"))?;
            let r = r.parse::<u64>().map_err(|_| anyhow!("bad rise `{r}`"))?;
            parse_state(board.parse::<BoardArg>()?.0, n, r)
        }
        _ => bail!("expected `... next <1-7> rise <1-5>`"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A batch line for a state, as a script would write it.
    fn line(s: &PublicState) -> String {
        json!({"board": s.board.to_string(), "next": s.next, "rise": s.moves_remaining}).to_string()
    }

    /// A state of a real game.
    fn game_state() -> impl Strategy<Value = PublicState> {
        (any::<u32>(), 0usize..60).prop_map(|(seed, m)| {
            drop7::runner::sample_states(seed, m + 1)
                .pop()
                .map(|(s, _)| s)
                .expect("a state")
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        /// Any text as a batch line: a state or an error, never a panic.
        #[test]
        fn any_line_parses_or_is_refused(text in "\\PC{0,80}") {
            if let Ok(v) = serde_json::from_str::<Value>(&text) {
                let _ = state_from_json(&v);
                let _ = line_policy(&v);
            }
        }

        /// JSON objects with hostile field values: never a panic.
        #[test]
        fn hostile_fields_are_refused_or_read(
            board in "\\PC{0,60}|[0-9]{49}|startpos",
            next in prop_oneof![any::<i64>().prop_map(Value::from), any::<f64>().prop_map(Value::from),
                                Just(Value::Null), "\\PC{0,5}".prop_map(Value::from)],
            rise in prop_oneof![any::<u64>().prop_map(Value::from), Just(json!([1]))],
            policy in prop_oneof![Just(Value::Null), "fair-d[0-9]s[0-9]{1,3}".prop_map(Value::from),
                                  any::<i32>().prop_map(Value::from)],
        ) {
            let v = json!({"board": board, "next": next, "rise": rise, "policy": policy});
            if let Ok(s) = state_from_json(&v) {
                prop_assert!((1..=7).contains(&s.next) && (1..=5).contains(&s.moves_remaining));
            }
            let _ = line_policy(&v);
        }

        /// The line of a state reads back as that state, and D7P's position line too.
        #[test]
        fn lines_round_trip(s in game_state()) {
            let v: Value = serde_json::from_str(&line(&s)).unwrap();
            let back = state_from_json(&v).unwrap();
            prop_assert_eq!((back.board, back.next, back.moves_remaining), (s.board, s.next, s.moves_remaining));
            let board = s.board.to_string();
            let (n, r) = (s.next.to_string(), s.moves_remaining.to_string());
            let words = ["board", board.as_str(), "next", n.as_str(), "rise", r.as_str()];
            let back = parse_position(&words).unwrap();
            prop_assert_eq!((back.board, back.next, back.moves_remaining), (s.board, s.next, s.moves_remaining));
        }

        /// D7P position words: never a panic.
        #[test]
        fn any_position_words_parse_or_are_refused(words in proptest::collection::vec("\\PC{0,50}", 0..8)) {
            let words: Vec<&str> = words.iter().map(String::as_str).collect();
            let _ = parse_position(&words);
        }

        /// --table values: never a panic; accepted sizes are within the bound.
        #[test]
        fn table_values_parse_or_are_refused(text in "\\PC{0,24}|[0-9]{1,22}") {
            if let Ok(TableArg(Some(TableKind::Direct(n)))) = text.parse::<TableArg>() {
                prop_assert!((1..=MAX_TABLE).contains(&n));
            }
        }
    }
}
