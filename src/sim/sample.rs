//! Seeded draws from a model's distributions, in whole ticks.

use rand::{Rng, SeedableRng};
use rand_distr::{Distribution, Exp, LogNormal, Zipf};
use rand_pcg::Pcg64Mcg;

use crate::ir::workload::Dist;

/// z of the 99th percentile of the standard normal distribution.
const Z99: f64 = 2.326_347_874_040_840_8;

/// The random source of one run: PCG (value-stable across platforms and releases), seeded
/// from the user's seed and the run's number.
pub struct Sampler {
    rng: Pcg64Mcg,
}

impl Sampler {
    #[must_use]
    pub fn new(seed: u64, run: u64) -> Self {
        let mixed = splitmix(seed ^ splitmix(run.wrapping_add(0x9e37_79b9_7f4a_7c15)));
        Sampler {
            rng: Pcg64Mcg::seed_from_u64(mixed),
        }
    }

    /// A length drawn from `d`, rounded to the nearest tick and cut to its range.
    pub fn draw(&mut self, d: Dist) -> u32 {
        let (lo, hi) = d.range();
        let x = match d {
            Dist::Fixed(t) => return t,
            Dist::Uniform { lo, hi } => return self.rng.random_range(lo..=hi),
            Dist::Exponential { mean, .. } => match Exp::new(1.0 / mean.max(1e-9)) {
                Ok(e) => e.sample(&mut self.rng),
                Err(_) => mean,
            },
            Dist::LogNormal { median, p99, .. } => {
                let mu = median.max(1e-9).ln();
                let sigma = ((p99.max(median) / median.max(1e-9)).ln() / Z99).max(0.0);
                match LogNormal::new(mu, sigma) {
                    Ok(l) => l.sample(&mut self.rng),
                    Err(_) => median,
                }
            }
        };
        (x.round() as u64).clamp(u64::from(lo), u64::from(hi)) as u32
    }

    /// The length of a ranged delay `ticks..=upto` (`work`, `sleep`): drawn from the
    /// workload's distribution `draw` names, or uniformly.
    pub fn delay(&mut self, m: &crate::ir::Model, (ticks, upto): (u32, u32), draw: Option<u16>) -> u32 {
        match draw {
            Some(d) => self.draw(m.workload.draws[d as usize].dist),
            None => self.draw(Dist::Uniform { lo: ticks, hi: upto }),
        }
    }

    /// A value of `lo..=hi` for `pick`: each alike, or with `zipf s` the k-th value (from
    /// `lo`) with weight 1/k^s.
    pub fn value(&mut self, lo: i32, hi: i32, zipf: Option<f64>) -> i32 {
        let n = i64::from(hi) - i64::from(lo) + 1;
        let k = match zipf.map(|s| Zipf::new(n as f64, s)) {
            Some(Ok(z)) => (z.sample(&mut self.rng) as i64).clamp(1, n) - 1,
            _ => self.rng.random_range(0..n),
        };
        (i64::from(lo) + k) as i32
    }

    /// One of `n` (n > 0), each alike.
    pub fn pick(&mut self, n: usize) -> usize {
        self.rng.random_range(0..n)
    }
}

/// SplitMix64's finaliser: spreads nearby seeds far apart.
fn splitmix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draws_stay_in_range_and_repeat_with_the_seed() {
        let d = Dist::Exponential {
            mean: 10.0,
            max: 50,
        };
        let a: Vec<u32> = {
            let mut s = Sampler::new(7, 3);
            (0..1000).map(|_| s.draw(d)).collect()
        };
        let b: Vec<u32> = {
            let mut s = Sampler::new(7, 3);
            (0..1000).map(|_| s.draw(d)).collect()
        };
        assert_eq!(a, b);
        assert!(a.iter().all(|&x| x <= 50));
        let mean = a.iter().map(|&x| f64::from(x)).sum::<f64>() / 1000.0;
        assert!((8.5..11.5).contains(&mean), "mean {mean}");
        let mut other = Sampler::new(7, 4);
        assert_ne!(a, (0..1000).map(|_| other.draw(d)).collect::<Vec<_>>());
    }

    #[test]
    fn picks_stay_in_range_and_zipf_favours_the_first_values() {
        let mut s = Sampler::new(3, 0);
        let uniform: Vec<i32> = (0..10_000).map(|_| s.value(-2, 2, None)).collect();
        assert!(uniform.iter().all(|v| (-2..=2).contains(v)));
        let first = uniform.iter().filter(|&&v| v == -2).count();
        assert!((1700..2300).contains(&first), "{first}");
        let skewed: Vec<i32> = (0..10_000).map(|_| s.value(1, 100, Some(1.1))).collect();
        assert!(skewed.iter().all(|v| (1..=100).contains(v)));
        let hot = skewed.iter().filter(|&&v| v == 1).count();
        let cold = skewed.iter().filter(|&&v| v == 100).count();
        // Weight 1 against 1/100^1.1 ≈ 0.0063, over a sum of about 4.3.
        assert!((1900..2700).contains(&hot) && cold < 60, "{hot} {cold}");
    }

    #[test]
    fn lognormal_has_its_median_and_p99() {
        let d = Dist::LogNormal {
            median: 100.0,
            p99: 1000.0,
            max: 100_000,
        };
        let mut s = Sampler::new(1, 0);
        let mut v: Vec<u32> = (0..20_000).map(|_| s.draw(d)).collect();
        v.sort_unstable();
        let median = f64::from(v[10_000]);
        let p99 = f64::from(v[19_800]);
        assert!((90.0..110.0).contains(&median), "median {median}");
        assert!((850.0..1150.0).contains(&p99), "p99 {p99}");
    }
}
