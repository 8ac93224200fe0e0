//! Argument types shared by several subcommands, each parsed once by clap through `FromStr`
//! (so a bad value is reported with the flag's name and what is accepted).

use std::path::PathBuf;
use std::str::FromStr;

use clap::Args;
use drop7::board::Board;
use ntuple::policy::{Models, PolicySpec};

/// The model file for n-tuple policies written without `@FILE`.
#[derive(Args, Debug, Clone)]
pub struct ModelArg {
    /// Model file (D7NTUP02, or D7NTUP01 with its .sha256) for `ntuple-*` policies written
    /// without `@FILE`.
    #[arg(long, env = "DROP7_MODEL", value_name = "FILE")]
    pub model: Option<PathBuf>,
}

impl ModelArg {
    /// A model cache that tells the user (on stderr) what each file holds as it loads.
    pub fn models(&self) -> Models {
        Models::new(self.model.clone()).on_load(|path, m| {
            eprintln!(
                "model {}: layout {}, sha256 {}, {} verified by {}{}",
                path.display(),
                m.tables.layout,
                m.info.sha256,
                m.info.format,
                m.info.checked_by,
                match m.info.format {
                    ntuple::model::Format::V1 =>
                        " (the old format: `drop7 model upgrade` rewrites it with its own checksum)",
                    ntuple::model::Format::V2 => "",
                    ntuple::model::Format::Pack => " (a pack: quantised values, `drop7 model pack`)",
                }
            );
        })
    }

    /// The factory of one policy (loading its model if it has one).
    pub fn factory(&self, spec: &PolicySpec) -> anyhow::Result<drop7::policy::PolicyFactory> {
        Ok(spec.factory(&mut self.models())?)
    }
}

/// A count written as an integer or in scientific notation (`2e8`, `200_000_000`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Count(pub u64);

impl FromStr for Count {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let t = s.trim().replace('_', "");
        let bad = || format!("`{s}` is not a count (e.g. 2e8 or 200000000)");
        if let Ok(n) = t.parse::<u64>() {
            return Ok(Self(n));
        }
        let v: f64 = t.parse().map_err(|_| bad())?;
        if !(0.0..1.8e19).contains(&v) || v.fract() != 0.0 {
            return Err(bad());
        }
        Ok(Self(v as u64))
    }
}

/// A board between moves: 49 digits row-major from the top, or `startpos`. Holes and discs
/// that would still pop are refused (`Board::parse_settled`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BoardArg(pub Board);

impl FromStr for BoardArg {
    type Err = drop7::BoardError;
    fn from_str(s: &str) -> Result<Self, drop7::BoardError> {
        drop7::protocol::parse_board(s).map(Self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts() {
        assert_eq!("2e8".parse::<Count>(), Ok(Count(200_000_000)));
        assert_eq!("200_000_000".parse::<Count>(), Ok(Count(200_000_000)));
        assert_eq!("18446744073709551615".parse::<Count>(), Ok(Count(u64::MAX)));
        for bad in ["-1", "1.5", "x", "1e30", ""] {
            assert!(bad.parse::<Count>().is_err(), "{bad}");
        }
    }
}
