//! The network: packets, queues, error models, medium access, links, nodes and routes.

pub mod error;
pub mod link;
pub mod mac;
pub mod packet;
pub mod queue;
pub mod topology;
