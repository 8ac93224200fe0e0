//! Reading back a PGN this arbiter wrote, as game pairs: what `--resume` counts instead of
//! replaying, and what `--score` turns into a report without running an engine.
//!
//! The arbiter appends the two games of a pair (one opening, colours swapped) as one record,
//! `Round "k.1"` then `Round "k.2"`, so a file holds whole pairs except, after a kill in the
//! middle of a write, a cut-off tail. [`read`] returns the whole pairs, where the last one
//! ends (so `--resume` can cut the tail away), and refuses anything else (a foreign game, a
//! pair that does not swap colours, a round that is not `k.1`/`k.2`) with the file and line.

use std::path::{Path, PathBuf};

use crate::game::Outcome;

/// A PGN that is not (or no longer) the arbiter's own, or that cannot be read.
#[derive(Debug, thiserror::Error)]
#[error("{}{}: {reason}", path.display(), line.map_or(String::new(), |l| format!(" line {l}")))]
pub struct ReadError {
    pub path: PathBuf,
    /// 1-based line where the problem is seen; none for a file that cannot be read at all.
    pub line: Option<usize>,
    pub reason: String,
}

/// How a game ended, as far as the arbiter counts faults (see `Termination`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    None,
    Time,
    Illegal,
    Crash,
    Hang,
}

/// One game's tags, as needed to score it and to check it belongs to a match.
#[derive(Debug, Clone)]
pub struct Game {
    /// 1-based line of its `[Event` tag.
    pub line: usize,
    pub event: String,
    pub white: String,
    pub black: String,
    pub time_control: String,
    /// The `FEN` tag, or none for the standard start position.
    pub fen: Option<String>,
    pub outcome: Outcome,
    pub fault: Fault,
    /// Game pair number k (the `k` of `Round "k.i"`, from 1) and i (1 or 2).
    pub pair: u64,
    pub half: u8,
}

/// Both games of one opening. `first` had White in game 1.
#[derive(Debug, Clone)]
pub struct Pair {
    pub games: [Game; 2],
}

impl Pair {
    pub fn first(&self) -> &str {
        &self.games[0].white
    }
    pub fn second(&self) -> &str {
        &self.games[0].black
    }
    /// The first engine's half points in game 1 and game 2 (0, 1 or 2 each).
    pub fn half_points(&self) -> [u8; 2] {
        let h = |o: Outcome, first_is_white: bool| match (o, first_is_white) {
            (Outcome::Draw, _) => 1,
            (Outcome::White, true) | (Outcome::Black, false) => 2,
            _ => 0,
        };
        [
            h(self.games[0].outcome, true),
            h(self.games[1].outcome, false),
        ]
    }
}

/// What a file holds.
#[derive(Debug, Default)]
pub struct Played {
    /// Whole pairs, in file order.
    pub pairs: Vec<Pair>,
    /// Byte length of the file up to the end of the last whole pair.
    pub whole_len: u64,
    /// A cut-off tail after the last whole pair: its first line and what is wrong with it.
    pub tail: Option<(usize, String)>,
}

/// Parse one `[Key "value"]` line (the writer escapes `\` and `"`).
fn tag(line: &str) -> Option<(&str, String)> {
    let inner = line.strip_prefix('[')?.strip_suffix(']')?;
    let (key, rest) = inner.split_once(' ')?;
    let quoted = rest.strip_prefix('"')?.strip_suffix('"')?;
    let mut value = String::with_capacity(quoted.len());
    let mut chars = quoted.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            value.push(chars.next()?);
        } else {
            value.push(c);
        }
    }
    Some((key, value))
}

/// The record being read: tags so far, and whether the movetext has ended with a result.
#[derive(Default)]
struct Partial {
    line: usize,
    tags: Vec<(String, String)>,
    movetext: String,
    ended: bool,
}

impl Partial {
    /// The side checkmated at the end of the movetext, replayed from the `FEN` tag (or the
    /// start position) in SAN; `None` if it does not end in mate or cannot be replayed (a
    /// move this reader does not recognise: then the tag stands).
    fn mated_side(&self) -> Option<cozy_chess::Color> {
        let chess960 = self
            .get("Variant")
            .is_some_and(|v| v.to_ascii_lowercase().contains("960"));
        let start = match self.get("FEN") {
            Some(f) => crate::rules::parse_position_with(f, chess960).ok()?,
            None => cozy_chess::Board::default(),
        };
        let mut board = start;
        // Tokens outside `{...}` comments, without move numbers, NAGs and the result.
        let mut text = String::new();
        let mut depth = 0usize;
        for c in self.movetext.chars() {
            match c {
                '{' => depth += 1,
                '}' => depth = depth.saturating_sub(1),
                c if depth == 0 => text.push(c),
                _ => {}
            }
        }
        // Only a game whose last move is marked `#` is replayed (a PGN marks mate so, ours and
        // python-chess's alike): scoring a long match stays a read, not a replay.
        let last_move = text
            .split_whitespace()
            .rfind(|w| !["1-0", "0-1", "1/2-1/2", "*"].contains(w) && !w.starts_with('$'))?;
        if !last_move.trim_end_matches(['!', '?']).ends_with('#') {
            return None;
        }
        let strip = |s: &str| s.trim_end_matches(['+', '#', '!', '?']).to_owned();
        for tok in text.split_whitespace() {
            if ["1-0", "0-1", "1/2-1/2", "*"].contains(&tok) {
                continue;
            }
            let tok = tok.trim_start_matches(|c: char| c.is_ascii_digit() || c == '.');
            if tok.is_empty() || tok.starts_with('$') {
                continue;
            }
            let want = strip(tok).replace('0', "O");
            let mv = crate::rules::legal_moves(&board)
                .into_iter()
                .find(|&m| strip(&crate::rules::san(&board, m)) == want)?;
            board.play_unchecked(mv);
        }
        (board.status() == cozy_chess::GameStatus::Won).then(|| board.side_to_move())
    }

    fn get(&self, key: &str) -> Option<&str> {
        self.tags
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// The finished game, or why this record is not a game of the arbiter's.
    fn finish(self) -> Result<Game, (usize, String)> {
        let line = self.line;
        let need = |k: &str| {
            self.get(k)
                .map(str::to_owned)
                .ok_or_else(|| (line, format!("the game has no {k} tag")))
        };
        let result = need("Result")?;
        let outcome = match result.as_str() {
            "1-0" => Outcome::White,
            "0-1" => Outcome::Black,
            "1/2-1/2" => Outcome::Draw,
            other => return Err((line, format!("Result \"{other}\" is not a finished game"))),
        };
        let round = need("Round")?;
        let (pair, half) = round
            .split_once('.')
            .and_then(|(k, i)| Some((k.parse::<u64>().ok()?, i.parse::<u8>().ok()?)))
            .filter(|&(k, i)| k >= 1 && (i == 1 || i == 2))
            .ok_or_else(|| {
                (
                    line,
                    format!("Round \"{round}\" is not the arbiter's k.1 or k.2"),
                )
            })?;
        // A game whose moves end in checkmate is won by the mating side, whatever the tag says
        // (a hand-edited Result would otherwise be scored).
        if let Some(mated) = self.mated_side() {
            let want = match mated {
                cozy_chess::Color::White => Outcome::Black,
                cozy_chess::Color::Black => Outcome::White,
            };
            if outcome != want {
                return Err((
                    line,
                    format!(
                        "Result \"{result}\" but the moves end in checkmate of {}",
                        if mated == cozy_chess::Color::White {
                            "White"
                        } else {
                            "Black"
                        }
                    ),
                ));
            }
        }
        // The final comment says who crashed or hung; the tag alone does not tell them apart.
        let fault = match self.get("Termination").unwrap_or("normal") {
            "time forfeit" => Fault::Time,
            "rules infraction" => Fault::Illegal,
            "abandoned" if self.movetext.contains("stopped answering}") => Fault::Hang,
            "abandoned" => Fault::Crash,
            _ => Fault::None,
        };
        Ok(Game {
            line,
            event: need("Event")?,
            white: need("White")?,
            black: need("Black")?,
            time_control: need("TimeControl")?,
            fen: self.get("FEN").map(str::to_owned),
            outcome,
            fault,
            pair,
            half,
        })
    }
}

/// The largest PGN read back, in bytes: the arbiter writes about 1 KB a game (tags and moves,
/// no per-move comments), so 4 GiB is millions of games, more than any match plays; a larger
/// file is not one of its PGNs.
pub const MAX_PGN_BYTES: u64 = 4 << 30;

/// Read the game pairs of `path` (see the module doc; a regular file of at most
/// [`MAX_PGN_BYTES`]). A missing file holds nothing.
pub fn read(path: &Path) -> Result<Played, ReadError> {
    let err = |line: Option<usize>, reason: String| ReadError {
        path: path.to_owned(),
        line,
        reason,
    };
    let bytes = match fileio::read(path, MAX_PGN_BYTES) {
        Ok(b) => b,
        Err(fileio::FileError::Io { source, .. })
            if source.kind() == std::io::ErrorKind::NotFound =>
        {
            return Ok(Played::default());
        }
        Err(e) => return Err(err(None, e.into_io().to_string())),
    };
    let text = std::str::from_utf8(&bytes).map_err(|e| {
        let line = bytes[..e.valid_up_to()]
            .iter()
            .filter(|&&b| b == b'\n')
            .count();
        err(Some(line + 1), "is not UTF-8 text".into())
    })?;
    let mut played = Played::default();
    // Games read since the last whole pair (0 or 1 of them), and the byte offset after each.
    let mut pending: Option<Game> = None;
    let mut cur: Option<Partial> = None;
    let mut offset = 0u64;
    let mut in_tags = false;
    // Push a finished game: pair it with the pending first half, or make it pending.
    let mut take = |g: Game, end: u64, played: &mut Played| -> Result<(), (usize, String)> {
        match (pending.take(), g.half) {
            (None, 1) => {
                pending = Some(g);
                Ok(())
            }
            (Some(a), 2)
                if a.pair == g.pair
                    && a.white == g.black
                    && a.black == g.white
                    && a.fen == g.fen
                    && a.event == g.event
                    && a.time_control == g.time_control =>
            {
                played.pairs.push(Pair { games: [a, g] });
                played.whole_len = end;
                Ok(())
            }
            (Some(a), _) => Err((
                g.line,
                format!(
                    "the game does not complete the pair begun at line {} (round {}.2 with \
                     colours swapped, same opening, event and time control)",
                    a.line, a.pair
                ),
            )),
            (None, _) => Err((
                g.line,
                format!(
                    "round {}.2 without its round {}.1 just before it",
                    g.pair, g.pair
                ),
            )),
        }
    };
    let mut tail: Option<(usize, String)> = None;
    for (i, raw) in text.split_inclusive('\n').enumerate() {
        let lineno = i + 1;
        let end = offset + raw.len() as u64;
        offset = end;
        let line = raw.trim_end_matches(['\n', '\r']);
        // A line without its newline is the file's last: a write cut off there is a tail.
        let cut = !raw.ends_with('\n');
        if line.starts_with('[') && (cur.is_none() || in_tags) {
            let Some((k, v)) = tag(line) else {
                if cut {
                    let start = cur.as_ref().map_or(lineno, |p| p.line);
                    tail = Some((start, "a game cut off in its tags".into()));
                    cur = None;
                    break;
                }
                return Err(err(Some(lineno), format!("not a PGN tag: {line}")));
            };
            if cur.is_none() {
                if k != "Event" {
                    return Err(err(
                        Some(lineno),
                        "a game that does not begin with its Event tag".into(),
                    ));
                }
                cur = Some(Partial {
                    line: lineno,
                    ..Partial::default()
                });
                in_tags = true;
            }
            if let Some(p) = cur.as_mut() {
                p.tags.push((k.to_owned(), v));
            }
            continue;
        }
        let Some(p) = cur.as_mut() else {
            if line.trim().is_empty() {
                continue;
            }
            return Err(err(Some(lineno), "text outside any game".into()));
        };
        in_tags = false;
        if line.trim().is_empty() {
            if p.ended {
                let g = cur.take().expect("a record is open").finish();
                let g = g.map_err(|(l, r)| err(Some(l), r))?;
                take(g, end, &mut played).map_err(|(l, r)| err(Some(l), r))?;
            }
            continue;
        }
        p.movetext.push_str(line);
        p.movetext.push(' ');
        p.ended = matches!(
            line.split_whitespace().last(),
            Some("1-0" | "0-1" | "1/2-1/2" | "*")
        );
    }
    // A game whose result ends the file without the closing blank line is whole too: a
    // complete game that is not the arbiter's (python-chess writes no closing blank line) is
    // a foreign game, refused like one anywhere else, never cut away as a torn tail.
    if let Some(p) = cur.take() {
        if p.ended {
            let g = p.finish().map_err(|(l, r)| err(Some(l), r))?;
            take(g, offset, &mut played).map_err(|(l, r)| err(Some(l), r))?;
        } else {
            tail = Some((p.line, "a game cut off before its result".into()));
        }
    }
    // The tail begins with the pending first game of its pair, when there is one.
    played.tail = match (pending, tail) {
        (Some(g), Some((_, why))) => Some((g.line, why)),
        (Some(g), None) => Some((g.line, "the first game of a pair without the second".into())),
        (None, t) => t,
    };
    Ok(played)
}

#[cfg(test)]
mod tests {
    use super::*;

    const PAIR: &str = "[Event \"m\"]\n[Site \"actuary arbiter\"]\n[Date \"2026.12.01\"]\n\
        [Round \"1.1\"]\n[White \"a\"]\n[Black \"b\"]\n[Result \"1-0\"]\n\
        [TimeControl \"2+0.02\"]\n[Termination \"time forfeit\"]\n[PlyCount \"1\"]\n\n\
        1. e4 {b loses on time} 1-0\n\n\
        [Event \"m\"]\n[Site \"actuary arbiter\"]\n[Date \"2026.12.01\"]\n\
        [Round \"1.2\"]\n[White \"b\"]\n[Black \"a\"]\n[Result \"1/2-1/2\"]\n\
        [TimeControl \"2+0.02\"]\n[Termination \"normal\"]\n[PlyCount \"0\"]\n\n\
        {threefold repetition} 1/2-1/2\n\n";

    fn read_str(s: &str) -> Result<Played, ReadError> {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("g.pgn");
        std::fs::write(&p, s).unwrap();
        read(&p)
    }

    #[test]
    fn whole_pairs_are_read_and_scored() {
        let p = read_str(&PAIR.repeat(2).replacen("\"1.", "\"2.", 2)).unwrap();
        assert_eq!(p.pairs.len(), 2);
        assert_eq!(p.whole_len, 2 * PAIR.len() as u64);
        assert!(p.tail.is_none());
        let pair = &p.pairs[1];
        assert_eq!((pair.first(), pair.second()), ("a", "b"));
        // a wins game 1 with White, draws game 2 with Black: 2 + 1 half points.
        assert_eq!(pair.half_points(), [2, 1]);
        assert_eq!(pair.games[0].fault, Fault::Time);
        assert_eq!(pair.games[1].fault, Fault::None);
        assert_eq!(p.pairs[0].games[0].pair, 2);
    }

    #[test]
    fn a_cut_off_tail_is_reported_with_where_the_whole_pairs_end() {
        for cut in [10, PAIR.len() / 2, PAIR.len() - 20, PAIR.len() - 3] {
            let s = format!("{PAIR}{}", &PAIR[..cut]);
            let p = read_str(&s).unwrap();
            assert_eq!(p.pairs.len(), 1, "cut {cut}");
            assert_eq!(p.whole_len, PAIR.len() as u64, "cut {cut}");
            let (line, why) = p.tail.expect("a tail");
            assert_eq!(line, 27, "cut {cut}: {why}");
        }
        // The last game without its closing blank line is whole.
        let p = read_str(PAIR.trim_end()).unwrap();
        assert_eq!(p.pairs.len(), 1);
        assert!(p.tail.is_none());
        // A complete foreign game at the end without its blank line (python-chess's way) is
        // refused, not taken for a torn tail to cut (issue 36).
        let foreign = "[Event \"?\"]\n[Site \"?\"]\n[Round \"?\"]\n[White \"x\"]\n\
            [Black \"y\"]\n[Result \"1-0\"]\n\n1. e4 e5 2. Qh5 Nc6 3. Bc4 Nf6 4. Qxf7# 1-0";
        let e = read_str(&format!("{PAIR}{foreign}"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("g.pgn line 27: "), "{e}");
    }

    #[test]
    fn a_result_against_the_mate_on_the_board_is_refused() {
        // Fool's mate played, White's win claimed: refused; Black's win: scored.
        let claimed = PAIR.replacen("1. e4 {b loses on time} 1-0", "1. f3 e5 2. g4 Qh4# 1-0", 1);
        let e = read_str(&claimed).unwrap_err().to_string();
        assert!(
            e.contains("g.pgn line 1: ") && e.contains("checkmate of White"),
            "{e}"
        );
        let honest = PAIR
            .replacen("[Result \"1-0\"]", "[Result \"0-1\"]", 1)
            .replacen("1. e4 {b loses on time} 1-0", "1. f3 e5 2. g4 Qh4# 0-1", 1);
        let p = read_str(&honest).unwrap();
        assert_eq!(p.pairs.len(), 1);
        assert_eq!(p.pairs[0].games[0].outcome, Outcome::Black);
    }

    #[test]
    fn foreign_files_are_refused_with_the_line() {
        for (bad, line, says) in [
            (
                PAIR.replace("\"1.2\"", "\"3.2\""),
                14,
                "does not complete the pair",
            ),
            (PAIR.replace("\"1.1\"", "\"x\""), 1, "not the arbiter's"),
            (
                PAIR.replacen("[White \"a\"]", "[White \"c\"]", 1),
                14,
                "pair",
            ),
            (
                PAIR.replace("\"1/2-1/2\"]", "\"*\"]"),
                14,
                "not a finished game",
            ),
            (format!("junk\n{PAIR}"), 1, "outside any game"),
            (
                PAIR.replacen("[Site", "[Site broken", 1),
                2,
                "not a PGN tag",
            ),
            (PAIR.replace("\"1.1\"", "\"1.2\""), 1, "without its round"),
        ] {
            let e = read_str(&bad).unwrap_err().to_string();
            assert!(
                e.contains(&format!("g.pgn line {line}: ")) && e.contains(says),
                "{e}"
            );
        }
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("g.pgn");
        std::fs::write(&p, [PAIR.as_bytes(), b"[Event \"\xff\"]\n"].concat()).unwrap();
        let e = read(&p).unwrap_err().to_string();
        assert!(e.ends_with("g.pgn line 27: is not UTF-8 text"), "{e}");
        // A missing file holds nothing (a resumed match that never wrote a game).
        assert!(read(&d.path().join("none.pgn")).unwrap().pairs.is_empty());
    }
}
