//! Descriptive statistics with NumPy's conventions, so a report computed here and one
//! computed by the reference analysis scripts agree to the last printed digit.

/// Arithmetic mean by NumPy's pairwise summation (the order `numpy.mean` adds in for a
/// contiguous 1-D array), so means agree bit for bit with the reference scripts.
pub fn mean(xs: &[f64]) -> f64 {
    if xs.is_empty() {
        return f64::NAN;
    }
    pairwise_sum(xs) / xs.len() as f64
}

/// NumPy's pairwise sum: blocks of at most 128 summed with 8 interleaved accumulators,
/// larger arrays split in halves (the split rounded down to a multiple of 8).
pub fn pairwise_sum(xs: &[f64]) -> f64 {
    let n = xs.len();
    if n < 8 {
        let mut s = 0.0;
        for &x in xs {
            s += x;
        }
        s
    } else if n <= 128 {
        let mut r = [0.0f64; 8];
        r.copy_from_slice(&xs[..8]);
        let mut i = 8;
        while i + 8 <= n {
            for (k, acc) in r.iter_mut().enumerate() {
                *acc += xs[i + k];
            }
            i += 8;
        }
        let mut s = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
        for &x in &xs[i..] {
            s += x;
        }
        s
    } else {
        let mut half = n / 2;
        half -= half % 8;
        pairwise_sum(&xs[..half]) + pairwise_sum(&xs[half..])
    }
}

/// Sample standard deviation (ddof = 1), NumPy's two-pass form. NaN for fewer than 2 values.
pub fn sd(xs: &[f64]) -> f64 {
    if xs.len() < 2 {
        return f64::NAN;
    }
    let m = mean(xs);
    let sq: Vec<f64> = xs.iter().map(|x| (x - m) * (x - m)).collect();
    (pairwise_sum(&sq) / (xs.len() - 1) as f64).sqrt()
}

/// Quantile `q` ∈ [0, 1] of **sorted** data with NumPy's default ("linear") method:
/// position `q·(n−1)`, linear interpolation between the neighbours, using NumPy's
/// two-sided lerp so results match `numpy.quantile` bit for bit.
pub fn quantile_sorted(sorted: &[f64], q: f64) -> f64 {
    let n = sorted.len();
    if n == 0 {
        return f64::NAN;
    }
    let pos = q * (n - 1) as f64;
    let lo = (pos.floor() as usize).min(n - 1);
    let hi = (lo + 1).min(n - 1);
    let t = pos - lo as f64;
    let (a, b) = (sorted[lo], sorted[hi]);
    let diff = b - a;
    if t >= 0.5 {
        b - diff * (1.0 - t)
    } else {
        a + diff * t
    }
}

/// Quantile of unsorted data (copies and sorts).
pub fn quantile(xs: &[f64], q: f64) -> f64 {
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    quantile_sorted(&v, q)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_like_numpy() {
        // numpy.quantile([1,2,3,4], [0.25, 0.5, 0.05]) = [1.75, 2.5, 1.15]
        let v = [1.0, 2.0, 3.0, 4.0];
        assert_eq!(quantile_sorted(&v, 0.25), 1.75);
        assert_eq!(quantile_sorted(&v, 0.5), 2.5);
        assert!((quantile_sorted(&v, 0.05) - 1.15).abs() < 1e-15);
        assert_eq!(quantile(&[5.0, 1.0, 3.0], 1.0), 5.0);
        assert_eq!(quantile(&[5.0, 1.0, 3.0], 0.0), 1.0);
    }

    #[test]
    fn mean_and_sd() {
        let v = [2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0];
        assert_eq!(mean(&v), 5.0);
        // sample sd = sqrt(32/7)
        assert!((sd(&v) - (32.0f64 / 7.0).sqrt()).abs() < 1e-15);
    }

    #[test]
    fn pairwise_sum_matches_plain_sum_on_exact_values() {
        let v: Vec<f64> = (0..1000).map(|i| i as f64).collect();
        assert_eq!(pairwise_sum(&v), 499_500.0);
        // The block split is observable with values whose order matters: NumPy 2.4's
        // `np.sum` of these arrays (printed with repr) differs from a left-to-right sum, and
        // the pairwise order must reproduce NumPy's, not the naive one.
        let w: Vec<f64> = (0..300)
            .map(|i| if i % 2 == 0 { 1e16 } else { 1.0 })
            .collect();
        let naive: f64 = w.iter().sum();
        assert_eq!(pairwise_sum(&w), 1.5000000000000003e18);
        assert_eq!(naive, 1.5e18);
        // np.array([(i*0.1) % 7.3 + 1e-3*i for i in range(1000)]): np.sum, np.mean
        let v: Vec<f64> = (0..1000)
            .map(|i| (i as f64 * 0.1) % 7.3 + 1e-3 * i as f64)
            .collect();
        assert_eq!(pairwise_sum(&v), 4043.4000000000037);
        assert_eq!(mean(&v), 4.043400000000004);
        assert_eq!(v.iter().sum::<f64>(), 4043.4000000000065);
    }
}
