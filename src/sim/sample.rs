//! Seeded draws from a model's distributions, in whole ticks.

use rand::{Rng, SeedableRng};
use rand_distr::{Distribution, Exp, LogNormal};
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
