//! Pipes and sockets: what a read or write costs, where the channel's state and each message's
//! lines are, when a blocked reader or writer wakes, and what a datagram does when the buffer is full.

mod blocking_read;
mod channel_lines;
mod datagrams;
mod frag_streams;
mod message_lines;
mod socket_queue;
mod tcp_backlog;
