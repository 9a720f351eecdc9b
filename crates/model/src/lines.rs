//! Shared cache lines and short spinlocks touched from inside another operation (docs/model.md,
//! "Shared state has a location"): each has a current owner CPU and a time until which it is
//! busy. An access from elsewhere pays the transfer by distance; concurrent writers serialise —
//! the accessing CPU spins until the line is free, and that spin is CPU time it is charged.
//!
//! Used for lines the kernel updates inside other critical sections (the task group's
//! `tg->load_avg`, SHARED_RUNQ shard locks, the SIS filter mask), where a full lock frame would
//! be out of place; rq locks, held across steps, are FIFO lock frames (`locks`). A pipe's or
//! socket's state is such a group too: every read and write takes `pipe->mutex` (or the receive
//! queue lock) and the ring it guards, so the two ends of a channel on different CPUs pull its
//! lines back and forth, and an op waits (`mutex_optimistic_spin()`) while the other end is
//! inside its own.
//!
//! Each message has a location apart from the channel's (`read_msgs`): its writer's CPU holds
//! its lines (skb, data head, slab freelist; a pipe's data) until a reader elsewhere pulls them,
//! or until that CPU has written more message memory than its private cache holds, after which
//! a socket message is read cold.
//!
//! Cost convention (the whole model): a function either returns the CPU time it costs, for its
//! caller to add to a step (`busy`) or to a result it returns, or charges it (`Sim::charge`: the
//! CPU's debt, paid in its next step) and returns nothing; never both. Everything here charges;
//! the data layer's [`SharedLine::take`] returns.

use crate::sim::Sim;
use wakesim_engine::Time;

pub use crate::data::SharedLine;

impl Sim {
    /// `cpu` takes `line` exclusively for `hold` ns (an atomic RMW, or a lock + short critical
    /// section). Charges `cpu` the CPU time it costs (wait + transfer + hold) and returns
    /// nothing: a caller that needs the cost in a result of its own takes the line with
    /// [`SharedLine::take`] and charges nothing.
    pub(crate) fn line_rmw(&mut self, cpu: usize, line: &mut SharedLine, hold: Time) {
        self.lines_rmw(cpu, line, 1, hold, 0)
    }

    /// `cpu` takes a group of `n` lines that move together (a lock and the state it guards)
    /// `after` ns from now, for `hold` ns: waits while another CPU holds them, pays `n`
    /// transfers if they were last written elsewhere. Charges `cpu` the CPU time from
    /// `now + after` (wait + transfers + hold); returns nothing.
    pub(crate) fn lines_rmw(&mut self, cpu: usize, line: &mut SharedLine, n: u64, hold: Time, after: Time) {
        let now = self.now() + after;
        let transfer = n * self.line_xfer(cpu, line.owner as usize);
        let cost = line.take(cpu as u32, now, transfer, hold);
        self.charge(cpu, cost);
    }

    /// A read or write of channel `ch` (`pipe_read()`/`pipe_write()` under `pipe->mutex`, or the
    /// socket's queue): takes the channel's lines `after` ns from now for `hold` ns. Charges
    /// `cpu` (`lines_rmw`); returns nothing.
    pub(crate) fn chan_rmw(&mut self, cpu: usize, ch: u32, hold: Time, after: Time) {
        let chan = &self.chans[ch as usize];
        let (mut line, n) = (chan.line, chan.lines);
        self.lines_rmw(cpu, &mut line, n, hold, after);
        self.chans[ch as usize].line = line;
    }

    /// A futex op on `cpu` (`futex_wait()` queueing, `futex_wake()` walking and unqueueing, or a
    /// woken waiter's return through `futex_unqueue()`): takes futex `fx`'s `futex_lines` lines
    /// (hash bucket, `futex_q`, futex word) `after` ns from now for `hold` ns. Charges `cpu`
    /// (`lines_rmw`); returns nothing.
    pub(crate) fn futex_rmw(&mut self, cpu: usize, fx: u32, hold: Time, after: Time) {
        let mut line = self.futexes[fx as usize].line;
        self.lines_rmw(cpu, &mut line, self.c.futex_lines, hold, after);
        self.futexes[fx as usize].line = line;
    }

    /// The reader on `cpu` consumes `bytes` of channel `ch`'s queued messages. A message whose
    /// writer's CPU has since written more message memory than its private cache holds was
    /// evicted: the reader pays `msg_cold` for it (a reuse-distance model of that cache). One
    /// still cached on another CPU is pulled over: `msg_lines` transfers by distance. A message
    /// is paid for by its first read; what is left of it is then in the reader's cache. Charges
    /// `cpu`; returns nothing.
    pub(crate) fn read_msgs(&mut self, cpu: usize, ch: u32, mut bytes: u64) {
        let mut cost = 0;
        let chan = &mut self.chans[ch as usize];
        while bytes > 0 {
            let Some(front) = chan.msgs.front_mut() else {
                break;
            };
            if !front.read {
                self.wake.msgs_read += 1;
                self.wake.msgs_cross_cpu += u64::from(front.cpu as usize != cpu);
                if self.msg_written[front.cpu as usize] - front.stamp > self.c.private_cache_bytes {
                    self.wake.msgs_cold += 1;
                    cost += chan.msg_cold;
                } else if front.cpu as usize != cpu {
                    let line = crate::mesh::line_xfer(&self.m, &self.c, &self.mesh_off, cpu, front.cpu as usize);
                    cost += chan.msg_lines * line;
                    if chan.frags {
                        cost += streamed(data_lines(front.bytes), line, self.c.stream_read_overlap);
                    }
                }
                // The receiver ACKs a TCP message (`tcp_cleanup_rbuf()`); its processing on the
                // sender's socket goes to the backlog while the sender owns it.
                if chan.frags && self.tasks[front.writer as usize].sock_owned == ch {
                    self.tasks[front.writer as usize].backlog += self.c.tcp_ack;
                }
            }
            if chan.frags {
                chan.frag_reader = cpu as u32;
            }
            front.read = true;
            let take = bytes.min(front.bytes);
            front.bytes -= take;
            bytes -= take;
            if front.bytes == 0 {
                chan.msgs.pop_front();
            }
        }
        self.charge(cpu, cost);
    }

    /// A send of task `t` that goes ahead on `cpu`, before its copy. On loopback TCP,
    /// `tcp_sendmsg()` takes the socket (`lock_sock()`): until `t` is back in user space or
    /// sleeps for buffer space, an ACK of its data goes to the socket's backlog
    /// (`tcp_v4_rcv()` → `tcp_add_backlog()`), not to the receiver's softirq. Then
    /// `tcp_sendmsg_locked()` puts the data in the sender's page frag
    /// (`skb_page_frag_refill()`). Once nothing is queued, the skbs that held the frag page are
    /// freed and the refill hands the sender the same page again (`page_ref_count() == 1`): if
    /// a reader on another CPU read it last, the copy takes its lines back, a stream of
    /// `data_lines(bytes)` misses, `stream_write_overlap` in flight. While messages are queued
    /// the frag is still referenced and the copy goes to fresh lines. Either way the writer
    /// then holds them. Charges `cpu`; returns nothing.
    pub(crate) fn tcp_sendmsg(&mut self, cpu: usize, t: crate::state::TaskId, op: &wakesim_workloads::Op) {
        let wakesim_workloads::Op::Send { chan: ch, bytes } = *op else { return };
        let chan = &mut self.chans[ch as usize];
        if !chan.frags {
            return;
        }
        self.tasks[t as usize].sock_owned = ch;
        let reader = std::mem::replace(&mut chan.frag_reader, crate::state::NO_CPU);
        if chan.bytes > 0 || reader == crate::state::NO_CPU || reader as usize == cpu {
            return;
        }
        let line = self.line_xfer(cpu, reader as usize);
        self.charge(cpu, streamed(data_lines(bytes), line, self.c.stream_write_overlap));
    }
}

/// Cache lines `bytes` of data span (64-byte lines, from a line boundary).
fn data_lines(bytes: u64) -> u64 {
    bytes.div_ceil(64)
}

/// `n` line misses of `line` ns each with `overlap` of them in flight: `n × line / overlap`,
/// rounded to the nearest ns.
fn streamed(n: u64, line: Time, overlap: u64) -> Time {
    (n * line + overlap / 2) / overlap
}

impl Sim {
    /// `release_sock()` before task `t` sleeps on `cpu`: the socket is released and its
    /// backlog's ACKs run first. Charges `cpu`; returns nothing.
    pub(crate) fn release_sock(&mut self, cpu: usize, t: crate::state::TaskId) {
        let task = &mut self.tasks[t as usize];
        task.sock_owned = crate::state::NO_CHAN;
        let backlog = std::mem::take(&mut task.backlog);
        self.charge(cpu, backlog);
    }
}
