//! Proportional Rate Reduction through the real sender: RFC 6937 §3.1's worked
//! examples (segments sent on each ACK of the first round trip after the loss).
//!
//! Setting (RFC 6937 §3.1): cwnd = FlightSize = pipe = 20 segments, standard AIMD so
//! ssthresh = 10 at the start of recovery, Limited Transmit (one new segment on each of
//! the first two duplicate ACKs) and fast retransmit on the third. The sender runs
//! with SACK, IW 20 and a congestion control whose ssthresh is cwnd / 2 (as Linux
//! Reno; RFC 5681's FlightSize / 2 would give 11, the FlightSize then including the 2
//! Limited Transmit segments). Each ACK SACKs the segments received so far above the
//! hole, as a receiver would.

use tcplab_core::cc::{reno::Reno, AckInfo, CongestionControl, Window};
use tcplab_core::net::packet::{SackBlock, TcpHeader, FLAG_ACK, FLAG_SYN};
use tcplab_core::tcp::config::{InitialWindow, TcpConfig};
use tcplab_core::tcp::prr::PrrMode;
use tcplab_core::tcp::sender::TcpSender;
use tcplab_core::tcp::Outbox;
use tcplab_core::time::SimTime;

/// Reno growth with ssthresh = cwnd / 2 (RFC 6937's "standard AIMD").
struct HalfCwnd(Reno);
impl CongestionControl for HalfCwnd {
    fn name(&self) -> &'static str {
        "half-cwnd"
    }
    fn on_ack(&mut self, w: &mut Window, ack: &AckInfo) {
        self.0.on_ack(w, ack)
    }
    fn ssthresh_after_loss(&self, w: &Window, _in_flight: u64) -> u64 {
        (w.cwnd / 2).max(2 * w.mss as u64)
    }
}

const MSS: u64 = 1000;

/// Sends 20 segments, loses the first `lost`, and feeds the ACKs of the others (each
/// SACKing segments `lost..=k`). Returns, per ACK, the segments the sender emitted.
fn first_round(prr: PrrMode, lost: u64) -> Vec<usize> {
    // linux-2.6: RFC 6675 loss detection (duplicate ACKs and IsLost), as RFC 6937's
    // examples assume; RACK would not retransmit the head by itself without PRR.
    let mut cfg = TcpConfig::profile("linux-2.6").unwrap();
    cfg.mss = MSS as u32;
    cfg.iw = InitialWindow::Segments(20);
    cfg.prr = prr;
    let mut s = TcpSender::new(cfg, Box::new(HalfCwnd(Reno)), Some(1_000_000), None);
    let mut out = Outbox::default();
    s.open(SimTime(0), &mut out);
    out.clear();
    let synack = TcpHeader { ack: 1, flags: FLAG_SYN | FLAG_ACK, wnd: 1 << 30, ..Default::default() };
    s.on_ack(&synack, SimTime(1_000_000), &mut out);
    assert_eq!(out.segments.len(), 20);
    out.clear();
    let seg = |k: u64| 1 + k * MSS;
    let mut sent = Vec::new();
    for k in lost..20 {
        let ack = TcpHeader {
            ack: 1,
            flags: FLAG_ACK,
            wnd: 1 << 30,
            sack: [SackBlock { start: seg(lost), end: seg(k + 1) }, SackBlock::default(), SackBlock::default(), SackBlock::default()],
            nsack: 1,
            ..Default::default()
        };
        s.on_ack(&ack, SimTime(100_000_000 + k), &mut out);
        sent.push(out.segments.len());
        out.clear();
    }
    sent
}

#[test]
fn single_loss_prr_sends_every_other_ack() {
    // ACKs of segments 1..19: Limited Transmit on the first two, the fast retransmit
    // on the third, then about one segment per two ACKs until pipe reaches ssthresh.
    //
    // Linux (RecoverFS = cwnd at the start = 20, as RFC 6937's figure takes it): on
    // the ACK of segment k, prr_delivered = k - 2 and sndcnt = CEIL(10 (k - 2) / 20)
    // - prr_out = 1 on odd k, so R at 3 and N at 5, 7, ..., 17; at 18 and 19 pipe is
    // down to 11 and 10 with prr_out = CEIL(16/2) = 8 already: nothing.
    let linux = [1, 1, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 0];
    // RFC 6937 (RecoverFS = snd.nxt - snd.una = 22, the FlightSize including the two
    // Limited Transmit segments): CEIL(10 (k - 2) / 22) steps up at k = 3, 5, 7, 9,
    // 11, 14, 16; at 18 pipe = ssthresh = 10 (bound: MIN(0, .) = 0), at 19 pipe 9:
    // MIN(10 - 9, limit) = 1. Eight segments either way, ending at pipe = ssthresh.
    let rfc = [1, 1, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 0, 1, 0, 1, 0, 0, 1];
    for (mode, expected) in [(PrrMode::Linux, linux), (PrrMode::Crb, rfc), (PrrMode::Ssrb, rfc)] {
        let got = first_round(mode, 1);
        eprintln!("prr {mode:?}, 1 loss: {got:?}");
        assert_eq!(got, expected, "{mode:?}");
    }
    let expected = linux;
    // Without PRR (RFC 6675 alone): cwnd = ssthresh = 10 at once, pipe 18: nothing is
    // sent until pipe falls below 10 (the "half-silent window" of RFC 6937 §3.1), after
    // the fast retransmit on the third duplicate ACK.
    let rfc6675 = first_round(PrrMode::Off, 1);
    eprintln!("no prr, 1 loss: {rfc6675:?}");
    assert_eq!(&rfc6675[..3], &[1, 1, 1]);
    assert!(rfc6675[3..11].iter().all(|&n| n == 0), "{rfc6675:?}");
    assert_eq!(rfc6675.iter().sum::<usize>(), expected.iter().sum::<usize>());
}

#[test]
fn burst_of_15_losses_crb_vs_ssrb() {
    // Segments 0..14 lost; the ACKs of 15..19 return. At the third (ACK of 17) pipe
    // = 22 - 3 - 15 = 4 < ssthresh: PRR-CRB sends 1 per ACK, PRR-SSRB 2 (RFC 6937
    // §3.1: "R R R" and "2R 2R 2R"); Linux's SSRB adds its segment only when snd.una
    // advances, which duplicate ACKs do not: like CRB here. RFC 6675 alone fills
    // cwnd = ssthresh = 10 at once: 6 retransmissions (pipe 4 -> 10). RFC 6937's
    // figure shows 7 because its RFC 6675 column takes ssthresh = FlightSize / 2 = 11.
    let crb = first_round(PrrMode::Crb, 15);
    let ssrb = first_round(PrrMode::Ssrb, 15);
    let linux = first_round(PrrMode::Linux, 15);
    let none = first_round(PrrMode::Off, 15);
    eprintln!("15 losses: crb {crb:?}, ssrb {ssrb:?}, linux {linux:?}, rfc6675 {none:?}");
    assert_eq!(crb, [1, 1, 1, 1, 1]);
    assert_eq!(ssrb, [1, 1, 2, 2, 2]);
    assert_eq!(linux, [1, 1, 1, 1, 1]);
    assert_eq!(none[2], 6);
}

