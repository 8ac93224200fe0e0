//! The arbiter's view of the rules: UCI move notation (standard castling, or king-takes-rook
//! for Chess960), SAN for the PGN, and every way a game ends on the board.
//!
//! Deliberately separate from the engine's own board adapter (`chess::board`): an arbiter
//! that checked moves with the engine's code would share its bugs instead of catching them.

use cozy_chess::{Board, Color, File, GameStatus, Move, Piece, Square};

/// Standard start position.
pub const STARTPOS: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";

/// A position or move the arbiter refuses.
#[derive(Debug, Clone, thiserror::Error)]
pub enum RulesError {
    #[error("bad FEN/EPD `{0}`: needs at least 4 fields")]
    FieldCount(String),
    #[error("bad FEN `{fen}`: {reason}")]
    BadFen {
        fen: String,
        reason: cozy_chess::FenParseError,
    },
    #[error("impossible position `{fen}`: {reason}")]
    Impossible { fen: String, reason: &'static str },
    #[error("`{0}` is not a UCI move")]
    NotUci(String),
    #[error("illegal move `{0}`")]
    Illegal(String),
}

/// Parse a FEN or the first four fields of an EPD line (clocks default to 0 1).
///
/// Besides the checks of the FEN parser (one king each, no pawn on a back rank, the side not
/// to move not in check, at most two checkers, consistent castling and en-passant fields),
/// positions no game can reach are refused: kings side by side, and more promoted pieces than
/// missing pawns.
pub fn parse_position(text: &str) -> Result<Board, RulesError> {
    parse_position_with(text, false)
}

/// [`parse_position`]; with `chess960` the castling field may give the rooks' files
/// (Shredder-FEN `HAha`, X-FEN letters) or `KQkq` for the outermost rook on each side of the
/// king (X-FEN).
pub fn parse_position_with(text: &str, chess960: bool) -> Result<Board, RulesError> {
    let board = parse_fen_fields(text, chess960)?;
    if let Some(reason) = impossible(&board) {
        return Err(RulesError::Impossible {
            fen: board.to_string(),
            reason,
        });
    }
    Ok(board)
}

/// Why no legal game reaches `board`, for the cases the FEN parser lets through.
fn impossible(board: &Board) -> Option<&'static str> {
    let (wk, bk) = (board.king(Color::White), board.king(Color::Black));
    let (df, dr) = (
        (wk.file() as i32 - bk.file() as i32).abs(),
        (wk.rank() as i32 - bk.rank() as i32).abs(),
    );
    if df <= 1 && dr <= 1 {
        return Some("the kings stand side by side");
    }
    for c in Color::ALL {
        let n = |p: Piece| board.colored_pieces(c, p).len() as i32;
        let promoted = (n(Piece::Knight) - 2).max(0)
            + (n(Piece::Bishop) - 2).max(0)
            + (n(Piece::Rook) - 2).max(0)
            + (n(Piece::Queen) - 1).max(0);
        if promoted > 8 - n(Piece::Pawn) {
            return Some("more promoted pieces than missing pawns");
        }
    }
    None
}

/// The castling field of `fields` (placement first) in Shredder-FEN letters.
fn shredder_castling(placement: &str, field: &str) -> Result<String, &'static str> {
    if field == "-" {
        return Ok("-".into());
    }
    let ranks: Vec<&str> = placement.split('/').collect();
    let back_rank = |text: &str| -> Vec<Option<char>> {
        let mut v = Vec::with_capacity(8);
        for c in text.chars() {
            match c.to_digit(10) {
                Some(n) => v.extend(std::iter::repeat_n(None, n as usize)),
                None => v.push(Some(c)),
            }
        }
        v
    };
    let mut out = String::new();
    for c in field.chars() {
        let white = c.is_ascii_uppercase();
        let row = back_rank(if white {
            ranks.last().copied().unwrap_or("")
        } else {
            ranks.first().copied().unwrap_or("")
        });
        let (king, rook) = if white { ('K', 'R') } else { ('k', 'r') };
        let file = match c.to_ascii_lowercase() {
            f @ 'a'..='h' => f as u8 - b'a',
            side @ ('k' | 'q') => {
                let k = row
                    .iter()
                    .position(|p| *p == Some(king))
                    .ok_or("a castling right for a king off its back rank")?;
                let rooks = (0..row.len()).filter(|&f| row[f] == Some(rook));
                let f = if side == 'k' {
                    rooks.filter(|&f| f > k).max()
                } else {
                    rooks.filter(|&f| f < k).min()
                };
                f.ok_or("a castling right without a rook on that side of the king")? as u8
            }
            _ => return Err("a castling field that is not KQkq or file letters"),
        };
        let letter = (b'a' + file) as char;
        out.push(if white {
            letter.to_ascii_uppercase()
        } else {
            letter
        });
    }
    Ok(out)
}

/// FEN of `board`: Shredder-FEN castling (rook files) for Chess960, standard otherwise.
pub fn fen(board: &Board, chess960: bool) -> String {
    if chess960 {
        format!("{board:#}")
    } else {
        board.to_string()
    }
}

fn parse_fen_fields(text: &str, chess960: bool) -> Result<Board, RulesError> {
    let fields: Vec<&str> = text.split_whitespace().collect();
    if fields.len() < 4 {
        return Err(RulesError::FieldCount(text.to_owned()));
    }
    let fen = if fields.len() >= 6
        && fields[4].parse::<u32>().is_ok()
        && fields[5].parse::<u32>().is_ok()
    {
        fields[..6].join(" ")
    } else {
        format!("{} 0 1", fields[..4].join(" "))
    };
    if chess960 {
        let castling =
            shredder_castling(fields[0], fields[2]).map_err(|reason| RulesError::Impossible {
                fen: fen.clone(),
                reason,
            })?;
        let mut f: Vec<&str> = fen.split_whitespace().collect();
        f[2] = &castling;
        let shredder = f.join(" ");
        return Board::from_fen(&shredder, true)
            .map_err(|reason| RulesError::BadFen { fen, reason });
    }
    Board::from_fen(&fen, false).map_err(|reason| RulesError::BadFen { fen, reason })
}

fn is_castle(board: &Board, mv: Move) -> bool {
    board.piece_on(mv.from) == Some(Piece::King)
        && board.color_on(mv.to) == Some(board.side_to_move())
}

/// A legal move in UCI notation (castling as the king's two-square move).
pub fn to_uci(board: &Board, mv: Move) -> String {
    to_uci_with(board, mv, false)
}

/// A legal move in UCI notation; with `chess960` castling is king-takes-rook (`UCI_Chess960`).
pub fn to_uci_with(board: &Board, mv: Move, chess960: bool) -> String {
    if is_castle(board, mv) && !chess960 {
        let file = if mv.to.file() > mv.from.file() {
            File::G
        } else {
            File::C
        };
        return format!("{}{}", mv.from, Square::new(file, mv.from.rank()));
    }
    mv.to_string()
}

/// Parse a UCI move and check it is legal here.
pub fn from_uci(board: &Board, text: &str) -> Result<Move, RulesError> {
    from_uci_with(board, text, false)
}

/// Parse a UCI move and check it is legal here; with `chess960` castling must be written
/// king-takes-rook (a king's two-square move is then just an illegal king move).
pub fn from_uci_with(board: &Board, text: &str, chess960: bool) -> Result<Move, RulesError> {
    let mut mv: Move = text
        .parse()
        .map_err(|_| RulesError::NotUci(text.to_owned()))?;
    if !chess960 && board.piece_on(mv.from) == Some(Piece::King) && mv.from.file() == File::E {
        let rook_file = match mv.to.file() {
            File::G if mv.from.rank() == mv.to.rank() => Some(File::H),
            File::C if mv.from.rank() == mv.to.rank() => Some(File::A),
            _ => None,
        };
        if let Some(f) = rook_file {
            let rook = Square::new(f, mv.from.rank());
            if board
                .colored_pieces(board.side_to_move(), Piece::Rook)
                .has(rook)
            {
                let castle = Move {
                    from: mv.from,
                    to: rook,
                    promotion: None,
                };
                if board.is_legal(castle) {
                    mv = castle;
                }
            }
        }
    }
    if board.is_legal(mv) {
        Ok(mv)
    } else {
        Err(RulesError::Illegal(text.to_owned()))
    }
}

/// All legal moves.
pub fn legal_moves(board: &Board) -> Vec<Move> {
    let mut v = Vec::new();
    board.generate_moves(|m| {
        v.extend(m);
        false
    });
    v
}

fn piece_letter(p: Piece) -> &'static str {
    match p {
        Piece::Pawn => "",
        Piece::Knight => "N",
        Piece::Bishop => "B",
        Piece::Rook => "R",
        Piece::Queen => "Q",
        Piece::King => "K",
    }
}

/// Standard algebraic notation of a legal move, with `+`/`#`.
pub fn san(board: &Board, mv: Move) -> String {
    let piece = board.piece_on(mv.from).expect("a legal move moves a piece");
    let mut s = String::new();
    if is_castle(board, mv) {
        s.push_str(if mv.to.file() > mv.from.file() {
            "O-O"
        } else {
            "O-O-O"
        });
    } else {
        let capture = board.color_on(mv.to).is_some()
            || (piece == Piece::Pawn && mv.from.file() != mv.to.file());
        if piece == Piece::Pawn {
            if capture {
                s.push(char::from(b'a' + mv.from.file() as u8));
            }
        } else {
            s.push_str(piece_letter(piece));
            let rivals: Vec<Move> = legal_moves(board)
                .into_iter()
                .filter(|m| {
                    m.to == mv.to
                        && m.from != mv.from
                        && board.piece_on(m.from) == Some(piece)
                        && !is_castle(board, *m)
                })
                .collect();
            if !rivals.is_empty() {
                let same_file = rivals.iter().any(|m| m.from.file() == mv.from.file());
                let same_rank = rivals.iter().any(|m| m.from.rank() == mv.from.rank());
                if !same_file {
                    s.push(char::from(b'a' + mv.from.file() as u8));
                } else if !same_rank {
                    s.push(char::from(b'1' + mv.from.rank() as u8));
                } else {
                    s.push_str(&mv.from.to_string());
                }
            }
        }
        if capture {
            s.push('x');
        }
        s.push_str(&mv.to.to_string());
        if let Some(p) = mv.promotion {
            s.push('=');
            s.push_str(piece_letter(p));
        }
    }
    let mut after = board.clone();
    after.play_unchecked(mv);
    if !after.checkers().is_empty() {
        s.push(if after.status() == GameStatus::Won {
            '#'
        } else {
            '+'
        });
    }
    s
}

/// Neither side can mate by any sequence of legal moves (FIDE 5.2.2, the usual cases):
/// bare kings, a single minor piece, or only bishops all on squares of one colour.
pub fn insufficient_material(board: &Board) -> bool {
    if !(board.pieces(Piece::Pawn) | board.pieces(Piece::Rook) | board.pieces(Piece::Queen))
        .is_empty()
    {
        return false;
    }
    let knights = board.pieces(Piece::Knight).len();
    let bishops = board.pieces(Piece::Bishop);
    if knights + bishops.len() <= 1 {
        return true;
    }
    if knights == 0 {
        let dark = bishops
            .iter()
            .filter(|sq| (sq.file() as u8 + sq.rank() as u8).is_multiple_of(2))
            .count();
        return dark == 0 || dark == bishops.len() as usize;
    }
    false
}

/// How a game ended on the board.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BoardEnd {
    Checkmate,
    Stalemate,
    FiftyMoves,
    Threefold,
    InsufficientMaterial,
}

impl BoardEnd {
    pub fn describe(self) -> &'static str {
        match self {
            BoardEnd::Checkmate => "checkmate",
            BoardEnd::Stalemate => "stalemate",
            BoardEnd::FiftyMoves => "fifty-move rule",
            BoardEnd::Threefold => "threefold repetition",
            BoardEnd::InsufficientMaterial => "insufficient material",
        }
    }
}

/// A game in progress with its repetition history.
#[derive(Debug, Clone)]
pub struct Position {
    /// Chess960: FENs in Shredder-FEN, castling king-takes-rook in UCI.
    pub chess960: bool,
    pub start_fen: String,
    pub board: Board,
    pub moves_uci: Vec<String>,
    pub moves_san: Vec<String>,
    /// Hashes since the last irreversible move (for threefold repetition).
    history: Vec<u64>,
}

impl Position {
    pub fn new(start: &Board) -> Self {
        Self::new_with(start, false)
    }

    /// A game from `start`; `chess960` for Fischer random rules of notation.
    pub fn new_with(start: &Board, chess960: bool) -> Self {
        Self {
            chess960,
            start_fen: fen(start, chess960),
            board: start.clone(),
            moves_uci: vec![],
            moves_san: vec![],
            history: vec![start.hash()],
        }
    }

    pub fn play(&mut self, mv: Move) {
        self.moves_san.push(san(&self.board, mv));
        self.moves_uci
            .push(to_uci_with(&self.board, mv, self.chess960));
        self.board.play(mv);
        if self.board.halfmove_clock() == 0 {
            self.history.clear();
        }
        self.history.push(self.board.hash());
    }

    /// The board-decided end, if any (checked in FIDE order of precedence).
    pub fn end(&self) -> Option<BoardEnd> {
        match self.board.status() {
            GameStatus::Won => return Some(BoardEnd::Checkmate),
            GameStatus::Drawn if self.board.halfmove_clock() < 100 => {
                return Some(BoardEnd::Stalemate);
            }
            GameStatus::Drawn => return Some(BoardEnd::FiftyMoves),
            GameStatus::Ongoing => {}
        }
        let h = self.board.hash();
        if self.history.iter().filter(|&&x| x == h).count() >= 3 {
            return Some(BoardEnd::Threefold);
        }
        if insufficient_material(&self.board) {
            return Some(BoardEnd::InsufficientMaterial);
        }
        None
    }

    /// `position fen … moves …` for UCI.
    pub fn uci_command(&self) -> String {
        let mut s = format!("position fen {}", self.start_fen);
        if !self.moves_uci.is_empty() {
            s.push_str(" moves ");
            s.push_str(&self.moves_uci.join(" "));
        }
        s
    }

    pub fn side_to_move(&self) -> Color {
        self.board.side_to_move()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn play_san(pos: &mut Position, uci: &str) -> String {
        let mv = from_uci(&pos.board, uci).unwrap();
        pos.play(mv);
        pos.moves_san.last().unwrap().clone()
    }

    #[test]
    fn san_and_uci_castling() {
        let b = parse_position("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1").unwrap();
        let mut p = Position::new(&b);
        assert_eq!(play_san(&mut p, "e1g1"), "O-O");
        assert_eq!(p.moves_uci, ["e1g1"]);
        assert_eq!(play_san(&mut p, "e8c8"), "O-O-O");
        assert_eq!(p.moves_uci[1], "e8c8");
    }

    #[test]
    fn san_disambiguation_promotion_and_mate() {
        let b = parse_position("7k/P7/8/8/8/8/1N3N2/K7 w - - 0 1").unwrap();
        let mut p = Position::new(&b);
        assert_eq!(san(&p.board, from_uci(&p.board, "b2d3").unwrap()), "Nbd3");
        assert_eq!(play_san(&mut p, "a7a8q"), "a8=Q+");
        let mut p = Position::new(&parse_position(STARTPOS).unwrap());
        for (m, want) in [
            ("f2f3", "f3"),
            ("e7e5", "e5"),
            ("g2g4", "g4"),
            ("d8h4", "Qh4#"),
        ] {
            assert_eq!(play_san(&mut p, m), want);
        }
        assert_eq!(p.end(), Some(BoardEnd::Checkmate));
        let b = parse_position("4k3/8/8/8/8/2N5/8/R3K1NR w - - 0 1").unwrap();
        assert_eq!(san(&b, from_uci(&b, "g1e2").unwrap()), "Nge2");
        let b = parse_position("4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 1").unwrap();
        assert_eq!(san(&b, from_uci(&b, "e5d6").unwrap()), "exd6");
    }

    #[test]
    fn draws() {
        assert!(insufficient_material(
            &parse_position("8/8/4k3/8/8/3BK3/8/8 w - - 0 1").unwrap()
        ));
        assert!(insufficient_material(
            &parse_position("8/8/2b1k3/8/8/3BK3/8/8 w - - 0 1").unwrap()
        )); // c6 and d3: both light
        assert!(!insufficient_material(
            &parse_position("8/8/1b2k3/8/8/3BK3/8/8 w - - 0 1").unwrap()
        ));
        assert!(!insufficient_material(
            &parse_position("8/8/4k3/8/8/2NNK3/8/8 w - - 0 1").unwrap()
        ));
        let mut p = Position::new(&parse_position(STARTPOS).unwrap());
        for m in ["g1f3", "g8f6", "f3g1", "f6g8", "g1f3", "g8f6", "f3g1"] {
            p.play(from_uci(&p.board, m).unwrap());
            assert_eq!(p.end(), None);
        }
        p.play(from_uci(&p.board, "f6g8").unwrap());
        assert_eq!(p.end(), Some(BoardEnd::Threefold));
        let stale = Position::new(&parse_position("7k/5Q2/6K1/8/8/8/8/8 b - - 0 1").unwrap());
        assert_eq!(stale.end(), Some(BoardEnd::Stalemate));
        assert!(matches!(
            from_uci(&p.board, "e2e5"),
            Err(RulesError::Illegal(_))
        ));
        assert!(matches!(
            from_uci(&p.board, "zz"),
            Err(RulesError::NotUci(_))
        ));
    }
}
