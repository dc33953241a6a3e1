//! The network: packets, queues, error models, medium access, link layers, links,
//! nodes and routes.

pub mod clocked;
pub mod error;
pub mod head_deque;
pub mod jitter;
pub mod link;
pub mod linklayer;
pub mod mac;
pub mod packet;
pub mod queue;
pub mod routing;
pub mod topology;
