//! The learned evaluation: a `(768 → H)×2 → 1` network with SCReLU (issue 34), quantised to
//! integers, evaluated from accumulators the search keeps per ply and updates lazily.
//!
//! **Inputs.** 768 per perspective: (own or enemy piece) × (6 piece types) × (64 squares),
//! the squares of Black's perspective mirrored vertically, so the network sees every position
//! from the side whose accumulator it is. One first layer (`768 → H`) feeds both
//! perspectives; the output layer reads `[side to move, side not to move]`.
//!
//! **Quantisation** (the usual scheme, so nets and trainers elsewhere can be compared): first
//! layer weights and biases × [`QA`] = 255 in `i16`, output weights × [`QB`] = 64 in `i16`, the
//! output bias × `QA·QB` in `i32`; SCReLU is `clamp(x, 0, QA)²`, and the network's output
//! times [`SCALE`] is centipawns. The trainer clips every weight to ±[`WEIGHT_CLIP`], which
//! bounds an accumulator by `(32 pieces + bias) · 1.98 · 255 < 32,767`: no `i16` overflow
//! whatever the position (and a file outside the clip is refused).
//!
//! **Lazy updates.** A move records its feature changes (`Delta`: at most two removed, two
//! added) in the ply's slot; only when the search really evaluates a node are the pending
//! deltas applied, from the nearest computed ancestor down. A node pruned before its
//! evaluation never touches its accumulator (docs/design/chess-DESIGN.md §2: pay for
//! evaluation work only where it decides something).
//!
//! **Output buckets**: a net may have B output layers (`bucket`: equal ranges of the number
//! of pieces on the board), chosen per position; the first layer is shared.
//!
//! **Input layouts** ([`Inputs`], issue 67): a net may see each perspective's board mirrored
//! left-right whenever that side's king stands on files e–h (so it learns one king wing, and
//! a position and its mirror image are the same input), and may have K blocks of 768 rows, one
//! per *king bucket* (a map from that side's king square to a block), so the first layer can
//! weigh the pieces differently by where the king is. A king move that changes its side's view
//! (mirror or bucket) cannot be an update: that perspective is refreshed from the board.
//!
//! **File** (little-endian): `ACTNNUE1`, `u32` H, `i16` first-layer weights (768 rows of H),
//! `i16` first-layer biases (H), `i16` output weights (2H: side to move, then the other),
//! `i32` output bias, then `u64` FNV-1a of every byte before it. With B > 1 buckets:
//! `ACTNNUE2`, `u32` H, `u32` B, the first layer as above, B rows of 2H output weights, B `i32`
//! biases, the checksum. With another input layout than the plain one: `ACTNNUE3`, `u32` H,
//! `u32` B (1 allowed), `u8` mirror (0 or 1), 64 `u8` king buckets (by the perspective's own
//! king square, a1 = 0; a mirrored layout's map is left-right symmetric), then K·768 rows of
//! first-layer weights and the rest as version 2. A truncated or altered file is refused.

use crate::board::{Board, Color, File, Move, Piece, Square};
use crate::datafile::fnv1a64;
use std::sync::{Arc, OnceLock};

mod simd;
pub use simd::{Simd, TrainKernels};

/// Inputs per perspective: 2 sides × 6 piece types × 64 squares.
pub const INPUTS: usize = 768;
/// First-layer quantisation (and the SCReLU ceiling).
pub const QA: i32 = 255;
/// Output-layer quantisation.
pub const QB: i32 = 64;
/// Network output × `SCALE` = centipawns.
pub const SCALE: i32 = 400;
/// Every float weight is clipped to ±this in training (see the module note on overflow).
pub const WEIGHT_CLIP: f32 = 1.98;
/// The largest hidden width a file may declare (the embedded net is far smaller).
pub(crate) const MAX_HIDDEN: usize = 1024;
const MAGIC: &[u8; 8] = b"ACTNNUE1";
/// Version 2: output buckets (`u32` B after H; B output layers and biases).
const MAGIC2: &[u8; 8] = b"ACTNNUE2";
/// Version 3: an input layout ([`Inputs`]) after B.
const MAGIC3: &[u8; 8] = b"ACTNNUE3";
/// The most output buckets a file may declare.
pub(crate) const MAX_BUCKETS: usize = 16;
/// The most king buckets (blocks of 768 first-layer rows) a file may declare.
pub const MAX_KING_BUCKETS: usize = 16;

/// How each perspective's pieces map to first-layer rows (see the module note): `plain` (768
/// rows, the layout of every net before issue 67), or mirrored left-right when the
/// perspective's king is on files e–h, and/or one block of 768 rows per king bucket.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Inputs {
    mirror: bool,
    /// The block of each perspective-relative king square (a1 = 0, Black's squares flipped
    /// vertically as its features are), read after the mirror.
    king_buckets: [u8; 64],
    blocks: u8,
}

/// The layouts `train-net --inputs` offers, by name.
pub const INPUT_LAYOUTS: &[&str] = &["plain", "mirror", "mirror-kb4"];

impl Inputs {
    /// 768 rows, no mirror: the layout of every net before issue 67.
    pub const PLAIN: Inputs = Inputs {
        mirror: false,
        king_buckets: [0; 64],
        blocks: 1,
    };

    /// A layout from its parts; `None` when the map is not a valid one (a bucket at or past
    /// [`MAX_KING_BUCKETS`], a bucket number unused below the largest, or — mirrored — a map
    /// that differs between a square and its mirror image).
    pub fn new(mirror: bool, king_buckets: [u8; 64]) -> Option<Inputs> {
        let blocks = usize::from(*king_buckets.iter().max().expect("64 squares")) + 1;
        let used = |b: usize| king_buckets.iter().any(|&k| usize::from(k) == b);
        let symmetric = (0..64).all(|sq| king_buckets[sq] == king_buckets[sq ^ 7]);
        (blocks <= MAX_KING_BUCKETS && (0..blocks).all(used) && (!mirror || symmetric)).then_some(
            Inputs {
                mirror,
                king_buckets,
                blocks: blocks as u8,
            },
        )
    }

    /// A named layout ([`INPUT_LAYOUTS`]): `plain`; `mirror`; `mirror-kb4`, mirrored with four
    /// king buckets — on the first rank a1–c1 (with f1–h1: castled either way) apart from
    /// d1/e1 (not castled), the second rank, and the rest of the board.
    pub fn named(name: &str) -> Option<Inputs> {
        match name {
            "plain" => Some(Inputs::PLAIN),
            "mirror" => Inputs::new(true, [0; 64]),
            "mirror-kb4" => {
                let mut kb = [3u8; 64];
                for (sq, b) in kb.iter_mut().enumerate() {
                    let (rank, file) = (sq / 8, sq % 8);
                    *b = match rank {
                        0 if file <= 2 || file >= 5 => 0,
                        0 => 1,
                        1 => 2,
                        _ => 3,
                    };
                }
                Inputs::new(true, kb)
            }
            _ => None,
        }
    }

    /// The layout's name if it is one of [`INPUT_LAYOUTS`], else a description of it.
    pub fn name(&self) -> String {
        INPUT_LAYOUTS
            .iter()
            .find(|n| Inputs::named(n).as_ref() == Some(self))
            .map_or_else(
                || {
                    format!(
                        "{}{} king buckets",
                        if self.mirror { "mirrored, " } else { "" },
                        self.blocks
                    )
                },
                |n| (*n).to_string(),
            )
    }

    /// Does each side see its king's wing mirrored to files a–d?
    pub fn mirrors(&self) -> bool {
        self.mirror
    }

    /// First-layer rows: 768 per king bucket.
    pub fn rows(&self) -> usize {
        usize::from(self.blocks) * INPUTS
    }

    /// Is this the plain layout (every view the same)?
    #[inline]
    fn is_plain(&self) -> bool {
        !self.mirror && self.blocks == 1
    }

    /// The view of a perspective whose own king stands on `king` (perspective-relative).
    #[inline]
    pub fn view(&self, king: u8) -> View {
        let xor = if self.mirror && king & 7 >= 4 { 7 } else { 0 };
        View {
            base: u16::from(self.king_buckets[usize::from(king ^ xor)]) * INPUTS as u16,
            xor,
        }
    }

    /// The view of perspective `persp` (White's or Black's) of `board`.
    #[inline]
    pub fn view_of(&self, board: &Board, persp: Color) -> View {
        if self.is_plain() {
            return View::default();
        }
        self.view(relative_king(board, persp))
    }
}

/// Where a perspective reads its rows ([`Inputs::view`]): the first row of its king bucket's
/// block and whether files are mirrored (`xor` 7 flips the file bits of a feature's square).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct View {
    base: u16,
    xor: u8,
}

impl View {
    /// The row of perspective-relative feature `f` ([`feature`], or [`flip`] of it for Black).
    #[inline]
    pub fn row(self, f: u16) -> usize {
        usize::from(self.base) + usize::from(f ^ u16::from(self.xor))
    }
}

/// `persp`'s own king square as its features see it (Black's flipped vertically).
#[inline]
fn relative_king(board: &Board, persp: Color) -> u8 {
    let k = board.king(persp) as u8;
    if persp == Color::White { k } else { k ^ 56 }
}

/// The committed network, embedded at build time (its SHA-256, training data and
/// hyper-parameters: data/chess/nets/README.md).
pub(crate) const EMBEDDED_NET: &[u8] = include_bytes!("../../../data/chess/nets/actuary-9.nnue");
/// The default evaluation's identity for files whose games it plays (`nnue:` and the embedded
/// net's checksum): a resumed file refuses games of another evaluation.
pub fn embedded_id() -> String {
    let sum = &EMBEDDED_NET[EMBEDDED_NET.len() - 8..];
    format!(
        "nnue:{:016x}",
        u64::from_le_bytes(sum.try_into().expect("8 bytes"))
    )
}

/// The name of the embedded net in the `EvalFile` option.
pub(crate) const EMBEDDED_NET_NAME: &str = "<embedded>";

/// Why a network file was refused.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub(crate) enum NetError {
    #[error("not a network file (no ACTNNUE1 magic)")]
    Magic,
    #[error("hidden width {0} is out of range 1..={MAX_HIDDEN}")]
    Hidden(usize),
    /// A version-2 file declares 2..=16 buckets (one bucket is written as version 1), a
    /// version-3 file 1..=16.
    #[error(
        "{0} output buckets: a version-3 net has 1..={MAX_BUCKETS}, a version-2 net has 2..={MAX_BUCKETS}"
    )]
    Buckets(usize),
    #[error("{found} bytes where a net of hidden width {hidden} has {want}: truncated or padded")]
    Length {
        hidden: usize,
        found: usize,
        want: usize,
    },
    #[error("checksum mismatch (file says {stored:016x}, contents give {found:016x}): damaged")]
    Checksum { stored: u64, found: u64 },
    #[error("weight out of the clipped range ({0}): an accumulator could overflow")]
    Range(i32),
    /// A version-3 header whose layout is plain (written as version 1 or 2) or not a layout.
    #[error(
        "bad input layout: a mirror flag not 0 or 1, a king bucket map not 0..K with every \
         bucket used (left-right symmetric when mirrored), or the plain layout"
    )]
    Inputs,
}

/// A quantised network.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Network {
    hidden: usize,
    /// Output buckets by the number of pieces on the board ([`bucket`]).
    buckets: usize,
    /// Which rows each perspective reads.
    inputs: Inputs,
    /// `inputs.rows()` rows of `hidden`.
    ft_w: Vec<i16>,
    ft_b: Vec<i16>,
    /// `buckets` rows of `2 · hidden`: the side to move's half first.
    out_w: Vec<i16>,
    /// One per bucket.
    out_b: Vec<i32>,
    /// The instruction set of the hot loops, [`Simd::chosen`] when the net was made: checked
    /// once, not on every call.
    simd: simd::Runnable,
}

/// The output bucket of a board with `pieces` pieces (kings included) among `buckets`:
/// equal ranges of 2..=32 pieces, the fullest boards in the last.
#[inline]
pub fn bucket(pieces: usize, buckets: usize) -> usize {
    (pieces.saturating_sub(2) * buckets / 31).min(buckets - 1)
}

impl Network {
    /// A network of the plain input layout from its quantised parts; panics on mismatched
    /// sizes.
    pub fn from_parts(
        hidden: usize,
        ft_w: Vec<i16>,
        ft_b: Vec<i16>,
        out_w: Vec<i16>,
        out_b: Vec<i32>,
    ) -> Self {
        Self::from_parts_with(Inputs::PLAIN, hidden, ft_w, ft_b, out_w, out_b)
    }

    /// A network of input layout `inputs` from its quantised parts (the trainer's export);
    /// panics on mismatched sizes.
    pub fn from_parts_with(
        inputs: Inputs,
        hidden: usize,
        ft_w: Vec<i16>,
        ft_b: Vec<i16>,
        out_w: Vec<i16>,
        out_b: Vec<i32>,
    ) -> Self {
        let buckets = out_b.len();
        assert!((1..=MAX_BUCKETS).contains(&buckets));
        assert_eq!(ft_w.len(), inputs.rows() * hidden);
        assert_eq!(ft_b.len(), hidden);
        assert_eq!(out_w.len(), 2 * hidden * buckets);
        // The output kernel multiplies `clamp(acc, 0, QA) · w` in `i16` (see `simd`).
        let out_max = (WEIGHT_CLIP * QB as f32).ceil() as i32;
        assert!(
            out_w.iter().all(|&w| i32::from(w).abs() <= out_max),
            "output weight beyond ±{out_max}"
        );
        Network {
            hidden,
            buckets,
            inputs,
            ft_w,
            ft_b,
            out_w,
            out_b,
            simd: simd::Runnable::chosen(),
        }
    }

    /// The input layout.
    pub fn inputs(&self) -> &Inputs {
        &self.inputs
    }

    /// This net evaluated on another path (for the test that all paths agree); `None` when
    /// the CPU cannot run it.
    pub fn with_simd(mut self, simd: Simd) -> Option<Self> {
        self.simd = simd::Runnable::new(simd)?;
        Some(self)
    }

    /// The instruction set this net's hot loops run on.
    pub fn simd(&self) -> Simd {
        self.simd.simd()
    }

    #[cfg(any(test, debug_assertions))]
    pub(crate) fn hidden(&self) -> usize {
        self.hidden
    }

    pub fn buckets(&self) -> usize {
        self.buckets
    }

    /// The file version: 1 for a plain net with one bucket (so a v1 net is written back byte
    /// for byte), 2 for a plain net with buckets, 3 for any other input layout.
    fn version(buckets: usize, inputs: &Inputs) -> u8 {
        match (inputs.is_plain(), buckets) {
            (true, 1) => 1,
            (true, _) => 2,
            (false, _) => 3,
        }
    }

    /// Bytes of a file (format in the module note).
    fn file_len(hidden: usize, buckets: usize, inputs: &Inputs) -> usize {
        let head = match Self::version(buckets, inputs) {
            1 => 12,
            2 => 16,
            _ => 16 + 1 + 64,
        };
        head + 2 * (inputs.rows() * hidden + hidden + 2 * hidden * buckets) + 4 * buckets + 8
    }

    /// The file bytes (format in the module note).
    pub fn to_bytes(&self) -> Vec<u8> {
        let version = Self::version(self.buckets, &self.inputs);
        let mut b = Vec::with_capacity(Self::file_len(self.hidden, self.buckets, &self.inputs));
        b.extend_from_slice([MAGIC, MAGIC2, MAGIC3][usize::from(version - 1)]);
        b.extend_from_slice(&(self.hidden as u32).to_le_bytes());
        if version > 1 {
            b.extend_from_slice(&(self.buckets as u32).to_le_bytes());
        }
        if version == 3 {
            b.push(u8::from(self.inputs.mirror));
            b.extend_from_slice(&self.inputs.king_buckets);
        }
        for v in self.ft_w.iter().chain(&self.ft_b).chain(&self.out_w) {
            b.extend_from_slice(&v.to_le_bytes());
        }
        for v in &self.out_b {
            b.extend_from_slice(&v.to_le_bytes());
        }
        let sum = fnv1a64(&b);
        b.extend_from_slice(&sum.to_le_bytes());
        b
    }

    /// Parse and check a network file.
    pub(crate) fn from_bytes(bytes: &[u8]) -> Result<Self, NetError> {
        let version = match bytes.get(..8) {
            Some(m) if m == MAGIC => 1,
            Some(m) if m == MAGIC2 => 2,
            Some(m) if m == MAGIC3 => 3,
            _ => return Err(NetError::Magic),
        };
        let head = [12, 16, 16 + 1 + 64][version - 1];
        if bytes.len() < head {
            return Err(NetError::Magic);
        }
        let hidden = u32::from_le_bytes(bytes[8..12].try_into().expect("4 bytes")) as usize;
        if hidden == 0 || hidden > MAX_HIDDEN {
            return Err(NetError::Hidden(hidden));
        }
        let buckets = if version > 1 {
            u32::from_le_bytes(bytes[12..16].try_into().expect("4 bytes")) as usize
        } else {
            1
        };
        if buckets == 0 || buckets > MAX_BUCKETS || (version == 2 && buckets == 1) {
            return Err(NetError::Buckets(buckets));
        }
        let inputs = if version == 3 {
            let kb: [u8; 64] = bytes[17..81].try_into().expect("64 bytes");
            match bytes[16] {
                m @ (0 | 1) => Inputs::new(m == 1, kb)
                    .filter(|i| !i.is_plain())
                    .ok_or(NetError::Inputs)?,
                _ => return Err(NetError::Inputs),
            }
        } else {
            Inputs::PLAIN
        };
        let want = Self::file_len(hidden, buckets, &inputs);
        if bytes.len() != want {
            return Err(NetError::Length {
                hidden,
                found: bytes.len(),
                want,
            });
        }
        let body = &bytes[..want - 8];
        let stored = u64::from_le_bytes(bytes[want - 8..].try_into().expect("8 bytes"));
        let found = fnv1a64(body);
        if stored != found {
            return Err(NetError::Checksum { stored, found });
        }
        let biases_at = body.len() - 4 * buckets;
        let mut words = body[head..biases_at]
            .chunks_exact(2)
            .map(|c| i16::from_le_bytes([c[0], c[1]]));
        let mut take = |n: usize| words.by_ref().take(n).collect::<Vec<i16>>();
        let ft_w = take(inputs.rows() * hidden);
        let ft_b = take(hidden);
        let out_w = take(2 * hidden * buckets);
        let out_b = body[biases_at..]
            .chunks_exact(4)
            .map(|c| i32::from_le_bytes(c.try_into().expect("4 bytes")))
            .collect();
        // The trainer clips; a file outside the clip could overflow an accumulator.
        let ft_max = (WEIGHT_CLIP * QA as f32).ceil() as i32;
        let out_max = (WEIGHT_CLIP * QB as f32).ceil() as i32;
        for &v in ft_w.iter().chain(&ft_b) {
            if i32::from(v).abs() > ft_max {
                return Err(NetError::Range(v.into()));
            }
        }
        for &v in &out_w {
            if i32::from(v).abs() > out_max {
                return Err(NetError::Range(v.into()));
            }
        }
        Ok(Network {
            hidden,
            buckets,
            inputs,
            ft_w,
            ft_b,
            out_w,
            out_b,
            simd: simd::Runnable::chosen(),
        })
    }

    /// This net's identity as [`embedded_id`] writes it (`nnue:` and the file's checksum):
    /// what tables fitted to a net record. Serialises the net; not for hot paths.
    pub(crate) fn id(&self) -> String {
        let bytes = self.to_bytes();
        let sum = &bytes[bytes.len() - 8..];
        format!(
            "nnue:{:016x}",
            u64::from_le_bytes(sum.try_into().expect("8 bytes"))
        )
    }

    /// Read a network file named by the `EvalFile` option (a regular file, bounded size).
    pub fn load(path: &std::path::Path) -> Result<Self, String> {
        let widest = Inputs {
            mirror: true,
            king_buckets: [0; 64],
            blocks: MAX_KING_BUCKETS as u8,
        };
        let limit = Self::file_len(MAX_HIDDEN, MAX_BUCKETS, &widest) as u64;
        let bytes = fileio::read(path, limit).map_err(|e| e.into_io().to_string())?;
        Network::from_bytes(&bytes).map_err(|e| e.to_string())
    }

    /// The embedded network, parsed once.
    pub fn embedded() -> Arc<Network> {
        static NET: OnceLock<Arc<Network>> = OnceLock::new();
        NET.get_or_init(|| {
            Arc::new(
                Network::from_bytes(EMBEDDED_NET).expect("the embedded net is checked by its test"),
            )
        })
        .clone()
    }

    /// Add (`add`) or remove feature row `f` of the first layer to `acc` in place.
    #[inline]
    fn apply(&self, acc: &mut [i16], f: usize, add: bool) {
        let row = &self.ft_w[f * self.hidden..(f + 1) * self.hidden];
        if add {
            for (a, w) in acc.iter_mut().zip(row) {
                *a += *w;
            }
        } else {
            for (a, w) in acc.iter_mut().zip(row) {
                *a -= *w;
            }
        }
    }

    /// The first-layer row number `r`.
    #[inline]
    fn row(&self, r: usize) -> &[i16] {
        &self.ft_w[r * self.hidden..(r + 1) * self.hidden]
    }

    /// Both perspectives' accumulators of `board` from scratch (`acc` = white then black).
    pub(crate) fn refresh(&self, board: &Board, acc: &mut [i16]) {
        let (white, black) = acc.split_at_mut(self.hidden);
        self.refresh_half(board, Color::White, white);
        self.refresh_half(board, Color::Black, black);
    }

    /// Perspective `persp`'s accumulator of `board` from scratch.
    fn refresh_half(&self, board: &Board, persp: Color, half: &mut [i16]) {
        half.copy_from_slice(&self.ft_b);
        let view = self.inputs.view_of(board, persp);
        for color in [Color::White, Color::Black] {
            for piece in Piece::ALL {
                for sq in board.colored_pieces(color, piece) {
                    let f = feature(color, piece, sq);
                    let f = if persp == Color::White { f } else { flip(f) };
                    self.apply(half, view.row(f), true);
                }
            }
        }
    }

    /// `dst = src` after the move's [`Delta`], both perspectives, in one pass over each half
    /// (the search's update: reading the parent's accumulator once and writing the child's
    /// once, instead of a copy and then a pass per changed feature). The plain layout's rows.
    #[inline]
    pub(crate) fn update_from(&self, src: &[i16], dst: &mut [i16], d: &Delta) {
        let h = self.hidden;
        let (sw, sb) = src.split_at(h);
        let (dw, db) = dst.split_at_mut(h);
        self.update_half(sw, dw, d, usize::from);
        self.update_half(sb, db, d, |x| usize::from(flip(x)));
    }

    /// [`Network::update_from`] under another input layout: each perspective reads the rows
    /// of its view after the move (`views`, White's then Black's), and a perspective whose
    /// view the move changed (`d.refresh`) is refreshed from `child`, the board after it.
    #[inline]
    fn update_from_views(
        &self,
        src: &[i16],
        dst: &mut [i16],
        d: &Delta,
        views: [View; 2],
        child: &Board,
    ) {
        let h = self.hidden;
        let (sw, sb) = src.split_at(h);
        let (dw, db) = dst.split_at_mut(h);
        if d.refresh & 1 != 0 {
            self.refresh_half(child, Color::White, dw);
        } else {
            self.update_half(sw, dw, d, |x| views[0].row(x));
        }
        if d.refresh & 2 != 0 {
            self.refresh_half(child, Color::Black, db);
        } else {
            self.update_half(sb, db, d, |x| views[1].row(flip(x)));
        }
    }

    /// One perspective's `t = s` after `d`, `row` giving the first-layer row of a feature.
    #[inline(always)]
    fn update_half(&self, s: &[i16], t: &mut [i16], d: &Delta, row: impl Fn(u16) -> usize) {
        let subs = &d.sub[..d.n_sub as usize];
        let adds = &d.add[..d.n_add as usize];
        let p = self.simd;
        match (subs, adds) {
            // A quiet move or a promotion without capture: one out, one in.
            (&[s1], &[a1]) => simd::sub_add(p, s, t, self.row(row(s1)), self.row(row(a1))),
            // A capture (en passant too): two out, one in.
            (&[s1, s2], &[a1]) => {
                let (r1, r2) = (self.row(row(s1)), self.row(row(s2)));
                simd::sub2_add(p, s, t, r1, r2, self.row(row(a1)))
            }
            // Castling, the null move, anything else: copy, then feature by feature.
            _ => {
                t.copy_from_slice(s);
                for &x in subs {
                    self.apply(t, row(x), false);
                }
                for &x in adds {
                    self.apply(t, row(x), true);
                }
            }
        }
    }

    /// The output bucket of `board`.
    #[inline]
    pub(crate) fn bucket_of(&self, board: &Board) -> usize {
        bucket(board.occupied().len() as usize, self.buckets)
    }

    /// The evaluation (centipawns, `stm`'s view) from both accumulators (white then black),
    /// through output layer `bucket`.
    #[inline]
    pub(crate) fn output(&self, acc: &[i16], stm: Color, bucket: usize) -> i32 {
        let (white, black) = acc.split_at(self.hidden);
        let (us, them) = match stm {
            Color::White => (white, black),
            Color::Black => (black, white),
        };
        let h2 = 2 * self.hidden;
        let (w_us, w_them) = self.out_w[bucket * h2..(bucket + 1) * h2].split_at(self.hidden);
        let half = |a: &[i16], w: &[i16]| -> i64 { simd::screlu_dot(self.simd, a, w) };
        let sum = half(us, w_us) + half(them, w_them);
        let out = sum / i64::from(QA) + i64::from(self.out_b[bucket]);
        (out * i64::from(SCALE) / i64::from(QA * QB)) as i32
    }

    /// Evaluate `board` from scratch (side to move's view): for tools and checks, not the
    /// search (which keeps accumulators).
    pub fn evaluate(&self, board: &Board) -> i32 {
        let mut acc = vec![0i16; 2 * self.hidden];
        self.refresh(board, &mut acc);
        self.output(&acc, board.side_to_move(), self.bucket_of(board))
    }
}

/// The feature of a `color` `piece` on `sq` from White's perspective: `color·384 + piece·64 +
/// square`. Black's perspective is [`flip`] of it.
#[inline]
pub fn feature(color: Color, piece: Piece, sq: Square) -> u16 {
    (color as u16) * 384 + (piece as u16) * 64 + sq as u16
}

/// The same piece from the other perspective: own and enemy swapped, ranks mirrored (`^ 56`
/// touches only the rank bits of the square, below the piece bits).
#[inline]
pub fn flip(f: u16) -> u16 {
    let side = if f < 384 { 384 } else { 0 };
    side + ((f % 384) ^ 56)
}

/// The first-layer features a move removes and adds (White's perspective), and under an
/// input layout other than the plain one the perspectives whose view the move changed
/// (`refresh`: bit 0 White's, bit 1 Black's; the king crossed into another bucket or wing),
/// which no update can follow.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Delta {
    pub sub: [u16; 2],
    pub add: [u16; 2],
    pub n_sub: u8,
    pub n_add: u8,
    pub refresh: u8,
}

impl Delta {
    fn sub(&mut self, f: u16) {
        self.sub[self.n_sub as usize] = f;
        self.n_sub += 1;
    }
    fn add(&mut self, f: u16) {
        self.add[self.n_add as usize] = f;
        self.n_add += 1;
    }

    /// What `mv` (legal in `board`) changes under input layout `inputs`: a quiet move or
    /// capture, a promotion, en passant and castling in both notations the board uses (king
    /// takes own rook, Chess960 too).
    #[inline]
    pub(crate) fn of_move(inputs: &Inputs, board: &Board, mv: Move) -> Delta {
        let stm = board.side_to_move();
        let mut d = Delta::default();
        let Some(piece) = board.piece_on(mv.from) else {
            return d;
        };
        if piece == Piece::King && !inputs.is_plain() {
            d.set_refresh(inputs, board, mv);
        }
        if board.colors(stm).has(mv.to) {
            // Castling: the king "captures" its own rook and both land on fixed files.
            let (kf, rf) = castle_files(mv);
            let rank = mv.from.rank();
            d.sub(feature(stm, Piece::King, mv.from));
            d.sub(feature(stm, Piece::Rook, mv.to));
            d.add(feature(stm, Piece::King, Square::new(kf, rank)));
            d.add(feature(stm, Piece::Rook, Square::new(rf, rank)));
            return d;
        }
        d.sub(feature(stm, piece, mv.from));
        d.add(feature(stm, mv.promotion.unwrap_or(piece), mv.to));
        if let Some(victim) = board.piece_on(mv.to) {
            d.sub(feature(!stm, victim, mv.to));
        } else if piece == Piece::Pawn && mv.from.file() != mv.to.file() {
            d.sub(feature(
                !stm,
                Piece::Pawn,
                Square::new(mv.to.file(), mv.from.rank()),
            ));
        }
        d
    }

    /// King move `mv`: does it change its side's view (then that perspective is refreshed)?
    fn set_refresh(&mut self, inputs: &Inputs, board: &Board, mv: Move) {
        let stm = board.side_to_move();
        let to = if board.colors(stm).has(mv.to) {
            Square::new(castle_files(mv).0, mv.from.rank())
        } else {
            mv.to
        };
        let rel = if stm == Color::White {
            to as u8
        } else {
            to as u8 ^ 56
        };
        if inputs.view(rel) != inputs.view_of(board, stm) {
            self.refresh |= 1 << (stm as u8);
        }
    }
}

/// Where castling `mv` (king takes own rook) puts the king and the rook: files g and f
/// towards the h-side rook, c and d towards the a-side.
#[inline]
fn castle_files(mv: Move) -> (File, File) {
    if mv.to.file() > mv.from.file() {
        (File::G, File::F)
    } else {
        (File::C, File::D)
    }
}

/// The search's accumulators, one slot per ply, each computed or pending a [`Delta`] from
/// the slot before it (the null move's delta is empty).
pub(crate) struct AccStack {
    hidden: usize,
    acc: Vec<i16>,
    pending: Vec<Option<Delta>>,
    /// The net's input layout (a copy: the search's moves read it without the net), and
    /// whether it is the plain one, whose path never looks at views.
    inputs: Inputs,
    plain: bool,
    /// Each computed slot's views, White's and Black's (not read for a plain net).
    views: Vec<[View; 2]>,
    /// The board after the move of a pending delta that refreshes a perspective (written only
    /// then: a king crossing into another view, a few moves in a hundred).
    boards: Vec<Board>,
}

impl AccStack {
    pub(crate) fn new(net: &Network, plies: usize) -> Self {
        AccStack {
            hidden: net.hidden,
            acc: vec![0; plies * 2 * net.hidden],
            pending: vec![None; plies],
            inputs: net.inputs,
            plain: net.inputs.is_plain(),
            views: vec![[View::default(); 2]; plies],
            boards: vec![Board::default(); plies],
        }
    }

    /// Does this stack fit `net` (same hidden width)?
    pub(crate) fn fits(&self, net: &Network) -> bool {
        self.hidden == net.hidden
    }

    /// Slot 0 from `root` from scratch (for `net`, whose layout the stack takes on).
    pub(crate) fn reset(&mut self, net: &Network, root: &Board) {
        let w = 2 * self.hidden;
        net.refresh(root, &mut self.acc[..w]);
        self.pending[0] = None;
        self.inputs = net.inputs;
        self.plain = net.inputs.is_plain();
        self.views[0] = [Color::White, Color::Black].map(|c| net.inputs.view_of(root, c));
    }

    /// Record that slot `ply` is the slot before it after `mv`, played from `board` to
    /// `child` (the board is kept only when the move changes a perspective's view).
    #[inline]
    pub(crate) fn push_move(&mut self, ply: usize, board: &Board, mv: Move, child: &Board) {
        let d = Delta::of_move(&self.inputs, board, mv);
        if d.refresh != 0 {
            self.boards[ply].clone_from(child);
        }
        self.pending[ply] = Some(d);
    }

    /// Record that slot `ply` is the slot before it (a null move).
    #[inline]
    pub(crate) fn push_null(&mut self, ply: usize) {
        self.pending[ply] = Some(Delta::default());
    }

    /// The evaluation at `ply` (side to move `stm`): apply what is pending from the nearest
    /// computed slot, then the output layer.
    #[inline]
    pub(crate) fn evaluate(&mut self, net: &Network, ply: usize, board: &Board) -> i32 {
        let w = 2 * self.hidden;
        let mut base = ply;
        while self.pending[base].is_some() {
            base -= 1;
        }
        for p in base + 1..=ply {
            let d = self.pending[p].take().expect("pending up to ply");
            let (before, after) = self.acc.split_at_mut(p * w);
            let (src, dst) = (&before[(p - 1) * w..], &mut after[..w]);
            if self.plain {
                net.update_from(src, dst, &d);
            } else {
                let mut views = self.views[p - 1];
                for (i, c) in [Color::White, Color::Black].into_iter().enumerate() {
                    if d.refresh & (1 << i) != 0 {
                        views[i] = self.inputs.view_of(&self.boards[p], c);
                    }
                }
                self.views[p] = views;
                net.update_from_views(src, dst, &d, views, &self.boards[p]);
            }
        }
        net.output(
            &self.acc[ply * w..(ply + 1) * w],
            board.side_to_move(),
            net.bucket_of(board),
        )
    }

    /// The accumulators at `ply` (after [`AccStack::evaluate`] there): for the debug check.
    #[cfg(any(test, debug_assertions))]
    pub(crate) fn slot(&self, ply: usize) -> &[i16] {
        let w = 2 * self.hidden;
        &self.acc[ply * w..(ply + 1) * w]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::board::{legal_moves, parse_fen_with};

    /// A small net with distinct weights, so a wrong feature index changes the output.
    fn test_net(hidden: usize) -> Network {
        let mut s = 0x1234_5678_u64;
        let mut next = |m: i16| {
            s = crate::board::mix64(s.wrapping_add(crate::board::GOLDEN_GAMMA));
            (s % (2 * m as u64 + 1)) as i16 - m
        };
        let ft_w = (0..INPUTS * hidden).map(|_| next(300)).collect();
        let ft_b = (0..hidden).map(|_| next(100)).collect();
        let out_w = (0..2 * hidden).map(|_| next(100)).collect();
        Network::from_parts(hidden, ft_w, ft_b, out_w, vec![1234])
    }

    #[test]
    fn file_round_trips_and_damage_is_refused() {
        let net = test_net(8);
        let bytes = net.to_bytes();
        assert_eq!(Network::from_bytes(&bytes).unwrap(), net);
        assert!(matches!(
            Network::from_bytes(&bytes[..bytes.len() - 1]),
            Err(NetError::Length { .. })
        ));
        let mut bad = bytes.clone();
        bad[100] ^= 1;
        assert!(matches!(
            Network::from_bytes(&bad),
            Err(NetError::Checksum { .. })
        ));
        assert_eq!(Network::from_bytes(b"ACTNNUE0xxxx"), Err(NetError::Magic));
    }

    #[test]
    fn bucketed_nets_round_trip_and_choose_by_piece_count() {
        let mut s = 99u64;
        let mut next = |m: i16| {
            s = crate::board::mix64(s.wrapping_add(crate::board::GOLDEN_GAMMA));
            (s % (2 * m as u64 + 1)) as i16 - m
        };
        let h = 8;
        let ft_w: Vec<i16> = (0..INPUTS * h).map(|_| next(200)).collect();
        let ft_b: Vec<i16> = (0..h).map(|_| next(100)).collect();
        let out_w: Vec<i16> = (0..2 * h * 8).map(|_| next(100)).collect();
        let out_b: Vec<i32> = (0..8).map(|i| 1000 * i).collect();
        let net = Network::from_parts(h, ft_w.clone(), ft_b.clone(), out_w.clone(), out_b);
        let bytes = net.to_bytes();
        assert_eq!(&bytes[..8], b"ACTNNUE2");
        assert_eq!(Network::from_bytes(&bytes).unwrap(), net);
        assert!(matches!(
            Network::from_bytes(&bytes[..bytes.len() - 2]),
            Err(NetError::Length { .. })
        ));
        // A version-2 header declaring 1 or 17 buckets; the message names the range it allows.
        for n in [1u32, 17] {
            let mut b = bytes.clone();
            b[12..16].copy_from_slice(&n.to_le_bytes());
            let e = Network::from_bytes(&b).unwrap_err();
            assert_eq!(e, NetError::Buckets(n as usize));
            assert!(e.to_string().ends_with("a version-2 net has 2..=16"), "{e}");
        }
        // Buckets split 2..=32 pieces evenly; the start position is in the last.
        assert_eq!(
            (bucket(2, 8), bucket(32, 8), bucket(17, 8), bucket(32, 1)),
            (0, 7, 3, 0)
        );
        let start = parse_fen_with(
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
            false,
        )
        .unwrap();
        assert_eq!(net.bucket_of(&start), 7);
        // The same network with only bucket 7's output layer is the same evaluation there.
        let last = Network::from_parts(h, ft_w, ft_b, out_w[7 * 2 * h..].to_vec(), vec![7000]);
        assert_eq!(net.evaluate(&start), last.evaluate(&start));
    }

    #[test]
    fn the_embedded_net_parses() {
        assert_eq!(Network::embedded().id(), embedded_id());
        assert_ne!(test_net(8).id(), embedded_id());
        let net = Network::embedded();
        assert!(net.hidden() >= 8);
        assert_eq!(net.to_bytes(), EMBEDDED_NET);
    }

    #[test]
    fn flip_is_an_involution_and_mirrors() {
        for f in 0..768u16 {
            assert_eq!(flip(flip(f)), f);
        }
        // A white pawn on e2 is, from Black's side, an enemy pawn on e7.
        let wp = feature(Color::White, Piece::Pawn, Square::E2);
        assert_eq!(flip(wp), feature(Color::Black, Piece::Pawn, Square::E7));
    }

    #[test]
    fn mirrored_positions_evaluate_the_same() {
        let net = test_net(16);
        let a = parse_fen_with(
            "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3",
            false,
        )
        .unwrap();
        let b = parse_fen_with(
            "rnbqkb1r/pppp1ppp/5n2/4p3/4P3/2N5/PPPP1PPP/R1BQKBNR b KQkq - 2 3",
            false,
        )
        .unwrap();
        assert_eq!(net.evaluate(&a), net.evaluate(&b));
    }

    /// Every move kind, updated incrementally along random games, equals a refresh: the
    /// positions hold castling both ways, en passant, promotions with and without capture,
    /// and a Chess960 start.
    #[test]
    fn incremental_updates_equal_a_refresh() {
        // 48 lanes: whole AVX2 vectors, and one AVX-512 vector plus a tail. Every path this
        // CPU runs must give the portable refresh's accumulators and evaluation.
        let plain = test_net(48).with_simd(Simd::Portable).unwrap();
        let mut paths = 0;
        for simd in Simd::ALL {
            let Some(net) = plain.clone().with_simd(simd) else {
                continue;
            };
            paths += 1;
            random_games_agree(&net, &plain);
        }
        assert!(paths >= 1);
    }

    /// Random games from awkward starts, evaluated incrementally by `net` every third ply and
    /// compared with `plain`'s refresh; every kind of move must have occurred.
    fn random_games_agree(net: &Network, plain: &Network) {
        let starts = [
            (
                "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
                false,
            ),
            (
                "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
                false,
            ),
            ("n1n5/PPPk4/8/8/8/8/4Kppp/5N1N b - - 0 1", false),
            ("r3k2r/8/8/3pP3/8/8/8/R3K2R w KQkq d6 0 1", false),
            (
                "bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/NPP1P1PP/BQ1BNRKR w HFhf - 2 9",
                true,
            ),
            ("1r2k1r1/8/8/8/8/8/8/1R2K1R1 w GBgb - 0 1", true),
        ];
        let mut seen_castle = 0;
        let mut seen_ep = 0;
        let mut seen_promo = 0;
        for (i, (fen, c960)) in starts.iter().enumerate() {
            for game in 0..20u64 {
                let mut board = parse_fen_with(fen, *c960).unwrap();
                let mut stack = AccStack::new(net, 64);
                stack.reset(net, &board);
                let mut s = (i as u64) << 32 | game;
                for ply in 1..60 {
                    let moves = legal_moves(&board);
                    if moves.is_empty() {
                        break;
                    }
                    s = crate::board::mix64(s.wrapping_add(crate::board::GOLDEN_GAMMA));
                    let mv = moves[(s % moves.len() as u64) as usize];
                    seen_castle += crate::board::is_castle(&board, mv) as u32;
                    seen_ep += crate::board::is_en_passant(&board, mv) as u32;
                    seen_promo += mv.promotion.is_some() as u32;
                    let before = board.clone();
                    board.play_unchecked(mv);
                    stack.push_move(ply, &before, mv, &board);
                    // Evaluate only every third ply: pending deltas pile up as in a search.
                    if ply % 3 == 0 || ply == 59 {
                        let got = stack.evaluate(net, ply, &board);
                        let mut fresh = vec![0i16; 2 * net.hidden];
                        plain.refresh(&board, &mut fresh);
                        let name = net.simd().name();
                        assert_eq!(
                            stack.slot(ply),
                            &fresh[..],
                            "{name} {fen} game {game} ply {ply}"
                        );
                        assert_eq!(got, plain.evaluate(&board), "{name}");
                    }
                }
            }
        }
        assert!(
            seen_castle > 0 && seen_ep > 0 && seen_promo > 0,
            "{seen_castle} {seen_ep} {seen_promo}"
        );
    }

    /// `test_net`'s weights under another input layout: block `k` of the first layer is the
    /// plain net's rows divided by 8 (so most accumulators stay inside SCReLU's range and a
    /// changed row shows in the output) plus `k·7` on every weight (so the blocks differ),
    /// `sym` making each row equal its file mirror's first.
    fn layout_net(plain: &Network, inputs: Inputs, sym: bool) -> Network {
        let h = plain.hidden;
        let mut ft_w = Vec::with_capacity(inputs.rows() * h);
        for k in 0..inputs.rows() / INPUTS {
            for f in 0..INPUTS {
                let src = if sym { f.min(f ^ 7) } else { f };
                ft_w.extend(
                    plain.ft_w[src * h..(src + 1) * h]
                        .iter()
                        .map(|w| w / 8 + 7 * k as i16),
                );
            }
        }
        let (b, ow, ob) = (plain.ft_b.clone(), plain.out_w.clone(), plain.out_b.clone());
        Network::from_parts_with(inputs, h, ft_w, b, ow, ob)
    }

    #[test]
    fn named_layouts_map_king_squares_to_views() {
        let kb4 = Inputs::named("mirror-kb4").unwrap();
        assert_eq!(
            (kb4.rows(), kb4.name()),
            (4 * 768, "mirror-kb4".to_string())
        );
        // g1 is b1 mirrored (bucket 0, as c1), e1 is d1 mirrored (bucket 1), a2 bucket 2, d5
        // bucket 3.
        let v = |sq: Square| kb4.view(sq as u8);
        assert_eq!(v(Square::G1), View { base: 0, xor: 7 });
        assert_eq!(v(Square::B1), View { base: 0, xor: 0 });
        assert_eq!(v(Square::C1), View { base: 0, xor: 0 });
        assert_eq!(v(Square::D1), View { base: 768, xor: 0 });
        assert_eq!(v(Square::E1), View { base: 768, xor: 7 });
        assert_eq!(
            v(Square::A2),
            View {
                base: 2 * 768,
                xor: 0
            }
        );
        assert_eq!(
            v(Square::D5),
            View {
                base: 3 * 768,
                xor: 0
            }
        );
        // The mirrored row of a white knight on b1 is the knight on g1.
        let n = |sq| feature(Color::White, Piece::Knight, sq);
        assert_eq!(v(Square::G1).row(n(Square::B1)), n(Square::G1) as usize);
        // A board's views: Black's king square is flipped vertically (e8 is its e1, g8 its g1).
        let b = parse_fen_with("6k1/8/8/8/8/8/8/4K3 w - - 0 1", false).unwrap();
        assert_eq!(kb4.view_of(&b, Color::White), View { base: 768, xor: 7 });
        assert_eq!(kb4.view_of(&b, Color::Black), View { base: 0, xor: 7 });
        let b = parse_fen_with("4k3/8/8/8/8/8/1K6/8 w - - 0 1", false).unwrap();
        assert_eq!(
            kb4.view_of(&b, Color::White),
            View {
                base: 2 * 768,
                xor: 0
            }
        );
        assert_eq!(kb4.view_of(&b, Color::Black), View { base: 768, xor: 7 });
        assert_eq!(Inputs::named("mirror").unwrap().rows(), 768);
        assert_eq!(Inputs::PLAIN.view(Square::H8 as u8), View::default());
        assert!(Inputs::named("kb4").is_none());
        // Maps refused: a bucket skipped, too many buckets, a mirrored map that is not
        // symmetric.
        let mut kb = [0u8; 64];
        kb[10] = 2;
        assert!(Inputs::new(false, kb).is_none());
        assert!(Inputs::new(false, [16; 64]).is_none());
        kb[10] = 1;
        assert!(Inputs::new(false, kb).is_some());
        assert!(Inputs::new(true, kb).is_none());
    }

    /// A bucketed, mirrored net whose first layer's blocks are all the plain net's rows made
    /// file-symmetric evaluates every position as that symmetric plain net does, and the
    /// blocks are really read (a net with different blocks does not).
    #[test]
    fn layouts_with_equal_blocks_evaluate_as_the_plain_net() {
        let plain = test_net(16);
        let kb4 = Inputs::named("mirror-kb4").unwrap();
        let sym_plain = layout_net(&plain, Inputs::PLAIN, true);
        let mut equal = layout_net(&plain, kb4, true);
        let h = equal.hidden;
        for k in 1..4 {
            let (first, rest) = equal.ft_w.split_at_mut(768 * h);
            rest[(k - 1) * 768 * h..k * 768 * h].copy_from_slice(first);
        }
        let distinct = layout_net(&plain, kb4, true);
        let mut differs = 0;
        for fen in [
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
            "r4rk1/pp3ppp/2n5/3q4/3P4/2P5/P4PPP/R2QR1K1 b - - 0 14",
            "8/5k2/8/3K4/8/8/5P2/8 w - - 0 60",
            "2kr3r/ppp2ppp/8/8/8/8/PPP2PPP/R3K2R w KQ - 0 20",
        ] {
            let b = parse_fen_with(fen, false).unwrap();
            assert_eq!(equal.evaluate(&b), sym_plain.evaluate(&b), "{fen}");
            differs += usize::from(distinct.evaluate(&b) != sym_plain.evaluate(&b));
        }
        // Every position but the second has a king outside bucket 0 (g1 and g8 are in it).
        assert_eq!(differs, 3);
    }

    /// Under a mirrored layout a position and its left-right mirror image are the same input.
    #[test]
    fn mirrored_layouts_see_a_position_and_its_mirror_alike() {
        let net = layout_net(&test_net(16), Inputs::named("mirror-kb4").unwrap(), false);
        let plain = test_net(16);
        for (a, b) in [
            (
                "r4rk1/pp3ppp/2n5/3q4/3P4/2P5/P4PPP/R2QR1K1 b - - 0 14",
                "1kr4r/ppp3pp/5n2/4q3/4P3/5P2/PPP4P/1K1RQ2R b - - 0 14",
            ),
            // The kings on opposite wings: each side mirrors by its own king.
            (
                "2kr3r/ppp2ppp/8/8/8/8/PPP2PPP/R4RK1 w - - 0 20",
                "r3rk2/ppp2ppp/8/8/8/8/PPP2PPP/1KR4R w - - 0 20",
            ),
        ] {
            let (a, b) = (parse_fen_with(a, false), parse_fen_with(b, false));
            let (a, b) = (a.unwrap(), b.unwrap());
            assert_eq!(net.evaluate(&a), net.evaluate(&b));
            // The plain net (distinct weights per file) tells them apart.
            assert_ne!(plain.evaluate(&a), plain.evaluate(&b));
        }
    }

    /// Incremental updates under the mirrored, king-bucketed layout equal a refresh along
    /// random games (kings crossing wings and buckets refresh their perspective mid-chain).
    #[test]
    fn layout_updates_equal_a_refresh() {
        let net = layout_net(&test_net(16), Inputs::named("mirror-kb4").unwrap(), false);
        let portable = net.clone().with_simd(Simd::Portable).unwrap();
        random_games_agree(&net, &portable);
    }

    #[test]
    fn layout_files_round_trip_and_bad_layouts_are_refused() {
        let net = layout_net(&test_net(8), Inputs::named("mirror-kb4").unwrap(), false);
        let bytes = net.to_bytes();
        assert_eq!(&bytes[..8], b"ACTNNUE3");
        assert_eq!(Network::from_bytes(&bytes).unwrap(), net);
        let reseal = |mut b: Vec<u8>| {
            let n = b.len() - 8;
            let sum = fnv1a64(&b[..n]);
            b[n..].copy_from_slice(&sum.to_le_bytes());
            b
        };
        let mut b = bytes.clone();
        b[16] = 2; // the mirror flag
        assert_eq!(Network::from_bytes(&reseal(b)), Err(NetError::Inputs));
        let mut b = bytes.clone();
        b[17 + 1] = 3; // b1 no longer g1's bucket: not symmetric
        assert_eq!(Network::from_bytes(&reseal(b)), Err(NetError::Inputs));
        // A plain layout is written as version 1 or 2, never 3.
        let plain = layout_net(&test_net(8), Inputs::PLAIN, false);
        assert_eq!(&plain.to_bytes()[..8], b"ACTNNUE1");
        assert!(matches!(
            Network::from_bytes(&bytes[..bytes.len() - 2]),
            Err(NetError::Length { .. })
        ));
    }

    #[test]
    fn output_matches_a_hand_computed_value() {
        // Hidden width 1, one white pawn on a2 (feature 8) and the kings: weights chosen so
        // the sums are known by hand.
        let mut ft_w = vec![0i16; INPUTS];
        ft_w[feature(Color::White, Piece::Pawn, Square::A2) as usize] = 100;
        let net = Network::from_parts(1, ft_w, vec![50], vec![64, -32], vec![0]);
        let b = parse_fen_with("4k3/8/8/8/8/8/P7/4K3 w - - 0 1", false).unwrap();
        // White's accumulator 50 + 100 = 150; Black's 50 (the pawn is feature flip(8), 0).
        // sum = 150²·64 + 50²·(−32) = 1,440,000 − 80,000 = 1,360,000; /255 = 5,333;
        // × 400 / (255·64) = 130 (integer division).
        assert_eq!(net.evaluate(&b), 5333 * 400 / (255 * 64));
        assert_eq!(net.evaluate(&b), 130);
    }
}
