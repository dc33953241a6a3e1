//! DCTCP, Data Center TCP (RFC 8257; Alizadeh et al., "Data Center TCP (DCTCP)",
//! SIGCOMM 2010), as Linux `net/ipv4/tcp_dctcp.c` runs it.
//!
//! - ECN is required (`needs_ecn`, Linux `TCP_CONG_NEEDS_ECN`): the connection
//!   negotiates it whatever the `ecn` knob says, and the receiver echoes the CE state
//!   of every packet (RFC 8257 §3.2; the receiver side is `tcp::receiver`).
//! - The sender estimates the fraction of marked bytes (RFC 8257 §3.3): it counts
//!   the bytes delivered and those delivered by ACKs carrying ECE; once per
//!   observation window (when snd_una reaches the `snd_nxt` of the window's start,
//!   Linux `dctcp_update_alpha`) `alpha = (1 - g) alpha + g F`, F = marked / delivered,
//!   and a new window starts at the current `snd_nxt`.
//! - On ECN-Echo the window is reduced once per RTT by the sender's RFC 3168 logic to
//!   `cwnd (1 - alpha / 2)` (RFC 8257 §3.3, Linux `dctcp_ssthresh`), at least 2 MSS.
//! - On loss it halves, `max(cwnd / 2, 2 MSS)` (Linux `dctcp_react_to_loss`, RFC
//!   8257 §3.4).
//! - Growth is Reno's (Linux `tcp_reno_cong_avoid`).
//!
//! Parameters: `g` (1/16, Linux `dctcp_shift_g` = 4) and `alpha_init` (1, Linux
//! `dctcp_alpha_on_init` = 1024/1024).
//!
//! Deviations: alpha is a binary64 where Linux keeps it in 1/1024 units; "delivered"
//! counts bytes newly acked or SACKed (Linux counts packets, `tp->delivered`); the
//! fallback to Reno when the peer refuses ECN is implicit (no ECE ever arrives, so
//! only the loss response acts, which is Reno's).

use super::{
    reno_additive_increase, AckInfo, CcEntry, CongestionControl, EcnAckInfo, ParamInfo, Window,
};
use serde::Deserialize;

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Params {
    /// EWMA gain g of the marked fraction, in (0, 1]. Default 1/16.
    pub g: f64,
    /// alpha at the start of the connection, in [0, 1]. Default 1.
    pub alpha_init: f64,
}

impl Default for Params {
    fn default() -> Self {
        Params { g: 1.0 / 16.0, alpha_init: 1.0 }
    }
}

fn param_info() -> Vec<ParamInfo> {
    let d = Params::default();
    vec![
        ParamInfo { name: "g", unit: "1", default: d.g, doc: "EWMA gain of the marked fraction (RFC 8257 §3.3; Linux 1/2^dctcp_shift_g)" },
        ParamInfo { name: "alpha_init", unit: "1", default: d.alpha_init, doc: "initial alpha (Linux dctcp_alpha_on_init/1024)" },
    ]
}

#[derive(Debug)]
pub struct Dctcp {
    p: Params,
    alpha: f64,
    /// Bytes delivered and ECE-marked-delivered in the current observation window.
    delivered: u64,
    delivered_ce: u64,
    /// The window ends when snd_una reaches this (Linux `next_seq`).
    window_end: u64,
}

impl Dctcp {
    pub fn new(p: Params) -> Self {
        Dctcp { alpha: p.alpha_init, p, delivered: 0, delivered_ce: 0, window_end: 0 }
    }
    pub fn alpha(&self) -> f64 {
        self.alpha
    }
}

impl CongestionControl for Dctcp {
    fn name(&self) -> &'static str {
        "dctcp"
    }
    fn on_ack(&mut self, w: &mut Window, ack: &AckInfo) {
        let Some(acked) = super::slow_start_then_leftover(w, ack) else { return };
        reno_additive_increase(w, acked, 1.0);
    }
    fn ssthresh_after_loss(&self, w: &Window, _in_flight: u64) -> u64 {
        (w.cwnd / 2).max(2 * w.mss as u64)
    }
    fn ssthresh_after_ece(&self, w: &Window, _in_flight: u64) -> u64 {
        let reduced = w.cwnd as f64 * (1.0 - self.alpha / 2.0);
        (reduced as u64).max(2 * w.mss as u64)
    }
    fn needs_ecn(&self) -> bool {
        true
    }
    fn on_ecn_ack(&mut self, ack: &EcnAckInfo) {
        self.delivered += ack.delivered;
        if ack.ece {
            self.delivered_ce += ack.delivered;
        }
        if ack.snd_una >= self.window_end {
            // alpha = (1 - g) alpha + g F   (RFC 8257 §3.3 step 6)
            let f = if self.delivered > 0 { self.delivered_ce as f64 / self.delivered as f64 } else { 0.0 };
            self.alpha = ((1.0 - self.p.g) * self.alpha + self.p.g * f).clamp(0.0, 1.0);
            self.delivered = 0;
            self.delivered_ce = 0;
            self.window_end = ack.snd_nxt;
        }
    }
    fn trace(&self) -> Vec<(&'static str, f64)> {
        vec![("alpha", self.alpha)]
    }
}

pub const ENTRY: CcEntry = CcEntry {
    name: "dctcp",
    summary: "DCTCP: ECN required, alpha = EWMA of the marked fraction per window, cwnd *= 1 - alpha/2 once per RTT on ECE, halve on loss",
    reference: "RFC 8257; Alizadeh et al. SIGCOMM 2010; Linux tcp_dctcp.c",
    params: param_info,
    build: |v, _w| {
        let p: Params = super::parse_params("dctcp", v)?;
        if !(p.g > 0.0 && p.g <= 1.0) {
            return Err(format!("cc 'dctcp' params: g = {}; accepted: 0 < g <= 1", p.g));
        }
        if !(0.0..=1.0).contains(&p.alpha_init) {
            return Err(format!("cc 'dctcp' params: alpha_init = {}; accepted: 0 <= alpha_init <= 1", p.alpha_init));
        }
        Ok(Box::new(Dctcp::new(p)))
    },
};

#[cfg(test)]
mod tests {
    use super::*;

    fn ack(delivered: u64, ece: bool, snd_una: u64, snd_nxt: u64) -> EcnAckInfo {
        EcnAckInfo { delivered, ece, snd_una, snd_nxt }
    }

    #[test]
    fn alpha_follows_the_marked_fraction_once_per_window() {
        // alpha_init 1, g = 1/16. First ACK (window_end 0 reached): 10 of 10 kB
        // unmarked -> alpha = 15/16 * 1 + 0 = 0.9375; next window ends at 20000.
        let mut d = Dctcp::new(Params::default());
        d.on_ecn_ack(&ack(10_000, false, 10_000, 20_000));
        assert!((d.alpha - 0.9375).abs() < 1e-12);
        // Within the window nothing changes: 5 kB marked, 5 kB not (snd_una 15000, 20000
        // not reached) ...
        d.on_ecn_ack(&ack(5_000, true, 15_000, 25_000));
        assert!((d.alpha - 0.9375).abs() < 1e-12);
        // ... then the ACK reaching 20000 ends it: F = 5000 / 10000 = 0.5;
        // alpha = 15/16 * 0.9375 + 0.5 / 16 = 0.87890625 + 0.03125 = 0.91015625.
        d.on_ecn_ack(&ack(5_000, false, 20_000, 30_000));
        assert!((d.alpha - 0.91015625).abs() < 1e-12, "{}", d.alpha);
        // Converges to a steady F: windows of 10 kB of which the last 2 kB come with
        // ECE (F = 0.2); after 300 windows alpha = 0.2 + (0.91 - 0.2)(15/16)^300 ~ 0.2.
        for k in 0..300u64 {
            d.on_ecn_ack(&ack(8_000, false, 25_000 + k * 10_000, 40_000 + k * 10_000));
            d.on_ecn_ack(&ack(2_000, true, 30_000 + k * 10_000, 40_000 + k * 10_000));
        }
        assert!((d.alpha - 0.2).abs() < 1e-3, "{}", d.alpha);
    }

    #[test]
    fn reductions_use_alpha_for_ece_and_half_for_loss() {
        // cwnd 100 MSS, alpha 0.2: ECE -> 100 * (1 - 0.1) = 90 MSS; loss -> 50 MSS.
        let mut d = Dctcp::new(Params::default());
        d.alpha = 0.2;
        let w = Window::new(146_000, u64::MAX, 1460, true, 2);
        assert_eq!(d.ssthresh_after_ece(&w, 146_000), 131_400);
        assert_eq!(d.ssthresh_after_loss(&w, 146_000), 73_000);
        assert!(d.needs_ecn());
    }
}
