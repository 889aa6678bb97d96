//! Order statistics of a set of samples (pure code).

/// Summary of one configuration's samples, in cycles per byte. The median of an even count
/// is the mean of the two middle values.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Summary {
    /// The median: the figure every table reports.
    pub median: f64,
    /// First and third quartiles (linear interpolation between order statistics).
    pub q1: f64,
    pub q3: f64,
    /// The fastest sample.
    pub min: f64,
}

impl Summary {
    /// Summarises `samples`; `None` when there are none (or any is NaN).
    pub fn of(samples: &[f64]) -> Option<Summary> {
        if samples.is_empty() || samples.iter().any(|s| s.is_nan()) {
            return None;
        }
        let mut v = samples.to_vec();
        v.sort_by(f64::total_cmp);
        Some(Summary {
            median: quantile_sorted(&v, 0.5),
            q1: quantile_sorted(&v, 0.25),
            q3: quantile_sorted(&v, 0.75),
            min: v[0],
        })
    }
}

/// The `q`-quantile (0 ≤ q ≤ 1) of sorted data, interpolating linearly between neighbours, so
/// that `q = 0.5` is the usual median. `sorted` must be non-empty and sorted.
pub fn quantile_sorted(sorted: &[f64], q: f64) -> f64 {
    debug_assert!(!sorted.is_empty());
    let pos = q.clamp(0.0, 1.0) * (sorted.len() - 1) as f64;
    let lo = pos.floor() as usize;
    let hi = pos.ceil() as usize;
    let frac = pos - lo as f64;
    sorted[lo] + (sorted[hi] - sorted[lo]) * frac
}

#[cfg(test)]
mod tests {
    use super::*;

    fn median(v: &[f64]) -> Option<f64> {
        Summary::of(v).map(|s| s.median)
    }

    #[test]
    fn median_odd_even_and_unsorted() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), Some(2.5));
        assert_eq!(median(&[7.5]), Some(7.5));
        assert_eq!(median(&[]), None);
        assert_eq!(median(&[1.0, f64::NAN]), None);
    }

    #[test]
    fn median_of_91_ignores_outliers() {
        let mut v: Vec<f64> = (0..91).map(|i| 1.0 + i as f64 * 0.001).collect();
        v[0] = 1e9; // one sample hit by an interrupt
        v[1] = 0.0;
        let m = median(&v).unwrap();
        assert!((m - 1.046).abs() < 1e-12, "{m}");
    }

    #[test]
    fn quartiles() {
        let s = Summary::of(&[1.0, 2.0, 3.0, 4.0, 5.0]).unwrap();
        assert_eq!((s.q1, s.median, s.q3, s.min), (2.0, 3.0, 4.0, 1.0));
        assert_eq!(quantile_sorted(&[1.0, 3.0], 0.5), 2.0);
    }
}
