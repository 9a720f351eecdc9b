//! Real kernel channels for the language's channels: a pipe, a unix stream socketpair, or a
//! loopback TCP connection / pair of connected UDP sockets on 127.0.0.1 (never another address).

use std::io;
use std::net::{TcpListener, TcpStream, UdpSocket};
use std::os::fd::{IntoRawFd, RawFd};

use wakesim_workloads::{ChanKind, ChannelSpec};

/// Linux's default pipe size (`PIPE_DEF_BUFFERS` × 4 KiB).
const PIPE_DEFAULT: u64 = 65_536;

/// One channel: tasks write `tx` and read `rx`.
#[derive(Clone, Copy, Debug)]
pub struct Fds {
    pub rx: RawFd,
    pub tx: RawFd,
}

/// Open every channel; fds stay open for the run's lifetime (the runner process exits after).
pub fn open_all(specs: &[ChannelSpec]) -> io::Result<Vec<Fds>> {
    specs.iter().map(open).collect()
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
