//! Medium access control between a link's buffer and its transmitter, behind one `Mac`
//! trait.
//!
//! Without a MAC a link's transmitter serializes whenever it has a packet. With one,
//! the transmitter may serialize only while the MAC lets it: the MAC divides time into
//! superframes of slots and says which slots of the current superframe this link owns.
//! The link asks the MAC to `transmit` a given amount of transmitter time; the MAC
//! either finds it in the slots granted so far (and says when the packet's last bit
//! leaves) or consumes what is left of the superframe and pauses the packet until the
//! next superframe boundary (`on_superframe`), where the link resumes it.
//!
//! The MAC sees only its own buffer: the bytes entering it (`on_enqueue`, for rate
//! measurement) and the backlog at each superframe boundary (for volume requests and
//! the backlog term of rate requests).
//!
//! Models: `dama` (DVB-RCS-like demand assignment: CRA, RBDC, VBDC).

pub mod dama;

use crate::time::SimTime;
use serde::{Deserialize, Serialize};

/// The outcome of asking the MAC for transmitter time. `first` is when the first bit
/// this call sent went on the air (the start of the first granted slot it used), which
/// error models need for the frame's airtime.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Gate {
    /// The whole request fits in the capacity granted so far; the last bit leaves at `end`.
    Done { first: SimTime, end: SimTime },
    /// Only `sent_ns` of the request fit before the end of the current superframe; the
    /// rest waits for the next boundary. `first` is `None` when nothing was sent.
    Paused { sent_ns: u64, first: Option<SimTime> },
}

/// Counters of a MAC, for the `links` table.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MacStats {
    /// Superframe boundaries processed.
    pub superframes: u64,
    /// Slots allocated to this link over the run.
    pub slots_allocated: u64,
    /// Capacity requests sent (RBDC rate or VBDC volume requests).
    pub requests: u64,
    /// VBDC: slots requested in total (0 for the other modes).
    pub volume_requested: u64,
    /// VBDC: slots granted in total (arrived at the terminal one allocation delay after
    /// their request; never more than requested).
    pub volume_granted: u64,
}

impl MacStats {
    /// The counts since `base` (an earlier snapshot of the same MAC): the measurement
    /// window's share when `base` was taken as it opened.
    pub fn since(&self, base: &MacStats) -> MacStats {
        MacStats {
            superframes: self.superframes - base.superframes,
            slots_allocated: self.slots_allocated - base.slots_allocated,
            requests: self.requests - base.requests,
            volume_requested: self.volume_requested - base.volume_requested,
            volume_granted: self.volume_granted - base.volume_granted,
        }
    }
}

/// A medium-access model gating a link's transmitter.
pub trait Mac: Send {
    /// `bytes` entered the MAC buffer at `now`.
    fn on_enqueue(&mut self, now: SimTime, bytes: u32);
    /// The superframe boundary at `now`: grants that arrive now take effect, this
    /// superframe's slots are allocated and the capacity request is sent. `backlog_bytes`
    /// is what waits in the MAC buffer plus the unsent part of a paused transmission.
    /// Returns the time of the next boundary.
    fn on_superframe(&mut self, now: SimTime, backlog_bytes: u64) -> SimTime;
    /// Asks for `need_ns` of transmitter time from `now` on (see `Gate`).
    fn transmit(&mut self, now: SimTime, need_ns: u64) -> Gate;
    /// Slots allocated in the current superframe.
    fn allocated(&self) -> u32;
    fn stats(&self) -> MacStats;
}

/// The serde description of a MAC, as scenario files give it (`mac = { kind = "dama", ... }`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum MacConfig {
    Dama(dama::DamaParams),
}

impl MacConfig {
    /// Builds the MAC of a link of `link_rate_bps`, or explains which parameter is impossible.
    pub fn build(&self, link_rate_bps: u64) -> Result<Box<dyn Mac>, String> {
        match self {
            MacConfig::Dama(p) => Ok(Box::new(dama::Dama::new(p.clone(), link_rate_bps)?)),
        }
    }

    /// Short name of the model and mode, for the `links` table.
    pub fn label(&self) -> String {
        match self {
            MacConfig::Dama(p) => format!("dama/{}", p.mode.name()),
        }
    }
}
