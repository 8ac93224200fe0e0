//! Subcommands over the bare rules: trace, step, show, bench.

use std::io::{BufWriter, Write};
use std::time::Instant;

use clap::{Args, ValueEnum};
use drop7::board::Board;
use drop7::game::{Game, TraceRandom, center_column, leftmost_column};
use drop7::rng::{parse_seed, seed_hex};
use drop7::trace::traced_move;

pub type CliResult = Result<(), String>;

#[derive(Clone, Copy, ValueEnum)]
pub enum SimplePolicy {
    /// The reference trace policy (Mulberry32 stream from the seed, uniform over legal columns).
    Random,
    /// Lowest legal column.
    Leftmost,
    /// First legal column in the order 3,2,4,1,5,0,6.
    Center,
}

#[derive(Args)]
pub struct TraceArgs {
    /// Game seed, decimal or 0x-hex (e.g. 0x2d700000).
    #[arg(long)]
    seed: String,
    #[arg(long, value_enum, default_value = "random")]
    policy: SimplePolicy,
    /// Stop after this many moves (the research cap is 2000).
    #[arg(long, default_value_t = 2000)]
    max_moves: u32,
}

pub fn trace(a: TraceArgs) -> CliResult {
    let seed = parse_seed(&a.seed)?;
    let mut game = Game::new(seed).with_cap(a.max_moves);
    let mut random = TraceRandom::new(seed);
    let stdout = std::io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    while !game.finished() {
        let column = match a.policy {
            SimplePolicy::Random => random.choose(&game.board),
            SimplePolicy::Leftmost => leftmost_column(&game.board),
            SimplePolicy::Center => center_column(&game.board),
        }
        .ok_or("no legal column in a live game (engine bug)")?;
        let line = traced_move(&mut game, column).map_err(|e| e.to_string())?;
        let written = serde_json::to_writer(&mut out, &line)
            .map_err(std::io::Error::from)
            .and_then(|()| writeln!(out));
        if let Err(e) = written {
            return quiet_on_broken_pipe(e);
        }
    }
    out.flush().or_else(quiet_on_broken_pipe)
}

/// A reader that stops early (`| head`) is not an error.
pub fn quiet_on_broken_pipe(e: std::io::Error) -> CliResult {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        Ok(())
    } else {
        Err(e.to_string())
    }
}

#[derive(Args)]
pub struct StepArgs {
    /// 49 digits, row-major from the top (0 empty, 1-7 numbered, 8 solid, 9 cracked).
    #[arg(long)]
    board: String,
    /// The disc to drop, 1-7.
    #[arg(long)]
    next: u8,
    /// Moves until the next rise before this move, 1-5.
    #[arg(long)]
    rise: u8,
    /// Column 0-6.
    #[arg(long)]
    column: usize,
    /// Seed of the Mulberry32 reveal stream, used raw (not mixed), decimal or 0x-hex.
    #[arg(long, default_value = "0")]
    reveal_seed: String,
}

pub fn step(a: StepArgs) -> CliResult {
    let board = Board::parse(&a.board).map_err(|e| e.to_string())?;
    let seed = parse_seed(&a.reveal_seed)?;
    let result =
        drop7::trace::step(&board, a.next, a.rise, a.column, seed).map_err(|e| e.to_string())?;
    println!(
        "{}",
        serde_json::to_string(&result).map_err(|e| e.to_string())?
    );
    Ok(())
}

#[derive(Args)]
pub struct ShowArgs {
    /// 49 digits, row-major from the top; `startpos` for the opening board.
    #[arg(long)]
    board: String,
}

pub fn show(a: ShowArgs) -> CliResult {
    let board = if a.board == "startpos" {
        Board::start()
    } else {
        Board::parse(&a.board).map_err(|e| e.to_string())?
    };
    print!("{}", board.render());
    Ok(())
}

#[derive(Args)]
pub struct BenchArgs {
    /// Time a policy's decisions instead of the bare simulator (e.g. fair-d3s7, fair-d4s7):
    /// it plays its own games from --start and the first --decisions decisions are timed.
    #[arg(long)]
    policy: Option<String>,
    /// Decisions to time with --policy.
    #[arg(long, default_value_t = 50)]
    decisions: u32,
    /// First seed of the block.
    #[arg(long, default_value = "0x2d700000")]
    start: String,
    /// Number of games (seeds start, start+1, ...).
    #[arg(long, default_value_t = 400_000)]
    games: u32,
    /// Print the result as one JSON object instead of text.
    #[arg(long)]
    json: bool,
}

/// Totals of a block of random-policy games: identical on every run and every machine.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct BlockTotals {
    pub games: u64,
    pub moves: u64,
    pub score: u64,
}

/// Play `games` whole reference-random games from `start`, single thread, no allocation.
pub fn random_block(start: u32, games: u32) -> BlockTotals {
    let mut t = BlockTotals::default();
    for i in 0..games {
        let seed = start.wrapping_add(i);
        let mut game = Game::new(seed);
        let mut policy = TraceRandom::new(seed);
        while !game.finished() {
            let Some(c) = policy.choose(&game.board) else {
                break;
            };
            game.play(c, &mut ()).expect("policy picks legal columns");
        }
        t.games += 1;
        t.moves += game.moves_played as u64;
        t.score += game.score;
    }
    t
}

pub fn bench(a: BenchArgs) -> CliResult {
    let start = parse_seed(&a.start)?;
    if let Some(name) = &a.policy {
        return bench_policy(name, start, a.decisions, a.json);
    }
    let t0 = Instant::now();
    let totals = random_block(start, a.games);
    let secs = t0.elapsed().as_secs_f64();
    let mps = totals.moves as f64 / secs;
    if a.json {
        let j = serde_json::json!({
            "start": seed_hex(start), "games": totals.games, "moves": totals.moves,
            "score": totals.score, "seconds": secs, "movesPerSecond": mps, "threads": 1,
        });
        println!("{j}");
    } else {
        println!(
            "seeds {}:{}  games {}  moves {}  total score {}",
            seed_hex(start),
            a.games,
            totals.games,
            totals.moves,
            totals.score
        );
        println!(
            "time {secs:.3} s  {:.2} M moves/s  {:.0} games/s (1 thread)",
            mps / 1e6,
            totals.games as f64 / secs
        );
    }
    Ok(())
}

/// Time single-thread decisions of a policy along its own games from `start`.
fn bench_policy(name: &str, start: u32, decisions: u32, json: bool) -> CliResult {
    let mut policy = crate::policies::factory(name)?();
    let (mut n, mut work, mut secs, mut worst) = (0u32, 0u64, 0.0f64, 0.0f64);
    let mut seed = start;
    let bar = indicatif::ProgressBar::new(decisions as u64);
    while n < decisions {
        let mut game = Game::new(seed);
        while !game.finished() && n < decisions {
            let t0 = Instant::now();
            let choice = policy.choose(&game.public());
            let dt = t0.elapsed().as_secs_f64();
            secs += dt;
            worst = worst.max(dt);
            work += choice.work;
            n += 1;
            bar.inc(1);
            let column = choice
                .column
                .ok_or("policy returned no column in a live game")?;
            game.play(column, &mut ()).map_err(|e| e.to_string())?;
        }
        seed = seed.wrapping_add(1);
    }
    bar.finish_and_clear();
    let per = secs / n as f64;
    if json {
        println!(
            "{}",
            serde_json::json!({"policy": name, "start": seed_hex(start), "decisions": n, "secondsPerDecision": per,
                "worstSeconds": worst, "workPerDecision": work as f64 / n as f64, "workPerSecond": work as f64 / secs, "threads": 1})
        );
    } else {
        println!(
            "{name}: {n} decisions from {}  {:.1} ms/decision (worst {:.1} ms)  work/decision {:.0}  {:.2} M work/s (1 thread)",
            seed_hex(start),
            per * 1e3,
            worst * 1e3,
            work as f64 / n as f64,
            work as f64 / secs / 1e6
        );
    }
    Ok(())
}
