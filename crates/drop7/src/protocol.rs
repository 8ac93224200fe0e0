//! The text protocols every front end shares (issue 31: the command line maps and prints,
//! the library decides): states read from JSON lines and D7P `position` words, the JSON of a
//! leaf evaluation and of a search decision, and the D7P session itself. `drop7 leaf`,
//! `drop7 search`, `drop7 d7p` and the Python package all go through here, so a state is
//! refused with the same message wherever it comes from.

use crate::board::{Board, BoardError};
use crate::fair_leaf::{TERM_NAMES, WEIGHTS, combine, fair_terms};
use crate::game::{PublicState, StateError};
use crate::policy::Policy;
use crate::search::{Decision, SearchConfig};
use serde_json::{Value, json};
use std::io::{BufRead, ErrorKind, Write};

/// Why a state (or a D7P line) was refused.
#[derive(Debug, thiserror::Error)]
pub enum ProtocolError {
    #[error(transparent)]
    Board(#[from] BoardError),
    #[error(transparent)]
    State(#[from] StateError),
    #[error("{0}")]
    Message(String),
}

fn refuse<T>(m: impl Into<String>) -> Result<T, ProtocolError> {
    Err(ProtocolError::Message(m.into()))
}

/// A board as front ends accept it: `startpos`, or 49 digits of a settled board (top row
/// first).
pub fn parse_board(s: &str) -> Result<Board, BoardError> {
    if s == "startpos" {
        Ok(Board::start())
    } else {
        Board::parse_settled(s)
    }
}

/// A state from a JSON object `{"board", "next", "rise"}` (other keys are the caller's).
pub fn state_from_json(v: &Value) -> Result<PublicState, ProtocolError> {
    if !v.is_object() {
        return refuse(format!(
            "expected a JSON object {{\"board\", \"next\", \"rise\"}}, got {v}"
        ));
    }
    let board = match &v["board"] {
        Value::Null => return refuse("missing \"board\" (a 49-digit string)"),
        b => match b.as_str() {
            Some(s) => s,
            None => return refuse(format!("\"board\" is {b}: expected a 49-digit string")),
        },
    };
    let int = |key: &str, range: &str| -> Result<u64, ProtocolError> {
        match &v[key] {
            Value::Null => refuse(format!("missing \"{key}\" ({range})")),
            x => x.as_u64().map_or_else(
                || refuse(format!("\"{key}\" is {x}: expected an integer {range}")),
                Ok,
            ),
        }
    };
    let next = int("next", "1-7")?;
    let rise = int("rise", "1-5")?;
    Ok(PublicState::checked(parse_board(board)?, next, rise)?)
}

/// D7P's `position` arguments: `startpos|board <49 digits> next <1-7> rise <1-5>`.
pub fn parse_position(words: &[&str]) -> Result<PublicState, ProtocolError> {
    let (board, rest) = match words {
        ["startpos", rest @ ..] => ("startpos", rest),
        ["board", b, rest @ ..] => (*b, rest),
        _ => return refuse("expected `position startpos|board <49 digits> next <1-7> rise <1-5>`"),
    };
    match rest {
        ["next", n, "rise", r] => {
            let Ok(n) = n.parse::<u64>() else {
                return refuse(format!("bad next `{n}`"));
            };
            let Ok(r) = r.parse::<u64>() else {
                return refuse(format!("bad rise `{r}`"));
            };
            Ok(PublicState::checked(parse_board(board)?, n, r)?)
        }
        _ => refuse("expected `... next <1-7> rise <1-5>`"),
    }
}

/// A number as the reference prints it (`%.17g`): integral values without a fraction.
pub fn num(x: f64) -> Value {
    if x.fract() == 0.0 && x.abs() < 9e15 {
        json!(x as i64)
    } else {
        json!(x)
    }
}

/// `drop7 leaf`: the fair leaf's value and its 18 raw terms.
pub fn leaf_json(s: &PublicState) -> Value {
    let terms = fair_terms(&s.board, s.next, s.moves_remaining);
    let list: Vec<Value> = (0..18)
        .map(|i| json!({"name": TERM_NAMES[i], "weight": num(WEIGHTS[i]), "raw": num(terms[i])}))
        .collect();
    json!({"board": s.board.to_string(), "next": s.next, "rise": s.moves_remaining, "leaf": num(combine(&terms)), "terms": list})
}

/// `drop7 search`: a decision with the state and the configuration that made it (the
/// search vectors' keys).
pub fn decision_json(s: &PublicState, cfg: &SearchConfig, d: &Decision) -> Value {
    let mut v = json!({
        "board": s.board.to_string(), "next": s.next, "rise": s.moves_remaining,
        "depth": cfg.depth, "samples": cfg.samples,
        "column": d.column, "columnCanonical": d.column_canonical,
        "mirrored": d.mirrored, "canonicalBoard": d.canonical_board.to_string(),
        "q": d.q.map(|q| q.map(num)), "qCanonical": d.q_canonical.map(|q| q.map(num)),
        "work": d.work, "workByDepth": d.work_by_depth, "nodes": d.nodes,
        "completedDepth": d.completed_depth, "completed": d.completed(cfg.depth),
        "maxWork": cfg.max_work,
    });
    // only a restricted search says so: the reference's vectors have no such key
    if let Some(top) = cfg.final_top {
        v["top"] = json!(top);
    }
    v
}

/// What a D7P line asks of the front end.
#[derive(Debug, PartialEq, Eq)]
pub enum Reply {
    /// Write these lines.
    Text(String),
    /// Nothing to write (a blank line, an accepted `position`).
    Silent,
    /// `quit`.
    Quit,
}

/// A D7P session: `d7p`, `isready`, `position startpos|board <49> next D rise R`,
/// `go` → `bestmove C|none`, `quit`; anything else → `info unknown command …`.
pub struct D7pSession {
    policy: Box<dyn Policy>,
    name: String,
    state: Option<PublicState>,
}

impl D7pSession {
    pub fn new(policy: Box<dyn Policy>, name: String) -> Self {
        D7pSession {
            policy,
            name,
            state: None,
        }
    }

    /// The reply to one line.
    pub fn reply(&mut self, line: &str) -> Reply {
        let words: Vec<&str> = line.split_whitespace().collect();
        Reply::Text(match words.as_slice() {
            [] => return Reply::Silent,
            ["quit"] => return Reply::Quit,
            ["d7p"] => format!(
                "id name actuary-drop7 {}\nid family {}\nid public-information true\nd7pok",
                self.name,
                self.name.split('-').next().unwrap_or(&self.name)
            ),
            ["isready"] => "readyok".to_owned(),
            ["position", rest @ ..] => match parse_position(rest) {
                Ok(s) => {
                    self.state = Some(s);
                    return Reply::Silent;
                }
                Err(e) => format!("info string error: {e}"),
            },
            ["go", ..] => match &self.state {
                None => "info string error: go before position\nbestmove none".to_owned(),
                Some(s) => match self.policy.choose(s).column {
                    Some(c) => format!("bestmove {c}"),
                    None => "bestmove none".to_owned(),
                },
            },
            _ => format!("info unknown command {line}"),
        })
    }
}

/// The longest input line read whole (`--batch`, D7P); a batch line is about 100 bytes.
pub const MAX_LINE: usize = 1 << 16;

/// One input line: its bytes (without the newline), or, past [`MAX_LINE`], only its length
/// (the rest is read and dropped, so no line can exhaust memory).
#[derive(Debug, PartialEq, Eq)]
pub enum Line {
    Text(Vec<u8>),
    TooLong(u64),
}

/// The lines of `r`, each bounded by [`MAX_LINE`] bytes in memory.
pub fn bounded_lines<R: BufRead>(mut r: R) -> impl Iterator<Item = std::io::Result<Line>> {
    let mut done = false;
    std::iter::from_fn(move || {
        if done {
            return None;
        }
        let (mut buf, mut total, mut any) = (Vec::new(), 0u64, false);
        loop {
            let chunk = match r.fill_buf() {
                Ok(c) => c,
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e) => {
                    done = true;
                    return Some(Err(e));
                }
            };
            if chunk.is_empty() {
                done = true;
                if !any {
                    return None;
                }
                break;
            }
            any = true;
            let (len, newline) = match chunk.iter().position(|&b| b == b'\n') {
                Some(i) => (i, true),
                None => (chunk.len(), false),
            };
            let room = (MAX_LINE + 1).saturating_sub(buf.len());
            buf.extend_from_slice(&chunk[..len.min(room)]);
            total += len as u64;
            r.consume(len + newline as usize);
            if newline {
                break;
            }
        }
        Some(Ok(if total > MAX_LINE as u64 {
            Line::TooLong(total)
        } else {
            Line::Text(buf)
        }))
    })
}

/// A line protocol stopped on its input or its output.
#[derive(Debug, thiserror::Error)]
pub enum StreamError {
    #[error("reading standard input: {0}")]
    Read(std::io::Error),
    #[error("writing to standard output: {0}")]
    Write(std::io::Error),
}

impl StreamError {
    /// The reader of the output has gone (`| head`): the caller stops quietly.
    pub fn reader_gone(&self) -> bool {
        matches!(self, Self::Write(e) if e.kind() == ErrorKind::BrokenPipe)
    }
}

/// Write `text` and a newline, flushed (an answer must reach a waiting front end now).
fn answer(out: &mut impl Write, text: &str) -> Result<(), StreamError> {
    out.write_all(text.as_bytes())
        .and_then(|()| out.write_all(b"\n"))
        .and_then(|()| out.flush())
        .map_err(StreamError::Write)
}

/// Serve D7P ([`D7pSession`]) from `input` to `out` until `quit` or the end of the input. A
/// line that is not UTF-8 or too long to read whole is answered like an unknown command,
/// never fatal.
pub fn serve_d7p(
    session: &mut D7pSession,
    input: impl BufRead,
    out: &mut impl Write,
) -> Result<(), StreamError> {
    for line in bounded_lines(input) {
        let reply = match line.map_err(StreamError::Read)? {
            Line::Text(bytes) => session.reply(&String::from_utf8_lossy(&bytes)),
            Line::TooLong(n) => Reply::Text(format!(
                "info string error: a line of {n} bytes (at most {MAX_LINE})"
            )),
        };
        match reply {
            Reply::Quit => break,
            Reply::Silent => {}
            Reply::Text(t) => answer(out, &t)?,
        }
    }
    Ok(())
}

/// The batch protocol of `drop7 leaf --batch` and `drop7 search --batch`: one JSON object
/// `{"board", "next", "rise", …}` a line in, one JSON line out, `f`'s answer for the state
/// and the whole line. A bad line (not UTF-8, too long, not JSON, not a state, or refused by
/// `f`) is answered `{"line": N, "error": why}` and the batch goes on; blank lines are skipped.
pub fn serve_batch(
    input: impl BufRead,
    out: &mut impl Write,
    mut f: impl FnMut(&PublicState, &Value) -> Result<Value, String>,
) -> Result<(), StreamError> {
    for (i, line) in bounded_lines(input).enumerate() {
        let refused = |why: String| json!({"line": i + 1, "error": why});
        let v = match line.map_err(StreamError::Read)? {
            Line::TooLong(n) => refused(format!("the line is {n} bytes long; at most {MAX_LINE}")),
            Line::Text(bytes) => match String::from_utf8(bytes) {
                Err(_) => refused("the line is not UTF-8".into()),
                Ok(line) if line.trim().is_empty() => continue,
                Ok(line) => serde_json::from_str::<Value>(&line)
                    .map_err(|e| format!("not JSON: {e}"))
                    .and_then(|v| {
                        state_from_json(&v)
                            .map_err(|e| e.to_string())
                            .and_then(|s| f(&s, &v))
                    })
                    .unwrap_or_else(refused),
            },
        };
        answer(out, &v.to_string())?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(input: &[u8]) -> Vec<Result<Vec<u8>, u64>> {
        bounded_lines(std::io::BufReader::with_capacity(7, input))
            .map(|l| match l.unwrap() {
                Line::Text(t) => Ok(t),
                Line::TooLong(n) => Err(n),
            })
            .collect()
    }

    #[test]
    fn lines_are_bounded() {
        assert_eq!(lines(b""), vec![]);
        assert_eq!(
            lines(b"a\n\nbc"),
            vec![Ok(b"a".to_vec()), Ok(vec![]), Ok(b"bc".to_vec())]
        );
        assert_eq!(lines(b"abc\n"), vec![Ok(b"abc".to_vec())]);
        let mut big = vec![b'x'; MAX_LINE + 5];
        big.extend_from_slice(b"\nok\n");
        assert_eq!(
            lines(&big),
            vec![Err(MAX_LINE as u64 + 5), Ok(b"ok".to_vec())]
        );
        let exact = vec![b'y'; MAX_LINE];
        assert_eq!(lines(&exact), vec![Ok(exact.clone())]);
    }

    #[test]
    fn a_batch_answers_every_line_and_goes_on_after_a_bad_one() {
        let mut input = b"{\"board\":\"startpos\",\"next\":3,\"rise\":5}\n\n".to_vec();
        input
            .extend_from_slice(b"\xff\nnot json\n{\"board\":\"startpos\",\"next\":9,\"rise\":5}\n");
        input.extend_from_slice(b"{\"board\":\"startpos\",\"next\":1,\"rise\":1}\n");
        let mut out = Vec::new();
        serve_batch(&input[..], &mut out, |s, _| {
            if s.next == 1 {
                Err("refused by the caller".into())
            } else {
                Ok(json!({"next": s.next}))
            }
        })
        .unwrap();
        let got: Vec<Value> = String::from_utf8(out)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(got.len(), 5, "{got:?}");
        assert_eq!(got[0], json!({"next": 3}));
        // line numbers count the blank line 2
        assert_eq!(got[1], json!({"line": 3, "error": "the line is not UTF-8"}));
        assert!(
            got[2]["error"].as_str().unwrap().starts_with("not JSON"),
            "{got:?}"
        );
        assert_eq!(got[3]["line"], 5);
        assert!(
            got[3]["error"].as_str().unwrap().contains("next"),
            "{got:?}"
        );
        assert_eq!(got[4], json!({"line": 6, "error": "refused by the caller"}));
    }

    #[test]
    fn d7p_serves_until_quit_and_survives_bad_lines() {
        let policy = crate::policy::BuiltinPolicy::Center.factory().unwrap()();
        let mut session = D7pSession::new(policy, "center".into());
        let mut input = b"isready\n\xfe\xff\n".to_vec();
        input.extend_from_slice(&vec![b'z'; MAX_LINE + 1]);
        input.extend_from_slice(b"\nposition startpos next 3 rise 5\ngo\nquit\nisready\n");
        let mut out = Vec::new();
        serve_d7p(&mut session, &input[..], &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 4, "{text}");
        assert_eq!(lines[0], "readyok");
        assert!(lines[1].starts_with("info unknown command"), "{text}");
        assert!(
            lines[2].contains(&format!("{} bytes", MAX_LINE + 1)),
            "{text}"
        );
        assert_eq!(
            lines[3], "bestmove 3",
            "center plays column 3 on an empty board"
        );
    }

    #[test]
    fn a_gone_reader_is_told_apart_from_a_full_disk() {
        let gone = StreamError::Write(std::io::Error::from(ErrorKind::BrokenPipe));
        let full = StreamError::Write(std::io::Error::other("No space left on device"));
        assert!(gone.reader_gone() && !full.reader_gone());
        assert!(full.to_string().starts_with("writing to standard output"));
    }
    use proptest::prelude::*;

    /// A batch line for a state, as a script would write it.
    fn line(s: &PublicState) -> String {
        json!({"board": s.board.to_string(), "next": s.next, "rise": s.moves_remaining}).to_string()
    }

    /// A state of a real game.
    fn game_state() -> impl Strategy<Value = PublicState> {
        (any::<u32>(), 0usize..60).prop_map(|(seed, m)| {
            crate::runner::sample_states(seed, m + 1)
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
            }
        }

        /// JSON objects with hostile field values: never a panic; a state is read exactly when
        /// both numbers are integers in range (valid ones are generated too, so that hostile
        /// boards reach the board parser), and then it holds those numbers.
        #[test]
        fn hostile_fields_are_refused_or_read(
            board in "\\PC{0,60}|[0-9]{49}|startpos",
            next in prop_oneof![(1u64..=7).prop_map(Value::from), any::<i64>().prop_map(Value::from),
                                any::<f64>().prop_map(Value::from), Just(Value::Null),
                                "\\PC{0,5}".prop_map(Value::from)],
            rise in prop_oneof![(1u64..=5).prop_map(Value::from), any::<u64>().prop_map(Value::from),
                                Just(json!([1]))],
        ) {
            let in_range = |x: &Value, hi: u64| x.as_u64().is_some_and(|n| (1..=hi).contains(&n));
            let numbers_ok = in_range(&next, 7) && in_range(&rise, 5);
            let v = json!({"board": board, "next": next, "rise": rise});
            match state_from_json(&v) {
                Ok(s) => {
                    prop_assert!(numbers_ok, "{v} was read");
                    prop_assert_eq!(Some(u64::from(s.next)), next.as_u64());
                    prop_assert_eq!(Some(u64::from(s.moves_remaining)), rise.as_u64());
                }
                // the start board is always a board: only the numbers can refuse it
                Err(e) => prop_assert!(!(numbers_ok && board == "startpos"), "{v}: {e}"),
            }
        }

        /// A real state's line with one character replaced: mostly still JSON, so the damage
        /// meets the reader's own checks (random text almost never gets past the JSON parser).
        #[test]
        fn damaged_lines_parse_or_are_refused(
            s in game_state(),
            at in any::<proptest::sample::Index>(),
            ch in "\\PC",
        ) {
            let mut text = line(&s);
            let i = at.index(text.len()); // the line is ASCII: every index is a boundary
            text.replace_range(i..i + 1, &ch);
            if let Ok(v) = serde_json::from_str::<Value>(&text)
                && let Ok(got) = state_from_json(&v)
            {
                // only a digit changed for a digit can be read: the state prints as that text
                prop_assert!((1..=7).contains(&got.next) && (1..=5).contains(&got.moves_remaining));
                prop_assert_eq!(line(&got), text);
            }
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
    }

    #[test]
    fn refusals_say_what_is_wrong() {
        let e = |v: Value| state_from_json(&v).unwrap_err().to_string();
        assert_eq!(
            e(json!([1])),
            "expected a JSON object {\"board\", \"next\", \"rise\"}, got [1]"
        );
        assert_eq!(
            e(json!({"next": 1, "rise": 5})),
            "missing \"board\" (a 49-digit string)"
        );
        assert_eq!(
            e(json!({"board": "startpos", "next": 9, "rise": 5})),
            "bad next disc 9: discs are 1-7"
        );
        assert_eq!(
            e(json!({"board": "startpos", "next": 1, "rise": "5"})),
            "\"rise\" is \"5\": expected an integer 1-5"
        );
        assert!(e(json!({"board": "123", "next": 1, "rise": 5})).contains("49 digits"));
    }

    #[test]
    fn a_d7p_session_answers_each_line() {
        let f = crate::policy::BuiltinPolicy::Center.factory().unwrap();
        let mut s = D7pSession::new(f(), "center".into());
        assert!(matches!(s.reply("d7p"), Reply::Text(t) if t.ends_with("d7pok")));
        assert_eq!(
            s.reply("go"),
            Reply::Text("info string error: go before position\nbestmove none".into())
        );
        assert_eq!(s.reply("position startpos next 3 rise 5"), Reply::Silent);
        assert_eq!(s.reply("go"), Reply::Text("bestmove 3".into()));
        assert!(
            matches!(s.reply("position board 12 next 3 rise 5"), Reply::Text(t) if t.starts_with("info string error: bad board"))
        );
        assert_eq!(s.reply("  "), Reply::Silent);
        assert_eq!(
            s.reply("frobnicate"),
            Reply::Text("info unknown command frobnicate".into())
        );
        assert_eq!(s.reply("quit"), Reply::Quit);
    }
}
