//! Reed-Solomon RS(255, k) erasure decoding, modelled exactly in symbol (frame) counts.
//!
//! Reference: I. S. Reed and G. Solomon, "Polynomial codes over certain finite fields",
//! J. SIAM 8(2), 1960: an RS(n, k) code is maximum distance separable, so any k of its
//! n symbols determine the k data symbols; used as an erasure code over frames (one
//! symbol position per frame, byte-interleaved), n <= 255 over GF(2^8). Seed 004
//! (SLACP): "t <= k lost frames can be recovered if t redundancy frames are received";
//! frames of different lengths are padded to the longest (the redundancy frames are
//! as long as the longest data frame of the block).
//!
//! A block has k data frames (members `0..k`) and up to `255 - k` redundancy frames
//! (indices `0..255-k`), sent incrementally: each retransmission round adds new
//! redundancy indices. The receiver counts the distinct symbols it holds; once it holds
//! k, every member is recovered. No bytes are encoded: the model is the MDS property.

/// Longest RS codeword over GF(2^8), in symbols (frames).
pub const RS_N: u16 = 255;

/// Receiver-side state of one block: which members and redundancy frames arrived.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ErasureBlock {
    k: u16,
    data: [u64; 4],
    parity: [u64; 4],
}

fn set(bits: &mut [u64; 4], i: u16) -> bool {
    let (w, b) = ((i / 64) as usize, i % 64);
    let new = bits[w] & (1 << b) == 0;
    bits[w] |= 1 << b;
    new
}

fn count(bits: &[u64; 4]) -> u16 {
    bits.iter().map(|w| w.count_ones() as u16).sum()
}

impl ErasureBlock {
    /// A block of `k` data frames, 1 <= k <= 254 (at least one redundancy index left).
    pub fn new(k: u16) -> ErasureBlock {
        assert!((1..RS_N).contains(&k), "RS(255, k) needs 1 <= k <= 254, got {k}");
        ErasureBlock { k, data: [0; 4], parity: [0; 4] }
    }
    pub fn k(&self) -> u16 {
        self.k
    }
    /// Redundancy frames the code can still produce after `sent` of them: 255 - k - sent.
    pub fn redundancy_left(&self, sent: u16) -> u16 {
        (RS_N - self.k).saturating_sub(sent)
    }
    /// Data member `i` arrived; false if it had already.
    pub fn data_arrived(&mut self, i: u16) -> bool {
        assert!(i < self.k);
        set(&mut self.data, i)
    }
    /// Redundancy frame `j` arrived; false if it had already.
    pub fn parity_arrived(&mut self, j: u16) -> bool {
        assert!(j < RS_N - self.k);
        set(&mut self.parity, j)
    }
    pub fn has_data(&self, i: u16) -> bool {
        self.data[(i / 64) as usize] & (1 << (i % 64)) != 0
    }
    /// Distinct symbols held: data members plus redundancy frames.
    pub fn held(&self) -> u16 {
        count(&self.data) + count(&self.parity)
    }
    /// Data members not received directly.
    pub fn erased(&self) -> u16 {
        self.k - count(&self.data)
    }
    /// Whether the held symbols determine every member (MDS: any k of n suffice).
    pub fn decodable(&self) -> bool {
        self.held() >= self.k
    }
}

/// Redundancy frames for round `round` (1 = first retransmission) of a block resending
/// `resent` members: `ceil(round * ratio * resent)`, at most `left`. Each further round
/// adds more redundancy per resent frame.
pub fn redundancy(round: u16, resent: u16, ratio: f64, left: u16) -> u16 {
    let want = (round as f64 * ratio * resent as f64 - 1e-9).ceil().max(0.0);
    (want as u64).min(left as u64) as u16
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn t_erasures_are_recovered_by_t_redundancy_frames_and_not_by_fewer() {
        // For every k <= 40 and t <= k erasures: k - t members plus t redundancy frames
        // decode; k - t members plus t - 1 do not.
        for k in 1..=40u16 {
            for t in 0..=k {
                let mut b = ErasureBlock::new(k);
                for i in t..k {
                    assert!(b.data_arrived(i));
                }
                assert_eq!(b.erased(), t);
                for j in 0..t.saturating_sub(1) {
                    b.parity_arrived(j);
                }
                assert_eq!(b.decodable(), t == 0, "k {k} t {t}: {} held", b.held());
                if t > 0 {
                    b.parity_arrived(t - 1);
                    assert!(b.decodable(), "k {k} t {t}");
                }
            }
        }
    }

    #[test]
    fn duplicates_do_not_count_and_redundancy_is_incremental() {
        // k = 5, members 0, 1 lost, members 2..5 arrive; round 1 adds redundancy index 0
        // (lost), round 2 adds 1 and 2 (one arrives). A duplicate member counts once.
        let mut b = ErasureBlock::new(5);
        for i in 2..5 {
            b.data_arrived(i);
        }
        assert!(!b.data_arrived(4));
        assert_eq!(b.held(), 3);
        assert!(!b.decodable());
        b.parity_arrived(2);
        assert!(!b.parity_arrived(2));
        assert_eq!(b.held(), 4);
        assert!(!b.decodable()); // 4 < 5
        b.data_arrived(0); // a resent member arrives in round 2
        assert!(b.decodable()); // 5 of 5: member 1 is recovered
        assert_eq!(b.erased(), 1);
        assert_eq!(b.redundancy_left(3), 255 - 5 - 3);
    }

    #[test]
    fn redundancy_grows_with_the_round() {
        // ratio 0.25: round 1 resending 10 -> ceil(2.5) = 3; round 2 resending 3 ->
        // ceil(1.5) = 2; round 3 resending 1 -> ceil(0.75) = 1; capped by what is left.
        assert_eq!(redundancy(1, 10, 0.25, 245), 3);
        assert_eq!(redundancy(2, 3, 0.25, 242), 2);
        assert_eq!(redundancy(3, 1, 0.25, 240), 1);
        assert_eq!(redundancy(1, 8, 0.25, 245), 2); // exactly 2.0, not 3
        assert_eq!(redundancy(4, 100, 1.0, 10), 10);
        assert_eq!(redundancy(1, 0, 0.5, 10), 0);
    }
}
