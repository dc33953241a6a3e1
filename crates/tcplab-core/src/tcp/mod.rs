//! TCP endpoints: configuration and profiles, sender, receiver, RTT estimation, SACK
//! scoreboard.

pub mod config;
