//! The network: packets, queues, error models, links, nodes and routes.

pub mod clocked;
pub mod error;
pub mod head_deque;
pub mod link;
pub mod packet;
pub mod queue;
pub mod routing;
pub mod topology;
