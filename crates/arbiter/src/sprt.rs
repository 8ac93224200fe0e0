//! The `--sprt` parameters: `elo0=0 elo1=5 [alpha=0.05 beta=0.05]`, each checked.

use evidence::Sprt;

/// The largest |Elo| bound accepted (a score of 99.7 %).
pub const MAX_ELO: f64 = 1000.0;

/// One `key=value` word of `--sprt`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum SprtParam {
    Elo0(f64),
    Elo1(f64),
    Alpha(f64),
    Beta(f64),
}

/// Refused SPRT parameters.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SprtError {
    #[error("`{0}` is not KEY=VALUE; expected elo0=, elo1=, alpha= or beta= with a number")]
    NotKeyValue(String),
    #[error("unknown key `{0}`; expected elo0=, elo1=, alpha= or beta=")]
    UnknownKey(String),
    #[error("{key}={value}: not a finite number")]
    NotANumber { key: &'static str, value: String },
    #[error("{key}={value}: must be strictly between 0 and 1")]
    Probability { key: &'static str, value: f64 },
    #[error("{key}={value}: must be within ±{MAX_ELO} Elo")]
    EloRange { key: &'static str, value: f64 },
    #[error("{0} is given twice")]
    Repeated(&'static str),
    #[error("needs elo0 < elo1 (got elo0={elo0} elo1={elo1})")]
    Order { elo0: f64, elo1: f64 },
    #[error("needs alpha + beta < 1 (got alpha={alpha} beta={beta})")]
    AlphaBeta { alpha: f64, beta: f64 },
}

impl SprtParam {
    fn key(&self) -> &'static str {
        match self {
            SprtParam::Elo0(_) => "elo0",
            SprtParam::Elo1(_) => "elo1",
            SprtParam::Alpha(_) => "alpha",
            SprtParam::Beta(_) => "beta",
        }
    }
}

impl std::str::FromStr for SprtParam {
    type Err = SprtError;

    /// `elo0=X`, `elo1=X` (finite, within ±[`MAX_ELO`]), `alpha=P`, `beta=P` (in (0, 1)).
    fn from_str(w: &str) -> Result<Self, Self::Err> {
        let (k, v) = w
            .split_once('=')
            .ok_or_else(|| SprtError::NotKeyValue(w.to_owned()))?;
        let key = match k {
            "elo0" => "elo0",
            "elo1" => "elo1",
            "alpha" => "alpha",
            "beta" => "beta",
            _ => return Err(SprtError::UnknownKey(k.to_owned())),
        };
        let x = v
            .trim()
            .parse::<f64>()
            .ok()
            .filter(|x| x.is_finite())
            .ok_or_else(|| SprtError::NotANumber {
                key,
                value: v.to_owned(),
            })?;
        let elo = |x: f64| {
            if x.abs() <= MAX_ELO {
                Ok(x)
            } else {
                Err(SprtError::EloRange { key, value: x })
            }
        };
        let probability = |x: f64| {
            if x > 0.0 && x < 1.0 {
                Ok(x)
            } else {
                Err(SprtError::Probability { key, value: x })
            }
        };
        Ok(match key {
            "elo0" => SprtParam::Elo0(elo(x)?),
            "elo1" => SprtParam::Elo1(elo(x)?),
            "alpha" => SprtParam::Alpha(probability(x)?),
            _ => SprtParam::Beta(probability(x)?),
        })
    }
}

impl std::fmt::Display for SprtParam {
    /// The `key=value` word this parameter parses from.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (SprtParam::Elo0(v) | SprtParam::Elo1(v) | SprtParam::Alpha(v) | SprtParam::Beta(v)) =
            *self;
        write!(f, "{}={v}", self.key())
    }
}

/// Check a test's parameters: finite Elo bounds within ±[`MAX_ELO`] with elo0 < elo1;
/// alpha, beta in (0, 1) with alpha + beta < 1 (so that the lower bound is below 0 and the
/// upper above: otherwise the first game pair would decide).
pub fn check(s: &Sprt) -> Result<(), SprtError> {
    for (key, value) in [("elo0", s.elo0), ("elo1", s.elo1)] {
        if !value.is_finite() {
            return Err(SprtError::NotANumber {
                key,
                value: value.to_string(),
            });
        }
        if value.abs() > MAX_ELO {
            return Err(SprtError::EloRange { key, value });
        }
    }
    for (key, value) in [("alpha", s.alpha), ("beta", s.beta)] {
        if !(value > 0.0 && value < 1.0) {
            return Err(SprtError::Probability { key, value });
        }
    }
    if s.elo0 >= s.elo1 {
        return Err(SprtError::Order {
            elo0: s.elo0,
            elo1: s.elo1,
        });
    }
    if s.alpha + s.beta >= 1.0 {
        return Err(SprtError::AlphaBeta {
            alpha: s.alpha,
            beta: s.beta,
        });
    }
    Ok(())
}

/// The test the `--sprt` words describe (defaults: elo0=0 elo1=5 alpha=0.05 beta=0.05),
/// checked with [`check`]; a key given twice is refused.
pub fn from_params(params: &[SprtParam]) -> Result<Sprt, SprtError> {
    let mut s = Sprt::new(0.0, 5.0);
    let mut seen = Vec::new();
    for p in params {
        if seen.contains(&p.key()) {
            return Err(SprtError::Repeated(p.key()));
        }
        seen.push(p.key());
        match *p {
            SprtParam::Elo0(v) => s.elo0 = v,
            SprtParam::Elo1(v) => s.elo1 = v,
            SprtParam::Alpha(v) => s.alpha = v,
            SprtParam::Beta(v) => s.beta = v,
        }
    }
    check(&s)?;
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(words: &[&str]) -> Result<Sprt, SprtError> {
        let params = words
            .iter()
            .map(|w| w.parse())
            .collect::<Result<Vec<SprtParam>, _>>()?;
        from_params(&params)
    }

    #[test]
    fn sprt_parameters_are_checked() {
        let s = parse(&["elo0=-1.5", "elo1=3", "alpha=0.1"]).unwrap();
        assert_eq!((s.elo0, s.elo1, s.alpha, s.beta), (-1.5, 3.0, 0.1, 0.05));
        for (bad, says) in [
            (&["alpha=2"][..], "strictly between 0 and 1"),
            (&["beta=-1"], "strictly between 0 and 1"),
            (&["alpha=0"], "strictly between 0 and 1"),
            (&["elo0=nan"], "not a finite number"),
            (&["elo1=inf"], "not a finite number"),
            (&["elo1=-inf"], "not a finite number"),
            (&["elo1=1e400"], "not a finite number"),
            (&["elo1=5000"], "within ±1000"),
            (&["elo0=5", "elo1=5"], "elo0 < elo1"),
            (&["elo0=10"], "elo0 < elo1"),
            (&["alpha=0.5", "beta=0.5"], "alpha + beta < 1"),
            (&["elo0=0", "elo0=1"], "elo0 is given twice"),
            (&["gamma=1"], "unknown key"),
            (&["elo0"], "not KEY=VALUE"),
        ] {
            let e = parse(bad).unwrap_err().to_string();
            assert!(e.contains(says), "{bad:?}: {e}");
        }
        // The extremes still give finite bounds and LLRs.
        let s = parse(&["elo0=-1000", "elo1=1000", "alpha=0.999", "beta=0.0001"]).unwrap();
        let mut p = evidence::Pentanomial::default();
        p.add_pair(2, 2);
        let st = s.status(&p);
        assert!(st.llr.is_finite() && st.lower_bound < 0.0 && st.upper_bound > 0.0);
    }
}
