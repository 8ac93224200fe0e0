//! `train-net`: train the engine's network (`chess::nnue`) on the self-play corpus (issue 34).
//!
//! A small exact CPU trainer: sparse inputs (768 features per perspective), one first layer
//! shared by both perspectives, SCReLU, a linear output; the loss is the squared error of
//! `σ(out · SCALE / wdl_scale)` against `λ·result + (1 − λ)·σ(score / wdl_scale)`, both from the
//! side to move's view. Batches are shuffled per epoch by a seeded permutation and split over
//! threads, whose gradients are summed in thread order, so a run is a function of its settings
//! and thread count (one thread: bit-for-bit deterministic, tested). AdamW with a cosine
//! learning-rate decay; every weight clipped to ±[`WEIGHT_CLIP`] (what makes the `i16`
//! accumulators safe, see `chess::nnue`).
//!
//! The hold-out split is by game ([`crate::data::corpus::is_holdout`]), so no position of a held-out
//! game is trained on. After every epoch the quantised net (`--out`) and the run's state
//! (`OUT.train-state`: float weights, Adam moments, epoch) are written atomically; `--resume`
//! continues from the state and ends where an uninterrupted run would.

use crate::data::corpus::{Filter, Loader, is_holdout};
use chess::board::{Board, Color, Piece};
use chess::board::{GOLDEN_GAMMA, mix64};
use chess::nnue::{
    INPUT_LAYOUTS, INPUTS, Inputs, Network, QA, QB, SCALE, TrainKernels, View, WEIGHT_CLIP,
    feature, flip,
};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

const STATE_MAGIC: &[u8; 8] = b"ACTNTST1";

/// `actuary train-net`.
#[derive(Debug, Clone, clap::Args)]
pub struct TrainNetArgs {
    /// Corpus directories (each with its manifest.jsonl), comma-separated.
    #[arg(
        long,
        value_name = "DIR[,DIR]",
        value_delimiter = ',',
        default_value = "data/chess/selfplay"
    )]
    pub corpus: Vec<PathBuf>,
    /// The network file to write after every epoch (e.g. data/chess/nets/actuary-2.nnue).
    /// The run's state goes to FILE.train-state. Must be absent or a regular file; an
    /// existing one is replaced only with --force or --resume (checked before the corpus is
    /// loaded).
    #[arg(long, value_name = "FILE")]
    pub out: PathBuf,
    /// Replace an existing --out file (a net is never overwritten by accident).
    #[arg(long)]
    pub force: bool,
    /// Hidden width H of the (768 → H)×2 → 1 network.
    #[arg(long, value_name = "H", default_value_t = 128, value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub hidden: u32,
    /// Output buckets by the number of pieces on the board (equal ranges of 2..=32), each
    /// its own output layer over the shared first layer.
    #[arg(long, value_name = "B", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=16))]
    pub buckets: u32,
    /// Passes over the training positions.
    #[arg(long, default_value_t = 30, value_parser = clap::value_parser!(u32).range(1..=10_000))]
    pub epochs: u32,
    /// Positions per batch (one AdamW step each).
    #[arg(long, value_name = "N", default_value_t = 16_384, value_parser = clap::value_parser!(u32).range(1..))]
    pub batch: u32,
    /// AdamW step size at the start; it decays along a cosine to --final-lr-fraction of it.
    #[arg(long, value_name = "LR", default_value_t = 0.001, value_parser = positive)]
    pub lr: f64,
    /// The learning rate at the last batch, as a fraction of --lr.
    #[arg(long, value_name = "F", default_value_t = 0.05, value_parser = unit_interval)]
    pub final_lr_fraction: f64,
    /// AdamW decoupled weight decay.
    #[arg(long, value_name = "WD", default_value_t = 0.01, value_parser = non_negative)]
    pub weight_decay: f64,
    /// Target = λ·result + (1 − λ)·σ(score / wdl-scale).
    #[arg(long, value_name = "L", default_value_t = 0.3, value_parser = unit_interval)]
    pub lambda: f64,
    /// Centipawns per logistic unit of win probability. 148 is what `actuary tune` fitted to
    /// this engine's games (K = 1.173 in its base-10 form: 400 / (1.173 · ln 10)).
    #[arg(long, value_name = "CP", default_value_t = 148.0, value_parser = positive)]
    pub wdl_scale: f64,
    /// Percent of games held out (by a hash of the game id) to score every epoch.
    #[arg(long, value_name = "PCT", default_value_t = 5.0, value_parser = holdout_percent)]
    pub holdout: f64,
    /// Use at most this many training positions (the first the loader yields).
    #[arg(long, value_name = "N")]
    pub limit: Option<u64>,
    /// Train only on the games of this chunk (1-based, in each corpus's manifest order) and
    /// later ones, e.g. to leave out the games of older, weaker engines whose scores are
    /// poorer labels. The hold-out stays every chunk's, so losses compare with runs on the
    /// whole corpus.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub from_chunk: Option<u32>,
    /// Do not add the file-mirrored copy of training positions where no side may castle
    /// (a mirrored --inputs layout never adds it: the copy would be the same input).
    #[arg(long)]
    pub no_mirror: bool,
    /// The first layer's input layout: `plain` (768 rows, every net before issue 67),
    /// `mirror` (each side's view mirrored left-right when its king is on files e-h) or
    /// `mirror-kb4` (mirrored, with 4 king buckets of 768 rows: a1-c1 with f1-h1, d1/e1,
    /// the second rank, the rest — by the side's own king). Written into the net file (version 3).
    #[arg(long, value_name = "LAYOUT", default_value = "plain",
          value_parser = clap::builder::PossibleValuesParser::new(INPUT_LAYOUTS))]
    pub inputs: String,
    /// Train a king-bucketed --inputs layout without the shared block (the factoriser, on by
    /// default: every bucket learns from every position through it; docs/chess/nnue.md).
    #[arg(long)]
    pub no_factoriser: bool,
    /// Seed of the initial weights and the batch order.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Worker threads per batch.
    #[arg(long, value_name = "T", default_value_t = 2, value_parser = clap::value_parser!(u32).range(1..=256))]
    pub threads: u32,
    /// Continue the run saved in OUT.train-state (same data and settings).
    #[arg(long)]
    pub resume: bool,
    /// Also score this network file on the hold-out positions (e.g. the embedded
    /// data/chess/nets/actuary-9.nnue): the net a new one has to beat, on the same positions
    /// and targets (a net trained on an earlier corpus never saw these games: the split is by
    /// game id, so a game held out once stays held out as the corpus grows).
    #[arg(long, value_name = "FILE")]
    pub against: Option<PathBuf>,
    /// The instruction set of the training's lane-wise loops (row additions, SCReLU's backward
    /// step): `portable`, `avx2` or `avx512` [default: the widest this CPU runs]. Every path
    /// gives the same bits, so this is for comparing their speed (a run may resume on another).
    #[arg(long, value_name = "PATH", value_parser = chess::nnue::Simd::parse)]
    pub simd: Option<chess::nnue::Simd>,
}

// The flag parsers are the tuner's (one rule for both commands).
use crate::fit::tune::{holdout_percent, non_negative, positive, unit_interval};

/// Why training could not run.
#[derive(Debug, thiserror::Error)]
pub enum TrainError {
    #[error(transparent)]
    Corpus(#[from] crate::data::corpus::CorpusError),
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{}: {message}", path.display())]
    State { path: PathBuf, message: String },
    #[error("{0}")]
    Data(String),
}

/// One training position: its pieces as White-perspective features, the side to move, the
/// search score and the game result from the side to move's view.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Position {
    feats: [u16; 32],
    n: u8,
    white_to_move: bool,
    /// Centipawns, side to move's view.
    score: i16,
    /// Result × 2 (0, 1, 2), side to move's view.
    result2: u8,
}

impl Position {
    /// A position of `board` with the search score and the result (White's view).
    pub fn new(board: &Board, white_score: i32, white_result: f32) -> Self {
        let mut feats = [0u16; 32];
        let mut n = 0usize;
        for color in [Color::White, Color::Black] {
            for piece in Piece::ALL {
                for sq in board.colored_pieces(color, piece) {
                    if n < 32 {
                        feats[n] = feature(color, piece, sq);
                        n += 1;
                    }
                }
            }
        }
        let white = board.side_to_move() == Color::White;
        let score = if white { white_score } else { -white_score };
        let r2 = (white_result * 2.0).round() as u8;
        Position {
            feats,
            n: n as u8,
            white_to_move: white,
            score: score.clamp(-32_000, 32_000) as i16,
            result2: if white { r2 } else { 2 - r2 },
        }
    }

    /// The same position with files mirrored (a↔h): equal in value when no side may castle
    /// (castling rights are the only thing the mirror does not carry), so it doubles the
    /// positions a small corpus offers.
    pub fn mirrored(&self) -> Position {
        let mut p = *self;
        for f in &mut p.feats[..p.n as usize] {
            *f ^= 7;
        }
        p
    }

    fn target(&self, lambda: f32, wdl_scale: f32) -> f32 {
        let r = f32::from(self.result2) / 2.0;
        lambda * r + (1.0 - lambda) * sigmoid(f32::from(self.score) / wdl_scale)
    }
}

fn sigmoid(x: f32) -> f32 {
    1.0 / (1.0 + (-x).exp())
}

/// The float network and its optimiser state, laid out flat: first-layer weights (768 rows
/// of H per king bucket), first-layer biases (H), output weights (2H, side to move first, per
/// output bucket), output biases, then — with a factoriser — the shared block (768 rows of H).
#[derive(Clone, Debug, PartialEq)]
pub struct Trainer {
    pub hidden: usize,
    pub buckets: usize,
    /// The first layer's input layout (its rows: `inputs.rows()`).
    pub inputs: Inputs,
    /// A king-bucketed layout trained with a shared block ([`Settings::factoriser`]).
    pub factoriser: bool,
    pub params: Vec<f32>,
    m: Vec<f32>,
    v: Vec<f32>,
    /// AdamW steps taken.
    pub step: u64,
    /// Epochs completed.
    pub epoch: u32,
    /// The best hold-out loss so far (the epoch the net file holds).
    pub best: f64,
    /// The SIMD path of the lane-wise loops (the widest this CPU runs unless set): every path
    /// gives the same bits, so it is neither part of a run's settings nor in its state file
    /// (but two trainers on different paths compare unequal).
    pub kernels: TrainKernels,
}

/// The settings that define the numbers a run produces.
#[derive(Clone, Debug, PartialEq)]
pub struct Settings {
    pub hidden: usize,
    pub buckets: usize,
    pub inputs: Inputs,
    /// Train a king-bucketed layout as a shared block of 768 rows plus each bucket's own
    /// difference from it, merged into one block per bucket when the net is written. Without
    /// it each bucket learns only from the positions whose king stands in it: a rarely used
    /// bucket (a king on d1, on the second rank) sees a few percent of the data, and Adam
    /// moves a parameter that is rarely non-zero by about the square root of that share of
    /// its step. With it the small probe's buckets learn as fast as the mirror; at H = 128
    /// they still lag it (docs/chess/nnue.md, "The factoriser").
    /// Ignored (false) for a layout with one block.
    pub factoriser: bool,
    pub epochs: u32,
    pub batch: usize,
    pub lr: f32,
    pub final_lr_fraction: f32,
    pub weight_decay: f32,
    pub lambda: f32,
    pub wdl_scale: f32,
    pub seed: u64,
    pub threads: usize,
    /// The data the run trains on, as a resumed run must find it again: each corpus with the
    /// first 12 hex digits of its manifest's SHA-256, the hold-out share, `--limit`,
    /// `--from-chunk` and mirroring (empty in the unit tests' runs).
    pub data: String,
}

impl Settings {
    fn line(&self) -> String {
        let data = if self.data.is_empty() {
            String::new()
        } else {
            format!(" data {}", self.data)
        };
        format!(
            "hidden {}{}{}{} epochs {} batch {} lr {} final {} wd {} lambda {} wdl-scale {} seed {} threads {}{data}",
            self.hidden,
            if self.buckets > 1 {
                format!(" buckets {}", self.buckets)
            } else {
                String::new()
            },
            if self.inputs == Inputs::PLAIN {
                String::new()
            } else {
                format!(" inputs {}", self.inputs.name())
            },
            if self.factoriser { " factoriser" } else { "" },
            self.epochs,
            self.batch,
            self.lr,
            self.final_lr_fraction,
            self.weight_decay,
            self.lambda,
            self.wdl_scale,
            self.seed,
            self.threads
        )
    }
}

struct Layout {
    h: usize,
    b: usize,
    /// First-layer rows ([`Inputs::rows`]).
    rows: usize,
    /// A shared block of 768 rows after the output bias ([`Settings::factoriser`]).
    factoriser: bool,
}
impl Layout {
    fn of(t: &Trainer) -> Layout {
        Layout {
            h: t.hidden,
            b: t.buckets,
            rows: t.inputs.rows(),
            factoriser: t.factoriser,
        }
    }
    fn of_settings(s: &Settings) -> Layout {
        Layout {
            h: s.hidden,
            b: s.buckets,
            rows: s.inputs.rows(),
            factoriser: s.factoriser && s.inputs.rows() > INPUTS,
        }
    }
    fn ft_b(&self) -> usize {
        self.rows * self.h
    }
    /// Output weights of bucket 0 (bucket `k` at `out_w() + 2h·k`).
    fn out_w(&self) -> usize {
        self.ft_b() + self.h
    }
    /// Output bias of bucket 0.
    fn out_b(&self) -> usize {
        self.out_w() + 2 * self.h * self.b
    }
    /// The shared block's first weight (the factoriser's rows, 768 of H).
    fn factor(&self) -> usize {
        self.out_b() + self.b
    }
    fn len(&self) -> usize {
        self.factor() + if self.factoriser { INPUTS * self.h } else { 0 }
    }
}

/// A uniform float in [-1, 1) from a SplitMix step.
fn uniform(state: &mut u64) -> f32 {
    *state = state.wrapping_add(GOLDEN_GAMMA);
    ((mix64(*state) >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
}

impl Trainer {
    /// Fresh weights for run `s`: uniform ±1/√fan-in (768 for the first layer, 2H for the
    /// output).
    pub fn new(s: &Settings) -> Self {
        let (hidden, buckets, inputs) = (s.hidden, s.buckets, s.inputs);
        let l = Layout::of_settings(s);
        let factoriser = l.factoriser;
        let mut s = s.seed;
        let mut params = vec![0f32; l.len()];
        let a = 1.0 / (INPUTS as f32).sqrt();
        // With a factoriser the buckets start equal (their differences at zero), so the
        // net starts as the one-block layout would.
        let first = if factoriser {
            l.factor()..l.len()
        } else {
            0..l.ft_b()
        };
        for p in &mut params[first] {
            *p = a * uniform(&mut s);
        }
        let b = 1.0 / ((2 * hidden) as f32).sqrt();
        for p in &mut params[l.out_w()..l.out_b()] {
            *p = b * uniform(&mut s);
        }
        Trainer {
            hidden,
            buckets,
            inputs,
            factoriser,
            m: vec![0.0; params.len()],
            v: vec![0.0; params.len()],
            params,
            step: 0,
            epoch: 0,
            best: f64::INFINITY,
            kernels: TrainKernels::best(),
        }
    }

    /// The first layer's weights as the net uses them: the parameters themselves, or with a
    /// factoriser each bucket's rows plus the shared block's (computed once a batch: a few
    /// hundred thousand additions against tens of millions in the batch's positions).
    fn first_layer(&self) -> std::borrow::Cow<'_, [f32]> {
        let l = Layout::of(self);
        let own = &self.params[..l.ft_b()];
        if !l.factoriser {
            return std::borrow::Cow::Borrowed(own);
        }
        let shared = &self.params[l.factor()..l.len()];
        let mut w = own.to_vec();
        for block in w.chunks_exact_mut(shared.len()) {
            self.kernels.add(block, shared);
        }
        std::borrow::Cow::Owned(w)
    }

    /// Forward one position: the output (logit units before the SCALE/wdl mapping) and, when
    /// `grad` is given, accumulate the gradient of its loss, scaled by `weight`. `ft` is
    /// [`Trainer::first_layer`]; the first layer's gradient goes to its rows (a factoriser's
    /// share is summed from them per batch).
    fn forward_backward(
        &self,
        ft: &[f32],
        p: &Position,
        s: &Settings,
        scratch: &mut [f32],
        grad: Option<(&mut [f32], f32)>,
    ) -> f32 {
        let h = self.hidden;
        let l = Layout::of(self);
        let k = chess::nnue::bucket(p.n as usize, self.buckets);
        let (vw, vb) = self.views(p);
        let (ow, ob) = (l.out_w() + 2 * h * k, l.out_b() + k);
        let w = &self.params;
        let (acc_w, rest) = scratch.split_at_mut(h);
        let (acc_b, rest) = rest.split_at_mut(h);
        let (d_us, d_them) = rest.split_at_mut(h);
        acc_w.copy_from_slice(&w[l.ft_b()..l.out_w()]);
        acc_b.copy_from_slice(&w[l.ft_b()..l.out_w()]);
        let feats = &p.feats[..p.n as usize];
        for &f in feats {
            let r = vw.row(f);
            self.kernels.add(acc_w, &ft[r * h..(r + 1) * h]);
            let g = vb.row(flip(f));
            self.kernels.add(acc_b, &ft[g * h..(g + 1) * h]);
        }
        let (us, them) = if p.white_to_move {
            (&*acc_w, &*acc_b)
        } else {
            (&*acc_b, &*acc_w)
        };
        let out_w = &w[ow..ow + 2 * h];
        let screlu = |x: f32| {
            let c = x.clamp(0.0, 1.0);
            c * c
        };
        let mut out = w[ob];
        for i in 0..h {
            out += screlu(us[i]) * out_w[i] + screlu(them[i]) * out_w[h + i];
        }
        let Some((g, weight)) = grad else {
            return out;
        };
        let k = SCALE as f32 / s.wdl_scale;
        let pred = sigmoid(out * k);
        let t = p.target(s.lambda, s.wdl_scale);
        let d_out = weight * 2.0 * (pred - t) * pred * (1.0 - pred) * k;
        g[ob] += d_out;
        // d(acc) for each perspective into the scratch, the output row's gradient into `g`.
        let (g_first, g_out) = g.split_at_mut(l.out_w());
        let g_ow = &mut g_out[ow - l.out_w()..ow - l.out_w() + 2 * h];
        let (g_us, g_them) = g_ow.split_at_mut(h);
        self.kernels
            .screlu_backward(d_out, us, &out_w[..h], d_us, g_us);
        self.kernels
            .screlu_backward(d_out, them, &out_w[h..], d_them, g_them);
        self.kernels
            .add2(&mut g_first[l.ft_b()..l.ft_b() + h], d_us, d_them);
        let (d_white, d_black) = if p.white_to_move {
            (&*d_us, &*d_them)
        } else {
            (&*d_them, &*d_us)
        };
        for &f in feats {
            let r = vw.row(f);
            self.kernels.add(&mut g[r * h..(r + 1) * h], d_white);
            let fb = vb.row(flip(f));
            self.kernels.add(&mut g[fb * h..(fb + 1) * h], d_black);
        }
        out
    }

    /// White's and Black's views of `p` ([`Inputs::view`]), from its kings' features.
    #[inline]
    fn views(&self, p: &Position) -> (View, View) {
        if self.inputs == Inputs::PLAIN {
            return (View::default(), View::default());
        }
        let king = |c: Color| {
            let a1 = feature(c, Piece::King, chess::board::Square::A1);
            let f = p.feats[..p.n as usize]
                .iter()
                .find(|&&f| (a1..a1 + 64).contains(&f))
                .expect("a position has both kings");
            (f - a1) as u8
        };
        (
            self.inputs.view(king(Color::White)),
            self.inputs.view(king(Color::Black) ^ 56),
        )
    }

    /// Mean loss of `data` (no gradient).
    pub fn loss(&self, data: &[Position], s: &Settings) -> f64 {
        let mut scratch = vec![0f32; 4 * self.hidden];
        let k = SCALE as f32 / s.wdl_scale;
        let ft = self.first_layer();
        let total: f64 = data
            .iter()
            .map(|p| {
                let out = self.forward_backward(&ft, p, s, &mut scratch, None);
                let e = sigmoid(out * k) - p.target(s.lambda, s.wdl_scale);
                f64::from(e * e)
            })
            .sum();
        total / data.len().max(1) as f64
    }

    /// The learning rate of step `step` of `total`: cosine from lr to lr·final.
    fn lr_at(s: &Settings, step: u64, total: u64) -> f32 {
        let t = (step as f64 / total.max(1) as f64).min(1.0);
        let f = f64::from(s.final_lr_fraction);
        (f64::from(s.lr) * (f + (1.0 - f) * 0.5 * (1.0 + (std::f64::consts::PI * t).cos()))) as f32
    }

    /// One epoch over `train` in the order of a permutation seeded by (seed, epoch).
    /// `on_batch(positions done)` reports progress.
    pub fn epoch(&mut self, train: &[Position], s: &Settings, mut on_batch: impl FnMut(usize)) {
        let n = train.len();
        let mut order: Vec<u32> = (0..n as u32).collect();
        let mut rng = mix64(s.seed ^ (u64::from(self.epoch) << 32) ^ 0x5eed);
        for i in (1..n).rev() {
            rng = rng.wrapping_add(GOLDEN_GAMMA);
            let j = (mix64(rng) % (i as u64 + 1)) as usize;
            order.swap(i, j);
        }
        let batches_per_epoch = n.div_ceil(s.batch) as u64;
        let total_steps = batches_per_epoch * u64::from(s.epochs);
        let threads = s.threads.max(1);
        let len = self.params.len();
        let mut grads: Vec<Vec<f32>> = (0..threads).map(|_| vec![0f32; len]).collect();
        for (b, batch) in order.chunks(s.batch).enumerate() {
            let weight = 1.0 / batch.len() as f32;
            let per = batch.len().div_ceil(threads);
            let me = &*self;
            let ft = &*self.first_layer();
            std::thread::scope(|scope| {
                for (part, g) in batch.chunks(per).zip(grads.iter_mut()) {
                    scope.spawn(move || {
                        g.fill(0.0);
                        let mut scratch = vec![0f32; 4 * me.hidden];
                        for &i in part {
                            me.forward_backward(
                                ft,
                                &train[i as usize],
                                s,
                                &mut scratch,
                                Some((g, weight)),
                            );
                        }
                    });
                }
            });
            let used = batch.len().div_ceil(per);
            let (first, rest) = grads.split_at_mut(1);
            for g in &rest[..used - 1] {
                self.kernels.add(&mut first[0], g);
            }
            self.fold_shared_gradient(&mut first[0]);
            let lr = Self::lr_at(s, self.step, total_steps);
            self.adamw(&first[0], lr, s.weight_decay);
            on_batch(((b + 1) * s.batch).min(n));
        }
        self.epoch += 1;
    }

    /// A factoriser's gradient: every bucket's row of a feature is the shared row plus its
    /// own, so the shared row's gradient is the sum of its buckets' rows' gradients.
    fn fold_shared_gradient(&self, g: &mut [f32]) {
        let l = Layout::of(self);
        if !l.factoriser {
            return;
        }
        let (own, rest) = g.split_at_mut(l.ft_b());
        let shared = &mut rest[l.factor() - l.ft_b()..];
        for block in own.chunks_exact(shared.len()) {
            self.kernels.add(shared, block);
        }
    }

    /// With a factoriser, keep every merged first-layer weight (a bucket's row plus the
    /// shared row) within ±[`WEIGHT_CLIP`], the bound the engine's accumulators rely on: the
    /// shared weight is clipped as any other, each bucket's own part to what the shared one
    /// leaves.
    fn clip_merged(&mut self) {
        let l = Layout::of(self);
        if !l.factoriser {
            return;
        }
        let (own, rest) = self.params.split_at_mut(l.ft_b());
        let shared = &rest[l.factor() - l.ft_b()..];
        for block in own.chunks_exact_mut(shared.len()) {
            for (x, s) in block.iter_mut().zip(shared) {
                *x = x.clamp(-WEIGHT_CLIP - s, WEIGHT_CLIP - s);
            }
        }
    }

    fn adamw(&mut self, g: &[f32], lr: f32, wd: f32) {
        const B1: f32 = 0.9;
        const B2: f32 = 0.999;
        const EPS: f32 = 1e-8;
        self.step += 1;
        let c1 = 1.0 - B1.powf(self.step as f32);
        let c2 = 1.0 - B2.powf(self.step as f32);
        // A factorised bucket's own part may offset any shared weight: its bound is the
        // merged weight's, which `clip_merged` enforces.
        let l = Layout::of(self);
        let own = if l.factoriser { l.ft_b() } else { 0 };
        for (i, (((p, m), v), &g)) in self
            .params
            .iter_mut()
            .zip(&mut self.m)
            .zip(&mut self.v)
            .zip(g)
            .enumerate()
        {
            *m = B1 * *m + (1.0 - B1) * g;
            *v = B2 * *v + (1.0 - B2) * g * g;
            let update = (*m / c1) / ((*v / c2).sqrt() + EPS) + wd * *p;
            let clip = if i < own {
                2.0 * WEIGHT_CLIP
            } else {
                WEIGHT_CLIP
            };
            *p = (*p - lr * update).clamp(-clip, clip);
        }
        self.clip_merged();
    }

    /// The quantised network (`chess::nnue` scheme).
    pub fn quantise(&self) -> Network {
        let l = Layout::of(self);
        let q = |x: f32, k: i32| (x * k as f32).round() as i16;
        let ft_w = self.first_layer().iter().map(|&x| q(x, QA)).collect();
        let ft_b = self.params[l.ft_b()..l.out_w()]
            .iter()
            .map(|&x| q(x, QA))
            .collect();
        let out_w = self.params[l.out_w()..l.out_b()]
            .iter()
            .map(|&x| q(x, QB))
            .collect();
        let out_b = self.params[l.out_b()..l.factor()]
            .iter()
            .map(|&x| (x * (QA * QB) as f32).round() as i32)
            .collect();
        Network::from_parts_with(self.inputs, self.hidden, ft_w, ft_b, out_w, out_b)
    }

    /// The float network's evaluation of `p` in centipawns (side to move's view).
    pub fn eval_cp(&self, p: &Position, s: &Settings) -> f32 {
        let mut scratch = vec![0f32; 4 * self.hidden];
        self.forward_backward(&self.first_layer(), p, s, &mut scratch, None) * SCALE as f32
    }

    /// The run's state file: magic, the settings line, epoch, step, best hold-out loss, then
    /// params, m, v as f32, then FNV-1a 64 of it all.
    pub fn state_bytes(&self, s: &Settings) -> Vec<u8> {
        let mut b = Vec::new();
        b.extend_from_slice(STATE_MAGIC);
        let line = s.line();
        b.extend_from_slice(&(line.len() as u32).to_le_bytes());
        b.extend_from_slice(line.as_bytes());
        b.extend_from_slice(&self.epoch.to_le_bytes());
        b.extend_from_slice(&self.step.to_le_bytes());
        b.extend_from_slice(&self.best.to_le_bytes());
        for x in self.params.iter().chain(&self.m).chain(&self.v) {
            b.extend_from_slice(&x.to_le_bytes());
        }
        let sum = chess::datafile::fnv1a64(&b);
        b.extend_from_slice(&sum.to_le_bytes());
        b
    }

    /// A trainer from its state bytes, checked against the settings of the run resuming it.
    pub fn from_state(bytes: &[u8], s: &Settings) -> Result<Trainer, String> {
        if bytes.len() < 20 || &bytes[..8] != STATE_MAGIC {
            return Err("not a train-net state file".into());
        }
        let (body, sum) = bytes.split_at(bytes.len() - 8);
        if chess::datafile::fnv1a64(body) != u64::from_le_bytes(sum.try_into().expect("8")) {
            return Err("checksum mismatch: damaged or truncated".into());
        }
        let n = u32::from_le_bytes(body[8..12].try_into().expect("4")) as usize;
        let line = std::str::from_utf8(body.get(12..12 + n).ok_or("truncated")?)
            .map_err(|_| "bad settings line")?;
        if line != s.line() {
            return Err(format!(
                "made with other settings: `{line}`, this run: `{}`",
                s.line()
            ));
        }
        let mut at = 12 + n;
        let epoch = u32::from_le_bytes(body[at..at + 4].try_into().expect("4"));
        at += 4;
        let step = u64::from_le_bytes(body[at..at + 8].try_into().expect("8"));
        at += 8;
        let best = f64::from_le_bytes(
            body.get(at..at + 8)
                .ok_or("truncated")?
                .try_into()
                .expect("8"),
        );
        at += 8;
        let l = Layout::of_settings(s);
        let len = l.len();
        let floats: Vec<f32> = body[at..]
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes(c.try_into().expect("4")))
            .collect();
        if floats.len() != 3 * len {
            return Err(format!(
                "{} weights where {} are expected",
                floats.len(),
                3 * len
            ));
        }
        Ok(Trainer {
            hidden: s.hidden,
            buckets: s.buckets,
            inputs: s.inputs,
            factoriser: l.factoriser,
            params: floats[..len].to_vec(),
            m: floats[len..2 * len].to_vec(),
            v: floats[2 * len..].to_vec(),
            step,
            epoch,
            best,
            kernels: TrainKernels::best(),
        })
    }
}

/// Write `bytes` to `path` whole or not at all, a regular file only ([`fileio::write_atomic`]).
fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), TrainError> {
    fileio::write_atomic(path, bytes).map_err(|e| TrainError::Io {
        path: path.to_owned(),
        source: e.into_io(),
    })
}

/// The largest run state `--resume` reads: far beyond the widest net's weights and moments.
const MAX_STATE_BYTES: u64 = 4 << 30;

/// A loaded corpus: training positions, hold-out positions and the hand evaluation of each
/// hold-out position (side to move's view), the baseline a network must beat.
pub struct Data {
    pub train: Vec<Position>,
    pub hold: Vec<Position>,
    pub hold_hce: Vec<i32>,
    /// The `against` network's evaluations of the hold-out positions (empty without one).
    pub hold_net: Vec<i32>,
}

/// The loss of the hand evaluation on the hold-out positions (same target, same mapping).
pub fn hce_loss(d: &Data, s: &Settings) -> f64 {
    eval_loss(&d.hold, &d.hold_hce, s)
}

/// The loss of fixed evaluations (centipawns, side to move's view) of `hold`, mapped to a
/// win probability as the trainer maps its output.
pub fn eval_loss(hold: &[Position], evals: &[i32], s: &Settings) -> f64 {
    let total: f64 = hold
        .iter()
        .zip(evals)
        .map(|(p, &e)| {
            let err = sigmoid(e as f32 / s.wdl_scale) - p.target(s.lambda, s.wdl_scale);
            f64::from(err * err)
        })
        .sum();
    total / hold.len().max(1) as f64
}

/// Load the corpus through the default filter, split by game; with `from_chunk`, training
/// positions come only from that chunk of each corpus on (the hold-out from all of them).
pub fn load(
    dirs: &[PathBuf],
    holdout: f64,
    limit: Option<u64>,
    from_chunk: Option<u32>,
    mirror: bool,
    against: Option<&Network>,
) -> Result<Data, TrainError> {
    let loader = Loader {
        filter: Filter::default(),
        holdout_percent: holdout,
    };
    let (mut train, mut hold, mut hold_hce, mut hold_net) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for dir in dirs {
        let first_game = match from_chunk {
            Some(c) => crate::data::corpus::first_game_of_chunk(dir, c)?,
            None => 0,
        };
        loader.for_each(dir, |s, _| {
            let p = Position::new(&s.board, s.white_score, s.white_result);
            if is_holdout(s.game, holdout) {
                hold.push(p);
                hold_hce.push(chess::eval::eval_tier(&s.board, chess::eval::Tier::Full));
                if let Some(net) = against {
                    hold_net.push(net.evaluate(&s.board));
                }
            } else if s.game >= first_game && limit.is_none_or(|l| (train.len() as u64) < l) {
                train.push(p);
                let castling = [Color::White, Color::Black].iter().any(|&c| {
                    let r = s.board.castle_rights(c);
                    r.short.is_some() || r.long.is_some()
                });
                if mirror && !castling {
                    train.push(p.mirrored());
                }
            }
        })?;
    }
    Ok(Data {
        train,
        hold,
        hold_hce,
        hold_net,
    })
}

impl TrainNetArgs {
    fn settings(&self) -> Settings {
        Settings {
            hidden: self.hidden as usize,
            buckets: self.buckets as usize,
            inputs: self.layout(),
            factoriser: !self.no_factoriser && self.layout().rows() > INPUTS,
            epochs: self.epochs,
            batch: self.batch as usize,
            lr: self.lr as f32,
            final_lr_fraction: self.final_lr_fraction as f32,
            weight_decay: self.weight_decay as f32,
            lambda: self.lambda as f32,
            wdl_scale: self.wdl_scale as f32,
            seed: self.seed,
            threads: self.threads as usize,
            data: self.data_line(),
        }
    }

    /// What the run trains on (see [`Settings::data`]): another corpus, a corpus that grew,
    /// another `--limit` is another net, which `--resume` must not continue silently.
    fn data_line(&self) -> String {
        use sha2::{Digest, Sha256};
        let corpora: Vec<String> = self
            .corpus
            .iter()
            .map(|dir| {
                let manifest = dir.join(crate::data::corpus::MANIFEST);
                let sum = fileio::read(&manifest, 64 << 20).map_or_else(
                    |_| "unread".to_string(),
                    |b| {
                        Sha256::digest(&b)[..6]
                            .iter()
                            .map(|x| format!("{x:02x}"))
                            .collect()
                    },
                );
                format!("{}@{sum}", dir.display())
            })
            .collect();
        format!(
            "{} holdout {} limit {} from-chunk {} mirror {}",
            corpora.join(","),
            self.holdout,
            self.limit.map_or("none".into(), |l| l.to_string()),
            self.from_chunk.map_or("none".into(), |c| c.to_string()),
            self.mirror_copies()
        )
    }

    /// The input layout `--inputs` names (its parser allows only names that are layouts).
    fn layout(&self) -> Inputs {
        Inputs::named(&self.inputs).expect("--inputs takes only INPUT_LAYOUTS")
    }

    /// Are file-mirrored copies added? Not with --no-mirror, nor when the layout mirrors
    /// (the copy would be the same input as its original).
    fn mirror_copies(&self) -> bool {
        !self.no_mirror && !self.layout().mirrors()
    }

    fn state_path(&self) -> PathBuf {
        let mut s = self.out.as_os_str().to_owned();
        s.push(".train-state");
        PathBuf::from(s)
    }

    /// Refuse what would fail or destroy something, before the corpus is loaded: an `--out`
    /// that is not a regular file (or its directory missing), an existing net without
    /// `--force` or `--resume`, a state that `--resume` needs and lacks or a fresh run would
    /// overwrite.
    fn check_files(&self, state_path: &Path) -> Result<(), TrainError> {
        let refuse = |path: &Path, message: &str| TrainError::State {
            path: path.to_owned(),
            message: message.into(),
        };
        for dir in &self.corpus {
            let manifest = dir.join(crate::data::corpus::MANIFEST);
            if !manifest.is_file() {
                return Err(refuse(dir, "no corpus here (no manifest.jsonl)"));
            }
        }
        for p in [&self.out, &state_path.to_path_buf()] {
            fileio::check_target(p).map_err(|e| TrainError::Io {
                path: p.clone(),
                source: e.into_io(),
            })?;
        }
        if self.resume {
            if !state_path.exists() {
                return Err(refuse(
                    state_path,
                    "no run's state here to resume (start the run without --resume)",
                ));
            }
        } else if state_path.exists() {
            return Err(refuse(
                state_path,
                "a run's state is here: continue it with --resume or remove it",
            ));
        } else if self.out.exists() && !self.force {
            return Err(refuse(
                &self.out,
                "exists: pass --force to replace it (or --resume to continue its run)",
            ));
        }
        Ok(())
    }

    pub fn run(&self) -> Result<ExitCode, crate::LabError> {
        let s = self.settings();
        let t0 = std::time::Instant::now();
        let state_path = self.state_path();
        self.check_files(&state_path)?;
        let kernels = match self.simd {
            None => TrainKernels::best(),
            Some(simd) => TrainKernels::new(simd).ok_or_else(|| {
                TrainError::Data(format!(
                    "--simd {}: this CPU cannot run it (it runs {})",
                    simd.name(),
                    chess::nnue::Simd::best().name()
                ))
            })?,
        };
        let against = match &self.against {
            Some(path) => Some(Network::load(path).map_err(|message| TrainError::State {
                path: path.clone(),
                message,
            })?),
            None => None,
        };
        let data = load(
            &self.corpus,
            self.holdout,
            self.limit,
            self.from_chunk,
            self.mirror_copies(),
            against.as_ref(),
        )?;
        let (train, hold) = (&data.train, &data.hold);
        if train.len() < 100 {
            return Err(TrainError::Data(format!(
                "{} training positions: too few to train (at least 100)",
                train.len()
            ))
            .into());
        }
        eprintln!(
            "train-net: {} training and {} hold-out positions loaded in {:.1} s; {}; simd {}\n\
             train-net: the hand evaluation's hold-out loss {:.6} (the baseline)",
            train.len(),
            hold.len(),
            t0.elapsed().as_secs_f64(),
            s.line(),
            kernels.simd().name(),
            hce_loss(&data, &s)
        );
        if let Some(path) = &self.against {
            eprintln!(
                "train-net: {}'s hold-out loss {:.6} (the net to beat)",
                path.display(),
                eval_loss(hold, &data.hold_net, &s)
            );
        }
        let mut tr = if self.resume {
            let bytes = fileio::read(&state_path, MAX_STATE_BYTES).map_err(|e| TrainError::Io {
                path: state_path.clone(),
                source: e.into_io(),
            })?;
            Trainer::from_state(&bytes, &s).map_err(|message| TrainError::State {
                path: state_path.clone(),
                message,
            })?
        } else {
            Trainer::new(&s)
        };
        tr.kernels = kernels;
        let bar = crate::data::pool::progress(train.len() as u64, "positions");
        // The net file holds the best epoch by hold-out loss (a small corpus overfits); the
        // state holds the last, to continue from.

        while tr.epoch < s.epochs {
            bar.set_prefix(format!("epoch {}/{}", tr.epoch + 1, s.epochs));
            bar.set_position(0);
            let e0 = std::time::Instant::now();
            tr.epoch(train, &s, |done| bar.set_position(done as u64));
            let secs = e0.elapsed().as_secs_f64();
            let hl = tr.loss(hold, &s);
            // Through suspend, not println: a bar that is hidden (no terminal) drops println.
            bar.suspend(|| {
                eprintln!(
                    "epoch {:>3}: hold-out loss {:.6}  {:.0} positions/s",
                    tr.epoch,
                    hl,
                    train.len() as f64 / secs
                )
            });
            if hl < tr.best {
                tr.best = hl;
                write_atomic(&self.out, &tr.quantise().to_bytes())?;
            }
            write_atomic(&state_path, &tr.state_bytes(&s))?;
        }
        bar.finish_and_clear();
        let net = tr.quantise();
        eprintln!(
            "train-net: wrote {} (hidden {}, the best epoch's hold-out loss {:.6}; the last's {:.6}; {} steps) in {:.0} s",
            self.out.display(),
            s.hidden,
            tr.best,
            tr.loss(hold, &s),
            tr.step,
            t0.elapsed().as_secs_f64()
        );
        eprintln!(
            "train-net: {} bytes, sha256 {}",
            net.to_bytes().len(),
            crate::data::corpus::sha256_file(&self.out)?
        );
        Ok(ExitCode::SUCCESS)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chess::board::{legal_moves, parse_fen};

    /// `actuary train-net ARGS` as clap parses it.
    fn args(a: &[&str]) -> TrainNetArgs {
        #[derive(clap::Parser)]
        struct Cli {
            #[command(flatten)]
            a: TrainNetArgs,
        }
        let argv = std::iter::once("train-net").chain(a.iter().copied());
        <Cli as clap::Parser>::try_parse_from(argv).unwrap().a
    }

    /// Issue 68, serious item 1: `--out` replaced a device, a FIFO or a committed net (after
    /// the first epoch, with no word); now each is refused before the corpus is read.
    #[test]
    fn out_is_checked_before_any_work() {
        let dir = tempfile::tempdir().unwrap();
        let d = |name: &str| dir.path().join(name).display().to_string();
        std::fs::create_dir(dir.path().join("corpus")).unwrap();
        std::fs::write(dir.path().join("corpus/manifest.jsonl"), b"").unwrap();
        let corpus = d("corpus");
        let check = |a: &[&str]| {
            let a = args(&[&["--corpus", corpus.as_str()][..], a].concat());
            a.check_files(&a.state_path()).map_err(|e| e.to_string())
        };
        // Issue 68, defect 10: a missing corpus said "0 training positions" after loading.
        let e = args(&["--corpus", &d("nothing"), "--out", &d("n.nnue")]);
        let e = e.check_files(&e.state_path()).unwrap_err().to_string();
        assert!(e.contains("nothing") && e.contains("no corpus here"), "{e}");
        // A device is never replaced.
        let e = check(&["--out", "/dev/null"]).unwrap_err();
        assert!(
            e.contains("/dev/null") && e.contains("not a regular file"),
            "{e}"
        );
        assert!(check(&["--out", &d("no/such/dir/x.nnue")]).is_err());
        // A fresh file is fine; an existing net needs --force (or --resume).
        check(&["--out", &d("new.nnue")]).unwrap();
        std::fs::write(d("old.nnue"), b"a committed net").unwrap();
        let e = check(&["--out", &d("old.nnue")]).unwrap_err();
        assert!(e.contains("old.nnue") && e.contains("--force"), "{e}");
        check(&["--out", &d("old.nnue"), "--force"]).unwrap();
        // --resume needs the state; a fresh run refuses to overwrite one.
        let e = check(&["--out", &d("old.nnue"), "--resume"]).unwrap_err();
        assert!(e.contains("no run's state here"), "{e}");
        std::fs::write(d("old.nnue.train-state"), b"state").unwrap();
        check(&["--out", &d("old.nnue"), "--resume"]).unwrap();
        let e = check(&["--out", &d("old.nnue"), "--force"]).unwrap_err();
        assert!(e.contains("--resume or remove it"), "{e}");
        assert_eq!(std::fs::read(d("old.nnue")).unwrap(), b"a committed net");
    }

    /// Issue 68, defect 3: `--resume` continued silently on another corpus or `--limit` (a
    /// different net); the data now belong to the settings a state must match.
    #[test]
    fn the_data_are_part_of_the_settings_a_resume_must_match() {
        let dir = tempfile::tempdir().unwrap();
        for c in ["a", "b"] {
            std::fs::create_dir(dir.path().join(c)).unwrap();
            std::fs::write(dir.path().join(c).join("manifest.jsonl"), c).unwrap();
        }
        let line = |a: &[&str]| args(&[&["--out", "x.nnue"], a].concat()).settings().line();
        let a = dir.path().join("a").display().to_string();
        let b = dir.path().join("b").display().to_string();
        let base = line(&["--corpus", &a]);
        assert_eq!(base, line(&["--corpus", &a]));
        for other in [
            line(&["--corpus", &b]),
            line(&["--corpus", &a, "--limit", "1000"]),
            line(&["--corpus", &a, "--holdout", "10"]),
            line(&["--corpus", &a, "--from-chunk", "2"]),
        ] {
            assert_ne!(base, other);
        }
        // The same directory after its manifest changed (the corpus grew) is other data.
        std::fs::write(dir.path().join("a/manifest.jsonl"), "a, and a chunk more").unwrap();
        assert_ne!(base, line(&["--corpus", &a]));
        // A state made with other data is refused on resume.
        let state = Trainer::new(&settings(1, 1))
            .state_bytes(&args(&["--out", "x.nnue", "--corpus", &b]).settings());
        let e = Trainer::from_state(
            &state,
            &args(&["--out", "x.nnue", "--corpus", &a]).settings(),
        )
        .err()
        .unwrap();
        assert!(e.contains("made with other settings"), "{e}");
    }

    /// Positions from random games, labelled by material balance (side to move's view):
    /// a target the network can represent exactly in its first layer.
    fn material_data(n: usize, seed: u64) -> Vec<Position> {
        let value = |p: Piece| match p {
            Piece::Pawn => 100,
            Piece::Knight | Piece::Bishop => 300,
            Piece::Rook => 500,
            Piece::Queen => 900,
            Piece::King => 0,
        };
        let mut out = Vec::new();
        let mut s = seed;
        while out.len() < n {
            let mut b =
                parse_fen("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1").unwrap();
            for _ in 0..80 {
                let moves = legal_moves(&b);
                if moves.is_empty() {
                    break;
                }
                s = mix64(s.wrapping_add(GOLDEN_GAMMA));
                b.play_unchecked(moves[(s % moves.len() as u64) as usize]);
                let mut white = 0i32;
                for p in Piece::ALL {
                    white += value(p)
                        * (b.colored_pieces(Color::White, p).len() as i32
                            - b.colored_pieces(Color::Black, p).len() as i32);
                }
                out.push(Position::new(&b, white, 0.5));
            }
        }
        out.truncate(n);
        out
    }

    fn settings(threads: usize, epochs: u32) -> Settings {
        Settings {
            hidden: 8,
            buckets: 1,
            inputs: Inputs::PLAIN,
            factoriser: false,
            epochs,
            batch: 256,
            lr: 0.01,
            final_lr_fraction: 0.1,
            weight_decay: 0.0,
            lambda: 0.0,
            wdl_scale: 400.0,
            seed: 7,
            threads,
            data: String::new(),
        }
    }

    #[test]
    fn it_learns_material_balance() {
        let data = material_data(20_000, 1);
        let hold = material_data(2_000, 99);
        let s = settings(2, 8);
        let mut t = Trainer::new(&s);
        let before = t.loss(&hold, &s);
        for _ in 0..s.epochs {
            t.epoch(&data, &s, |_| {});
        }
        let after = t.loss(&hold, &s);
        assert!(after < before / 5.0, "hold-out loss {before} -> {after}");
        // The quantised engine net: a queen up is worth much, a queen down as much against.
        let net = t.quantise();
        let b = parse_fen("rnb1kbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1").unwrap();
        let v = net.evaluate(&b);
        assert!(v > 400, "a queen up: {v}");
        let b = parse_fen("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNB1KBNR w KQkq - 0 1").unwrap();
        let v = net.evaluate(&b);
        assert!(v < -400, "a queen down: {v}");
    }

    /// The SIMD path of the trainer's loops changes the speed, never the numbers: two epochs of
    /// a net with every part the kernels touch (H = 40: whole vectors and a tail; 4 output
    /// buckets; two threads, so the gradients are summed; plain and factorised king-bucket
    /// layouts) end in the same weights on every path this CPU runs, and in the weights the
    /// trainer computed before it had kernels. The pinned FNV-1a hashes of the weights were
    /// printed by the same run at commit `d87a1ac` (the trainer of `actuary-1.nnue` to
    /// `actuary-9.nnue`), so a trainer that drifts from it fails here.
    #[test]
    fn every_simd_path_trains_the_bits_of_the_trainer_before_kernels() {
        let data = material_data(3_000, 5);
        let paths: Vec<TrainKernels> = chess::nnue::Simd::ALL
            .into_iter()
            .filter_map(TrainKernels::new)
            .collect();
        eprintln!("paths this CPU runs: {paths:?}");
        for (layout, factoriser, pinned) in [
            ("plain", false, 0xc300_3db8_4793_9c49u64),
            ("mirror-kb4", true, 0xe371_af4c_6e90_e39a),
        ] {
            let s = Settings {
                hidden: 40,
                buckets: 4,
                inputs: Inputs::named(layout).unwrap(),
                factoriser,
                ..settings(2, 2)
            };
            for &k in &paths {
                let mut t = Trainer::new(&s);
                t.kernels = k;
                t.epoch(&data, &s, |_| {});
                t.epoch(&data, &s, |_| {});
                let bytes: Vec<u8> = t.params.iter().flat_map(|x| x.to_le_bytes()).collect();
                let hash = chess::datafile::fnv1a64(&bytes);
                assert_eq!(hash, pinned, "{layout}, {:?}: {hash:#018x}", k.simd());
            }
        }
    }

    #[test]
    fn one_thread_training_is_deterministic_and_resume_ends_where_a_whole_run_ends() {
        let data = material_data(3_000, 3);
        let s = settings(1, 2);
        let run = || {
            let mut t = Trainer::new(&s);
            t.epoch(&data, &s, |_| {});
            t.epoch(&data, &s, |_| {});
            t
        };
        let a = run();
        assert_eq!(a.quantise().to_bytes(), run().quantise().to_bytes());
        // One epoch, saved, loaded, one more.
        let mut t = Trainer::new(&s);
        t.epoch(&data, &s, |_| {});
        let mut r = Trainer::from_state(&t.state_bytes(&s), &s).unwrap();
        r.epoch(&data, &s, |_| {});
        assert_eq!(r, a);
        // Another run's settings or a damaged state are refused.
        let other = settings(2, 2);
        assert!(
            Trainer::from_state(&t.state_bytes(&s), &other)
                .unwrap_err()
                .contains("other settings")
        );
        let mut bytes = t.state_bytes(&s);
        bytes[40] ^= 1;
        assert!(
            Trainer::from_state(&bytes, &s)
                .unwrap_err()
                .contains("checksum")
        );
    }

    /// `--against`'s score: a fixed evaluation is mapped to a win probability as the
    /// trainer maps its output (σ(cp / wdl-scale)), against the same target.
    #[test]
    fn a_fixed_evaluation_is_scored_like_the_trainer_output() {
        let b = parse_fen("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1").unwrap();
        let s = settings(1, 1); // λ = 0, wdl-scale 400
        // Score 0, so the target is 0.5 whatever the result.
        let hold = vec![Position::new(&b, 0, 1.0); 2];
        assert_eq!(eval_loss(&hold, &[0, 0], &s), 0.0);
        // σ(400 · ln 3 / 400) = 0.75: squared error 0.0625 for each.
        let cp = (400.0 * 3f64.ln()).round() as i32; // 439
        let l = eval_loss(&hold, &[cp, -cp], &s);
        assert!((l - 0.0625).abs() < 5e-4, "{l}"); // (439 for 439.4 cp: 0.06240)
    }

    /// `--from-chunk`: training positions come from that chunk on; the hold-out is the same
    /// as without it (so the losses of the two runs compare).
    #[test]
    fn from_chunk_drops_earlier_training_games_and_keeps_the_hold_out() {
        use crate::data::corpus::CorpusWriter;
        let d = tempfile::tempdir().unwrap();
        let mut a = crate::data::datagen::test_args(1);
        a.games = Some(4);
        let cs = crate::data::selfplay::settings(&a, 1);
        for _ in 0..2 {
            let mut w = CorpusWriter::open(d.path(), cs.clone(), "t").unwrap();
            crate::data::selfplay::generate(&a, &cs, &mut w).unwrap();
            w.close_part().unwrap();
        }
        let dirs = [d.path().to_owned()];
        let all = load(&dirs, 50.0, None, None, false, None).unwrap();
        let first = load(&dirs, 50.0, None, Some(1), false, None).unwrap();
        let late = load(&dirs, 50.0, None, Some(2), false, None).unwrap();
        assert_eq!(first.train, all.train);
        assert_eq!(late.hold, all.hold);
        assert!(!all.hold.is_empty());
        // The second chunk's training games are a strict, non-empty part of all of them.
        assert!(!late.train.is_empty() && late.train.len() < all.train.len());
        assert_eq!(
            late.train[..],
            all.train[all.train.len() - late.train.len()..]
        );
        let err = load(&dirs, 50.0, None, Some(3), false, None)
            .err()
            .unwrap()
            .to_string();
        assert!(
            err.contains("chunk 3 asked for, the manifest lists 2"),
            "{err}"
        );
    }

    /// The float network and its quantised engine form agree to a few centipawns.
    #[test]
    fn quantised_net_matches_the_float_net() {
        for (buckets, inputs, factoriser) in [
            (1, "plain", false),
            (4, "plain", false),
            (1, "mirror-kb4", false),
            (2, "mirror-kb4", true),
            (2, "mirror", false),
        ] {
            quantised_matches_float(buckets, Inputs::named(inputs).unwrap(), factoriser);
        }
    }

    /// The float net and its engine form agree, output buckets and input layouts included
    /// (the trainer and the engine choose the same bucket and the same rows for a position;
    /// a factoriser's shared rows are merged into every bucket's).
    fn quantised_matches_float(buckets: usize, inputs: Inputs, factoriser: bool) {
        let data = material_data(3_000, 5);
        let s = Settings {
            buckets,
            inputs,
            factoriser,
            ..settings(1, 2)
        };
        let mut t = Trainer::new(&s);
        t.epoch(&data, &s, |_| {});
        let net = t.quantise();
        assert_eq!((net.buckets(), net.inputs()), (buckets, &inputs));
        let mut b = parse_fen("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1").unwrap();
        let mut seed = 11u64;
        for _ in 0..40 {
            let moves = legal_moves(&b);
            seed = mix64(seed.wrapping_add(GOLDEN_GAMMA));
            b.play_unchecked(moves[(seed % moves.len() as u64) as usize]);
            let f = t.eval_cp(&Position::new(&b, 0, 0.5), &s);
            let q = net.evaluate(&b) as f32;
            // Rounding the output weights to 1/64 moves a small net's output by a few
            // centipawns; a wrong index or perspective would move it by far more.
            assert!(
                (f - q).abs() < 12.0 + 0.05 * f.abs(),
                "float {f} quantised {q}"
            );
        }
    }

    /// The factoriser's point: what one king bucket learns reaches the others. Trained only
    /// on positions whose kings stand on e1 and e8 (the d1/e1 bucket of `mirror-kb4` for both
    /// sides), a net values a queen up with the kings castled (another bucket) as an advantage
    /// only through the shared block; without it that bucket's rows are still near their
    /// random start (about 0). The state (shared block included) round-trips.
    #[test]
    fn a_factoriser_carries_what_one_king_bucket_learns_to_the_others() {
        let e1_e8 = |n: usize, seed: u64| -> Vec<Position> {
            let mut out = Vec::new();
            let mut s = seed;
            while out.len() < n {
                let all = material_data(4_000, s);
                s += 1;
                out.extend(all.into_iter().filter(|p| {
                    let k = |c| feature(c, Piece::King, chess::board::Square::A1);
                    let (w, b) = (k(Color::White), k(Color::Black));
                    let f = &p.feats[..p.n as usize];
                    f.contains(&(w + 4)) && f.contains(&(b + 60))
                }));
            }
            out.truncate(n);
            out
        };
        let data = e1_e8(20_000, 1);
        let queen_up =
            parse_fen("r1b2rk1/pppp1ppp/2n2n2/4p3/4P3/2N2N2/PPPPQPPP/R1B2RK1 w - - 0 1").unwrap();
        let queen_down =
            parse_fen("r1b2rk1/pppp1ppp/2n2n2/4p3/4P3/2N2N2/PPPP1PPP/R1BQ1RK1 b - - 0 1").unwrap();
        let eval = |factoriser: bool| {
            let s = Settings {
                inputs: Inputs::named("mirror-kb4").unwrap(),
                factoriser,
                ..settings(1, 8)
            };
            let mut t = Trainer::new(&s);
            for _ in 0..s.epochs {
                t.epoch(&data, &s, |_| {});
            }
            assert_eq!(Trainer::from_state(&t.state_bytes(&s), &s).unwrap(), t);
            let net = t.quantise();
            (net.evaluate(&queen_up), net.evaluate(&queen_down))
        };
        // Trained on (the e1 bucket itself scores a queen up at about +700): the shared block
        // carries part of it, with the right sign for either side to move.
        let (up, down) = eval(true);
        assert!(up > 100 && down < -100, "factorised: {up}, {down}");
        let (up, down) = eval(false);
        assert!(
            up.abs() < 60 && down.abs() < 60,
            "one bucket alone: {up}, {down}"
        );
    }
}
