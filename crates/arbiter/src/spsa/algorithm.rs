//! The mathematics of SPSA, no I/O: the parameters and their OpenBench input lines, the gain
//! schedule, an iteration's perturbation and its update.

use serde::{Deserialize, Serialize};

/// The largest `--pairs` (a schedule length); far beyond any budget.
pub const MAX_PAIRS: u64 = 100_000_000;

/// One tuned parameter: its OpenBench input line and its current value.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Param {
    /// The UCI option name.
    pub name: String,
    /// `float` parameters are sent with decimals; `int` ones rounded.
    pub float: bool,
    pub start: f64,
    pub min: f64,
    pub max: f64,
    /// Perturbation at the last iteration.
    pub c_end: f64,
    /// Learning rate at the last iteration.
    pub r_end: f64,
    /// The current estimate (starts at `start`).
    pub value: f64,
}

impl Param {
    /// The OpenBench input line, with `value` as its start: the input of a continued tune.
    pub fn input_line(&self) -> String {
        format!(
            "{}, {}, {}, {}, {}, {}, {}",
            self.name,
            if self.float { "float" } else { "int" },
            self.shown(self.value),
            self.shown(self.min),
            self.shown(self.max),
            self.c_end,
            self.r_end
        )
    }

    /// A value as the engine is sent it (integers rounded to nearest).
    pub fn shown(&self, v: f64) -> String {
        if self.float {
            format!("{v}")
        } else {
            format!("{}", v.round() as i64)
        }
    }
}

/// A `--params` line that cannot be used: its line number (from 1) and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {reason}")]
pub struct ParamError {
    pub line: usize,
    pub reason: String,
}

/// Parse OpenBench SPSA input: `name, int|float, start, min, max, c_end, r_end` a line;
/// blank lines and `#` comments are ignored. Every number must be finite, min < max,
/// min ≤ start ≤ max, c_end > 0 and r_end > 0; integers must be whole; names unique.
pub fn parse_params(text: &str) -> Result<Vec<Param>, ParamError> {
    let mut out: Vec<Param> = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let l = raw.trim();
        if l.is_empty() || l.starts_with('#') {
            continue;
        }
        let param = parse_line(l, &out).map_err(|reason| ParamError {
            line: i + 1,
            reason,
        })?;
        out.push(param);
    }
    if out.is_empty() {
        return Err(ParamError {
            line: 0,
            reason: "no parameter (one line `name, int|float, start, min, max, c_end, r_end` \
                     each)"
                .into(),
        });
    }
    Ok(out)
}

/// One input line (trimmed, not blank, not a comment) as a parameter, or why not; its own
/// function so that every check can return its reason, which the caller numbers with the
/// line. `earlier` are the parameters of the lines before it (a name must not repeat one).
/// The checks run in the order of the fields, so a line with several faults is refused for
/// its first.
fn parse_line(l: &str, earlier: &[Param]) -> Result<Param, String> {
    let f: Vec<&str> = l.split(',').map(str::trim).collect();
    let [name, kind, start, min, max, c_end, r_end] = f[..] else {
        return Err(format!(
            "expected 7 comma-separated fields `name, int|float, start, min, max, c_end, \
             r_end`, got {}",
            f.len()
        ));
    };
    if name.is_empty() {
        return Err("empty parameter name".into());
    }
    if earlier.iter().any(|p| p.name == name) {
        return Err(format!("parameter `{name}` is named twice"));
    }
    let float = match kind {
        "int" => false,
        "float" => true,
        _ => return Err(format!("type `{kind}` is neither int nor float")),
    };
    let (start, min, max) = (
        number("start", start, float)?,
        number("min", min, float)?,
        number("max", max, float)?,
    );
    let (c_end, r_end) = (
        number("c_end", c_end, float)?,
        number("r_end", r_end, float)?,
    );
    if min >= max {
        return Err(format!("min {min} is not below max {max}"));
    }
    if !(min..=max).contains(&start) {
        return Err(format!("start {start} is outside [{min}, {max}]"));
    }
    if c_end <= 0.0 || r_end <= 0.0 {
        return Err("c_end and r_end must be positive".into());
    }
    Ok(Param {
        name: name.to_owned(),
        float,
        start,
        min,
        max,
        c_end,
        r_end,
        value: start,
    })
}

/// The number field `what` of a line: finite, and whole for the start, min and max of an int
/// parameter. One check for the five number fields, which differ only in their name.
fn number(what: &str, s: &str, float: bool) -> Result<f64, String> {
    let v: f64 = s
        .parse()
        .ok()
        .filter(|v: &f64| v.is_finite())
        .ok_or_else(|| format!("{what} `{s}` is not a finite number"))?;
    if !float && ["start", "min", "max"].contains(&what) {
        if v.fract() != 0.0 {
            return Err(format!("{what} `{s}` of an int parameter is not whole"));
        }
        // a value sent as a whole number must round-trip through the engine's integer
        // (1e30 used to saturate silently when sent)
        if v.abs() > i64::MAX as f64 / 2.0 {
            return Err(format!(
                "{what} `{s}` of an int parameter is beyond what an integer option holds"
            ));
        }
    }
    Ok(v)
}

/// The gain schedule: N iterations (game pairs), A = `a_ratio` · N, exponents α and γ.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Schedule {
    pub pairs: u64,
    pub a_ratio: f64,
    pub alpha: f64,
    pub gamma: f64,
}

impl Schedule {
    /// OpenBench's and Fishtest's exponents, A = 10 % of the run.
    pub fn new(pairs: u64) -> Self {
        Self {
            pairs,
            a_ratio: 0.1,
            alpha: 0.602,
            gamma: 0.101,
        }
    }

    /// `(c_i, r_i)` of `p` at iteration `i` (from 1; iterations past N keep shrinking).
    pub fn gains(&self, p: &Param, i: u64) -> (f64, f64) {
        let n = self.pairs as f64;
        let i = i.max(1) as f64;
        let big_a = self.a_ratio * n;
        let floor = if p.float { 0.0 } else { 0.5 };
        let c = (p.c_end * (n / i).powf(self.gamma)).max(floor);
        let r =
            p.r_end * p.c_end * p.c_end * ((big_a + n) / (big_a + i)).powf(self.alpha) / (c * c);
        (c, r)
    }
}

/// splitmix64 of `x`: the iteration's random stream.
fn mix(mut x: u64) -> u64 {
    crate::tournament::splitmix(&mut x)
}

/// One iteration's perturbation: the signs, the gains and the two engines' values.
#[derive(Debug, Clone, PartialEq)]
pub struct Perturbation {
    /// Iteration number, from 1.
    pub iteration: u64,
    pub flips: Vec<i8>,
    pub c: Vec<f64>,
    pub r: Vec<f64>,
    /// Values sent to the θ + cΔ engine, and to the θ − cΔ engine (rounded, clamped).
    pub plus: Vec<f64>,
    pub minus: Vec<f64>,
}

/// The perturbation of iteration `i` (from 1) around `params`' current values; a function of
/// `seed`, `i` and the values only.
pub fn perturb(params: &[Param], sched: &Schedule, seed: u64, i: u64) -> Perturbation {
    let mut s = seed ^ i.wrapping_mul(0xd1b5_4a32_d192_ed03);
    let mut next = || {
        s = mix(s);
        s
    };
    let mut p = Perturbation {
        iteration: i,
        flips: vec![],
        c: vec![],
        r: vec![],
        plus: vec![],
        minus: vec![],
    };
    for q in params {
        let flip: i8 = if next() & 1 == 1 { 1 } else { -1 };
        // 53 random bits: a uniform draw in [0, 1).
        let u = (next() >> 11) as f64 / (1u64 << 53) as f64;
        let (c, r) = sched.gains(q, i);
        let round = |v: f64| if q.float { v } else { (v + u).floor() };
        let d = f64::from(flip) * c;
        p.plus.push(round(q.value + d).clamp(q.min, q.max));
        p.minus.push(round(q.value - d).clamp(q.min, q.max));
        p.flips.push(flip);
        p.c.push(c);
        p.r.push(r);
    }
    p
}

/// Apply one iteration's result: `score` is the θ + cΔ engine's wins less its losses over
/// the pair (−2..=2).
pub fn update(params: &mut [Param], p: &Perturbation, score: i32) {
    for (k, q) in params.iter_mut().enumerate() {
        let step = p.r[k] * p.c[k] * f64::from(score) * f64::from(p.flips[k]);
        q.value = (q.value + step).clamp(q.min, q.max);
    }
}

/// Check every parameter against the options the engine declared: it must be one of them
/// (UCI option names are case-insensitive), and for a `spin` option its range must lie in the
/// engine's `min`..`max` (rounded values are sent, so an integer range is compared as such).
/// A tune of an option the engine lacks, or beyond what it accepts, would report a result of
/// games the parameter never touched.
pub fn check_against_engine(
    params: &[Param],
    declared: &[crate::engine::DeclaredOption],
) -> Result<(), String> {
    for p in params {
        let Some(o) = declared
            .iter()
            .find(|o| o.name.eq_ignore_ascii_case(&p.name))
        else {
            return Err(format!(
                "`{}` is not an option the engine declares ({} declared)",
                p.name,
                declared.len()
            ));
        };
        if o.kind == "spin"
            && let (Some(lo), Some(hi)) = (o.min, o.max)
            && (p.min < lo || p.max > hi)
        {
            return Err(format!(
                "`{}`: the range {}..={} leaves the engine's {lo}..={hi}",
                p.name, p.min, p.max
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 68, defect 2: a tune of an option the engine lacks, or past its declared range,
    /// used to run and report success.
    #[test]
    fn parameters_must_be_declared_options_within_their_range() {
        use crate::engine::DeclaredOption;
        let declared: Vec<DeclaredOption> = [
            "option name prune.rfp-margin type spin default 70 min 30 max 150",
            "option name Move Overhead type spin default 30 min 0 max 5000",
            "option name EvalFile type string default <embedded>",
        ]
        .iter()
        .map(|l| DeclaredOption::parse(l).unwrap())
        .collect();
        assert_eq!(declared[1].name, "Move Overhead");
        assert_eq!(
            (declared[0].min, declared[0].max),
            (Some(30.0), Some(150.0))
        );
        assert!(DeclaredOption::parse("id name x").is_none());
        let p = |line: &str| parse_params(line).unwrap();
        check_against_engine(
            &p("PRUNE.rfp-margin, int, 70, 30, 150, 8, 0.002\n"),
            &declared,
        )
        .unwrap();
        let e = check_against_engine(
            &p("prune.probcut-margin, int, 200, 50, 400, 15, 0.002\n"),
            &declared,
        )
        .unwrap_err();
        assert!(e.contains("`prune.probcut-margin` is not an option"), "{e}");
        let e = check_against_engine(
            &p("prune.rfp-margin, int, 70, 10, 150, 8, 0.002\n"),
            &declared,
        )
        .unwrap_err();
        assert!(e.contains("leaves the engine's 30..=150"), "{e}");
    }

    const INPUT: &str = "# comment\n\nprune.rfp-margin, int, 75, 30, 150, 8, 0.002\nx, float, 0.5, 0, 1, 0.05, 0.01\n";

    #[test]
    fn parses_openbench_input_and_refuses_bad_lines() {
        let p = parse_params(INPUT).unwrap();
        assert_eq!(p.len(), 2);
        assert_eq!(p[0].name, "prune.rfp-margin");
        assert!(!p[0].float && p[1].float);
        assert_eq!((p[0].start, p[0].min, p[0].max), (75.0, 30.0, 150.0));
        assert_eq!((p[0].c_end, p[0].r_end), (8.0, 0.002));
        assert_eq!(
            p[0].input_line(),
            "prune.rfp-margin, int, 75, 30, 150, 8, 0.002"
        );
        for (bad, line, says) in [
            ("a, int, 1, 0, 2, 1", 1, "7 comma-separated"),
            ("a, long, 1, 0, 2, 1, 0.1", 1, "neither int nor float"),
            ("a, int, 1.5, 0, 2, 1, 0.1", 1, "not whole"),
            ("a, int, 3, 0, 2, 1, 0.1", 1, "outside"),
            ("a, int, 1, 2, 2, 1, 0.1", 1, "not below"),
            ("a, int, 1, 0, 2, 0, 0.1", 1, "positive"),
            ("a, float, NaN, 0, 2, 1, 0.1", 1, "finite"),
            (
                "a, int, 1, 0, 2, 1, 0.1\n\na, int, 1, 0, 2, 1, 0.1",
                3,
                "twice",
            ),
            (", int, 1, 0, 2, 1, 0.1", 1, "empty"),
            ("# nothing\n", 0, "no parameter"),
        ] {
            let e = parse_params(bad).unwrap_err();
            assert_eq!(e.line, line, "{bad}");
            assert!(e.reason.contains(says), "{bad}: {}", e.reason);
        }
    }

    #[test]
    fn schedule_ends_at_c_end_and_r_end_and_starts_wider() {
        let p = &parse_params(INPUT).unwrap()[1];
        let s = Schedule::new(1000);
        let (c, r) = s.gains(p, 1000);
        assert!(
            (c - 0.05).abs() < 1e-12 && (r - 0.01).abs() < 1e-12,
            "{c} {r}"
        );
        // At the start c is (N)^γ = 1000^0.101 ≈ 2.01 times c_end; and the step r·c, which
        // is what moves a value, is larger than at the end.
        let (c1, r1) = s.gains(p, 1);
        assert!((c1 / 0.05 - 1000f64.powf(0.101)).abs() < 1e-9, "{c1}");
        assert!(r1 * c1 > r * c);
        // An int parameter's perturbation never falls below half a unit.
        let q = Param {
            c_end: 0.1,
            ..parse_params(INPUT).unwrap()[0].clone()
        };
        assert_eq!(s.gains(&q, 1000).0, 0.5);
    }

    #[test]
    fn perturbations_are_seeded_symmetric_rounded_and_clamped() {
        let params = parse_params(INPUT).unwrap();
        let s = Schedule::new(100);
        let a = perturb(&params, &s, 7, 5);
        assert_eq!(a, perturb(&params, &s, 7, 5));
        assert_ne!(
            (0..20)
                .map(|i| perturb(&params, &s, 7, i).flips)
                .collect::<Vec<_>>(),
            (0..20)
                .map(|i| perturb(&params, &s, 8, i).flips)
                .collect::<Vec<_>>()
        );
        for i in 1..200 {
            let p = perturb(&params, &s, 3, i);
            // int: whole values one or two units apart around 75 (c ≈ 8.4 → 16.8 apart ± 1).
            assert_eq!(p.plus[0].fract(), 0.0);
            let gap = (p.plus[0] - p.minus[0]) * f64::from(p.flips[0]);
            assert!((gap - 2.0 * p.c[0]).abs() <= 1.0, "{gap} {}", p.c[0]);
            // float: exact and symmetric.
            assert!((p.plus[1] + p.minus[1] - 1.0).abs() < 1e-12);
        }
        let mut edge = params.clone();
        edge[1].value = 0.0;
        let p = perturb(&edge, &s, 3, 1);
        assert!(p.plus[1] >= 0.0 && p.minus[1] >= 0.0);
        // Both signs occur for every parameter.
        let flips: Vec<i8> = (1..50)
            .map(|i| perturb(&params, &s, 3, i).flips[0])
            .collect();
        assert!(flips.contains(&1) && flips.contains(&-1));
    }

    /// A noisy "match" between two values of one parameter whose expected score peaks at
    /// 0.3: SPSA with the OpenBench schedule must walk from 0.8 to near it.
    #[test]
    fn converges_on_a_noisy_objective_with_a_known_best() {
        let mut params =
            parse_params("x, float, 0.8, 0, 1, 0.05, 0.02\ny, float, 0.5, 0, 1, 0.05, 0.02")
                .unwrap();
        let sched = Schedule::new(4000);
        let strength = |x: f64| -((x - 0.3) * (x - 0.3));
        let mut noise = 99u64;
        for i in 1..=sched.pairs {
            let p = perturb(&params, &sched, 11, i);
            // Two games; each won by + with probability 1/2 + 3·(strength difference).
            let edge = 3.0 * (strength(p.plus[0]) - strength(p.minus[0]));
            let mut score = 0;
            for _ in 0..2 {
                let u = (mix(noise) >> 11) as f64 / (1u64 << 53) as f64;
                noise = noise.wrapping_add(1);
                score += if u < 0.5 + edge { 1 } else { -1 };
            }
            update(&mut params, &p, score);
        }
        assert!(
            (params[0].value - 0.3).abs() < 0.1,
            "x = {}",
            params[0].value
        );
        // y has no effect: it wanders but stays in range.
        assert!((0.0..=1.0).contains(&params[1].value));
    }
}
