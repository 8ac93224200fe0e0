//! Progress bars on stderr over the libraries' long runs: a block of games (`play`,
//! `screen`), training moves (`train`), a top-k study's positions (`topk`) and timed
//! decisions (`bench --policy`), in one place and one style. They stay in the command, not
//! in the libraries, because they are terminal output and no library links indicatif: the
//! runs report through `drop7::runner::RunObserver`, `ntuple::train::TrainObserver` and
//! plain tick callbacks.

use std::sync::Mutex;

use drop7::runner::{GameRecord, RunObserver};
use indicatif::{ProgressBar, ProgressStyle};
use ntuple::train::{ProgressRecord, TrainObserver};

/// `bar` drawn with `template`, in the one style every bar here shares (`=> ` as its fill).
fn styled(bar: ProgressBar, template: &str) -> ProgressBar {
    bar.set_style(
        ProgressStyle::with_template(template)
            .expect("a valid template")
            .progress_chars("=> "),
    );
    bar
}

/// A progress bar over a block of games, with the running mean score.
pub struct BlockBar {
    bar: ProgressBar,
    quiet: bool,
    sums: Mutex<(u64, u64)>,
}

impl BlockBar {
    /// A bar the runner sizes as each arm starts; hidden (and no notes) when `quiet`.
    pub fn new(quiet: bool) -> Self {
        let bar = if quiet {
            ProgressBar::hidden()
        } else {
            ProgressBar::new(0)
        };
        Self {
            bar: styled(
                bar,
                "{prefix} [{bar:30}] {pos}/{len} games  {msg}  {elapsed_precise} ETA {eta}",
            ),
            quiet,
            sums: Mutex::new((0, 0)),
        }
    }

    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

impl RunObserver for BlockBar {
    fn started(&self, arm: &str, done: usize, todo: usize) {
        if done > 0 && !self.quiet {
            eprintln!(
                "{arm}: resuming, {done} of {} games already in the output",
                done + todo
            );
        }
        *self.sums.lock().expect("sums") = (0, 0);
        self.bar.set_prefix(arm.to_owned());
        self.bar.set_length(todo as u64);
        self.bar.set_position(0);
        self.bar.reset_elapsed();
    }
    fn finished_game(&self, r: &GameRecord) {
        let mut s = self.sums.lock().expect("sums");
        s.0 += r.score;
        s.1 += 1;
        self.bar
            .set_message(format!("mean {:.0}", s.0 as f64 / s.1 as f64));
        self.bar.inc(1);
    }
}

/// A progress bar over training moves; notes printed above it.
pub struct TrainBar(ProgressBar);

impl TrainBar {
    /// A bar over `target_moves` training moves.
    pub fn new(target_moves: u64) -> Self {
        Self(styled(
            ProgressBar::new(target_moves),
            "[{bar:30}] {human_pos}/{human_len} moves  {msg}  {elapsed_precise} ETA {eta}",
        ))
    }

    pub fn finish(&self) {
        self.0.finish_and_clear();
    }
}

impl TrainObserver for TrainBar {
    fn note(&self, message: &str) {
        self.0.suspend(|| eprintln!("{message}"));
    }
    fn progress(&self, r: &ProgressRecord) {
        if let ProgressRecord::Train(t) = r {
            self.0.set_position(t.moves);
            self.0.set_message(format!(
                "{:.0} moves/s  {} games  recent mean {:.0}",
                t.moves_per_second, t.games, t.recent_mean_score
            ));
        }
    }
}

/// A progress bar over the `len` positions of a top-k study.
pub fn positions_bar(len: u64) -> ProgressBar {
    styled(
        ProgressBar::new(len),
        "[{bar:30}] {pos}/{len} positions  {elapsed_precise} ETA {eta}",
    )
}

/// A bar over the `len` decisions `bench --policy` times, in indicatif's default style.
pub fn decisions_bar(len: u64) -> ProgressBar {
    ProgressBar::new(len)
}
