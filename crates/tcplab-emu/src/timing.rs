//! The emulator's scheduling error: for every packet it hands to a host, the real
//! (monotonic) time the write returned minus the model time at which the packet
//! reached that host. Kept in a fixed histogram (no allocation per packet): 1 µs
//! buckets up to 10 ms, 100 µs buckets up to 1 s, one overflow bucket; count, sum and
//! maximum are exact. A quantile is reported as the upper edge of its bucket, so it
//! overstates the true value by less than one bucket width (1 µs below 10 ms).

const FINE_NS: u64 = 1_000;
const FINE_N: usize = 10_000; // up to 10 ms
const COARSE_NS: u64 = 100_000;
const COARSE_N: usize = 9_900; // 10 ms .. 1 s

pub struct Histogram {
    fine: Vec<u64>,
    coarse: Vec<u64>,
    over: u64,
    count: u64,
    sum_ns: u128,
    max_ns: u64,
    /// Values above the late bound.
    late: u64,
    late_bound_ns: u64,
}

impl Histogram {
    pub fn new(late_bound_ns: u64) -> Self {
        Histogram {
            fine: vec![0; FINE_N],
            coarse: vec![0; COARSE_N],
            over: 0,
            count: 0,
            sum_ns: 0,
            max_ns: 0,
            late: 0,
            late_bound_ns,
        }
    }

    #[inline]
    pub fn record(&mut self, ns: u64) {
        self.count += 1;
        self.sum_ns += ns as u128;
        self.max_ns = self.max_ns.max(ns);
        self.late += (ns > self.late_bound_ns) as u64;
        let f = (ns / FINE_NS) as usize;
        if f < FINE_N {
            self.fine[f] += 1;
        } else {
            let c = ((ns - FINE_N as u64 * FINE_NS) / COARSE_NS) as usize;
            if c < COARSE_N {
                self.coarse[c] += 1;
            } else {
                self.over += 1;
            }
        }
    }

    pub fn count(&self) -> u64 {
        self.count
    }
    pub fn max_ns(&self) -> u64 {
        self.max_ns
    }
    pub fn late(&self) -> u64 {
        self.late
    }
    pub fn mean_ns(&self) -> f64 {
        if self.count == 0 {
            0.0
        } else {
            self.sum_ns as f64 / self.count as f64
        }
    }

    /// The q-quantile (0 < q <= 1), as the upper edge of its bucket, capped at the
    /// maximum; 0 when empty.
    pub fn quantile_ns(&self, q: f64) -> u64 {
        if self.count == 0 {
            return 0;
        }
        let rank = ((q * self.count as f64).ceil() as u64).clamp(1, self.count);
        let mut seen = 0;
        for (i, &c) in self.fine.iter().enumerate() {
            seen += c;
            if seen >= rank {
                return ((i as u64 + 1) * FINE_NS).min(self.max_ns);
            }
        }
        for (i, &c) in self.coarse.iter().enumerate() {
            seen += c;
            if seen >= rank {
                return (FINE_N as u64 * FINE_NS + (i as u64 + 1) * COARSE_NS).min(self.max_ns);
            }
        }
        self.max_ns
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_by_hand() {
        let mut h = Histogram::new(1_000_000);
        // 98 values of 3.5 µs, one of 150 µs, one of 25 ms.
        for _ in 0..98 {
            h.record(3_500);
        }
        h.record(150_000);
        h.record(25_000_000);
        // p50: rank 50 falls in the [3, 4) µs bucket -> 4 µs.
        assert_eq!(h.quantile_ns(0.5), 4_000);
        // p99: rank 99 is the 150 µs value, bucket [150, 151) µs -> 151 µs.
        assert_eq!(h.quantile_ns(0.99), 151_000);
        // p100 is the maximum itself, not a bucket edge.
        assert_eq!(h.quantile_ns(1.0), 25_000_000);
        assert_eq!((h.count(), h.max_ns(), h.late()), (100, 25_000_000, 1));
        assert!((h.mean_ns() - (98.0 * 3_500.0 + 150_000.0 + 25_000_000.0) / 100.0).abs() < 1e-6);
    }
}
