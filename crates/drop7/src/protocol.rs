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
    json!({
        "board": s.board.to_string(), "next": s.next, "rise": s.moves_remaining,
        "depth": cfg.depth, "samples": cfg.samples,
        "column": d.column, "columnCanonical": d.column_canonical,
        "mirrored": d.mirrored, "canonicalBoard": d.canonical_board.to_string(),
        "q": d.q.map(|q| q.map(num)), "qCanonical": d.q_canonical.map(|q| q.map(num)),
        "work": d.work, "workByDepth": d.work_by_depth, "nodes": d.nodes,
        "completedDepth": d.completed_depth, "completed": d.completed(cfg.depth),
        "maxWork": cfg.max_work,
    })
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

        /// JSON objects with hostile field values: never a panic, and a state read is valid.
        #[test]
        fn hostile_fields_are_refused_or_read(
            board in "\\PC{0,60}|[0-9]{49}|startpos",
            next in prop_oneof![any::<i64>().prop_map(Value::from), any::<f64>().prop_map(Value::from),
                                Just(Value::Null), "\\PC{0,5}".prop_map(Value::from)],
            rise in prop_oneof![any::<u64>().prop_map(Value::from), Just(json!([1]))],
        ) {
            let v = json!({"board": board, "next": next, "rise": rise});
            if let Ok(s) = state_from_json(&v) {
                prop_assert!((1..=7).contains(&s.next) && (1..=5).contains(&s.moves_remaining));
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
