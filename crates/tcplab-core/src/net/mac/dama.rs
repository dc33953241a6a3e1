//! DAMA: demand-assigned multiple access on a satellite return link, DVB-RCS style.
//!
//! References: ETSI EN 301 790 (DVB-RCS), the capacity categories CRA (continuous rate
//! assignment), RBDC (rate-based dynamic capacity) and VBDC (volume-based dynamic
//! capacity) in MF-TDMA superframes; CNES OpenSAND, the open DVB-RCS/RCS2 emulator, for
//! the request semantics (wiki pages "rbdc" and "vbdc": an RBDC request replaces the
//! previous one and is sent every superframe; VBDC requests accumulate until the NCC
//! has allocated the requested slots) and for the default timing
//! (`opensand-core/conf/core_global.conf`: `return_up_carrier_duration` 26.5 ms;
//! `core_st.conf`/`core_gw.conf`: `rbdc_timeout` 12 superframes, `msl_duration` 2
//! superframes); seed 004 (Kojo, FDPW 2005) for the three modes on a 128 kbit/s return
//! link with 250 ms propagation.
//!
//! Time is cut into superframes of `superframe` ns starting at t = 0. A superframe holds
//! `N = floor(superframe / slot_ns)` slots, slot `i` occupying
//! `[start + i*slot_ns, start + (i+1)*slot_ns)`, where `slot_ns` is the time to send
//! `slot_bytes` at the link rate. At each boundary (superframe `k`):
//!
//! 1. grants whose request was sent at boundary `k - D` arrive, where
//!    `D = ceil(allocation_delay / superframe)` (the request's trip to the NCC, its
//!    processing, and the burst time plan's trip back);
//! 2. RBDC: a rate grant not refreshed by a request for `ceil(rbdc_timeout /
//!    superframe)` superframes expires;
//! 3. the terminal sends its request (due at `k + D`):
//!    - RBDC: the arrival rate plus a backlog term, capped at `rbdc_max`. The arrival
//!      rate is that of the bytes that entered the MAC buffer during the last
//!      superframe, `bytes * 8 / superframe`. The backlog term asks for the part of the
//!      backlog the capacity already on its way will not carry: `covered` is what the
//!      grant in force and the requests still in transit carry in superframes `k ..
//!      k + D - 1` (each until the next one replaces it or it times out), and the
//!      `backlog - covered` bytes left over when this request takes effect are asked
//!      for in that superframe, in whole slots (`ceil(left / slot_bytes)` slots, as
//!      rate). OpenSAND's legacy DAMA agent computes its RBDC request the same way, the
//!      rate of the arrivals since the last request plus the MAC buffer length less
//!      what the requests of the last MSL will grant (`DamaAgentRcsLegacy::
//!      computeRbdcRequest`, `opensand-core/src/dvb/dama/`); it spreads that
//!      remainder over one MSL, where tcplab asks for it in one superframe, because a
//!      request replaces the previous one: spread over D superframes, each request
//!      would cut the grant before it to a D-th of the remainder and a lone packet
//!      would trickle out over many superframes. Without the backlog term, data still
//!      queued when arrivals stop would wait until the grant timed out and then be
//!      stranded until the next arrival (a 10-packet burst: 3 delivered). Nothing is
//!      sent when the request would be 0 (the grant then persists until the timeout);
//!    - VBDC: the volume in the buffer not yet requested,
//!      `ceil(backlog / slot_bytes) - outstanding` slots when positive, where
//!      `outstanding` counts requested slots not yet allocated;
//! 4. this superframe's slots are allocated: CRA and RBDC from a rate credit
//!    (`rate * superframe` bits per superframe, a slot costs `slot_bytes * 8` bits, the
//!    fraction carries over, so the long-run rate is exact); VBDC `min(granted volume
//!    not yet allocated, N)`, each allocated slot consuming one requested slot.
//!    Allocated slots are spread evenly over the superframe: slot `i` is allocated when
//!    `floor((i+1)g/N) > floor(ig/N)` for `g` allocated slots.
//!
//! The transmitter serializes at the link rate during allocated slots only. A packet
//! may span slots and superframes; a packet that ends inside a slot leaves the rest of
//! the slot to the next packet (byte-stream packing, as GSE or ULE over MPEG-TS do).
//!
//! Defaults (every one a parameter): superframe 26.5 ms (OpenSAND); 53-byte slots (the
//! size of an ATM cell, DVB-RCS's original traffic-burst payload; at 128 kbit/s a
//! 26.5 ms superframe then holds exactly 8 slots and the maximum rate is the link
//! rate); allocation delay 553 ms = 2 x 250 ms propagation (request up, plan down) + 2
//! superframes of NCC processing (OpenSAND's `msl_duration`), i.e. D = 21 superframes
//! (556.5 ms); RBDC timeout 318 ms = 12 superframes (OpenSAND); CRA rate and RBDC
//! maximum: the maximum rate of the slot grid, N * slot_bytes * 8 / superframe.
//!
//! Deviations from DVB-RCS: one terminal, so the NCC grants every request in full
//! (no contention, no free capacity assignment); requests travel reliably (OpenSAND's
//! SAC messages are not subject to errors either); no ATM/AAL5 or MPEG-TS overheads:
//! a slot carries `slot_bytes` of link-layer payload; RBDC rates are not quantised to
//! 2 kbit/s steps.

use super::{Gate, Mac, MacStats};
use crate::time::{Rate, SimDuration, SimTime};
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

const NS_PER_S: u128 = 1_000_000_000;

/// Which capacity category the terminal uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DamaMode {
    /// Constant rate assignment: `cra_rate`, no requests.
    Cra,
    /// Rate-based dynamic capacity: the measured arrival rate, one allocation delay later.
    Rbdc,
    /// Volume-based dynamic capacity: the backlog not yet requested, one allocation delay later.
    Vbdc,
}

impl DamaMode {
    pub fn name(self) -> &'static str {
        match self {
            DamaMode::Cra => "cra",
            DamaMode::Rbdc => "rbdc",
            DamaMode::Vbdc => "vbdc",
        }
    }
}

/// Default superframe: 26.5 ms (OpenSAND `return_up_carrier_duration`).
pub const DEFAULT_SUPERFRAME: SimDuration = SimDuration(26_500_000);
/// Default slot payload: 53 bytes (one ATM-cell-sized slot; 8 per superframe at 128 kbit/s).
pub const DEFAULT_SLOT_BYTES: u32 = 53;
/// Default allocation delay: 2 x 250 ms propagation + 2 superframes of processing.
pub const DEFAULT_ALLOCATION_DELAY: SimDuration = SimDuration(553_000_000);
/// Default RBDC timeout: 12 superframes of 26.5 ms (OpenSAND `rbdc_timeout`).
pub const DEFAULT_RBDC_TIMEOUT: SimDuration = SimDuration(318_000_000);

fn default_superframe() -> SimDuration {
    DEFAULT_SUPERFRAME
}
fn default_slot_bytes() -> u32 {
    DEFAULT_SLOT_BYTES
}

/// The serde description of a DAMA MAC (`mac = { kind = "dama", mode = "rbdc", ... }`).
///
/// Fields that do not apply to the mode must be left unset (`None`); the defaults are
/// in the module documentation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DamaParams {
    pub mode: DamaMode,
    /// Superframe duration, ns.
    #[serde(default = "default_superframe")]
    pub superframe: SimDuration,
    /// Link-layer payload of one slot, bytes.
    #[serde(default = "default_slot_bytes")]
    pub slot_bytes: u32,
    /// RBDC/VBDC: from sending a request to the first superframe it takes effect in, ns.
    #[serde(default)]
    pub allocation_delay: Option<SimDuration>,
    /// CRA: the constant rate, bit/s.
    #[serde(default)]
    pub cra_rate: Option<u64>,
    /// RBDC: the largest rate granted, bit/s.
    #[serde(default)]
    pub rbdc_max: Option<u64>,
    /// RBDC: a rate grant not refreshed for this long expires, ns.
    #[serde(default)]
    pub rbdc_timeout: Option<SimDuration>,
}

impl DamaParams {
    /// A mode with every other field at its default.
    pub fn mode(mode: DamaMode) -> DamaParams {
        DamaParams {
            mode,
            superframe: DEFAULT_SUPERFRAME,
            slot_bytes: DEFAULT_SLOT_BYTES,
            allocation_delay: None,
            cra_rate: None,
            rbdc_max: None,
            rbdc_timeout: None,
        }
    }
}

/// A DAMA MAC (see the module documentation).
pub struct Dama {
    mode: DamaMode,
    sf_ns: u64,
    slot_ns: u64,
    slots: u32,
    slot_bytes: u32,
    delay_sf: u64,
    timeout_sf: u64,
    /// CRA rate, or RBDC maximum, bit/s.
    rate_cap: u64,
    // The current superframe.
    started: bool,
    sf_start: SimTime,
    allocated: u32,
    /// Transmitter time before this instant is used up.
    cursor: SimTime,
    /// Rate credit in bit*ns/s units (rate_bps * ns); one slot costs slot_bytes*8*1e9.
    credit: u128,
    // RBDC
    granted_rate: u64,
    refreshed_at: u64,
    arrived_bytes: u64,
    // VBDC
    volume: u64,
    outstanding: u64,
    /// Requests on their way: (superframe they take effect in, rate or volume).
    pending: VecDeque<(u64, u64)>,
    stats: MacStats,
}

impl Dama {
    pub fn new(p: DamaParams, link_rate_bps: u64) -> Result<Dama, String> {
        let only = |field: &str, set: bool, mode: DamaMode| -> Result<(), String> {
            if set && p.mode != mode {
                Err(format!(
                    "mac.{field} applies to mode '{}' only, not '{}'",
                    mode.name(),
                    p.mode.name()
                ))
            } else {
                Ok(())
            }
        };
        only("cra_rate", p.cra_rate.is_some(), DamaMode::Cra)?;
        only("rbdc_max", p.rbdc_max.is_some(), DamaMode::Rbdc)?;
        only("rbdc_timeout", p.rbdc_timeout.is_some(), DamaMode::Rbdc)?;
        if p.mode == DamaMode::Cra && p.allocation_delay.is_some() {
            return Err("mac.allocation_delay applies to modes 'rbdc' and 'vbdc' only, not 'cra' (CRA sends no requests)".into());
        }
        if link_rate_bps == 0 {
            return Err("mac: the link rate must be positive".into());
        }
        if p.slot_bytes == 0 {
            return Err("mac.slot_bytes must be at least 1 byte".into());
        }
        if p.superframe.0 == 0 {
            return Err("mac.superframe must be positive".into());
        }
        let slot_ns = Rate(link_rate_bps).tx_time(p.slot_bytes).0;
        let slots = p.superframe.0 / slot_ns;
        if slots == 0 {
            return Err(format!(
                "mac.superframe ({} ns) is shorter than one slot ({} B at {} bit/s take {} ns); accepted: at least {} ns",
                p.superframe.0, p.slot_bytes, link_rate_bps, slot_ns, slot_ns
            ));
        }
        if slots > u32::MAX as u64 {
            return Err("mac.superframe holds too many slots; use larger slots".into());
        }
        let max_rate = max_rate_bps(slots, p.slot_bytes, p.superframe.0);
        if max_rate == 0 {
            return Err("mac: the slot grid carries less than 1 bit/s".into());
        }
        let rate_cap = match p.mode {
            DamaMode::Cra => p.cra_rate.unwrap_or(max_rate),
            DamaMode::Rbdc => p.rbdc_max.unwrap_or(max_rate),
            DamaMode::Vbdc => max_rate,
        };
        let field = if p.mode == DamaMode::Cra { "cra_rate" } else { "rbdc_max" };
        if rate_cap == 0 || rate_cap > max_rate {
            return Err(format!(
                "mac.{field} must be in [1, {max_rate}] bit/s (the slot grid's maximum: {slots} slots of {} B per {} ns superframe), got {rate_cap}",
                p.slot_bytes, p.superframe.0
            ));
        }
        let delay = p.allocation_delay.unwrap_or(DEFAULT_ALLOCATION_DELAY);
        if delay.0 == 0 {
            return Err("mac.allocation_delay must be positive (a request needs at least one superframe)".into());
        }
        let timeout = p.rbdc_timeout.unwrap_or(DEFAULT_RBDC_TIMEOUT);
        if timeout.0 == 0 {
            return Err("mac.rbdc_timeout must be positive".into());
        }
        let ceil_sf = |d: SimDuration| d.0.div_ceil(p.superframe.0);
        Ok(Dama {
            mode: p.mode,
            sf_ns: p.superframe.0,
            slot_ns,
            slots: slots as u32,
            slot_bytes: p.slot_bytes,
            delay_sf: ceil_sf(delay),
            timeout_sf: ceil_sf(timeout),
            rate_cap,
            started: false,
            sf_start: SimTime::ZERO,
            allocated: 0,
            cursor: SimTime::ZERO,
            credit: 0,
            granted_rate: 0,
            refreshed_at: 0,
            arrived_bytes: 0,
            volume: 0,
            outstanding: 0,
            pending: VecDeque::with_capacity(ceil_sf(delay) as usize + 1),
            stats: MacStats::default(),
        })
    }

    /// Slots per superframe (N).
    pub fn slots_per_superframe(&self) -> u32 {
        self.slots
    }
    /// Duration of one slot, ns.
    pub fn slot_ns(&self) -> u64 {
        self.slot_ns
    }
    /// The allocation delay in whole superframes (D).
    pub fn delay_superframes(&self) -> u64 {
        self.delay_sf
    }
    /// The RBDC timeout in whole superframes.
    pub fn timeout_superframes(&self) -> u64 {
        self.timeout_sf
    }
    /// The largest rate the slot grid carries, bit/s.
    pub fn max_rate_bps(&self) -> u64 {
        max_rate_bps(self.slots as u64, self.slot_bytes, self.sf_ns)
    }
    /// The RBDC rate in force, bit/s.
    pub fn granted_rate(&self) -> u64 {
        self.granted_rate
    }

    fn slot_cost(&self) -> u128 {
        self.slot_bytes as u128 * 8 * NS_PER_S
    }

    /// Slots bought by `rate` this superframe; the fraction carries over.
    fn slots_from_credit(&mut self, rate: u64) -> u32 {
        self.credit += rate as u128 * self.sf_ns as u128;
        let cost = self.slot_cost();
        let n = self.slots as u128;
        let g = (self.credit / cost).min(n);
        self.credit -= g * cost;
        if g == n {
            self.credit = self.credit.min(cost - 1);
        }
        g as u32
    }

    /// RBDC: bytes the grant in force at boundary `k` and the requests in transit carry
    /// in superframes `k .. k + D - 1`, before a request sent now takes effect. Each
    /// rate holds from the superframe it takes effect in until the next one replaces
    /// it or it times out (`timeout_sf` after it took effect). Bytes are `rate *
    /// superframe / 8`, the credit's long-run rate (the slot grid rounds a superframe's
    /// share down and carries the fraction).
    fn rbdc_covered_bytes(&self, k: u64) -> u64 {
        let end = k + self.delay_sf;
        let due = |i: usize| self.pending.get(i).map_or(end, |&(d, _)| d.min(end));
        // Sum of rate (bit/s) x superframes.
        let mut total = self.granted_rate as u128 * span(k, due(0).min(self.refreshed_at + self.timeout_sf));
        for (i, &(from, rate)) in self.pending.iter().enumerate() {
            total += rate as u128 * span(from, due(i + 1).min(from + self.timeout_sf));
        }
        (total * self.sf_ns as u128 / (8 * NS_PER_S)) as u64
    }

    /// First allocated slot at or after slot `i` (requires 0 < allocated, i < N).
    fn next_allocated(&self, i: u64) -> u64 {
        let (n, g) = (self.slots as u64, self.allocated as u64);
        let before = i * g / n;
        // Smallest j with (j+1) g >= (before+1) n: the slot where the count steps up.
        ((before + 1) * n).div_ceil(g) - 1
    }
}

/// Superframes in `[from, to)`, 0 when empty.
fn span(from: u64, to: u64) -> u128 {
    to.saturating_sub(from) as u128
}

fn max_rate_bps(slots: u64, slot_bytes: u32, sf_ns: u64) -> u64 {
    (slots as u128 * slot_bytes as u128 * 8 * NS_PER_S / sf_ns as u128) as u64
}

impl Mac for Dama {
    fn on_enqueue(&mut self, _now: SimTime, bytes: u32) {
        self.arrived_bytes += bytes as u64;
    }

    fn on_superframe(&mut self, now: SimTime, backlog_bytes: u64) -> SimTime {
        let k = self.stats.superframes;
        self.stats.superframes += 1;
        self.started = true;
        self.sf_start = now;
        self.cursor = now;
        // 1. Grants arriving now.
        while let Some(&(due, value)) = self.pending.front() {
            if due > k {
                break;
            }
            self.pending.pop_front();
            match self.mode {
                DamaMode::Rbdc => {
                    self.granted_rate = value;
                    self.refreshed_at = k;
                }
                DamaMode::Vbdc => {
                    self.volume += value;
                    self.stats.volume_granted += value;
                }
                DamaMode::Cra => {}
            }
        }
        // 2. RBDC timeout.
        if self.granted_rate > 0 && k >= self.refreshed_at + self.timeout_sf {
            self.granted_rate = 0;
            self.credit = 0;
        }
        // 3. The request, due D superframes later.
        match self.mode {
            DamaMode::Cra => {}
            DamaMode::Rbdc => {
                // Arrival rate + backlog term (module doc, step 3; OpenSAND
                // `DamaAgentRcsLegacy::computeRbdcRequest`).
                let arrival = self.arrived_bytes as u128 * 8 * NS_PER_S / self.sf_ns as u128;
                let left = backlog_bytes.saturating_sub(self.rbdc_covered_bytes(k));
                let slots = left.div_ceil(self.slot_bytes as u64) as u128;
                let backlog = (slots * self.slot_bytes as u128 * 8 * NS_PER_S).div_ceil(self.sf_ns as u128);
                let rate = (arrival + backlog).min(self.rate_cap as u128) as u64;
                if rate > 0 {
                    self.pending.push_back((k + self.delay_sf, rate));
                    self.stats.requests += 1;
                }
            }
            DamaMode::Vbdc => {
                let need = backlog_bytes.div_ceil(self.slot_bytes as u64);
                if need > self.outstanding {
                    let q = need - self.outstanding;
                    self.pending.push_back((k + self.delay_sf, q));
                    self.outstanding += q;
                    self.stats.requests += 1;
                    self.stats.volume_requested += q;
                }
            }
        }
        self.arrived_bytes = 0;
        // 4. This superframe's allocation.
        self.allocated = match self.mode {
            DamaMode::Cra => self.slots_from_credit(self.rate_cap),
            DamaMode::Rbdc => self.slots_from_credit(self.granted_rate),
            DamaMode::Vbdc => {
                let g = self.volume.min(self.slots as u64);
                self.volume -= g;
                self.outstanding -= g;
                g as u32
            }
        };
        self.stats.slots_allocated += self.allocated as u64;
        SimTime(now.0 + self.sf_ns)
    }

    fn transmit(&mut self, now: SimTime, need_ns: u64) -> Gate {
        let sf_end = SimTime(self.sf_start.0 + self.sf_ns);
        let mut t = now.max(self.cursor);
        let mut left = need_ns;
        let mut first = None;
        if self.started && self.allocated > 0 {
            let n = self.slots as u64;
            while left > 0 && t >= self.sf_start {
                let mut i = (t.0 - self.sf_start.0) / self.slot_ns;
                if i >= n {
                    break;
                }
                let j = self.next_allocated(i);
                if j > i {
                    i = j;
                    t = SimTime(self.sf_start.0 + i * self.slot_ns);
                }
                let slot_end = self.sf_start.0 + (i + 1) * self.slot_ns;
                let avail = slot_end - t.0;
                first.get_or_insert(t);
                if avail >= left {
                    t = SimTime(t.0 + left);
                    left = 0;
                } else {
                    left -= avail;
                    t = SimTime(slot_end);
                }
            }
        }
        if left == 0 {
            self.cursor = t;
            Gate::Done { first: first.unwrap_or(t), end: t }
        } else {
            self.cursor = sf_end.max(self.cursor);
            Gate::Paused { sent_ns: need_ns - left, first }
        }
    }

    fn allocated(&self) -> u32 {
        self.allocated
    }

    fn stats(&self) -> MacStats {
        self.stats
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    fn dama(mode: DamaMode) -> Dama {
        Dama::new(DamaParams::mode(mode), 128_000).unwrap()
    }

    /// Ticks superframe `k` (boundary at k * 26.5 ms) and returns its allocation.
    fn tick(d: &mut Dama, k: u64, backlog: u64) -> u32 {
        let next = d.on_superframe(SimTime(k * 26_500_000), backlog);
        assert_eq!(next, SimTime((k + 1) * 26_500_000));
        d.allocated()
    }

    #[test]
    fn defaults_make_a_128k_dvb_rcs_like_grid() {
        let d = dama(DamaMode::Rbdc);
        // 53 B at 128 kbit/s = 424 bits / 128000 = 3.3125 ms; 26.5 ms / 3.3125 ms = 8 slots.
        assert_eq!(d.slot_ns(), 3_312_500);
        assert_eq!(d.slots_per_superframe(), 8);
        // 8 * 424 bits / 26.5 ms = 128000 bit/s: the grid carries the whole link.
        assert_eq!(d.max_rate_bps(), 128_000);
        // ceil(553 / 26.5) = ceil(20.87) = 21 superframes; ceil(318 / 26.5) = 12.
        assert_eq!(d.delay_superframes(), 21);
        assert_eq!(d.timeout_superframes(), 12);
    }

    #[test]
    fn cra_delivers_exactly_its_rate() {
        // Slots per superframe at rate r: r * 26.5 ms / 424 bits. r = 128000 -> 8 exactly;
        // 100000 -> 6.25 (6,6,6,7 repeating); 64000 -> 4; 12345 -> 0.7715... Over 10000
        // superframes (265 s) the credit gives floor(10000 * r * 0.0265 / 424) slots, so the
        // carried rate is r within one slot (424 bits / 265 s = 1.6 bit/s).
        for (rate, slots) in [(128_000u64, 80_000u64), (100_000, 62_500), (64_000, 40_000), (12_345, 7_715)] {
            let mut p = DamaParams::mode(DamaMode::Cra);
            p.cra_rate = Some(rate);
            let mut d = Dama::new(p, 128_000).unwrap();
            let mut on_ns = 0u64;
            for k in 0..10_000 {
                tick(&mut d, k, 0);
                // An always-backlogged transmitter takes every allocated nanosecond.
                match d.transmit(SimTime(k * 26_500_000), u64::MAX / 4) {
                    Gate::Paused { sent_ns, .. } => on_ns += sent_ns,
                    Gate::Done { .. } => unreachable!(),
                }
            }
            assert_eq!(d.stats().slots_allocated, slots, "rate {rate}");
            assert_eq!(on_ns, slots * 3_312_500);
            let carried = on_ns as f64 * 1e-9 * 128_000.0 / 265.0;
            assert!((carried - rate as f64).abs() <= 424.0 / 265.0, "{rate}: {carried}");
        }
    }

    #[test]
    fn transmission_uses_the_allocated_slots_only() {
        // 64 kbit/s: 4 of 8 slots, spread: slot i allocated when floor((i+1)*4/8) >
        // floor(i*4/8), i.e. slots 1, 3, 5, 7 (starting 3.3125, 9.9375, 16.5625, 23.1875 ms).
        let mut p = DamaParams::mode(DamaMode::Cra);
        p.cra_rate = Some(64_000);
        let mut d = Dama::new(p, 128_000).unwrap();
        tick(&mut d, 0, 0);
        assert_eq!(d.allocated(), 4);
        // 100 B = 6.25 ms of transmitter time: slot 1 whole (3.3125 ms, the first bit at
        // its start), then 2.9375 ms of slot 3: done at 9.9375 + 2.9375 = 12.875 ms.
        let done = |first: u64, end: u64| Gate::Done { first: SimTime(first), end: SimTime(end) };
        assert_eq!(d.transmit(SimTime(0), 6_250_000), done(3_312_500, 12_875_000));
        // The next packet continues in slot 3 at 12.875 ms: 0.375 ms left there, then slot
        // 5: 1 ms more -> 16.5625 + 0.625 = 17.1875 ms.
        assert_eq!(d.transmit(SimTime(12_875_000), 1_000_000), done(12_875_000, 17_187_500));
        // 20 ms needs more than the 2.6875 + 3.3125 ms left: paused after 6 ms.
        assert_eq!(
            d.transmit(SimTime(17_187_500), 20_000_000),
            Gate::Paused { sent_ns: 6_000_000, first: Some(SimTime(17_187_500)) }
        );
        // Nothing left in this superframe: paused with nothing sent.
        assert_eq!(d.transmit(SimTime(26_000_000), 1_000), Gate::Paused { sent_ns: 0, first: None });
        // Time before a slot, or in an unallocated slot, is skipped; nothing is used twice.
        tick(&mut d, 1, 0);
        // 7 ms into superframe 1 is slot 2 (not allocated): wait for slot 3 at 26.5 + 9.9375 ms.
        assert_eq!(d.transmit(SimTime(26_500_000 + 7 * MS), 1_000_000), done(36_437_500, 36_437_500 + 1_000_000));
    }

    #[test]
    fn rbdc_follows_a_step_in_demand_one_allocation_delay_later() {
        // 212 B enter the buffer in every superframe 10..=99 (64 kbit/s). The arrivals of
        // superframe 10 are measured at boundary 11, and the request takes effect at
        // 11 + 21 = 32: 64000 * 0.0265 / 424 = 4 slots. The last request (boundary 100)
        // takes effect at 121 and expires 12 superframes later, at 133.
        let mut d = dama(DamaMode::Rbdc);
        let mut alloc = Vec::new();
        for k in 0..200 {
            alloc.push(tick(&mut d, k, 0));
            if (10..100).contains(&k) {
                d.on_enqueue(SimTime(k * 26_500_000 + MS), 212);
            }
        }
        for (k, &g) in alloc.iter().enumerate() {
            let want = if (32..133).contains(&k) { 4 } else { 0 };
            assert_eq!(g, want, "superframe {k}");
        }
        assert_eq!(d.stats().requests, 90);
        // A burst above the cap is granted the cap (128 kbit/s = 8 slots).
        d.on_enqueue(SimTime(200 * 26_500_000), 10_000);
        for k in 200..230 {
            alloc.push(tick(&mut d, k, 0));
        }
        assert_eq!(&alloc[220..230], &[0, 8, 8, 8, 8, 8, 8, 8, 8, 8]);
    }

    /// Sends up to `backlog_ns` of transmitter time in the slots allocated at `k` (an
    /// always-ready transmitter), taking off what was sent; returns when the last bit
    /// left if it left in this superframe.
    fn drain(d: &mut Dama, k: u64, backlog_ns: &mut u64) -> Option<SimTime> {
        if *backlog_ns == 0 {
            return None;
        }
        match d.transmit(SimTime(k * 26_500_000), *backlog_ns) {
            Gate::Done { end, .. } => {
                *backlog_ns = 0;
                Some(end)
            }
            Gate::Paused { sent_ns, .. } => {
                *backlog_ns -= sent_ns;
                None
            }
        }
    }

    /// Reference: OpenSAND's legacy RBDC request (`computeRbdcRequest`): arrival rate
    /// plus the MAC buffer length not covered by the requests already made. Ten 1450
    /// B packets (14 500 B) enter the buffer just before boundary 10, then nothing.
    /// Boundary 10: arrival rate far above the cap: 8 slots from superframe 31. At
    /// boundaries 11..30 nothing arrives, but 14 500 B wait and the requests in
    /// transit cover 424 B (8 slots) per superframe each: k - 10 of them at boundary
    /// k, never all 14 500 B, so each asks for the cap again. From 31 the backlog
    /// drains 424 B per superframe and 21 superframes of 424 B (8 904 B) are covered;
    /// at boundary 44, 14 500 - 13 * 424 = 8 988 B wait and 84 B are left over: 2
    /// slots (32 kbit/s) from superframe 65. At 45 the cover (20 * 424 + 106 = 8 586
    /// B) exceeds the 8 564 B waiting: no more requests. The 32 kbit/s grant times
    /// out 12 superframes after it took effect, at 77. So: 8 slots in 31..=64, 2 in
    /// 65..=76, 35 requests, 296 slots for 273.6 slots of data (a rate grant outlives
    /// its need by the timeout, as RBDC's do). Under the arrival-rate rule alone the
    /// 12 superframes of the first grant carried 96 slots (5 088 B, 3 packets) and
    /// the rest stayed queued. Exact: integer slots and nanoseconds.
    #[test]
    fn rbdc_requests_the_backlog_that_arrivals_left_behind() {
        let mut d = dama(DamaMode::Rbdc);
        let need = |bytes: u64| Rate(128_000).tx_time(bytes as u32).0;
        let mut backlog_ns: u64 = 0;
        let mut alloc = Vec::new();
        let mut done_at = None;
        for k in 0..100u64 {
            if k == 10 {
                for _ in 0..10 {
                    d.on_enqueue(SimTime(k * 26_500_000 - MS), 1450);
                    backlog_ns += need(1450);
                }
            }
            let backlog_bytes = (backlog_ns as u128 * 128_000).div_ceil(8 * NS_PER_S) as u64;
            alloc.push(tick(&mut d, k, backlog_bytes));
            done_at = drain(&mut d, k, &mut backlog_ns).or(done_at);
        }
        assert!(alloc[..31].iter().all(|&g| g == 0));
        assert!(alloc[31..65].iter().all(|&g| g == 8), "{:?}", &alloc[31..65]);
        assert!(alloc[65..77].iter().all(|&g| g == 2), "{:?}", &alloc[65..77]);
        assert!(alloc[77..].iter().all(|&g| g == 0));
        assert_eq!((d.stats().requests, d.stats().slots_allocated), (35, 296));
        // All 14 500 B left: 272 slots in 31..=64 and 1.58 of superframe 65's two
        // (slots 3 and 7), ending 0.58 slot into slot 7.
        let t = done_at.expect("the backlog was sent");
        assert_eq!(t, SimTime(65 * 26_500_000 + 7 * 3_312_500 + (906_250_000 - 273 * 3_312_500)));
        assert_eq!(backlog_ns, 0);
    }

    #[test]
    fn vbdc_follows_a_step_and_never_grants_more_than_requested() {
        // Ten 1450 B packets arrive before boundary 10: ceil(14500 / 53) = 274 slots are
        // requested at 10 and arrive at 31; 8 per superframe for 34 superframes, then 2.
        // The transmitter drains the backlog as the slots allow; nothing is requested twice.
        let mut d = dama(DamaMode::Vbdc);
        let mut backlog_ns: u64 = 0; // transmitter time still needed
        let need = |bytes: u64| Rate(128_000).tx_time(bytes as u32).0;
        let mut alloc = Vec::new();
        let mut done_at = None;
        for k in 0..80u64 {
            if k == 10 {
                for _ in 0..10 {
                    d.on_enqueue(SimTime(k * 26_500_000 - MS), 1450);
                    backlog_ns += need(1450);
                }
            }
            let backlog_bytes = (backlog_ns as u128 * 128_000).div_ceil(8 * NS_PER_S) as u64;
            alloc.push(tick(&mut d, k, backlog_bytes));
            let s = d.stats();
            assert!(s.volume_granted <= s.volume_requested, "superframe {k}: {s:?}");
            if backlog_ns > 0 {
                match d.transmit(SimTime(k * 26_500_000), backlog_ns) {
                    Gate::Done { end, .. } => {
                        backlog_ns = 0;
                        done_at = Some(end);
                    }
                    Gate::Paused { sent_ns, .. } => backlog_ns -= sent_ns,
                }
            }
        }
        let s = d.stats();
        assert_eq!((s.requests, s.volume_requested, s.volume_granted, s.slots_allocated), (1, 274, 274, 274));
        assert!(alloc[..31].iter().all(|&g| g == 0));
        assert!(alloc[31..65].iter().all(|&g| g == 8));
        assert_eq!(&alloc[65..67], &[2, 0]);
        // 14500 B need 906.25 ms of slots = 273.58 slots: 34 full superframes, then 1 slot
        // and 0.58 of the next: 65 * 26.5 + 3.3125 + 0.58 * 3.3125 ms. Slots 3 and 7 are
        // the two allocated ones (g = 2: floor((i+1)/4) steps at i = 3 and 7).
        let t = done_at.expect("the backlog was sent");
        let expect = 65 * 26_500_000 + 3 * 3_312_500 + (906_250_000 - 272 * 3_312_500) + 4 * 3_312_500 - 3_312_500;
        assert_eq!(t, SimTime(expect));
    }

    #[test]
    fn bad_parameters_are_named() {
        let err = |p: DamaParams, rate: u64| Dama::new(p, rate).err().unwrap();
        let mut p = DamaParams::mode(DamaMode::Rbdc);
        p.cra_rate = Some(64_000);
        assert!(err(p, 128_000).contains("mac.cra_rate applies to mode 'cra' only, not 'rbdc'"));
        let mut p = DamaParams::mode(DamaMode::Cra);
        p.allocation_delay = Some(SimDuration::from_millis(500));
        assert!(err(p, 128_000).contains("mac.allocation_delay applies to modes 'rbdc' and 'vbdc' only"));
        let mut p = DamaParams::mode(DamaMode::Cra);
        p.cra_rate = Some(200_000);
        assert!(err(p, 128_000).contains("mac.cra_rate must be in [1, 128000] bit/s"));
        let mut p = DamaParams::mode(DamaMode::Vbdc);
        p.superframe = SimDuration::from_millis(2);
        assert!(err(p, 128_000).contains("mac.superframe (2000000 ns) is shorter than one slot"));
        let mut p = DamaParams::mode(DamaMode::Vbdc);
        p.allocation_delay = Some(SimDuration::ZERO);
        assert!(err(p, 128_000).contains("mac.allocation_delay must be positive"));
        let mut p = DamaParams::mode(DamaMode::Rbdc);
        p.rbdc_max = Some(0);
        assert!(err(p, 128_000).contains("mac.rbdc_max must be in [1, 128000]"));
    }
}
