//! The network: packets, queues, error models, links, nodes and routes.

pub mod error;
pub mod packet;
pub mod queue;
