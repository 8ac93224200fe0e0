//! The 7×7 board as seven packed column words (docs/design/drop7-SPEC.md §1).
//!
//! Column `c` is one `u32`: nibble `n` holds the cell at elevation `n + 1` (row `6 − n`), the
//! bottom cell in the low nibble. Cell codes: 0 empty, 1–7 numbered, 8 solid gray,
//! 9 cracked gray. Columns are always bottom-packed, so a column's height is the index of
//! its highest non-zero nibble and most rules become word arithmetic.
// Grid code reads best with explicit (row, column) indices.
#![allow(clippy::needless_range_loop)]

use std::fmt;

/// Number of rows and of columns.
pub const SIZE: usize = 7;
/// Cell code of an empty cell.
pub const EMPTY: u8 = 0;
/// Cell code of a solid (uncracked) gray disc.
pub const SOLID: u8 = 8;
/// Cell code of a cracked gray disc.
pub const CRACKED: u8 = 9;
/// `0x1111111`: the low bit of each of the seven nibbles.
pub const NIBBLE_ONES: u32 = 0x0111_1111;
/// A full bottom row of solid grays ("startpos").
pub const START_BOARD: &str = "0000000000000000000000000000000000000000008888888";

/// `FILL[h]`: the nibble mask of a column of height `h` (0xF in each occupied nibble).
pub const FILL: [u32; 8] = [0, 0xF, 0xFF, 0xFFF, 0xFFFF, 0xF_FFFF, 0xFF_FFFF, 0xFFF_FFFF];

/// A board position (cells only; no clock, no score).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Board {
    /// Column words, column 0 (left) first.
    pub cols: [u32; SIZE],
}

/// Why a board string was rejected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BoardError {
    Length(usize),
    Digit {
        index: usize,
        found: char,
    },
    Hole {
        column: usize,
        row: usize,
    },
    /// A numbered disc whose row or column run equals its value: it would have popped, so
    /// no board between moves holds it.
    Unsettled {
        row: usize,
        column: usize,
        value: u8,
        line: &'static str,
    },
}

impl fmt::Display for BoardError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BoardError::Length(n) => write!(f, "bad board: expected 49 digits, got {n} characters"),
            BoardError::Digit { index, found } => write!(
                f,
                "bad board: character {index} is {found:?}; cells are digits 0-9 (0 empty, 1-7 numbered, 8 solid, 9 cracked)"
            ),
            BoardError::Hole { column, row } => write!(
                f,
                "impossible board: column {column} has a hole at row {row} (an empty cell under a disc; columns are bottom-packed)"
            ),
            BoardError::Unsettled {
                row,
                column,
                value,
                line,
            } => write!(
                f,
                "impossible board: the {value} at row {row}, column {column} would pop (its {line} run is {value} long); a board between moves has no disc left to pop"
            ),
        }
    }
}

impl std::error::Error for BoardError {}

impl Board {
    /// The opening board: one row of solid grays.
    pub const fn start() -> Self {
        Self {
            cols: [SOLID as u32; SIZE],
        }
    }

    /// Height of column `c` (0..=7), from the position of its highest non-zero nibble.
    #[inline]
    pub fn height(&self, c: usize) -> u32 {
        column_height(self.cols[c])
    }

    /// Cell at column `c`, elevation index `e` (0 = bottom).
    #[inline]
    pub fn cell_at(&self, c: usize, e: usize) -> u8 {
        ((self.cols[c] >> (4 * e)) & 0xF) as u8
    }

    /// Cell by SPEC coordinates: `row` 0 = top, `col` 0 = left.
    #[inline]
    pub fn cell(&self, row: usize, col: usize) -> u8 {
        self.cell_at(col, SIZE - 1 - row)
    }

    /// A column is legal iff its top cell is empty.
    #[inline]
    pub fn is_legal(&self, c: usize) -> bool {
        self.cols[c] >> 24 == 0
    }

    /// Bit `c` set iff column `c` is legal.
    #[inline]
    pub fn legal_mask(&self) -> u8 {
        let mut m = 0u8;
        for c in 0..SIZE {
            m |= (self.is_legal(c) as u8) << c;
        }
        m
    }

    /// Whether any column is legal (`legal_mask() != 0`): a column word is below 2^24 iff its
    /// top cell is empty, and subtracting 2^24 then wraps and sets bit 31, so one OR over the
    /// columns answers, without a branch.
    #[inline]
    pub fn any_legal(&self) -> bool {
        self.cols
            .iter()
            .fold(0, |a, &w| a | w.wrapping_sub(1 << 24))
            >> 31
            != 0
    }

    /// True if any top-row cell is occupied (a rise is then impossible).
    #[inline]
    pub fn top_row_occupied(&self) -> bool {
        // one OR over the columns, no early exit: cheaper than seven branches in the hot path
        self.cols.iter().fold(0, |a, &w| a | w) >> 24 != 0
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.cols.iter().fold(0, |a, &w| a | w) == 0
    }

    /// Number of occupied cells.
    pub fn occupied(&self) -> u32 {
        (0..SIZE).map(|c| self.height(c)).sum()
    }

    /// Parse the 49-digit serialization (row-major from the top). Columns must be
    /// bottom-packed; see [`Board::parse_settled`] for boards between moves.
    pub fn parse(s: &str) -> Result<Self, BoardError> {
        let t = s.trim();
        let n = t.chars().count();
        if n != 49 {
            return Err(BoardError::Length(n));
        }
        let mut b = Board::default();
        for (i, ch) in t.chars().enumerate() {
            let Some(v) = ch.to_digit(10) else {
                return Err(BoardError::Digit {
                    index: i,
                    found: ch,
                });
            };
            let (row, col) = (i / SIZE, i % SIZE);
            let e = SIZE - 1 - row;
            b.cols[col] |= v << (4 * e);
        }
        for c in 0..SIZE {
            let w = b.cols[c];
            let h = column_height(w);
            for e in 0..h as usize {
                if (w >> (4 * e)) & 0xF == 0 {
                    return Err(BoardError::Hole {
                        column: c,
                        row: SIZE - 1 - e,
                    });
                }
            }
        }
        Ok(b)
    }

    /// [`Board::parse`], and refuse a board on which a disc would still pop: every board a
    /// player sees between moves is settled (each move resolves its waves until nothing
    /// pops), so such a board is a typing error, not a position.
    pub fn parse_settled(s: &str) -> Result<Self, BoardError> {
        let b = Self::parse(s)?;
        b.check_settled()?;
        Ok(b)
    }

    /// `Err(Unsettled)` for the first disc (row-major from the top) that would pop.
    pub fn check_settled(&self) -> Result<(), BoardError> {
        for row in 0..SIZE {
            for col in 0..SIZE {
                let v = self.cell(row, col);
                if !(1..=7).contains(&v) {
                    continue;
                }
                let occupied = |c: usize| self.cell(row, c) != EMPTY;
                let left = (0..col).rev().take_while(|&c| occupied(c)).count();
                let right = (col + 1..SIZE).take_while(|&c| occupied(c)).count();
                let line = if (left + right + 1) as u8 == v {
                    "row"
                } else if self.height(col) as u8 == v {
                    "column"
                } else {
                    continue;
                };
                return Err(BoardError::Unsettled {
                    row,
                    column: col,
                    value: v,
                    line,
                });
            }
        }
        Ok(())
    }

    /// Write the 49-digit serialization into `out`.
    pub fn write_digits(&self, out: &mut [u8; 49]) {
        for row in 0..SIZE {
            for col in 0..SIZE {
                out[row * SIZE + col] = b'0' + self.cell(row, col);
            }
        }
    }

    /// The left–right mirror image.
    #[inline]
    pub fn mirrored(&self) -> Self {
        let c = self.cols;
        Self {
            cols: [c[6], c[5], c[4], c[3], c[2], c[1], c[0]],
        }
    }

    /// True if the mirror is lexicographically smaller in row-major cell order from the top,
    /// i.e. the search and the n-tuple tables would work on the mirror. Only columns 0–2
    /// against 6–4 can decide: the first row (from the top) where a pair differs, and the
    /// first such pair from the left in that row.
    #[inline]
    pub fn mirror_is_smaller(&self) -> bool {
        let w = &self.cols;
        let d = [w[0] ^ w[6], w[1] ^ w[5], w[2] ^ w[4]];
        let any = d[0] | d[1] | d[2];
        if any == 0 {
            return false;
        }
        // Highest differing nibble = topmost differing row.
        let shift = (31 - any.leading_zeros()) & !3;
        // The leftmost differing pair in that row, found without data-dependent branches
        // (the n-tuple extraction calls this for every board it sees).
        let differs = |x: u32| ((x >> shift) & 0xF != 0) as u32;
        let pairs = differs(d[0]) | differs(d[1]) << 1 | differs(d[2]) << 2;
        let c = (pairs.trailing_zeros() as usize).min(2);
        let left = (w[c] >> shift) & 0xF;
        let right = (w[6 - c] >> shift) & 0xF;
        right < left
    }

    /// Canonical form and whether it is the mirror. Column `c` in canonical coordinates is
    /// column `6 − c` in the original when mirrored.
    #[inline]
    pub fn canonical(&self) -> (Self, bool) {
        if self.mirror_is_smaller() {
            (self.mirrored(), true)
        } else {
            (*self, false)
        }
    }

    /// Terminal picture: `.` empty, `#` solid, `x` cracked, digits for numbered discs.
    pub fn render(&self) -> String {
        let mut s = String::new();
        for row in 0..SIZE {
            for col in 0..SIZE {
                let ch = match self.cell(row, col) {
                    EMPTY => '.',
                    SOLID => '#',
                    CRACKED => 'x',
                    v => (b'0' + v) as char,
                };
                s.push(ch);
                if col + 1 < SIZE {
                    s.push(' ');
                }
            }
            s.push('\n');
        }
        s.push_str("0 1 2 3 4 5 6\n");
        s
    }
}

/// Height of a packed column word.
#[inline]
pub const fn column_height(w: u32) -> u32 {
    (35 - w.leading_zeros()) / 4
}

impl fmt::Display for Board {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = [0u8; 49];
        self.write_digits(&mut d);
        f.write_str(std::str::from_utf8(&d).expect("digits are ASCII"))
    }
}

impl fmt::Debug for Board {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Board({self})")
    }
}

impl std::str::FromStr for Board {
    type Err = BoardError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Board::parse(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn legal_mask_and_any_legal_follow_the_top_cells() {
        let mut rng = crate::rng::Mulberry32::new(11);
        for _ in 0..20_000 {
            let mut b = Board::default();
            for c in 0..SIZE {
                // heights 0-7, full columns common, cells 1-9
                let h = [0, 3, 6, 7, 7, 7, 7][(rng.next_u32() % 7) as usize];
                b.cols[c] = (0..h).fold(0, |w, e| w | (1 + rng.next_u32() % 9) << (4 * e));
            }
            let want = (0..SIZE)
                .filter(|&c| b.cell(0, c) == EMPTY)
                .fold(0u8, |m, c| m | 1 << c);
            assert_eq!(b.legal_mask(), want, "{b}");
            assert_eq!(b.any_legal(), want != 0, "{b}");
        }
    }

    #[test]
    fn start_board_round_trip() {
        let b = Board::parse(START_BOARD).unwrap();
        assert_eq!(b, Board::start());
        assert_eq!(b.to_string(), START_BOARD);
        assert!((0..7).all(|c| b.height(c) == 1 && b.is_legal(c)));
    }

    #[test]
    fn errors_are_specific() {
        assert_eq!(Board::parse("123"), Err(BoardError::Length(3)));
        let mut s = START_BOARD.to_string();
        s.replace_range(5..6, "a");
        assert!(matches!(
            Board::parse(&s),
            Err(BoardError::Digit {
                index: 5,
                found: 'a'
            })
        ));
        // a disc floating at row 5 column 0 above an empty bottom cell
        let mut s = "0".repeat(49);
        s.replace_range(35..36, "3");
        assert_eq!(
            Board::parse(&s),
            Err(BoardError::Hole { column: 0, row: 6 })
        );
    }

    #[test]
    fn unsettled_boards_and_odd_characters() {
        // a 1 alone in its column (height 1) has already popped
        let s = "0000000000000000000000000000000000000000001888888";
        assert!(Board::parse(s).is_ok());
        assert_eq!(
            Board::parse_settled(s),
            Err(BoardError::Unsettled {
                row: 6,
                column: 0,
                value: 1,
                line: "column"
            })
        );
        // a 7 in a full bottom row pops by its row
        let s = "0000000000000000000000000000000000000000008887888";
        let e = Board::parse_settled(s).unwrap_err();
        assert!(
            e.to_string()
                .contains("the 7 at row 6, column 3 would pop (its row run is 7 long)")
        );
        // the start board and the boards of real games are settled
        assert_eq!(Board::parse_settled(START_BOARD), Ok(Board::start()));
        for (state, _) in crate::runner::sample_states(0x0404_0000, 2_000) {
            assert_eq!(state.board.check_settled(), Ok(()), "{}", state.board);
        }
        // 49 characters, one of them not a digit (and not one byte)
        let s = format!("{}é", &START_BOARD[..48]);
        assert_eq!(
            Board::parse(&s),
            Err(BoardError::Digit {
                index: 48,
                found: 'é'
            })
        );
    }

    proptest::proptest! {
        /// Any text: a board or an error, never a panic; a board prints back as itself.
        #[test]
        fn any_text_parses_or_is_refused(s in "\\PC{0,60}|[0-9]{49}|[0-9 é]{47,51}") {
            if let Ok(b) = Board::parse(&s) {
                proptest::prop_assert_eq!(b.to_string(), s.trim());
                proptest::prop_assert_eq!(Board::parse(&b.to_string()), Ok(b));
            }
            let _ = Board::parse_settled(&s);
        }

        /// Every hole-free board text parses, reads back cell by cell and prints as itself
        /// (random text almost never is one: the round trip needs its own generator).
        #[test]
        fn hole_free_boards_round_trip(
            heights in proptest::array::uniform7(0usize..=7),
            cells in proptest::array::uniform7(proptest::array::uniform7(1u8..=9)),
        ) {
            // the text written from the grid directly: row 0 at the top, elevation 6 - row
            let mut text = String::new();
            for row in 0..SIZE {
                for col in 0..SIZE {
                    let e = SIZE - 1 - row;
                    let cell = if e < heights[col] { cells[col][e] } else { 0 };
                    text.push(char::from(b'0' + cell));
                }
            }
            let b = Board::parse(&text);
            proptest::prop_assert!(b.is_ok(), "{text}: {b:?}");
            let b = b.unwrap();
            for row in 0..SIZE {
                for col in 0..SIZE {
                    let want = text.as_bytes()[row * SIZE + col] - b'0';
                    proptest::prop_assert_eq!(b.cell(row, col), want);
                }
            }
            for col in 0..SIZE {
                proptest::prop_assert_eq!(b.height(col) as usize, heights[col]);
            }
            proptest::prop_assert_eq!(b.to_string(), text);
        }
    }

    #[test]
    fn mirror_rule_matches_string_comparison() {
        let cases = [
            "0000000000000000000000000000000000000005008888888",
            "0000000000000000000000000000000070000005009888888",
            "0000000000000000000000000000000000000000008888889",
            START_BOARD,
        ];
        for s in cases {
            let b = Board::parse(s).unwrap();
            let m = b.mirrored().to_string();
            assert_eq!(b.mirror_is_smaller(), m.as_str() < s, "{s}");
        }
        // and on positions of real games, where boards are rarely symmetric
        let mut smaller = 0;
        for (state, _) in crate::runner::sample_states(0x0303_0000, 5_000) {
            let (b, s) = (state.board, state.board.to_string());
            let m = b.mirrored().to_string();
            assert_eq!(b.mirror_is_smaller(), m < s, "{s}");
            smaller += b.mirror_is_smaller() as usize;
        }
        assert!((1_000..4_000).contains(&smaller), "{smaller} of 5,000");
    }
}
