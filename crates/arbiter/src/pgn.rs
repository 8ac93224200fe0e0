//! PGN export: standard seven-tag roster, FEN/SetUp for book openings, the arbiter's reason
//! as a `Termination` tag and a final comment.

use crate::game::GameRecord;
use crate::rules::{STARTPOS, parse_position_with};

/// Today's date as `YYYY.MM.DD` (UTC), without a date crate.
pub fn today() -> String {
    let days = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() / 86_400) as i64;
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + (m <= 2) as i64;
    format!("{y:04}.{m:02}.{d:02}")
}

fn escape(s: &str) -> String {
    s.replace('\\', "\\\\").replace('"', "\\\"")
}

/// One game as PGN text (ends with a blank line).
pub fn write(g: &GameRecord, event: &str, round: &str, time_control: &str) -> String {
    let mut s = String::new();
    let tag = |s: &mut String, k: &str, v: &str| s.push_str(&format!("[{k} \"{}\"]\n", escape(v)));
    tag(&mut s, "Event", event);
    tag(&mut s, "Site", "actuary arbiter");
    tag(&mut s, "Date", &today());
    tag(&mut s, "Round", round);
    tag(&mut s, "White", &g.white);
    tag(&mut s, "Black", &g.black);
    tag(&mut s, "Result", g.outcome.pgn());
    let standard = g.start_fen == STARTPOS && !g.chess960;
    if g.chess960 {
        tag(&mut s, "Variant", "Chess960");
    }
    if !standard {
        tag(&mut s, "FEN", &g.start_fen);
        tag(&mut s, "SetUp", "1");
    }
    tag(&mut s, "TimeControl", time_control);
    tag(&mut s, "Termination", g.termination.pgn_tag());
    tag(&mut s, "PlyCount", &g.moves_san.len().to_string());
    s.push('\n');
    let start = parse_position_with(&g.start_fen, g.chess960).expect("the arbiter's own FEN");
    let mut number = start.fullmove_number() as usize;
    let mut white_to_move = start.side_to_move() == cozy_chess::Color::White;
    let mut tokens: Vec<String> = Vec::new();
    for (i, m) in g.moves_san.iter().enumerate() {
        if white_to_move {
            tokens.push(format!("{number}. {m}"));
        } else if i == 0 {
            tokens.push(format!("{number}... {m}"));
        } else {
            tokens.push(m.clone());
        }
        if !white_to_move {
            number += 1;
        }
        white_to_move = !white_to_move;
    }
    tokens.push(format!(
        "{{{}}}",
        g.termination.describe().replace('}', ")")
    ));
    tokens.push(g.outcome.pgn().to_owned());
    let mut line = String::new();
    for t in tokens {
        if !line.is_empty() && line.len() + 1 + t.len() > 79 {
            s.push_str(&line);
            s.push('\n');
            line.clear();
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(&t);
    }
    s.push_str(&line);
    s.push_str("\n\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::{Outcome, Termination};

    #[test]
    fn movetext_from_a_black_to_move_fen() {
        let g = GameRecord {
            chess960: false,
            white: "A".into(),
            black: "B \"quoted\"".into(),
            start_fen: "4k3/8/8/8/8/8/4P3/4K3 b - - 0 12".into(),
            moves_san: vec!["Kd7".into(), "e4".into(), "Kc6".into()],
            moves_uci: vec![],
            outcome: Outcome::Draw,
            termination: Termination::Adjudicated {
                rule: "test".into(),
            },
            wall_seconds: 0.0,
        };
        let p = write(&g, "E", "1", "10+0.1");
        assert!(p.contains("[FEN \"4k3/8/8/8/8/8/4P3/4K3 b - - 0 12\"]\n[SetUp \"1\"]"));
        assert!(p.contains("[Black \"B \\\"quoted\\\"\"]"));
        assert!(
            p.contains("12... Kd7 13. e4 Kc6 {adjudicated: test} 1/2-1/2"),
            "{p}"
        );
        assert_eq!(today().len(), 10);
    }
}
