//! Student-t quantiles, computed exactly (to ~1e-12) rather than approximated.
//!
//! Why exact: the paired t bound decides screen gates near zero, and a screen of 64 games
//! uses 63 degrees of freedom where cheap approximations are off in the fourth digit. The
//! Cornish–Fisher expansion the reference screens used is kept alongside so an old report
//! can be reproduced digit for digit.

use crate::wilson::Z_ONE_SIDED_95;

/// ln Γ(x) for x > 0 (Lanczos, g = 7, 9 terms; relative error below 1e-15).
pub fn ln_gamma(x: f64) -> f64 {
    const G: f64 = 7.0;
    const C: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        // reflection
        let pi = std::f64::consts::PI;
        return (pi / (pi * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let mut a = C[0];
    let t = x + G + 0.5;
    for (i, c) in C.iter().enumerate().skip(1) {
        a += c / (x + i as f64);
    }
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + a.ln()
}

/// Regularized incomplete beta I_x(a, b) by the Lentz continued fraction.
pub fn incomplete_beta(x: f64, a: f64, b: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let ln_front = ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * x.ln() + b * (1.0 - x).ln();
    // Use the symmetry relation where the continued fraction converges fast.
    if x > (a + 1.0) / (a + b + 2.0) {
        return 1.0 - incomplete_beta(1.0 - x, b, a);
    }
    let front = ln_front.exp() / a;
    const TINY: f64 = 1e-300;
    let (mut f, mut c, mut d) = (1.0, 1.0, 0.0);
    for i in 0..=400 {
        let m = (i / 2) as f64;
        let numerator = if i == 0 {
            1.0
        } else if i % 2 == 0 {
            m * (b - m) * x / ((a + 2.0 * m - 1.0) * (a + 2.0 * m))
        } else {
            -((a + m) * (a + b + m) * x) / ((a + 2.0 * m) * (a + 2.0 * m + 1.0))
        };
        d = 1.0 + numerator * d;
        if d.abs() < TINY {
            d = TINY;
        }
        d = 1.0 / d;
        c = 1.0 + numerator / c;
        if c.abs() < TINY {
            c = TINY;
        }
        let cd = c * d;
        f *= cd;
        if (1.0 - cd).abs() < 1e-16 {
            break;
        }
    }
    front * (f - 1.0)
}

/// P(T ≤ t) for Student's t with `df` degrees of freedom.
pub fn t_cdf(t: f64, df: f64) -> f64 {
    let x = df / (df + t * t);
    let tail = 0.5 * incomplete_beta(x, df / 2.0, 0.5);
    if t >= 0.0 { 1.0 - tail } else { tail }
}

/// The quantile t_p(df): the t with P(T ≤ t) = p. Bracketed bisection refined to machine
/// precision (monotone CDF, so it cannot fail to converge).
///
/// # Panics
/// If `p` is not strictly between 0 and 1 or `df` is not positive.
pub fn t_quantile(p: f64, df: f64) -> f64 {
    assert!(
        p > 0.0 && p < 1.0,
        "t_quantile: p must be in (0, 1), got {p}"
    );
    assert!(df > 0.0, "t_quantile: df must be positive, got {df}");
    if p < 0.5 {
        return -t_quantile(1.0 - p, df);
    }
    let (mut lo, mut hi) = (0.0f64, 1.0f64);
    while t_cdf(hi, df) < p {
        hi *= 2.0;
    }
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if t_cdf(mid, df) < p {
            lo = mid;
        } else {
            hi = mid;
        }
        if hi - lo <= 1e-15 * hi {
            break;
        }
    }
    0.5 * (lo + hi)
}

/// One-sided 95 % critical value t₀.₉₅(df), exact.
pub fn t_one_sided_95(df: f64) -> f64 {
    t_quantile(0.95, df)
}

/// The reference screens' 4-term Cornish–Fisher expansion of t₀.₉₅(ν) around
/// z = 1.6448536269514722 (Abramowitz & Stegun 26.7.5). Kept only to reproduce old reports;
/// use [`t_one_sided_95`] for new claims.
pub fn t_one_sided_95_cornish_fisher(df: f64) -> f64 {
    let z = Z_ONE_SIDED_95;
    let (z3, z5, z7, z9) = (z.powi(3), z.powi(5), z.powi(7), z.powi(9));
    let g1 = (z3 + z) / 4.0;
    let g2 = (5.0 * z5 + 16.0 * z3 + 3.0 * z) / 96.0;
    let g3 = (3.0 * z7 + 19.0 * z5 + 17.0 * z3 - 15.0 * z) / 384.0;
    let g4 = (79.0 * z9 + 776.0 * z7 + 1482.0 * z5 - 1920.0 * z3 - 945.0 * z) / 92160.0;
    z + g1 / df + g2 / df.powi(2) + g3 / df.powi(3) + g4 / df.powi(4)
}

#[cfg(test)]
mod tests {
    use super::*;

    // Reference values from standard t tables (and R's qt()).
    #[test]
    fn one_sided_95_quantiles() {
        let cases = [
            (1.0, 6.313_751_514_675_037),
            (2.0, 2.919_985_580_353_72),
            (10.0, 1.812_461_122_811_68),
            (30.0, 1.697_260_886_593_957),
            (63.0, 1.669_402_221_706_812_7),
            (255.0, 1.650_851_092_498_662),
        ];
        for (df, want) in cases {
            let got = t_one_sided_95(df);
            assert!((got - want).abs() < 1e-9, "df {df}: got {got} want {want}");
        }
    }

    #[test]
    fn other_quantiles_and_symmetry() {
        // qt(0.975, 5) = 2.570582, qt(0.999, 3) = 10.21453
        assert!((t_quantile(0.975, 5.0) - 2.570_581_835_636_314).abs() < 1e-9);
        assert!((t_quantile(0.999, 3.0) - 10.214_531_852_407_4).abs() < 1e-7);
        assert_eq!(t_quantile(0.025, 5.0), -t_quantile(0.975, 5.0));
        assert!((t_cdf(0.0, 7.0) - 0.5).abs() < 1e-15);
    }

    #[test]
    fn cornish_fisher_is_close_but_not_exact() {
        let cf = t_one_sided_95_cornish_fisher(63.0);
        assert!((cf - 1.6694).abs() < 5e-5, "{cf}");
        let cf = t_one_sided_95_cornish_fisher(255.0);
        assert!((cf - 1.65085).abs() < 5e-5, "{cf}");
    }

    #[test]
    fn ln_gamma_known_values() {
        assert!((ln_gamma(1.0)).abs() < 1e-14);
        assert!((ln_gamma(0.5) - std::f64::consts::PI.sqrt().ln()).abs() < 1e-14);
        assert!((ln_gamma(10.0) - 362_880f64.ln()).abs() < 1e-12);
    }
}
