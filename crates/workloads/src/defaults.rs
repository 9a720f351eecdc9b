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
