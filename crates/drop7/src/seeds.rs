//! Seeds and seed blocks as the command line, the ledger, the runner and training name them.
//!
//! A [`SeedBlock`] is `count ≥ 1` consecutive seeds `start, start+1, …` that stay inside the
//! 32-bit seed space: a block that wrapped past `0xffffffff` would overlap blocks at the bottom
//! of the space without the ledger's interval test seeing it, so such a block is refused at
//! construction rather than special-cased everywhere it is compared.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// A seed or a seed block that does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SeedError {
    #[error("bad seed `{0}`: expected a 32-bit value, decimal or 0x-hex")]
    Seed(String),
    #[error("bad seed block `{0}`: expected <start>:<count>, e.g. 0xa52f2140:256")]
    BlockSyntax(String),
    #[error("bad seed block `{0}`: the count must be a number from 1 to 4294967296")]
    Count(String),
    #[error(
        "bad seed block `{block}`: it runs past 0xffffffff (last seed would be {last:#x}); blocks do not wrap"
    )]
    Wraps { block: String, last: u64 },
}

/// Parse a seed written in decimal or as `0x…` hexadecimal.
pub fn parse_seed(s: &str) -> Result<u32, SeedError> {
    let t = s.trim();
    let parsed = if let Some(h) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        u32::from_str_radix(h, 16)
    } else {
        t.parse::<u32>()
    };
    parsed.map_err(|_| SeedError::Seed(s.to_owned()))
}

/// Format a seed the way the vectors do: `0x` and 8 lowercase hex digits.
pub fn seed_hex(seed: u32) -> String {
    format!("{seed:#010x}")
}

/// `count` consecutive seeds from `start`, inside the 32-bit space (`start + count ≤ 2³²`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(into = "String", try_from = "String")]
pub struct SeedBlock {
    start: u32,
    /// 1 ..= 2³²; a u64 so that the whole space is one block.
    count: u64,
}

impl SeedBlock {
    /// The block `[start, start + count)`.
    pub fn new(start: u32, count: u64) -> Result<Self, SeedError> {
        let name = || format!("{}:{count}", seed_hex(start));
        if count == 0 || count > 1 << 32 {
            return Err(SeedError::Count(name()));
        }
        let end = start as u64 + count;
        if end > 1 << 32 {
            return Err(SeedError::Wraps {
                block: name(),
                last: end - 1,
            });
        }
        Ok(Self { start, count })
    }

    pub fn start(&self) -> u32 {
        self.start
    }

    pub fn count(&self) -> u64 {
        self.count
    }

    /// One past the last seed (may be 2³²).
    pub fn end_exclusive(&self) -> u64 {
        self.start as u64 + self.count
    }

    /// The seeds in order.
    pub fn seeds(&self) -> impl Iterator<Item = u32> + use<> {
        let start = self.start as u64;
        (start..start + self.count).map(|s| s as u32)
    }

    /// Seed number `i` of an endless walk through the block (`start + i mod count`): training
    /// takes its games this way.
    pub fn cycle(&self, i: u64) -> u32 {
        (self.start as u64 + i % self.count) as u32
    }

    /// Position of `seed` in the block, if it is in it.
    pub fn index_of(&self, seed: u32) -> Option<u64> {
        let i = (seed as u64).checked_sub(self.start as u64)?;
        (i < self.count).then_some(i)
    }

    /// Whether the two blocks share a seed.
    pub fn overlaps(&self, other: &SeedBlock) -> bool {
        (self.start as u64) < other.end_exclusive() && (other.start as u64) < self.end_exclusive()
    }
}

impl fmt::Display for SeedBlock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", seed_hex(self.start), self.count)
    }
}

impl FromStr for SeedBlock {
    type Err = SeedError;
    /// `<start>:<count>`, each decimal or 0x-hex.
    fn from_str(s: &str) -> Result<Self, SeedError> {
        let (a, b) = s
            .split_once(':')
            .ok_or_else(|| SeedError::BlockSyntax(s.to_owned()))?;
        let start = parse_seed(a).map_err(|_| SeedError::BlockSyntax(s.to_owned()))?;
        let b = b.trim();
        let count = if let Some(h) = b.strip_prefix("0x").or_else(|| b.strip_prefix("0X")) {
            u64::from_str_radix(h, 16)
        } else {
            b.parse::<u64>()
        }
        .map_err(|_| SeedError::Count(s.to_owned()))?;
        Self::new(start, count).map_err(|e| match e {
            SeedError::Wraps { last, .. } => SeedError::Wraps {
                block: s.to_owned(),
                last,
            },
            _ => SeedError::Count(s.to_owned()),
        })
    }
}

impl From<SeedBlock> for String {
    fn from(b: SeedBlock) -> String {
        b.to_string()
    }
}

impl TryFrom<String> for SeedBlock {
    type Error = SeedError;
    fn try_from(s: String) -> Result<Self, SeedError> {
        s.parse()
    }
}

/// Shard `index` of `count` (0-based, `K/N` on the command line): the K-th of N contiguous
/// sub-blocks of a block, for job arrays. Contiguous rather than interleaved, so a shard is
/// itself a block (one results file, one range) and the shards in order are the block in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Shard {
    pub index: u32,
    pub count: u32,
}

/// A shard that does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ShardError {
    #[error("bad shard `{0}`: expected K/N with 0 ≤ K < N, e.g. 2/4 (or `slurm`)")]
    Syntax(String),
    #[error(
        "`--shard slurm` needs SLURM_ARRAY_TASK_ID and SLURM_ARRAY_TASK_COUNT in the environment (run it inside a job array)"
    )]
    NoSlurm,
    #[error(
        "the Slurm array task (SLURM_ARRAY_TASK_ID {id}, _MIN {min}, _STEP {step}, _COUNT {count}) is not a shard: {why}"
    )]
    SlurmTask {
        id: u32,
        min: u32,
        step: u32,
        count: u32,
        why: String,
    },
    #[error("block {block} has {count} seeds, fewer than the {shards} shards")]
    TooMany {
        block: String,
        count: u64,
        shards: u32,
    },
}

impl Shard {
    /// The array task's shard: `(SLURM_ARRAY_TASK_ID − SLURM_ARRAY_TASK_MIN) /
    /// SLURM_ARRAY_TASK_STEP` of `SLURM_ARRAY_TASK_COUNT` (an array may be numbered from 1,
    /// and stepped: `--array=0-30:10` runs tasks 0, 10, 20, 30).
    pub fn from_slurm_env() -> Result<Self, ShardError> {
        Self::from_slurm_vars(|k| std::env::var(k).ok())
    }

    /// [`Shard::from_slurm_env`] over any variable lookup (the environment, or a test's).
    pub fn from_slurm_vars(get: impl Fn(&str) -> Option<String>) -> Result<Self, ShardError> {
        let var = |k: &str| get(k).and_then(|v| v.trim().parse::<u32>().ok());
        let (Some(id), Some(count)) = (var("SLURM_ARRAY_TASK_ID"), var("SLURM_ARRAY_TASK_COUNT"))
        else {
            return Err(ShardError::NoSlurm);
        };
        let min = var("SLURM_ARRAY_TASK_MIN").unwrap_or(0);
        let step = var("SLURM_ARRAY_TASK_STEP").unwrap_or(1);
        let bad = |why: String| ShardError::SlurmTask {
            id,
            min,
            step,
            count,
            why,
        };
        if step == 0 {
            return Err(bad("a step of 0".into()));
        }
        let offset = id
            .checked_sub(min)
            .ok_or_else(|| bad("the task id is below the array's first".into()))?;
        if offset % step != 0 {
            return Err(bad("the task id is not on the array's step".into()));
        }
        let index = offset / step;
        if index >= count {
            return Err(bad(format!("task {index} of {count}")));
        }
        Ok(Self { index, count })
    }

    /// This shard's contiguous part of `block` (seeds ⌊K·n/N⌋ ..< ⌊(K+1)·n/N⌋).
    pub fn of(&self, block: SeedBlock) -> Result<SeedBlock, ShardError> {
        let n = block.count();
        if n < self.count as u64 {
            return Err(ShardError::TooMany {
                block: block.to_string(),
                count: n,
                shards: self.count,
            });
        }
        let cut = |k: u64| (k as u128 * n as u128 / self.count as u128) as u64;
        let (a, b) = (cut(self.index as u64), cut(self.index as u64 + 1));
        Ok(SeedBlock::new((block.start() as u64 + a) as u32, b - a).expect("inside the block"))
    }

    /// `K-of-N`, for directory and file names.
    pub fn tag(&self) -> String {
        format!("{}-of-{}", self.index, self.count)
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

impl FromStr for Shard {
    type Err = ShardError;
    fn from_str(s: &str) -> Result<Self, ShardError> {
        if s == "slurm" {
            return Self::from_slurm_env();
        }
        let bad = || ShardError::Syntax(s.to_owned());
        let (k, n) = s.split_once('/').ok_or_else(bad)?;
        let (index, count): (u32, u32) = (
            k.trim().parse().map_err(|_| bad())?,
            n.trim().parse().map_err(|_| bad())?,
        );
        if count == 0 || index >= count {
            return Err(bad());
        }
        Ok(Self { index, count })
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn slurm_shards_follow_the_array_step() {
        let env = |id: &str, min: &str, step: Option<&str>, count: &str| {
            let (id, min, step, count) = (
                id.to_owned(),
                min.to_owned(),
                step.map(str::to_owned),
                count.to_owned(),
            );
            move |k: &str| match k {
                "SLURM_ARRAY_TASK_ID" => Some(id.clone()),
                "SLURM_ARRAY_TASK_MIN" => Some(min.clone()),
                "SLURM_ARRAY_TASK_STEP" => step.clone(),
                "SLURM_ARRAY_TASK_COUNT" => Some(count.clone()),
                _ => None,
            }
        };
        // --array=0-30:10: tasks 0, 10, 20, 30 are shards 0..4 of 4.
        for (id, k) in [("0", 0), ("10", 1), ("20", 2), ("30", 3)] {
            let s = Shard::from_slurm_vars(env(id, "0", Some("10"), "4")).unwrap();
            assert_eq!((s.index, s.count), (k, 4), "task {id}");
        }
        // No step: consecutive ids from MIN.
        let s = Shard::from_slurm_vars(env("3", "1", None, "4")).unwrap();
        assert_eq!((s.index, s.count), (2, 4));
        for bad in [
            env("15", "0", Some("10"), "4"),
            env("40", "0", Some("10"), "4"),
            env("1", "0", Some("0"), "4"),
        ] {
            let e = Shard::from_slurm_vars(bad).unwrap_err().to_string();
            assert!(e.contains("is not a shard"), "{e}");
        }
        let e = Shard::from_slurm_vars(|_| None).unwrap_err();
        assert_eq!(e, ShardError::NoSlurm);
    }

    use super::*;
    use proptest::prelude::*;

    #[test]
    fn seeds_parse() {
        assert_eq!(parse_seed("0xa52f2140"), Ok(0xa52f2140));
        assert_eq!(parse_seed("42"), Ok(42));
        assert!(parse_seed("0x1_0000_0000").is_err());
        assert!(parse_seed("4294967296").is_err());
        assert!(
            parse_seed("seed")
                .unwrap_err()
                .to_string()
                .contains("bad seed")
        );
        assert_eq!(seed_hex(0x2d70), "0x00002d70");
    }

    #[test]
    fn blocks_parse_and_refuse() {
        let b: SeedBlock = "0xa52f2140:256".parse().unwrap();
        assert_eq!((b.start(), b.count()), (0xa52f2140, 256));
        assert_eq!(b.to_string(), "0xa52f2140:256");
        assert_eq!(b.seeds().nth(255), Some(0xa52f223f));
        assert_eq!(b.seeds().count(), 256);
        let top: SeedBlock = "0xffffff00:256".parse().unwrap();
        assert_eq!(top.end_exclusive(), 1 << 32);
        assert_eq!(top.seeds().last(), Some(u32::MAX));
        let all: SeedBlock = "0:4294967296".parse().unwrap();
        assert_eq!(all.count(), 1 << 32);
        for bad in ["0xa52f2140", "x:3", "5:0", "5:-1", "5:many", "0:4294967297"] {
            assert!(bad.parse::<SeedBlock>().is_err(), "{bad}");
        }
        let e = "0xfffffff0:32".parse::<SeedBlock>().unwrap_err();
        assert!(e.to_string().contains("past 0xffffffff"), "{e}");
        assert_eq!(b.cycle(257), 0xa52f2141);
        assert_eq!(b.index_of(0xa52f2141), Some(1));
        assert_eq!(b.index_of(0xa52f2140 + 256), None);
        assert_eq!(b.index_of(3), None);
        let json = serde_json::to_string(&b).unwrap();
        assert_eq!(json, "\"0xa52f2140:256\"");
        assert_eq!(serde_json::from_str::<SeedBlock>(&json).unwrap(), b);
        assert!(serde_json::from_str::<SeedBlock>("\"1:0\"").is_err());
    }

    #[test]
    fn shards_tile_the_block() {
        let b: SeedBlock = "0x100:10".parse().unwrap();
        let parts: Vec<SeedBlock> = (0..3)
            .map(|k| Shard { index: k, count: 3 }.of(b).unwrap())
            .collect();
        assert_eq!(
            parts.iter().map(|p| p.to_string()).collect::<Vec<_>>(),
            ["0x00000100:3", "0x00000103:3", "0x00000106:4"]
        );
        assert_eq!(
            "2/3".parse::<Shard>().unwrap(),
            Shard { index: 2, count: 3 }
        );
        for bad in ["3/3", "1/0", "x/2", "1", "-1/2"] {
            assert!(bad.parse::<Shard>().is_err(), "{bad}");
        }
        assert!(
            Shard {
                index: 0,
                count: 11
            }
            .of(b)
            .is_err()
        );
    }

    proptest! {
        /// The shards of any block are disjoint, in order, and cover it exactly.
        #[test]
        fn shards_partition(start in 0u32..1000, n in 1u64..5000, count in 1u32..40) {
            let b = SeedBlock::new(start, n).unwrap();
            if n >= count as u64 {
                let seeds: Vec<u32> = (0..count)
                    .flat_map(|k| Shard { index: k, count }.of(b).unwrap().seeds().collect::<Vec<_>>())
                    .collect();
                prop_assert_eq!(seeds, b.seeds().collect::<Vec<_>>());
            }
        }

        /// Overlap is exactly "some seed is in both", tested on small blocks by enumeration.
        #[test]
        fn overlap_is_set_intersection(a in 0u32..200, n in 1u64..50, b in 0u32..200, m in 1u64..50) {
            let x = SeedBlock::new(a, n).unwrap();
            let y = SeedBlock::new(b, m).unwrap();
            let shared = x.seeds().any(|s| y.index_of(s).is_some());
            prop_assert_eq!(x.overlaps(&y), shared);
            prop_assert_eq!(y.overlaps(&x), shared);
        }

        /// Any text as a seed, a block or a shard: a value or an error, never a panic; an
        /// accepted block stays inside the 32-bit space and prints back as itself.
        #[test]
        fn any_text_parses_or_is_refused(
            text in "\\PC{0,30}|(0[xX])?[0-9a-fA-F]{0,10}:(0x)?[0-9a-f+-]{0,12}|[0-9]{1,12}/[0-9]{1,12}",
        ) {
            let _ = parse_seed(&text);
            if let Ok(b) = text.parse::<SeedBlock>() {
                prop_assert!(b.count() >= 1 && b.end_exclusive() <= 1 << 32);
                prop_assert_eq!(b.to_string().parse::<SeedBlock>().unwrap(), b);
            }
            if text != "slurm"
                && let Ok(s) = text.parse::<Shard>()
            {
                prop_assert!(s.index < s.count);
                prop_assert_eq!(s.to_string().parse::<Shard>().unwrap(), s);
            }
        }

        /// Display and FromStr are inverse.
        #[test]
        fn display_round_trips(a in any::<u32>(), n in 1u64..=(1 << 32)) {
            if let Ok(x) = SeedBlock::new(a, n) {
                prop_assert_eq!(x.to_string().parse::<SeedBlock>().unwrap(), x);
            }
        }
    }
}
