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
        // The output kernel multiplies `clamp(acc, 0, QA) · w` in `i16` (see `kernel`).
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
        }
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
        for (persp, s, t) in [(false, sw, dw), (true, sb, db)] {
            let f = |x: u16| if persp { flip(x) } else { x };
            match (subs, adds) {
                // A quiet move or a promotion without capture: one out, one in.
                (&[s1], &[a1]) => kernel::sub_add(s, t, self.row(f(s1)), self.row(f(a1))),
                // A capture (en passant too): two out, one in.
                (&[s1, s2], &[a1]) => {
                    kernel::sub2_add(s, t, self.row(f(s1)), self.row(f(s2)), self.row(f(a1)))
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
        let half = |a: &[i16], w: &[i16]| -> i64 { kernel::screlu_dot(a, w) };
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

/// The hot loops of inference, written so the compiler vectorises them, and compiled twice on
/// x86-64: for the build's baseline target and with AVX2, the copy chosen once at run time
/// (`is_x86_feature_detected!`, cached by std). The accumulator updates are the same Rust
/// source in both copies; the output's dot product has its own AVX2 code (below), exact
/// integer arithmetic as the portable one. `avx2_and_portable_kernels_agree` checks both
/// against a plain sum on random data.
#[allow(unsafe_code)]
mod kernel {
    /// `Σ clamp(a, 0, QA)² · w` over a half of the hidden layer. `v · w` fits an `i16`
    /// (`255 · 127`, the loader refuses output weights beyond ±127), so the products pair up
    /// as `pmaddwd` does (`(v·w) · v` summed two at a time in `i32`); each term is at most
    /// `255² · 127 < 2²³`, so blocks of 256 terms are summed in `i32` without overflow and the
    /// blocks in `i64`.
    #[inline(always)]
    fn screlu_dot_body(a: &[i16], w: &[i16]) -> i64 {
        let mut total = 0i64;
        for (ab, wb) in a.chunks(256).zip(w.chunks(256)) {
            let s: i32 = ab
                .iter()
                .zip(wb)
                .map(|(&x, &w)| {
                    let v = x.clamp(0, super::QA as i16);
                    i32::from(v.wrapping_mul(w)) * i32::from(v)
                })
                .sum();
            total += i64::from(s);
        }
        total
    }

    #[inline(always)]
    fn sub_add_body(s: &[i16], t: &mut [i16], r: &[i16], a: &[i16]) {
        for (((t, &s), &r), &a) in t.iter_mut().zip(s).zip(r).zip(a) {
            *t = s - r + a;
        }
    }

    #[inline(always)]
    fn sub2_add_body(s: &[i16], t: &mut [i16], r1: &[i16], r2: &[i16], a: &[i16]) {
        for ((((t, &s), &r1), &r2), &a) in t.iter_mut().zip(s).zip(r1).zip(r2).zip(a) {
            *t = s - r1 - r2 + a;
        }
    }

    /// The AVX2 copies. The output's dot product is written with intrinsics over 16 lanes:
    /// left to the compiler, its body became 8-lane loops behind a block-length prologue that
    /// cost more than the arithmetic at this network's widths (callgrind, `actuary bench 11`:
    /// 187 instructions a call of 128 terms, 113 now). Widths that are not a multiple of 16
    /// take the body; the result is the same integer either way (the sums are exact).
    #[cfg(target_arch = "x86_64")]
    mod avx2 {
        use std::arch::x86_64::{
            __m256i, _mm_add_epi32, _mm_cvtsi128_si32, _mm_shuffle_epi32, _mm256_add_epi32,
            _mm256_castsi256_si128, _mm256_extracti128_si256, _mm256_loadu_si256,
            _mm256_madd_epi16, _mm256_max_epi16, _mm256_min_epi16, _mm256_mullo_epi16,
            _mm256_set1_epi16, _mm256_setzero_si256,
        };

        const LANES: usize = 16;

        /// 16 lanes from `p`.
        ///
        /// # Safety
        /// 16 readable `i16` behind `p`, on a CPU with AVX2.
        #[inline(always)]
        unsafe fn load(p: *const i16) -> __m256i {
            // SAFETY: the caller's promise; unaligned loads are allowed.
            unsafe { _mm256_loadu_si256(p.cast()) }
        }

        #[target_feature(enable = "avx2")]
        pub(crate) fn screlu_dot(a: &[i16], w: &[i16]) -> i64 {
            let n = a.len();
            if !n.is_multiple_of(LANES) || w.len() != n {
                return super::screlu_dot_body(a, w);
            }
            let (a, w) = (a.as_ptr(), w.as_ptr());
            let zero = _mm256_setzero_si256();
            let qa = _mm256_set1_epi16(super::super::QA as i16);
            let mut total = 0i64;
            let mut block = 0;
            // blocks of 256 terms, as the body: their sum stays inside an i32
            while block < n {
                let end = (block + 256).min(n);
                let mut acc = _mm256_setzero_si256();
                let mut i = block;
                while i < end {
                    // SAFETY: i + 16 <= end <= n, the length of both slices, and this
                    // function runs only with AVX2 (its target feature).
                    let (x, y) = unsafe { (load(a.add(i)), load(w.add(i))) };
                    let v = _mm256_min_epi16(_mm256_max_epi16(x, zero), qa);
                    // v·w fits an i16 (255 · 127); pmaddwd multiplies by v again and adds pairs
                    let vw = _mm256_mullo_epi16(v, y);
                    acc = _mm256_add_epi32(acc, _mm256_madd_epi16(vw, v));
                    i += LANES;
                }
                let s = _mm_add_epi32(
                    _mm256_castsi256_si128(acc),
                    _mm256_extracti128_si256::<1>(acc),
                );
                let s = _mm_add_epi32(s, _mm_shuffle_epi32::<0b01_00_11_10>(s));
                let s = _mm_add_epi32(s, _mm_shuffle_epi32::<0b10_11_00_01>(s));
                total += i64::from(_mm_cvtsi128_si32(s));
                block = end;
            }
            total
        }

        // The accumulator updates stay the compiler's: its vectorised bodies ran no more
        // instructions than an intrinsics copy did (69 against 73 a call of 128 lanes).
        #[target_feature(enable = "avx2")]
        pub(crate) fn sub_add(s: &[i16], t: &mut [i16], r: &[i16], a: &[i16]) {
            super::sub_add_body(s, t, r, a)
        }

        #[target_feature(enable = "avx2")]
        pub(crate) fn sub2_add(s: &[i16], t: &mut [i16], r1: &[i16], r2: &[i16], a: &[i16]) {
            super::sub2_add_body(s, t, r1, r2, a)
        }
    }

    /// Whether the AVX2 copies run (x86-64 with AVX2 at run time).
    #[inline]
    pub(crate) fn avx2() -> bool {
        #[cfg(target_arch = "x86_64")]
        {
            std::arch::is_x86_feature_detected!("avx2")
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            false
        }
    }

    #[inline]
    pub(crate) fn screlu_dot(a: &[i16], w: &[i16]) -> i64 {
        #[cfg(target_arch = "x86_64")]
        if avx2() {
            // SAFETY: the CPU has AVX2 (checked at run time just above).
            return unsafe { avx2::screlu_dot(a, w) };
        }
        screlu_dot_body(a, w)
    }

    #[inline]
    pub(crate) fn sub_add(s: &[i16], t: &mut [i16], r: &[i16], a: &[i16]) {
        #[cfg(target_arch = "x86_64")]
        if avx2() {
            // SAFETY: the CPU has AVX2 (checked at run time just above).
            return unsafe { avx2::sub_add(s, t, r, a) };
        }
        sub_add_body(s, t, r, a)
    }

    #[inline]
    pub(crate) fn sub2_add(s: &[i16], t: &mut [i16], r1: &[i16], r2: &[i16], a: &[i16]) {
        #[cfg(target_arch = "x86_64")]
        if avx2() {
            // SAFETY: the CPU has AVX2 (checked at run time just above).
            return unsafe { avx2::sub2_add(s, t, r1, r2, a) };
        }
        sub2_add_body(s, t, r1, r2, a)
    }

    /// The portable copies, for the test that both agree.
    #[cfg(test)]
    pub(crate) mod portable {
        pub(crate) fn screlu_dot(a: &[i16], w: &[i16]) -> i64 {
            super::screlu_dot_body(a, w)
        }
        pub(crate) fn sub2_add(s: &[i16], t: &mut [i16], r1: &[i16], r2: &[i16], a: &[i16]) {
            super::sub2_add_body(s, t, r1, r2, a)
        }
        pub(crate) fn sub_add(s: &[i16], t: &mut [i16], r: &[i16], a: &[i16]) {
            super::sub_add_body(s, t, r, a)
        }
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
        let net = test_net(16);
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
                let mut stack = AccStack::new(&net, 64);
                stack.reset(&net, &board);
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
                        let got = stack.evaluate(&net, ply, &board);
                        let mut fresh = vec![0i16; 32];
                        net.refresh(&board, &mut fresh);
                        assert_eq!(stack.slot(ply), &fresh[..], "{fen} game {game} ply {ply}");
                        assert_eq!(got, net.evaluate(&board));
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

    #[test]
    fn avx2_and_portable_kernels_agree() {
        // Random accumulators over the whole i16 range (SCReLU clamps them) and weights within
        // the loader's limits; widths that are not multiples of any vector length too.
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for h in [1usize, 7, 32, 64, 100, 128, 256, 300, 1024] {
            let a: Vec<i16> = (0..h).map(|_| next() as i16).collect();
            let w: Vec<i16> = (0..h).map(|_| (next() % 255) as i16 - 127).collect();
            let want: i64 = a
                .iter()
                .zip(&w)
                .map(|(&a, &w)| {
                    let v = i64::from(a.clamp(0, QA as i16));
                    v * v * i64::from(w)
                })
                .sum();
            assert_eq!(kernel::portable::screlu_dot(&a, &w), want, "h {h}");
            assert_eq!(kernel::screlu_dot(&a, &w), want, "h {h}");
            let small = |n: &mut dyn FnMut() -> u64| -> Vec<i16> {
                (0..h).map(|_| (n() % 1001) as i16 - 500).collect()
            };
            let (s, r1, r2, ad) = (
                small(&mut next),
                small(&mut next),
                small(&mut next),
                small(&mut next),
            );
            let mut t1 = vec![0i16; h];
            let mut t2 = vec![0i16; h];
            kernel::sub2_add(&s, &mut t1, &r1, &r2, &ad);
            kernel::portable::sub2_add(&s, &mut t2, &r1, &r2, &ad);
            assert_eq!(t1, t2);
            for i in 0..h {
                assert_eq!(t1[i], s[i] - r1[i] - r2[i] + ad[i]);
            }
            kernel::sub_add(&s, &mut t1, &r1, &ad);
            kernel::portable::sub_add(&s, &mut t2, &r1, &ad);
            assert_eq!(t1, t2);
            assert_eq!(t1[h - 1], s[h - 1] - r1[h - 1] + ad[h - 1]);
        }
    }
}
