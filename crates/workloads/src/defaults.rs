//! Kernel defaults for channel buffer sizes (bytes a writer can queue before it blocks).

use crate::ChanKind;

/// Page size assumed for pipe buffers (x86-64, arm64 with 4K pages).
pub const PAGE_SIZE: u64 = 4096;

/// A pipe holds `PIPE_DEF_BUFFERS` = 16 pages (include/linux/pipe_fs_i.h, fs/pipe.c
/// `alloc_pipe_info`); small writes merge into the last page, so 16 × 4096 bytes.
pub const PIPE_CAPACITY: u64 = 16 * PAGE_SIZE;

/// `fs/pipe.c` `pipe_max_size` (/proc/sys/fs/pipe-max-size) default, 1 MiB: the largest
/// `F_SETPIPE_SZ` an unprivileged process may ask for.
pub const PIPE_MAX_SIZE: u64 = 1_048_576;

/// Unix stream sockets: the sender's `sk_sndbuf` = `net.core.wmem_default` = `SK_WMEM_MAX`
/// = `SKB_TRUESIZE(256) * 256` = 212992 on x86-64 (include/net/sock.h, net/core/sock.c).
pub const UNIX_CAPACITY: u64 = 212_992;

/// Loopback TCP: `skb_orphan()` in `loopback_xmit()` frees the sender's charge at once, so the
/// limit is the receiver's buffer, `net.ipv4.tcp_rmem[1]` = 131072 (net/ipv4/tcp.c
/// `tcp_init`, since v5.4 commit a337531b942b "tcp: up initial rmem to 128KB").
pub const TCP_CAPACITY: u64 = 131_072;

/// Loopback UDP: the receiver's `sk_rcvbuf` = `net.core.rmem_default` = 212992 (same
/// `SK_RMEM_MAX` computation as `SK_WMEM_MAX`).
pub const UDP_CAPACITY: u64 = 212_992;

/// The default capacity of a channel of `kind`.
pub fn default_capacity(kind: ChanKind) -> u64 {
    match kind {
        ChanKind::Pipe => PIPE_CAPACITY,
        ChanKind::UnixStream => UNIX_CAPACITY,
        ChanKind::TcpLoopback => TCP_CAPACITY,
        ChanKind::UdpLoopback => UDP_CAPACITY,
    }
}

/// `fs/pipe.c` `round_pipe_size()`: what `fcntl(F_SETPIPE_SZ, size)` turns a request into —
/// at least one page, rounded up to a power of two.
pub fn round_pipe_size(size: u64) -> u64 {
    size.max(PAGE_SIZE).next_power_of_two()
}

/// `SKB_TRUESIZE`-style charge of one small unix-stream skb carrying `payload` bytes:
/// `SKB_DATA_ALIGN(sizeof(struct sk_buff))` (256 on x86-64) plus the kmalloc bucket holding
/// `SKB_DATA_ALIGN(payload) + SKB_DATA_ALIGN(sizeof(struct skb_shared_info))` (320)
/// (include/linux/skbuff.h, net/core/skbuff.c `__alloc_skb`). For 100 B: 256 + 512 = 768.
/// This matches the 700–800 B **\[EST\]** a 100-B skb's truesize was first taken to be.
pub fn unix_skb_truesize(payload: u64) -> u64 {
    let data = payload.div_ceil(64) * 64 + 320;
    256 + data.next_power_of_two().max(32)
}

/// Payload bytes a unix stream socket queues before the writer blocks when every write is
/// `write` bytes: `sock_alloc_send_pskb()` sleeps while `sk_wmem_alloc >= sk_sndbuf`, and each
/// write charges its skb's truesize (net/unix/af_unix.c `unix_stream_sendmsg`). So
/// ⌈212992 / truesize⌉ writes fit: 278 of 100 B, not 2129.
pub fn unix_stream_capacity(write: u64) -> u64 {
    let write = write.max(1);
    UNIX_CAPACITY.div_ceil(unix_skb_truesize(write)) * write
}

/// `skb->truesize` of one loopback UDP datagram of `payload` bytes, as `__ip_append_data()`
/// allocates it: a linear head of payload + 59 bytes (UDP 8, IP 20, the loopback device's
/// `LL_RESERVED_SPACE` 16, alignment slack 15), data-aligned, plus `skb_shared_info` (320);
/// a head of at most 576 bytes comes from `skb_small_head_cache` (net/core/skbuff.c, v6.3
/// commit bf9f1baa279f), a larger one from its power-of-two kmalloc bucket, and a datagram
/// whose head would reach `SKB_MAX_ALLOC` (16 KiB − 320) puts its payload in page fragments;
/// plus
/// `struct sk_buff` (256). Checked on this project's development VM (Linux 6.18) by counting
/// the datagrams a 212992-byte receive buffer takes: 256 of 1–100 B (832 each), 92 of
/// 1024–1400 B (2304), 25 of 4096 B (8448), 12 of 16 KiB, 3 of 65507 B. Before v6.3 a small
/// head took kmalloc-512 (768).
pub fn udp_skb_truesize(payload: u64) -> u64 {
    const SKB: u64 = 256;
    const SHINFO: u64 = 320;
    const SMALL_HEAD: u64 = 576;
    const SKB_MAX_ALLOC: u64 = 16_384 - SHINFO;
    let head = (payload + 59).div_ceil(64) * 64 + SHINFO;
    if head <= SMALL_HEAD {
        SKB + SMALL_HEAD
    } else if head - SHINFO < SKB_MAX_ALLOC {
        SKB + head.next_power_of_two()
    } else {
        // Headers in a small head, the payload in page fragments (`skb->truesize += copy`).
        SKB + SMALL_HEAD + payload
    }
}

/// Payload bytes a loopback UDP socket with receive buffer `rcvbuf` queues when every datagram
/// is `dgram` bytes: `__udp_enqueue_schedule_skb()` (net/ipv4/udp.c) charges each datagram's
/// truesize to `sk_rmem_alloc` and drops one that would take it past `sk_rcvbuf`, so
/// ⌊rcvbuf / truesize⌋ datagrams fit, at least one: 256 of 64 B in 212992 bytes, not 3328.
/// (Before v6.15 the test was `rmem > rcvbuf`, which lets one more in.)
pub fn udp_rcvbuf_capacity(dgram: u64, rcvbuf: u64) -> u64 {
    let dgram = dgram.max(1);
    (rcvbuf / udp_skb_truesize(dgram)).max(1) * dgram
}

/// Payload bytes a pipe queues before the writer blocks when every write is `write` bytes:
/// 16 buffers of one page each, and fs/pipe.c `pipe_write` merges a write into the last
/// buffer only if it fits in that page, so ⌊4096 / write⌋ writes share a page (40 of 100 B:
/// 640 writes, not 655).
pub fn pipe_capacity_for(write: u64, capacity: u64) -> u64 {
    let write = write.max(1);
    if write >= PAGE_SIZE {
        return capacity.max(write);
    }
    (capacity / PAGE_SIZE).max(1) * (PAGE_SIZE / write) * write
}
