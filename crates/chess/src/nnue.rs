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
//! **Lazy updates.** A move records its feature changes ([`Delta`]: at most two removed, two
//! added) in the ply's slot; only when the search really evaluates a node are the pending
//! deltas applied, from the nearest computed ancestor down. A node pruned before its
//! evaluation never touches its accumulator (docs/design/chess-DESIGN.md §2: pay for
//! evaluation work only where it decides something).
//!
//! **Output buckets**: a net may have B output layers (`bucket`: equal ranges of the number
//! of pieces on the board), chosen per position; the first layer is shared.
//!
//! **File** (little-endian): `ACTNNUE1`, `u32` H, `i16` first-layer weights (768 rows of H),
//! `i16` first-layer biases (H), `i16` output weights (2H: side to move, then the other),
//! `i32` output bias, then `u64` FNV-1a of every byte before it. With B > 1 buckets:
//! `ACTNNUE2`, `u32` H, `u32` B, the first layer as above, B rows of 2H output weights, B `i32`
//! biases, the checksum. A truncated or altered file is refused.

use crate::board::{Board, Color, File, Move, Piece, Square};
use crate::datafile::fnv1a64;
use std::sync::{Arc, OnceLock};

mod simd;
pub use simd::Simd;

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
/// The most output buckets a file may declare.
pub(crate) const MAX_BUCKETS: usize = 16;

/// The committed network, embedded at build time (its SHA-256, training data and
/// hyper-parameters: data/chess/nets/README.md).
pub(crate) const EMBEDDED_NET: &[u8] = include_bytes!("../../../data/chess/nets/actuary-7.nnue");
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
    /// A version-2 file declares 2..=16 buckets (one bucket is written as version 1).
    #[error("{0} output buckets: a version-2 net has 2..={MAX_BUCKETS}")]
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
}

/// A quantised network.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Network {
    hidden: usize,
    /// Output buckets by the number of pieces on the board ([`bucket`]).
    buckets: usize,
    /// `INPUTS` rows of `hidden`.
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
    /// A network from its quantised parts (the trainer's export); panics on mismatched sizes.
    pub fn from_parts(
        hidden: usize,
        ft_w: Vec<i16>,
        ft_b: Vec<i16>,
        out_w: Vec<i16>,
        out_b: Vec<i32>,
    ) -> Self {
        let buckets = out_b.len();
        assert!((1..=MAX_BUCKETS).contains(&buckets));
        assert_eq!(ft_w.len(), INPUTS * hidden);
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
            ft_w,
            ft_b,
            out_w,
            out_b,
            simd: simd::Runnable::chosen(),
        }
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

    /// Bytes of a file: the version 1 layout when there is one bucket (so a v1 net is
    /// written back byte for byte), version 2 (a `u32` bucket count after H) otherwise.
    fn file_len(hidden: usize, buckets: usize) -> usize {
        let head = if buckets == 1 { 12 } else { 16 };
        head + 2 * (INPUTS * hidden + hidden + 2 * hidden * buckets) + 4 * buckets + 8
    }

    /// The file bytes (format in the module note).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut b = Vec::with_capacity(Self::file_len(self.hidden, self.buckets));
        b.extend_from_slice(if self.buckets == 1 { MAGIC } else { MAGIC2 });
        b.extend_from_slice(&(self.hidden as u32).to_le_bytes());
        if self.buckets > 1 {
            b.extend_from_slice(&(self.buckets as u32).to_le_bytes());
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
        let v2 = match bytes.get(..8) {
            Some(m) if m == MAGIC => false,
            Some(m) if m == MAGIC2 => true,
            _ => return Err(NetError::Magic),
        };
        let head = if v2 { 16 } else { 12 };
        if bytes.len() < head {
            return Err(NetError::Magic);
        }
        let hidden = u32::from_le_bytes(bytes[8..12].try_into().expect("4 bytes")) as usize;
        if hidden == 0 || hidden > MAX_HIDDEN {
            return Err(NetError::Hidden(hidden));
        }
        let buckets = if v2 {
            u32::from_le_bytes(bytes[12..16].try_into().expect("4 bytes")) as usize
        } else {
            1
        };
        if buckets == 0 || buckets > MAX_BUCKETS || (v2 && buckets == 1) {
            return Err(NetError::Buckets(buckets));
        }
        let want = Self::file_len(hidden, buckets);
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
        let ft_w = take(INPUTS * hidden);
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
        let limit = Self::file_len(MAX_HIDDEN, MAX_BUCKETS) as u64;
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

    /// The first-layer row of feature `f`.
    #[inline]
    fn row(&self, f: u16) -> &[i16] {
        let f = f as usize;
        &self.ft_w[f * self.hidden..(f + 1) * self.hidden]
    }

    /// Both perspectives' accumulators of `board` from scratch (`acc` = white then black).
    pub(crate) fn refresh(&self, board: &Board, acc: &mut [i16]) {
        let (white, black) = acc.split_at_mut(self.hidden);
        white.copy_from_slice(&self.ft_b);
        black.copy_from_slice(&self.ft_b);
        for color in [Color::White, Color::Black] {
            for piece in Piece::ALL {
                for sq in board.colored_pieces(color, piece) {
                    let f = feature(color, piece, sq);
                    self.apply(white, f as usize, true);
                    self.apply(black, flip(f) as usize, true);
                }
            }
        }
    }

    /// `dst = src` after the move's [`Delta`], both perspectives, in one pass over each half
    /// (the search's update: reading the parent's accumulator once and writing the child's
    /// once, instead of a copy and then a pass per changed feature).
    #[inline]
    pub(crate) fn update_from(&self, src: &[i16], dst: &mut [i16], d: &Delta) {
        let h = self.hidden;
        let (sw, sb) = src.split_at(h);
        let (dw, db) = dst.split_at_mut(h);
        let subs = &d.sub[..d.n_sub as usize];
        let adds = &d.add[..d.n_add as usize];
        let p = self.simd;
        for (persp, s, t) in [(false, sw, dw), (true, sb, db)] {
            let f = |x: u16| if persp { flip(x) } else { x };
            match (subs, adds) {
                // A quiet move or a promotion without capture: one out, one in.
                (&[s1], &[a1]) => simd::sub_add(p, s, t, self.row(f(s1)), self.row(f(a1))),
                // A capture (en passant too): two out, one in.
                (&[s1, s2], &[a1]) => {
                    let (r1, r2) = (self.row(f(s1)), self.row(f(s2)));
                    simd::sub2_add(p, s, t, r1, r2, self.row(f(a1)))
                }
                // Castling, the null move, anything else: copy, then feature by feature.
                _ => {
                    t.copy_from_slice(s);
                    for &x in subs {
                        self.apply(t, f(x) as usize, false);
                    }
                    for &x in adds {
                        self.apply(t, f(x) as usize, true);
                    }
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

/// The first-layer features a move removes and adds (White's perspective).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Delta {
    pub sub: [u16; 2],
    pub add: [u16; 2],
    pub n_sub: u8,
    pub n_add: u8,
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

    /// What `mv` (legal in `board`) changes: a quiet move or capture, a promotion, en passant
    /// and castling in both notations the board uses (king takes own rook, Chess960 too).
    #[inline]
    pub(crate) fn of_move(board: &Board, mv: Move) -> Delta {
        let stm = board.side_to_move();
        let mut d = Delta::default();
        let Some(piece) = board.piece_on(mv.from) else {
            return d;
        };
        if board.colors(stm).has(mv.to) {
            // Castling: the king "captures" its own rook and both land on fixed files.
            let rank = mv.from.rank();
            let (kf, rf) = if mv.to.file() > mv.from.file() {
                (File::G, File::F)
            } else {
                (File::C, File::D)
            };
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
}

/// The search's accumulators, one slot per ply, each computed or pending a [`Delta`] from
/// the slot before it (the null move's delta is empty).
pub(crate) struct AccStack {
    hidden: usize,
    acc: Vec<i16>,
    pending: Vec<Option<Delta>>,
}

impl AccStack {
    pub(crate) fn new(net: &Network, plies: usize) -> Self {
        AccStack {
            hidden: net.hidden,
            acc: vec![0; plies * 2 * net.hidden],
            pending: vec![None; plies],
        }
    }

    /// Does this stack fit `net` (same hidden width)?
    pub(crate) fn fits(&self, net: &Network) -> bool {
        self.hidden == net.hidden
    }

    /// Slot 0 from `root` from scratch.
    pub(crate) fn reset(&mut self, net: &Network, root: &Board) {
        let w = 2 * self.hidden;
        net.refresh(root, &mut self.acc[..w]);
        self.pending[0] = None;
    }

    /// Record that slot `ply` is the slot before it after `d`.
    #[inline]
    pub(crate) fn push(&mut self, ply: usize, d: Delta) {
        self.pending[ply] = Some(d);
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
            net.update_from(&before[(p - 1) * w..], &mut after[..w], &d);
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
                    stack.push(ply, Delta::of_move(&board, mv));
                    board.play_unchecked(mv);
                    // Evaluate only every third ply: pending deltas pile up as in a search.
                    if ply % 3 == 0 || ply == 59 {
                        let got = stack.evaluate(net, ply, &board);
                        let mut fresh = vec![0i16; 96];
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
