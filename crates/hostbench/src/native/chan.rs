//! Real kernel channels for the language's channels: a pipe, a unix stream socketpair, or a
//! loopback TCP connection / pair of connected UDP sockets on 127.0.0.1 (never another address).

use std::io;
use std::net::{TcpListener, TcpStream, UdpSocket};
use std::os::fd::{IntoRawFd, RawFd};

use wakesim_workloads::{ChanKind, ChannelSpec, Op, Workload};

/// Linux's default pipe size (`PIPE_DEF_BUFFERS` × 4 KiB).
const PIPE_DEFAULT: u64 = 65_536;

/// One channel: tasks write `tx` and read `rx`.
#[derive(Clone, Copy, Debug)]
pub struct Fds {
    pub rx: RawFd,
    pub tx: RawFd,
}

/// Open every channel; fds stay open for the run's lifetime (the runner process exits after).
/// Two loopback TCP or UDP channels between the same two tasks in opposite directions are one
/// connection, as a real program's duplex socket (netperf's RR tests and tbench each use one):
/// the second channel's ends are duplicates of the first's sockets, swapped, so that TCP's
/// ACKs ride on the replies as they do in the real tools.
pub fn open_all(w: &Workload) -> io::Result<Vec<Fds>> {
    let ends = channel_ends(w);
    let mut fds: Vec<Option<Fds>> = vec![None; w.channels.len()];
    for (i, c) in w.channels.iter().enumerate() {
        if fds[i].is_some() {
            continue;
        }
        let f = open(c)?;
        fds[i] = Some(f);
        if !matches!(c.kind, ChanKind::TcpLoopback | ChanKind::UdpLoopback) {
            continue;
        }
        let reverse = (i + 1..w.channels.len()).find(|&j| fds[j].is_none() && w.channels[j].kind == c.kind && ends[j].is_some() && ends[j] == ends[i].map(|(a, b)| (b, a)));
        if let Some(j) = reverse {
            // SAFETY: dup of fds just opened here; each copy is closed on its own.
            let (rx, tx) = unsafe { (libc::dup(f.tx), libc::dup(f.rx)) };
            if rx < 0 || tx < 0 {
                return Err(io::Error::last_os_error());
            }
            fds[j] = Some(Fds { rx, tx });
        }
    }
    Ok(fds.into_iter().map(|f| f.expect("every channel opened")).collect())
}

/// Each channel's one writing task and one reading task, if it has exactly one of each.
fn channel_ends(w: &Workload) -> Vec<Option<(usize, usize)>> {
    let n = w.channels.len();
    let (mut writers, mut readers) = (vec![Vec::new(); n], vec![Vec::new(); n]);
    for (t, task) in w.tasks.iter().enumerate() {
        for op in &task.program {
            let (ch, list) = match *op {
                Op::Send { chan, .. } | Op::SendDgram { chan, .. } => (chan, &mut writers),
                Op::Recv { chan, .. } => (chan, &mut readers),
                _ => continue,
            };
            let v = &mut list[ch as usize];
            if !v.contains(&t) {
                v.push(t);
            }
        }
    }
    (0..n).map(|c| match (writers[c].as_slice(), readers[c].as_slice()) {
        ([a], [b]) if a != b => Some((*a, *b)),
        _ => None,
    })
    .collect()
}

fn open(c: &ChannelSpec) -> io::Result<Fds> {
    match c.kind {
        ChanKind::Pipe => {
            let mut fds = [0; 2];
            // SAFETY: valid out-array of two ints.
            if unsafe { libc::pipe(fds.as_mut_ptr()) } != 0 {
                return Err(io::Error::last_os_error());
            }
            if c.capacity > PIPE_DEFAULT {
                // As perf's sched-pipe `-s`: F_SETPIPE_SZ to hold the writes (rounded up by the
                // kernel to a power of two pages); failure leaves the default size.
                // SAFETY: plain fcntl on our own fd.
                unsafe { libc::fcntl(fds[1], libc::F_SETPIPE_SZ, c.capacity.min(1 << 20) as i32) };
            }
            Ok(Fds { rx: fds[0], tx: fds[1] })
        }
        ChanKind::UnixStream => {
            let mut fds = [0; 2];
            // SAFETY: valid out-array of two ints.
            if unsafe { libc::socketpair(libc::AF_UNIX, libc::SOCK_STREAM, 0, fds.as_mut_ptr()) } != 0 {
                return Err(io::Error::last_os_error());
            }
            Ok(Fds { rx: fds[0], tx: fds[1] })
        }
        ChanKind::TcpLoopback => {
            let l = TcpListener::bind("127.0.0.1:0")?;
            let tx = TcpStream::connect(l.local_addr()?)?;
            tx.set_nodelay(true)?;
            let (rx, _) = l.accept()?;
            // Both ends: a duplex connection (`open_all`) also sends from the accepted one.
            rx.set_nodelay(true)?;
            Ok(Fds { rx: rx.into_raw_fd(), tx: tx.into_raw_fd() })
        }
        ChanKind::UdpLoopback => {
            let a = UdpSocket::bind("127.0.0.1:0")?;
            let b = UdpSocket::bind("127.0.0.1:0")?;
            a.connect(b.local_addr()?)?;
            b.connect(a.local_addr()?)?;
            Ok(Fds { rx: b.into_raw_fd(), tx: a.into_raw_fd() })
        }
    }
}

/// Write all of `buf` (a pipe or stream may take it in pieces).
pub fn send(fd: RawFd, buf: &[u8]) -> io::Result<()> {
    let mut off = 0;
    while off < buf.len() {
        // SAFETY: the slice is valid for its length.
        let n = unsafe { libc::write(fd, buf[off..].as_ptr() as *const libc::c_void, buf.len() - off) };
        if n < 0 {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        off += n as usize;
    }
    Ok(())
}

/// One datagram, dropped when the receive buffer is full (`sendto` with `MSG_DONTWAIT` getting
/// `EAGAIN`), as UDP does; returns whether it was sent.
pub fn send_dgram(fd: RawFd, buf: &[u8]) -> io::Result<bool> {
    loop {
        // SAFETY: the slice is valid for its length.
        let n = unsafe { libc::send(fd, buf.as_ptr() as *const libc::c_void, buf.len(), libc::MSG_DONTWAIT) };
        if n >= 0 {
            return Ok(true);
        }
        let e = io::Error::last_os_error();
        match e.kind() {
            io::ErrorKind::Interrupted => continue,
            io::ErrorKind::WouldBlock => return Ok(false),
            _ => return Err(e),
        }
    }
}

/// Read exactly `buf.len()` bytes; end of file is an error.
pub fn recv(fd: RawFd, buf: &mut [u8]) -> io::Result<()> {
    let mut off = 0;
    while off < buf.len() {
        // SAFETY: the slice is valid for its length.
        let n = unsafe { libc::read(fd, buf[off..].as_mut_ptr() as *mut libc::c_void, buf.len() - off) };
        if n < 0 {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        if n == 0 {
            return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "channel closed"));
        }
        off += n as usize;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use wakesim_workloads::bench::netperf;

    fn sockname(fd: RawFd) -> Vec<u8> {
        // SAFETY: a zeroed sockaddr_storage is a valid out-buffer of its own size.
        let mut ss: libc::sockaddr_storage = unsafe { std::mem::zeroed() };
        let mut len = std::mem::size_of::<libc::sockaddr_storage>() as libc::socklen_t;
        // SAFETY: see above.
        assert_eq!(unsafe { libc::getsockname(fd, &mut ss as *mut _ as *mut libc::sockaddr, &mut len) }, 0);
        // SAFETY: getsockname wrote `len` bytes.
        unsafe { std::slice::from_raw_parts(&ss as *const _ as *const u8, len as usize) }.to_vec()
    }

    #[test]
    fn request_and_response_channels_between_two_tasks_are_one_connection() {
        for test in ["TCP_RR", "UDP_RR"] {
            let args: Vec<String> = ["-t", test, "-l", "-10"].iter().map(|s| s.to_string()).collect();
            let w = netperf::workload(&netperf::parse(&args).unwrap());
            let f = open_all(&w).unwrap();
            // The server replies on the socket it reads requests from; the client reads replies
            // on the socket it sent from.
            assert_eq!(sockname(f[1].tx), sockname(f[0].rx), "{test}");
            assert_eq!(sockname(f[1].rx), sockname(f[0].tx), "{test}");
        }
        // A one-way stream keeps its own connection.
        let args: Vec<String> = ["-t", "TCP_STREAM", "-l", "-10"].iter().map(|s| s.to_string()).collect();
        let w = netperf::workload(&netperf::parse(&args).unwrap());
        assert_eq!(open_all(&w).unwrap().len(), 1);
    }
}
