//! Board adapter: the only module that knows how `cozy-chess` spells things.
//!
//! Search and evaluation work on [`Board`] (a re-export) plus the helpers here, so
//! swapping the move generator later touches this file only. Everything that parses
//! outside input (FEN, EPD, UCI moves, SAN) returns a [`BoardError`] with a readable
//! message: the UCI loop turns those into `info string error: ...` and never panics.

pub use cozy_chess::{BitBoard, Board, Color, File, Move, Piece, Rank, Square};

/// Why outside input (FEN, EPD, a UCI or SAN move) was refused.
#[derive(Debug, Clone, thiserror::Error)]
pub enum BoardError {
    #[error("FEN needs 4 to 6 fields, got {fields}: '{fen}'")]
    FenFieldCount { fields: usize, fen: String },
    #[error("bad FEN '{fen}': {reason}")]
    BadFen {
        fen: String,
        reason: cozy_chess::FenParseError,
    },
    /// Parses, but no game can reach it (cozy-chess would say only "the board is invalid",
    /// or accept it: it misses adjacent kings).
    #[error("impossible position '{fen}': {reason}")]
    Impossible { fen: String, reason: String },
    #[error("EPD line has fewer than 4 fields: '{0}'")]
    EpdFieldCount(String),
    #[error("'{0}' is not a UCI move")]
    NotUci(String),
    #[error("illegal move '{text}' in {fen}")]
    IllegalMove { text: String, fen: String },
    #[error("empty SAN move")]
    EmptySan,
    #[error("'{text}' is not a legal SAN move in {fen}")]
    NotSan { text: String, fen: String },
}

/// The standard start position.
pub(crate) const STARTPOS_FEN: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";

/// A move that can never be legal (a1a1); used as "no move" in fixed-size tables.
pub(crate) const NULL_MOVE: Move = Move {
    from: Square::A1,
    to: Square::A1,
    promotion: None,
};

/// Most legal moves any chess position has is 218; 256 leaves room and keeps lists on the stack.
pub(crate) const MAX_MOVES: usize = 256;

/// Parse a FEN (6 fields) or an EPD position (the first 4 fields; clocks default to `0 1`).
/// Castling rights are standard `KQkq` (rooks on the a- and h-files).
pub fn parse_fen(fen: &str) -> Result<Board, BoardError> {
    parse_fen_with(fen, false)
}

/// [`parse_fen`] for Chess960 (Fischer random) too: the castling field may name the
/// rooks' files (Shredder-FEN `HAha`, X-FEN letters) or use `KQkq` for the outermost rook
/// on each side of the king (X-FEN). A standard position reads the same either way.
#[cfg(test)]
pub(crate) fn parse_fen_960(fen: &str) -> Result<Board, BoardError> {
    parse_fen_with(fen, true)
}

/// The castling field in Shredder-FEN (rook files, upper case for White), from X-FEN or
/// Shredder-FEN, using the back ranks of `placement`.
fn shredder_castling(placement: &str, field: &str) -> Result<String, String> {
    if field == "-" {
        return Ok(field.to_owned());
    }
    let ranks: Vec<&str> = placement.split('/').collect();
    // Back-rank pieces, [White's rank 1, Black's rank 8], by file.
    let row = |text: &str| {
        let mut out = [None; 8];
        let mut f = 0usize;
        for c in text.chars() {
            match c.to_digit(10) {
                Some(d) => f += d as usize,
                None => {
                    if f < 8 {
                        out[f] = Some(c);
                    }
                    f += 1;
                }
            }
        }
        out
    };
    let back = [
        row(ranks.last().copied().unwrap_or("")),
        row(ranks.first().copied().unwrap_or("")),
    ];
    let mut out = String::new();
    for c in field.chars() {
        let white = c.is_ascii_uppercase();
        let side = &back[usize::from(!white)];
        let (king, rook) = if white { ('K', 'R') } else { ('k', 'r') };
        let name = if white { "White" } else { "Black" };
        let file = match c.to_ascii_lowercase() {
            f @ 'a'..='h' => f,
            k @ ('k' | 'q') => {
                let kf = side.iter().position(|p| *p == Some(king)).ok_or_else(|| {
                    format!("castling right {c} but {name}'s king is not on its back rank")
                })?;
                let rooks = (0..8).filter(|&f| side[f] == Some(rook));
                let pick = if k == 'k' {
                    rooks.filter(|&f| f > kf).max()
                } else {
                    rooks.filter(|&f| f < kf).min()
                };
                let f = pick.ok_or_else(|| {
                    format!("castling right {c} but no {name} rook on that side of its king")
                })?;
                (b'a' + f as u8) as char
            }
            _ => return Err(format!("'{c}' is not a castling right")),
        };
        out.push(if white {
            file.to_ascii_uppercase()
        } else {
            file
        });
    }
    Ok(out)
}

/// `parse_fen_960` when `chess960`, else [`parse_fen`].
pub fn parse_fen_with(fen: &str, chess960: bool) -> Result<Board, BoardError> {
    let fields: Vec<&str> = fen.split_whitespace().collect();
    let text = match fields.len() {
        4 => format!("{} 0 1", fields.join(" ")),
        5 => format!("{} 1", fields.join(" ")),
        6 => fields.join(" "),
        n => {
            return Err(BoardError::FenFieldCount {
                fields: n,
                fen: fen.to_owned(),
            });
        }
    };
    if let Some(reason) = impossible(fields[0], fields[1]) {
        return Err(BoardError::Impossible { fen: text, reason });
    }
    if chess960 && fields.len() >= 3 {
        let castling =
            shredder_castling(fields[0], fields[2]).map_err(|reason| BoardError::Impossible {
                fen: text.clone(),
                reason,
            })?;
        let mut f: Vec<&str> = text.split_whitespace().collect();
        f[2] = &castling;
        let shredder = f.join(" ");
        return Board::from_fen(&shredder, true)
            .map_err(|reason| BoardError::BadFen { fen: text, reason });
    }
    Board::from_fen(&text, false).map_err(|reason| BoardError::BadFen { fen: text, reason })
}

/// Why a placement (FEN field 1) with `stm` to move (field 2) cannot occur in a game, if
/// it cannot: a side without exactly one king, a pawn on the first or last rank, more
/// than 16 pieces or 8 pawns a side, adjacent kings, the side not to move in check, or
/// the side to move in check from more than two pieces. cozy-chess rejects most of these
/// with a bare "the board is invalid" and accepts adjacent kings, which the search would
/// then "capture". Malformed placements return `None`: cozy-chess reports those.
fn impossible(placement: &str, stm: &str) -> Option<String> {
    use cozy_chess::{
        get_bishop_moves, get_king_moves, get_knight_moves, get_pawn_attacks, get_rook_moves,
    };
    let stm = match stm {
        "w" => Color::White,
        "b" => Color::Black,
        _ => return None,
    };
    // pieces[color][piece] as bitboards, from the placement text.
    let mut bb = [[BitBoard::EMPTY; 6]; 2];
    let ranks: Vec<&str> = placement.split('/').collect();
    if ranks.len() != 8 {
        return None;
    }
    for (i, rank) in ranks.iter().enumerate() {
        let r = Rank::index(7 - i);
        let mut file = 0usize;
        for c in rank.chars() {
            if let Some(d) = c.to_digit(10) {
                file += d as usize;
                continue;
            }
            let piece = match c.to_ascii_lowercase() {
                'p' => Piece::Pawn,
                'n' => Piece::Knight,
                'b' => Piece::Bishop,
                'r' => Piece::Rook,
                'q' => Piece::Queen,
                'k' => Piece::King,
                _ => return None,
            };
            if file >= 8 {
                return None;
            }
            let color = if c.is_ascii_uppercase() { 0 } else { 1 };
            bb[color][piece as usize] |= Square::new(File::index(file), r).bitboard();
            file += 1;
        }
        if file != 8 {
            return None;
        }
    }
    let name = |c: usize| ["White", "Black"][c];
    let back_ranks = Rank::First.bitboard() | Rank::Eighth.bitboard();
    for (c, side) in bb.iter().enumerate() {
        let kings = side[Piece::King as usize].len();
        if kings != 1 {
            return Some(format!("{} has {kings} kings", name(c)));
        }
        if let Some(sq) = (side[Piece::Pawn as usize] & back_ranks).next_square() {
            return Some(format!("{} pawn on {sq}", name(c)));
        }
        let pawns = side[Piece::Pawn as usize].len();
        if pawns > 8 {
            return Some(format!("{} has {pawns} pawns", name(c)));
        }
        let all: usize = side.iter().map(|b| b.len() as usize).sum();
        if all > 16 {
            return Some(format!("{} has {all} pieces", name(c)));
        }
    }
    let king = |c: usize| {
        bb[c][Piece::King as usize]
            .next_square()
            .unwrap_or(Square::A1)
    };
    if get_king_moves(king(0)).has(king(1)) {
        return Some(format!(
            "the kings are adjacent ({} and {})",
            king(0),
            king(1)
        ));
    }
    let occ = bb.iter().flatten().fold(BitBoard::EMPTY, |acc, &b| acc | b);
    // Pieces of colour `by` giving check to the king of colour `1 - by`.
    let checkers = |by: usize| {
        let k = king(1 - by);
        let p = &bb[by];
        let color = if by == 0 { Color::Black } else { Color::White };
        (get_pawn_attacks(k, color) & p[Piece::Pawn as usize])
            | (get_knight_moves(k) & p[Piece::Knight as usize])
            | (get_bishop_moves(k, occ) & (p[Piece::Bishop as usize] | p[Piece::Queen as usize]))
            | (get_rook_moves(k, occ) & (p[Piece::Rook as usize] | p[Piece::Queen as usize]))
    };
    let (us, them) = if stm == Color::White { (0, 1) } else { (1, 0) };
    if !checkers(us).is_empty() {
        return Some(format!(
            "{} is in check but it is {}'s move",
            name(them),
            name(us)
        ));
    }
    let n = checkers(them).len();
    if n > 2 {
        return Some(format!("{} is in check from {n} pieces", name(us)));
    }
    None
}

/// FEN of a board (standard castling letters).
pub fn to_fen(board: &Board) -> String {
    format!("{board}")
}

/// Is `mv` a castling move? cozy-chess encodes castling as "king takes own rook".
#[inline]
pub(crate) fn is_castle(board: &Board, mv: Move) -> bool {
    board.colors(board.side_to_move()).has(mv.to)
}

/// Is `mv` a capture (including en passant)? Castling is not.
#[inline]
pub fn is_capture(board: &Board, mv: Move) -> bool {
    board.colors(!board.side_to_move()).has(mv.to) || is_en_passant(board, mv)
}

/// Is `mv` an en-passant capture?
#[inline]
pub(crate) fn is_en_passant(board: &Board, mv: Move) -> bool {
    mv.from.file() != mv.to.file()
        && board.piece_on(mv.from) == Some(Piece::Pawn)
        && board.piece_on(mv.to).is_none()
}

/// Captures and promotions: the moves quiescence search and move ordering treat as "noisy".
#[inline]
pub fn is_tactical(board: &Board, mv: Move) -> bool {
    mv.promotion.is_some() || is_capture(board, mv)
}

/// The piece a move captures (a pawn for en passant), if any.
#[inline]
pub(crate) fn captured_piece(board: &Board, mv: Move) -> Option<Piece> {
    if board.colors(!board.side_to_move()).has(mv.to) {
        board.piece_on(mv.to)
    } else if is_en_passant(board, mv) {
        Some(Piece::Pawn)
    } else {
        None
    }
}

/// Does `mv` give check? Computed from attack sets without making the move (direct and
/// discovered checks); rare special moves (castling, en passant) are made on a copy.
pub(crate) fn gives_check(board: &Board, mv: Move) -> bool {
    use cozy_chess::{
        get_bishop_moves, get_knight_moves, get_line_rays, get_pawn_attacks, get_rook_moves,
    };
    if is_castle(board, mv) || is_en_passant(board, mv) {
        let mut b = board.clone();
        b.play_unchecked(mv);
        return !b.checkers().is_empty();
    }
    let stm = board.side_to_move();
    let king = board.king(!stm);
    let occ = (board.occupied() ^ mv.from.bitboard()) | mv.to.bitboard();
    let piece = mv
        .promotion
        .unwrap_or_else(|| board.piece_on(mv.from).unwrap_or(Piece::Pawn));
    let direct = match piece {
        Piece::Pawn => get_pawn_attacks(mv.to, stm).has(king),
        Piece::Knight => get_knight_moves(mv.to).has(king),
        Piece::Bishop => get_bishop_moves(mv.to, occ).has(king),
        Piece::Rook => get_rook_moves(mv.to, occ).has(king),
        Piece::Queen => (get_bishop_moves(mv.to, occ) | get_rook_moves(mv.to, occ)).has(king),
        Piece::King => false,
    };
    if direct {
        return true;
    }
    // A discovered check: only a piece that leaves the king's line can open it, and then only
    // a slider of ours on that line, of the line's kind (our move: the king is not in check
    // already). Most moves leave no line of the king, so most calls end on one table lookup.
    let ray = get_line_rays(king, mv.from);
    if ray.is_empty() {
        return false;
    }
    let ours = board.colors(stm) & !mv.from.bitboard() & !mv.to.bitboard() & ray;
    let queens = board.pieces(Piece::Queen);
    if king.file() == mv.from.file() || king.rank() == mv.from.rank() {
        let line = (board.pieces(Piece::Rook) | queens) & ours;
        !line.is_empty() && !(get_rook_moves(king, occ) & line).is_empty()
    } else {
        let diag = (board.pieces(Piece::Bishop) | queens) & ours;
        !diag.is_empty() && !(get_bishop_moves(king, occ) & diag).is_empty()
    }
}

/// Does the side to move have any piece other than king and pawns? Null move is unsound without.
#[inline]
pub(crate) fn has_non_pawn_material(board: &Board, color: Color) -> bool {
    let pk = board.pieces(Piece::Pawn) | board.pieces(Piece::King);
    !(board.colors(color) & !pk).is_empty()
}

/// Squares of the colour of a1 (a1, c1, b2, ...).
const DARK_SQUARES: u64 = 0xAA55_AA55_AA55_AA55;

/// SplitMix64's finaliser: spreads a 64-bit value over all bits (the one copy in the
/// workspace: keys here, seeded streams and hold-out splits in the laboratory).
#[inline]
pub fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// SplitMix64's increment (the golden ratio), added before [`mix64`] in its stream.
pub const GOLDEN_GAMMA: u64 = 0x9E37_79B9_7F4A_7C15;

/// Draw by insufficient material (FIDE 5.2.2, the material cases): no sequence of legal
/// moves can mate. K v K, K+minor v K, and any number of bishops of either side all on
/// squares of one colour. Cross-tested against `arbiter::rules::insufficient_material`.
pub fn insufficient_material(board: &Board) -> bool {
    let heavy = board.pieces(Piece::Pawn) | board.pieces(Piece::Rook) | board.pieces(Piece::Queen);
    if !heavy.is_empty() {
        return false;
    }
    let knights = board.pieces(Piece::Knight);
    let bishops = board.pieces(Piece::Bishop).0;
    if knights.len() + bishops.count_ones() <= 1 {
        return true;
    }
    knights.is_empty() && (bishops & DARK_SQUARES == 0 || bishops & !DARK_SQUARES == 0)
}

/// The search's dead-material draw test: the common cases of [`insufficient_material`]
/// only (K v K, K+minor v K, K+B v K+B with same-coloured bishops). It misses the rare
/// positions with two or more same-coloured bishops on one side (underpromotions), so it
/// never calls a draw that is not one. Kept exactly as it is because the search uses it:
/// changing it would change the search (and the bench signature).
pub fn is_drawish_material(board: &Board) -> bool {
    let heavy = board.pieces(Piece::Pawn) | board.pieces(Piece::Rook) | board.pieces(Piece::Queen);
    if !heavy.is_empty() {
        return false;
    }
    let minors = board.pieces(Piece::Knight) | board.pieces(Piece::Bishop);
    match minors.len() {
        0 | 1 => true,
        2 => {
            let bishops = board.pieces(Piece::Bishop);
            if bishops.len() == 2 && board.colors(Color::White).len() == 2 {
                let on_dark = (bishops.0 & DARK_SQUARES).count_ones();
                on_dark != 1
            } else {
                false
            }
        }
        _ => false,
    }
}

/// All legal moves (allocates; for parsing and tools, not for search).
pub fn legal_moves(board: &Board) -> Vec<Move> {
    let mut out = Vec::with_capacity(64);
    board.generate_moves(|pm| {
        out.extend(pm);
        false
    });
    out
}

/// UCI text of a move, with castling written the standard way (e1g1, not e1h1).
pub fn move_to_uci(board: &Board, mv: Move) -> String {
    move_to_uci_with(board, mv, false)
}

/// UCI text of a move; with `chess960` castling is written king-takes-rook (e1h1, the
/// `UCI_Chess960` convention), else the standard way.
pub(crate) fn move_to_uci_with(board: &Board, mv: Move, chess960: bool) -> String {
    if mv == NULL_MOVE {
        return "0000".to_string();
    }
    if is_castle(board, mv) && !chess960 {
        let file = if mv.to.file() > mv.from.file() {
            File::G
        } else {
            File::C
        };
        let to = Square::new(file, mv.from.rank());
        return format!("{}{}", mv.from, to);
    }
    format!("{mv}")
}

/// Parse a UCI move and check it is legal here. Accepts both e1g1 and e1h1 castling.
pub fn uci_to_move(board: &Board, text: &str) -> Result<Move, BoardError> {
    let parsed: Move = text
        .parse()
        .map_err(|_| BoardError::NotUci(text.to_owned()))?;
    let mut mv = parsed;
    if board.piece_on(mv.from) == Some(Piece::King)
        && board.color_on(mv.from) == Some(board.side_to_move())
        && mv.from.file() == File::E
        && (mv.to.file() == File::G || mv.to.file() == File::C)
        && mv.from.rank() == mv.to.rank()
    {
        let rook_file = if mv.to.file() == File::G {
            File::H
        } else {
            File::A
        };
        let rook_sq = Square::new(rook_file, mv.from.rank());
        let castle = Move {
            from: mv.from,
            to: rook_sq,
            promotion: None,
        };
        if board.is_legal(castle) {
            mv = castle;
        }
    }
    if board.is_legal(mv) {
        Ok(mv)
    } else {
        Err(BoardError::IllegalMove {
            text: text.to_owned(),
            fen: to_fen(board),
        })
    }
}

fn piece_letter(p: Piece) -> char {
    match p {
        Piece::Pawn => 'P',
        Piece::Knight => 'N',
        Piece::Bishop => 'B',
        Piece::Rook => 'R',
        Piece::Queen => 'Q',
        Piece::King => 'K',
    }
}

/// Standard algebraic notation of a legal move, with `+`/`#` suffix.
pub fn to_san(board: &Board, mv: Move) -> String {
    let mut s = san_core(board, mv);
    let mut after = board.clone();
    after.play_unchecked(mv);
    if !after.checkers().is_empty() {
        let mut any = false;
        after.generate_moves(|_| {
            any = true;
            true
        });
        s.push(if any { '+' } else { '#' });
    }
    s
}

/// SAN without check suffix.
fn san_core(board: &Board, mv: Move) -> String {
    let piece = board.piece_on(mv.from).unwrap_or(Piece::Pawn);
    if is_castle(board, mv) {
        return if mv.to.file() > mv.from.file() {
            "O-O".into()
        } else {
            "O-O-O".into()
        };
    }
    let capture = is_capture(board, mv);
    let mut s = String::new();
    if piece == Piece::Pawn {
        if capture {
            s.push_str(&mv.from.file().to_string());
            s.push('x');
        }
        s.push_str(&mv.to.to_string());
        if let Some(p) = mv.promotion {
            s.push('=');
            s.push(piece_letter(p));
        }
        return s;
    }
    s.push(piece_letter(piece));
    // Disambiguation: other pieces of the same kind that can reach the same square.
    let mut same_file = false;
    let mut same_rank = false;
    let mut ambiguous = false;
    for other in legal_moves(board) {
        if other.to == mv.to && other.from != mv.from && board.piece_on(other.from) == Some(piece) {
            ambiguous = true;
            same_file |= other.from.file() == mv.from.file();
            same_rank |= other.from.rank() == mv.from.rank();
        }
    }
    if ambiguous {
        let sq = mv.from.to_string();
        if !same_file {
            s.push_str(&sq[0..1]);
        } else if !same_rank {
            s.push_str(&sq[1..2]);
        } else {
            s.push_str(&sq);
        }
    }
    if capture {
        s.push('x');
    }
    s.push_str(&mv.to.to_string());
    s
}

/// Normalise SAN for lenient comparison: EPD files differ on `x`, `=`, `+`, `!`, `0-0`.
fn normalize_san(s: &str) -> String {
    s.replace("0-0-0", "O-O-O")
        .replace("0-0", "O-O")
        .chars()
        .filter(|c| !matches!(c, 'x' | '+' | '#' | '!' | '?' | '='))
        .collect()
}

/// Parse a SAN move (as written in EPD `bm`/`am` fields). Also accepts UCI notation.
pub fn parse_san(board: &Board, text: &str) -> Result<Move, BoardError> {
    let want = normalize_san(text.trim());
    if want.is_empty() {
        return Err(BoardError::EmptySan);
    }
    let moves = legal_moves(board);
    let mut found = None;
    for &mv in &moves {
        if normalize_san(&san_core(board, mv)) == want {
            found = Some(mv);
            break;
        }
    }
    if found.is_none() {
        // Over-disambiguated SAN ("Ngf3" where "Nf3" suffices, or "Ng1f3") — match by pieces.
        for &mv in &moves {
            let piece = board.piece_on(mv.from).unwrap_or(Piece::Pawn);
            if piece == Piece::Pawn || is_castle(board, mv) {
                continue;
            }
            let full = format!("{}{}{}", piece_letter(piece), mv.from, mv.to);
            let file = format!(
                "{}{}{}",
                piece_letter(piece),
                &mv.from.to_string()[0..1],
                mv.to
            );
            let rank = format!(
                "{}{}{}",
                piece_letter(piece),
                &mv.from.to_string()[1..2],
                mv.to
            );
            if want == full || want == file || want == rank {
                found = Some(mv);
                break;
            }
        }
    }
    match found {
        Some(mv) => Ok(mv),
        None => uci_to_move(board, text.trim()).map_err(|_| BoardError::NotSan {
            text: text.to_owned(),
            fen: to_fen(board),
        }),
    }
}

/// A game position plus the Zobrist keys of the positions before it (for repetition).
#[derive(Clone, Default)]
pub struct Position {
    pub board: Board,
    /// Keys of earlier positions in the game, oldest first (not including `board`).
    pub history: Vec<u64>,
}

impl Position {
    pub fn from_fen(fen: &str) -> Result<Self, BoardError> {
        Self::from_fen_with(fen, false)
    }

    /// [`Position::from_fen`]; with `chess960` the castling field may be X-FEN or
    /// Shredder-FEN ([`parse_fen_960`]).
    pub(crate) fn from_fen_with(fen: &str, chess960: bool) -> Result<Self, BoardError> {
        Ok(Self {
            board: parse_fen_with(fen, chess960)?,
            history: Vec::new(),
        })
    }

    /// Play a UCI move after checking legality.
    pub fn play_uci(&mut self, text: &str) -> Result<(), BoardError> {
        let mv = uci_to_move(&self.board, text)?;
        self.play(mv);
        Ok(())
    }

    /// Play a move known to be legal.
    pub fn play(&mut self, mv: Move) {
        self.history.push(self.board.hash());
        self.board.play_unchecked(mv);
        // Positions before an irreversible move can never repeat; keep the list short.
        if self.board.halfmove_clock() == 0 {
            self.history.clear();
        }
    }
}

/// Parsed EPD line: the position plus its operations (`bm`, `am`, `id`, `c8`, `D1` ...).
#[derive(Clone, Debug)]
pub struct Epd {
    pub board: Board,
    pub ops: Vec<(String, Vec<String>)>,
}

impl Epd {
    /// First operand list for `op`, if present.
    pub fn op(&self, op: &str) -> Option<&[String]> {
        self.ops
            .iter()
            .find(|(k, _)| k == op)
            .map(|(_, v)| v.as_slice())
    }

    /// `id` or a fallback label.
    pub fn id(&self) -> String {
        self.op("id")
            .and_then(|v| v.first().cloned())
            .unwrap_or_else(|| to_fen(&self.board))
    }
}

/// Split operand text into tokens, keeping quoted strings together (quotes removed).
fn split_operands(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    for c in text.chars() {
        match c {
            '"' => {
                if quoted {
                    out.push(std::mem::take(&mut cur));
                }
                quoted = !quoted;
            }
            c if c.is_whitespace() && !quoted => {
                if !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
            }
            c => cur.push(c),
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// Parse one EPD line: 4 FEN fields, optional clocks, then `opcode operands;` groups.
/// Also accepts the perft-suite style `FEN ;D1 20 ;D2 400`.
pub fn parse_epd(line: &str) -> Result<Epd, BoardError> {
    parse_epd_with(line, false)
}

/// [`parse_epd`]; with `chess960` the castling field may be X-FEN or Shredder-FEN.
pub(crate) fn parse_epd_with(line: &str, chess960: bool) -> Result<Epd, BoardError> {
    let line = line.trim();
    let mut rest = line;
    let mut fields = Vec::new();
    for _ in 0..4 {
        rest = rest.trim_start();
        let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
        if end == 0 {
            return Err(BoardError::EpdFieldCount(line.to_owned()));
        }
        fields.push(&rest[..end]);
        rest = &rest[end..];
    }
    // Optional halfmove/fullmove numbers.
    let mut clocks = Vec::new();
    loop {
        let t = rest.trim_start();
        let end = t
            .find(|c: char| c.is_whitespace() || c == ';')
            .unwrap_or(t.len());
        if end > 0 && clocks.len() < 2 && t[..end].chars().all(|c| c.is_ascii_digit()) {
            clocks.push(&t[..end]);
            rest = &t[end..];
        } else {
            break;
        }
    }
    let fen = if clocks.len() == 2 {
        format!("{} {}", fields.join(" "), clocks.join(" "))
    } else {
        fields.join(" ")
    };
    let board = parse_fen_with(&fen, chess960)?;
    let mut ops = Vec::new();
    // Split on ';' outside quotes.
    let mut quoted = false;
    let mut start = 0;
    let bytes: Vec<char> = rest.chars().collect();
    let mut pieces = Vec::new();
    for (i, &c) in bytes.iter().enumerate() {
        if c == '"' {
            quoted = !quoted;
        } else if c == ';' && !quoted {
            pieces.push(bytes[start..i].iter().collect::<String>());
            start = i + 1;
        }
    }
    pieces.push(bytes[start..].iter().collect::<String>());
    for p in pieces {
        let p = p.trim();
        if p.is_empty() {
            continue;
        }
        let mut toks = split_operands(p);
        let opcode = toks.remove(0);
        ops.push((opcode, toks));
    }
    Ok(Epd { board, ops })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn castling_uci_round_trip() {
        let b = parse_fen("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1").unwrap();
        let mv = uci_to_move(&b, "e1g1").unwrap();
        assert!(is_castle(&b, mv));
        assert_eq!(move_to_uci(&b, mv), "e1g1");
        assert_eq!(to_san(&b, mv), "O-O");
        let mv = uci_to_move(&b, "e1c1").unwrap();
        assert_eq!(move_to_uci(&b, mv), "e1c1");
    }

    #[test]
    fn gives_check_matches_make() {
        for fen in [
            "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
            "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
            "r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1",
            "rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8",
            "4k3/8/8/3pP3/8/8/8/R3K2R w KQ d6 0 2",
        ] {
            // Each position, then 40 random games of up to 120 plies from it: discovered
            // checks along files, ranks and diagonals come up by the hundreds.
            let start = parse_fen(fen).unwrap();
            let mut rng = 0x2545_f491_4f6c_dd1du64;
            for _ in 0..40 {
                let mut b = start.clone();
                for _ in 0..120 {
                    let moves = legal_moves(&b);
                    if moves.is_empty() {
                        break;
                    }
                    for &mv in &moves {
                        let mut c = b.clone();
                        c.play_unchecked(mv);
                        assert_eq!(gives_check(&b, mv), !c.checkers().is_empty(), "{b} {mv}");
                    }
                    rng = mix64(rng.wrapping_add(GOLDEN_GAMMA));
                    b.play_unchecked(moves[(rng % moves.len() as u64) as usize]);
                }
            }
        }
    }

    #[test]
    fn san_parse() {
        let b = parse_fen("2rr3k/pp3pp1/1nnqbN1p/3pN3/2pP4/2P3Q1/PPB4P/R4RK1 w - - 0 1").unwrap();
        let mv = parse_san(&b, "Qg6").unwrap();
        assert_eq!(move_to_uci(&b, mv), "g3g6");
        assert!(parse_san(&b, "Qh9").is_err());
    }

    #[test]
    fn epd_parse() {
        let e = parse_epd(r#"8/7p/5k2/5p2/p1p2P2/Pr1pPK2/1P1R3P/8 b - - bm Rxb2; id "WAC.002";"#)
            .unwrap();
        assert_eq!(e.op("bm").unwrap(), &["Rxb2".to_string()]);
        assert_eq!(e.id(), "WAC.002");
        let p = parse_epd("4k3/8/8/8/8/8/8/4K2R w K - 0 1 ;D1 15 ;D2 66").unwrap();
        assert_eq!(p.op("D2").unwrap(), &["66".to_string()]);
    }

    #[test]
    fn insufficient_material_cases() {
        let dead = |fen: &str| insufficient_material(&parse_fen(fen).unwrap());
        let drawish = |fen: &str| is_drawish_material(&parse_fen(fen).unwrap());
        for fen in [
            "8/8/4k3/8/8/4K3/8/8 w - - 0 1",    // K v K
            "8/8/4k3/8/8/3NK3/8/8 w - - 0 1",   // K+N v K
            "8/8/2b1k3/8/8/3BK3/8/8 w - - 0 1", // K+B v K+B, both on light squares
        ] {
            assert!(dead(fen) && drawish(fen), "{fen}");
        }
        // Two or three same-coloured bishops (underpromotion): a rule draw the search's
        // cheaper test does not see.
        for fen in [
            "8/4k3/8/8/8/1B1BK3/8/8 w - - 0 1",
            "8/4k3/2b5/8/8/1B1BK3/8/8 w - - 0 1",
        ] {
            assert!(dead(fen) && !drawish(fen), "{fen}");
        }
        for fen in [
            "8/8/1b2k3/8/8/3BK3/8/8 w - - 0 1", // opposite-coloured bishops
            "8/8/4k3/8/8/2NNK3/8/8 w - - 0 1",  // two knights: a mate exists
            "8/8/2n1k3/8/8/3BK3/8/8 w - - 0 1", // bishop v knight
            "8/8/4k3/8/8/4K3/4P3/8 w - - 0 1",  // a pawn
        ] {
            assert!(!dead(fen) && !drawish(fen), "{fen}");
        }
    }

    #[test]
    fn bad_fen_is_error() {
        assert!(parse_fen("").is_err());
        assert!(parse_fen("xyz w - - 0 1").is_err());
        assert!(parse_fen("8/8/8/8/8/8/8/8 w - - 0 1").is_err());
    }

    #[test]
    fn impossible_positions_are_errors() {
        for (fen, says) in [
            (
                "8/8/8/3kK3/8/8/8/8 w - - 0 1",
                "the kings are adjacent (e5 and d5)",
            ),
            ("8/8/8/8/8/8/3k4/4K3 b - - 0 1", "the kings are adjacent"),
            (
                "4k3/8/8/8/8/8/8/4K2r b - - 0 1",
                "White is in check but it is Black's move",
            ),
            ("4k3/8/8/8/8/8/8/P3K3 w - - 0 1", "White pawn on a1"),
            ("3pk3/8/8/8/8/8/8/4K3 w - - 0 1", "Black pawn on d8"),
            ("4k3/4k3/8/8/8/8/8/4K3 w - - 0 1", "Black has 2 kings"),
            ("8/8/8/8/8/8/8/4K3 w - - 0 1", "Black has 0 kings"),
            ("4k3/8/8/8/8/8/8/8 w - - 0 1", "White has 0 kings"),
            (
                "4k3/8/8/8/8/8/PPPPPPPP/PPPPK3 w - - 0 1",
                "White pawn on a1",
            ),
            ("4k3/8/8/8/PPPPPPPP/P7/8/4K3 w - - 0 1", "White has 9 pawns"),
            (
                "4k3/8/8/8/8/NNNNNNNN/NNNNNNNN/4K3 w - - 0 1",
                "White has 17 pieces",
            ),
            (
                "1r2k3/8/8/8/4b3/8/8/1K1r4 w - - 0 1",
                "White is in check from 3 pieces",
            ),
        ] {
            let err = parse_fen(fen).map(|b| to_fen(&b)).unwrap_err().to_string();
            assert!(err.contains(says), "{fen}: {err}");
            assert!(err.starts_with("impossible position"), "{fen}: {err}");
        }
        // Legal positions near the edges of the rules still parse.
        for fen in [
            STARTPOS_FEN,
            "8/8/8/3k1K2/8/8/8/8 w - - 0 1",
            "4k3/8/8/8/8/8/8/4K2r w - - 0 1",
            "4k3/8/8/8/1b6/8/8/r3K3 w - - 0 1",
        ] {
            parse_fen(fen).unwrap_or_else(|e| panic!("{fen}: {e}"));
        }
        let e = parse_epd("8/8/8/3kK3/8/8/8/8 w - - bm Kd4;").unwrap_err();
        assert!(e.to_string().contains("adjacent"), "{e}");
        assert!(Position::from_fen("8/8/8/3kK3/8/8/8/8 w - - 0 1").is_err());
    }
}

#[cfg(test)]
mod chess960_tests {
    use super::*;

    #[test]
    fn castling_fields_in_every_notation() {
        // King e1, rooks b1 and g1 (and the mirror for Black).
        let placement = "1r2k1r1/pppppppp/8/8/8/8/PPPPPPPP/1R2K1R1";
        let shredder = parse_fen_960(&format!("{placement} w GBgb - 0 1")).unwrap();
        let xfen = parse_fen_960(&format!("{placement} w KQkq - 0 1")).unwrap();
        assert_eq!(shredder, xfen);
        let r = shredder.castle_rights(Color::White);
        assert_eq!((r.short, r.long), (Some(File::G), Some(File::B)));
        // KQkq means a- and h-rooks in standard chess: there are none here.
        assert!(parse_fen(&format!("{placement} w KQkq - 0 1")).is_err());
        // X-FEN takes the outermost rook: two rooks on the king side, the h-rook castles.
        let two = parse_fen_960("4k3/8/8/8/8/8/8/4KRR1 w K - 0 1").unwrap();
        assert_eq!(two.castle_rights(Color::White).short, Some(File::G));
        let e = parse_fen_960("4k3/8/8/8/8/8/8/R3K3 w K - 0 1").unwrap_err();
        assert!(e.to_string().contains("no White rook on that side"), "{e}");
        let e = parse_fen_960("4k3/8/8/8/8/8/8/R3K3 w X - 0 1").unwrap_err();
        assert!(e.to_string().contains("'X' is not a castling right"), "{e}");
        // A standard position reads the same in both parsers.
        assert_eq!(
            parse_fen_960(STARTPOS_FEN).unwrap(),
            parse_fen(STARTPOS_FEN).unwrap()
        );
    }

    #[test]
    fn castling_moves_in_both_conventions() {
        let b = parse_fen_960("1r2k1r1/pppppppp/8/8/8/8/PPPPPPPP/1R2K1R1 w GBgb - 0 1").unwrap();
        // Short castling: the king goes to g1 where its rook stands; king-takes-rook is
        // e1g1 here, the standard spelling would also be e1g1.
        let short = uci_to_move(&b, "e1g1").unwrap();
        assert!(is_castle(&b, short));
        assert_eq!(move_to_uci_with(&b, short, true), "e1g1");
        let long = uci_to_move(&b, "e1b1").unwrap();
        assert!(is_castle(&b, long));
        assert_eq!(move_to_uci_with(&b, long, true), "e1b1");
        assert_eq!(move_to_uci_with(&b, long, false), "e1c1");
        let mut after = b.clone();
        after.play(long);
        assert_eq!(after.piece_on(Square::C1), Some(Piece::King));
        assert_eq!(after.piece_on(Square::D1), Some(Piece::Rook));
        // The standard start position: e1h1 in Chess960 notation, e1g1 otherwise.
        let s = parse_fen("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1").unwrap();
        let oo = uci_to_move(&s, "e1g1").unwrap();
        assert_eq!(move_to_uci_with(&s, oo, true), "e1h1");
        assert_eq!(move_to_uci(&s, oo), "e1g1");
    }
}
