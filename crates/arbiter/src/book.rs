//! Opening books: one EPD or FEN position a line.
//!
//! A line that is not a position, or a position no game can reach, makes the whole book
//! refused (with its file and line number): a broken book is better fixed than half used.
//! A legal position in which the game is already over (checkmate, stalemate, the fifty-move
//! rule, insufficient material) cannot be played: it is skipped and counted, never scored.
//! Blank lines and lines starting with `#` are ignored.

use std::io::Read;
use std::path::{Path, PathBuf};

use cozy_chess::Board;

use crate::rules::{BoardEnd, Position, RulesError, parse_position_with};

/// The largest book read, in bytes (the 2moves book is 2.5 MB).
pub const MAX_BOOK_BYTES: u64 = 64 << 20;

/// The playable positions of a book and the lines skipped.
#[derive(Debug, Clone)]
pub struct Book {
    pub openings: Vec<Board>,
    /// `(line number from 1, why)` of each position skipped because its game is over.
    pub skipped: Vec<(usize, BoardEnd)>,
}

/// A book that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum BookError {
    #[error("--book {}: {source}", path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("--book {}: larger than {} MiB; is it a book?", path.display(), MAX_BOOK_BYTES >> 20)]
    TooLarge { path: PathBuf },
    #[error("--book {}:{line}: not UTF-8 text", path.display())]
    NotUtf8 { path: PathBuf, line: usize },
    /// The reason is part of the message, not a separate cause, so a chained error print
    /// (`anyhow`'s `{:#}`) does not say it twice.
    #[error("--book {}:{line}: {reason}{hint}", path.display())]
    Line {
        path: PathBuf,
        line: usize,
        reason: RulesError,
        /// What to do when the line is a Chess960 position read without `--chess960`.
        hint: &'static str,
    },
    #[error(
        "--book {}: no playable position ({skipped} skipped because the game is already over)",
        path.display()
    )]
    Empty { path: PathBuf, skipped: usize },
}

/// One book line: `None` for a blank or `#` comment line, else the position (EPD opcodes and
/// FEN clocks allowed; see [`parse_position`](crate::rules::parse_position)).
pub fn parse_line(line: &str) -> Result<Option<Board>, RulesError> {
    parse_line_with(line, false)
}

/// [`parse_line`]; with `chess960` the castling field may be X-FEN or Shredder-FEN.
pub fn parse_line_with(line: &str, chess960: bool) -> Result<Option<Board>, RulesError> {
    let t = line.trim_start_matches('\u{feff}').trim();
    if t.is_empty() || t.starts_with('#') {
        return Ok(None);
    }
    parse_position_with(t, chess960).map(Some)
}

/// How the game from `board` has already ended, if it has (such a position cannot open one).
pub fn game_over(board: &Board) -> Option<BoardEnd> {
    Position::new(board).end()
}

impl Book {
    /// Parse a book's bytes; `path` is for messages.
    pub fn parse(bytes: &[u8], path: &Path) -> Result<Book, BookError> {
        Self::parse_with(bytes, path, false)
    }

    /// [`Book::parse`]; with `chess960` castling fields may be X-FEN or Shredder-FEN.
    pub fn parse_with(bytes: &[u8], path: &Path, chess960: bool) -> Result<Book, BookError> {
        let mut book = Book {
            openings: Vec::new(),
            skipped: Vec::new(),
        };
        for (i, raw) in bytes.split(|&b| b == b'\n').enumerate() {
            let line = i + 1;
            let text = std::str::from_utf8(raw).map_err(|_| BookError::NotUtf8 {
                path: path.to_owned(),
                line,
            })?;
            let board = parse_line_with(text, chess960).map_err(|reason| BookError::Line {
                path: path.to_owned(),
                line,
                reason,
                hint: if !chess960 && parse_line_with(text, true).is_ok() {
                    " (a Chess960 position: add --chess960)"
                } else {
                    ""
                },
            })?;
            if let Some(b) = board {
                match game_over(&b) {
                    Some(end) => book.skipped.push((line, end)),
                    None => book.openings.push(b),
                }
            }
        }
        if book.openings.is_empty() {
            return Err(BookError::Empty {
                path: path.to_owned(),
                skipped: book.skipped.len(),
            });
        }
        Ok(book)
    }

    /// Read and parse a book file (at most [`MAX_BOOK_BYTES`]; a pipe such as `<(…)` works).
    pub fn load(path: &Path) -> Result<Book, BookError> {
        Self::load_with(path, false)
    }

    /// [`Book::load`]; with `chess960` castling fields may be X-FEN or Shredder-FEN.
    pub fn load_with(path: &Path, chess960: bool) -> Result<Book, BookError> {
        let read = |source| BookError::Read {
            path: path.to_owned(),
            source,
        };
        let f = std::fs::File::open(path).map_err(read)?;
        if f.metadata().map_err(read)?.is_dir() {
            return Err(read(std::io::Error::other("is a directory")));
        }
        let mut bytes = Vec::new();
        f.take(MAX_BOOK_BYTES + 1)
            .read_to_end(&mut bytes)
            .map_err(read)?;
        if bytes.len() as u64 > MAX_BOOK_BYTES {
            return Err(BookError::TooLarge {
                path: path.to_owned(),
            });
        }
        Self::parse_with(&bytes, path, chess960)
    }

    /// One line for stderr about the skipped positions, if any.
    pub fn skipped_note(&self, path: &Path) -> Option<String> {
        let (line, end) = self.skipped.first()?;
        Some(format!(
            "--book {}: skipped {} position{} where the game is already over (first: line {line}, {})",
            path.display(),
            self.skipped.len(),
            if self.skipped.len() == 1 { "" } else { "s" },
            end.describe()
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finished_positions_are_skipped_broken_lines_refuse_the_book() {
        let p = Path::new("b.epd");
        let text = "\u{feff}# comment\n\
            rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - bm e5;\r\n\
            \n\
            rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3\n\
            7k/5Q2/6K1/8/8/8/8/8 b - - 0 1\n\
            8/8/4k3/8/8/3BK3/8/8 w - - 0 1\n\
            4k3/8/8/8/8/8/4P3/4K3 w - - 100 80\n";
        let b = Book::parse(text.as_bytes(), p).unwrap();
        assert_eq!(b.openings.len(), 1);
        let ends: Vec<_> = b.skipped.iter().map(|&(l, e)| (l, e)).collect();
        assert_eq!(
            ends,
            [
                (4, BoardEnd::Checkmate),
                (5, BoardEnd::Stalemate),
                (6, BoardEnd::InsufficientMaterial),
                (7, BoardEnd::FiftyMoves)
            ]
        );
        let note = b.skipped_note(p).unwrap();
        assert!(note.contains("skipped 4 positions") && note.contains("line 4, checkmate"));
        for (bad, says) in [
            ("8/8/8/8/8/8/8/Kk6 w - - 0 1", "side by side"),
            ("4k3/8/8/8/8/8/PPPPPPPP/NNNK4 w - - 0 1", "promoted"),
            ("rnbqkbnr/pppppppp w KQkq -", "bad FEN"),
            ("hello", "4 fields"),
        ] {
            let e = Book::parse(format!("{STARTPOS}\n{bad}\n").as_bytes(), p)
                .unwrap_err()
                .to_string();
            assert!(e.starts_with("--book b.epd:2: ") && e.contains(says), "{e}");
        }
        let e = Book::parse(b"7k/5Q2/6K1/8/8/8/8/8 b - - 0 1\n", p).unwrap_err();
        assert!(
            e.to_string().contains("no playable position (1 skipped"),
            "{e}"
        );
        let e = Book::parse(b"# only\n\n", p).unwrap_err();
        assert!(
            e.to_string().contains("no playable position (0 skipped"),
            "{e}"
        );
        let e = Book::parse(b"\xff\xfe\n", p).unwrap_err();
        assert!(e.to_string().contains(":1: not UTF-8"), "{e}");
    }

    use crate::rules::STARTPOS;
}
