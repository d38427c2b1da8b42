//! The connection-level receive buffer's autotuning, as `linux-upstream` does it for a socket
//! whose SO_RCVBUF is not set (`rcvbuf = "auto"`): mptcp_rcv_space_adjust
//! (net/mptcp/protocol.c: since 2020, as in Linux 6.18), the MPTCP copy of TCP's dynamic right-sizing
//! (tcp_rcv_space_adjust, tcp/receiver.rs `autotune`).
//!
//! - The buffer starts at tcp_rmem[1] (mptcp_init_sock: sk_rcvbuf = tcp_rmem[1], 131 072) and
//!   the window it gives is its scaling_ratio share (build.rs `conn_rcv_window`).
//! - The application's reads are counted. Once per round trip, the largest receive-side RTT
//!   estimate among the subflows (each subflow's rcv_rtt_est; one that received nothing has
//!   none and does not count), the bytes read in it (`copied`) are compared with the last
//!   measure (`space`, first the window offered, at most 10 x advmss: mptcp_rcv_space_init).
//!   Only a larger one grows the buffer (mptcp_rcvbuf_grow): to the window `2 x copied`, plus
//!   twice the growth trend `rcvwin x (copied - space) / space`, at most tcp_rmem[2]; the
//!   buffer never shrinks. (Kernels before 6.18's receive-path rework added `16 x advmss` to
//!   the window; 6.18 does not.)
//! - Each subflow has a receive buffer of its own (`SubflowRcvBuf`): tcp_rmem[1] when its
//!   socket is made, not the connection's (a subflow's sk_rcvbuf follows the connection's only
//!   when SO_RCVBUF fixed it, mptcp_sockopt_sync_locked). When the connection's buffer grows,
//!   each subflow whose transfer has begun grows its own by tcp_rcvbuf_grow with the
//!   connection's measure (mptcp_rcv_space_adjust, net/mptcp/protocol.c, Linux 6.18), from its
//!   own last measure; a subflow that joins after the connection's buffer stopped growing (at
//!   tcp_rmem[2]) keeps tcp_rmem[1] for good. Its window_clamp, which bounds its rcv_ssthresh
//!   and so the window its ACKs offer (tcp_grow_window, packets.rs), is that buffer's window,
//!   one advmss less at first (tcp_init_buffer_space's reserved segment). The emulator's kernel
//!   shows it (`ss -tinm` at the client, mesh-rtt-1:10-small, 2026-12-07): the connection's
//!   buffer at 262 144 from its first 50 ms, the 5 ms subflow's at 247 764 (rcv_ssthresh
//!   206 162), the 50 ms subflow's, joined later, at 131 072 (rcv_ssthresh 100 119) to the end.
//!
//! Why it matters (docs/models.md, "MPTCP receive buffer"): the window a connection
//! advertises bounds how far past a hole its data may run. With the buffer at tcp_rmem[2] from
//! the start (6 MB, what the model took before) a subflow that takes over from a dead one ran
//! on past the dead one's data for seconds; the kernel's connection, its buffer grown to what
//! its reads needed (~750 kB at 100 Mbit/s and 12 ms), stalls within ~0.1 s until that data is
//! sent again (the path-manager bench, docs/path-manager.md).

use super::{Connection, SubflowIo};
use crate::time::Time;

/// TCP_INIT_CWND (include/net/tcp.h): the first measure is this many advmss, the connection's
/// (mptcp_rcv_space_init) and each subflow's (tcp_init_buffer_space).
const INIT_SEGMENTS: u64 = 10;

/// Receive-buffer autotuning of one connection, in window bytes (the buffer's scaling_ratio
/// share: the kernel grows sk_rcvbuf to mptcp_space_from_win(rcvwin) and advertises
/// mptcp_win_from_space of it, so the window is rcvwin up to the ceiling's share).
#[derive(Debug, Clone)]
pub struct RcvSpace {
    /// The window of tcp_rmem[1], where the buffer starts (and every subflow's own).
    initial: u64,
    window: u64,
    ceiling: u64,
    /// msk->rcvq_space: the last measure, the bytes read since, and when it started (None:
    /// nothing read yet, mptcp_rcv_space_init still to come).
    space: u64,
    copied: u64,
    since: Option<Time>,
}

impl RcvSpace {
    /// `initial`: the window of tcp_rmem\[1\]; `ceiling`: of tcp_rmem\[2\].
    pub fn new(initial: u64, ceiling: u64) -> Self {
        let initial = initial.min(ceiling);
        RcvSpace { initial, window: initial, ceiling, space: 0, copied: 0, since: None }
    }

    /// A new subflow's own receive buffer (tcp_rmem[1]: tcp_init_sock).
    pub fn subflow_buffer(&self, mss: u32) -> SubflowRcvBuf {
        SubflowRcvBuf::new(self.initial, mss)
    }

    /// The window the buffer gives now.
    pub fn window(&self) -> u64 {
        self.window
    }

    /// Counts a read of `copied` bytes that cannot end the measure: it started (`elapsed`,
    /// below) and some subflow's RTT estimate, so the largest, is longer than what has passed.
    /// The kernel returns as early (mptcp_rcv_space_adjust's first `time < rtt_us` test),
    /// before it walks the subflows; so does `Connection::rcv_space_adjust`, per read.
    pub fn count(&mut self, copied: u64) {
        self.copied += copied;
    }

    /// The time since the measure started (None: nothing read yet).
    pub fn elapsed(&self, now: Time) -> Option<Time> {
        self.since.map(|s| now.saturating_sub(s))
    }

    /// The application read `copied` bytes at `now`. `rtt`: the largest receive-side RTT
    /// estimate among the subflows (None: no subflow has one yet); `advmss`: the largest MSS
    /// they announced. Returns the new window when the buffer grew.
    pub fn on_read(&mut self, now: Time, copied: u64, rtt: Option<Time>, advmss: u32) -> Option<u64> {
        if copied == 0 {
            return None;
        }
        let advmss = u64::from(advmss);
        // mptcp_rcv_space_init: the first measure is what the window offers, at most 10
        // advmss ("initial rcv_space offering made to peer", min(rcv_wnd, TCP_INIT_CWND x
        // advmss)). Taking 10 advmss alone deadlocks a connection whose window is smaller (an
        // 11ad MSS of 7840: 78 400 against a 65 536 window): its reads per round trip can
        // never exceed the measure.
        let window = self.window;
        let since = *self.since.get_or_insert_with(|| {
            self.space = (INIT_SEGMENTS * advmss).min(window);
            now
        });
        self.copied += copied;
        let rtt = rtt.filter(|r| r.ns() > 0)?;
        if now.saturating_sub(since) < rtt {
            return None;
        }
        let mut grown = None;
        if self.copied > self.space {
            let mut rcvwin = 2 * self.copied;
            let grow = rcvwin * (self.copied - self.space) / self.space.max(1);
            rcvwin += 2 * grow;
            let w = rcvwin.min(self.ceiling);
            if w > self.window {
                self.window = w;
                grown = Some(w);
            }
            self.space = self.copied;
        }
        self.copied = 0;
        self.since = Some(now);
        grown
    }
}

impl Connection {
    /// The application read `copied` bytes (before the read's ACKs are decided, as
    /// mptcp_recvmsg calls mptcp_rcv_space_adjust before mptcp_cleanup_rbuf): an autotuned
    /// buffer takes the measure, and a grown window is offered at once.
    pub fn rcv_space_adjust(&mut self, now: Time, copied: u64, io: &mut impl SubflowIo) {
        let Some(space) = self.rcv_space.as_mut() else { return };
        if copied == 0 {
            return;
        }
        let elapsed = space.elapsed(now);
        let (mut rtt, mut advmss) = (None::<Time>, 0u32);
        for st in self.subs.iter().filter(|st| st.established && !st.closed) {
            let (rx, _) = io.receiver_out(st.flow);
            if let Some(r) = rx.rcv_rtt() {
                // One RTT longer than what has passed: the largest is too, no measure ends.
                if elapsed.is_some_and(|e| e < r) {
                    space.count(copied);
                    return;
                }
                rtt = Some(rtt.map_or(r, |m| m.max(r)));
            }
            advmss = advmss.max(st.mss);
        }
        if let Some(w) = space.on_read(now, copied, rtt, advmss) {
            self.rx.set_rcvbuf(w);
            // "Make subflows follow along": each with its own tcp_rcvbuf_grow.
            let (measure, ceiling) = (space.space, space.ceiling);
            for st in self.subs.iter_mut().filter(|st| !st.closed) {
                if let Some(b) = st.rcvbuf.as_mut() {
                    b.grow(measure, ceiling);
                }
            }
        }
    }
}

/// One subflow's own receive buffer, in window bytes, when the connection's is autotuned.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SubflowRcvBuf {
    /// sk_rcvbuf's window, and tp->window_clamp: what rcv_ssthresh may grow to.
    buf: u64,
    clamp: u64,
    /// tp->rcvq_space.space, the last measure: 0 until the subflow's transfer begins
    /// (tcp_init_transfer), and a subflow with none takes no part in the growth.
    space: u64,
    mss: u64,
}

impl SubflowRcvBuf {
    /// tcp_rmem[1]'s window `initial`: the clamp is that less one advmss (tcp_init_buffer_space
    /// with tcp_app_win: "force reservation of one segment"), at least two.
    fn new(initial: u64, mss: u32) -> Self {
        let mss = u64::from(mss);
        SubflowRcvBuf { buf: initial, clamp: initial.saturating_sub(mss).max(2 * mss), space: 0, mss }
    }

    /// The subflow is established (tcp_init_buffer_space): its first measure is what it
    /// offers, at most TCP_INIT_CWND advmss (rcv_ssthresh `rcv_ssthresh`).
    pub fn begin(&mut self, rcv_ssthresh: u64) {
        if self.space == 0 {
            self.space = rcv_ssthresh.min(INIT_SEGMENTS * self.mss).max(1);
        }
    }

    /// What the subflow's rcv_ssthresh may grow to (tcp_grow_window's room is
    /// min(window_clamp, tcp_space) less it; the subflow holds next to nothing itself, its data
    /// goes on to the connection at once).
    pub fn clamp(&self) -> u64 {
        self.clamp
    }

    /// tcp_rcvbuf_grow(ssk, newval) with the connection's measure `newval` (net/ipv4/
    /// tcp_input.c, Linux 6.18: later kernels add a low-RTT rule, sysctl tcp_rcvbuf_low_rtt,
    /// which the emulator's 6.18 does not have): rcvwin = 2 newval, plus twice newval's growth
    /// over the subflow's own last measure in proportion, at most tcp_rmem[2]'s window
    /// `ceiling`; the clamp follows a larger buffer. The kernel's u32 arithmetic is kept: a
    /// measure below the last wraps the growth around, as `newval - oldval` does there.
    fn grow(&mut self, newval: u64, ceiling: u64) {
        if self.space == 0 {
            return;
        }
        let old = self.space;
        self.space = newval;
        let rcvwin = (newval as u32) << 1;
        let diff = (newval as u32).wrapping_sub(old as u32);
        // (u64 in the kernel too, where a product past 2^64 wraps as well.)
        let grow = (u64::from(rcvwin) << 1).wrapping_mul(u64::from(diff)) / old;
        let rcvwin = u64::from(rcvwin.wrapping_add(grow as u32));
        let full = rcvwin.min(ceiling);
        if full > self.buf {
            self.buf = full;
            self.clamp = full;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u32 = 1448;

    fn ms(x: u64) -> Time {
        Time::from_ms(x)
    }

    /// Nothing grows before an RTT is known, nor within one RTT of the measure's start; the
    /// first measure is 10 advmss.
    #[test]
    fn a_measure_lasts_one_rtt_and_needs_one() {
        let mut r = RcvSpace::new(100_000, 1_000_000);
        assert_eq!(r.on_read(ms(0), 50_000, None, MSS), None, "no RTT yet");
        assert_eq!(r.on_read(ms(5), 50_000, Some(ms(10)), MSS), None, "inside the first RTT");
        // 10 ms after the first read: 100 000 + 20 000 read against a first measure of 14 480.
        let copied = 120_000u64;
        let mut rcvwin = 2 * copied;
        rcvwin += 2 * (rcvwin * (copied - 14_480) / 14_480);
        assert_eq!(r.on_read(ms(10), 20_000, Some(ms(10)), MSS), Some(rcvwin.min(1_000_000)));
        assert_eq!(r.window(), 1_000_000, "capped at the ceiling");
    }

    /// A steady reader: the first measure (its reads against 10 advmss) sets the buffer, and
    /// measures no larger than the last leave it: it never shrinks.
    #[test]
    fn a_steady_reader_settles_and_never_shrinks() {
        let mut r = RcvSpace::new(117_248, 100 << 20);
        let per_ms = 12_500u64; // 100 Mbit/s
        for t in 0..12u64 {
            assert_eq!(r.on_read(ms(t), per_ms, Some(ms(12)), MSS), None, "inside the first RTT");
        }
        // 13 reads by 12 ms: 162 500 bytes against 14 480.
        let copied = 13 * per_ms;
        let mut rcvwin = 2 * copied;
        rcvwin += 2 * (rcvwin * (copied - 14_480) / 14_480);
        assert_eq!(r.on_read(ms(12), per_ms, Some(ms(12)), MSS), Some(rcvwin));
        for t in 13..400u64 {
            assert_eq!(r.on_read(ms(t), per_ms, Some(ms(12)), MSS), None, "12 reads an RTT now: no more than 13");
        }
        assert_eq!(r.window(), rcvwin);
    }

    /// A window smaller than 10 advmss is the first measure (an 11ad MSS, 7840: 78 400 against
    /// a 65 536 window): a round trip reading a little more than the window grows it.
    #[test]
    fn a_small_window_is_the_first_measure() {
        let mut r = RcvSpace::new(65_536, 16 << 20);
        assert_eq!(r.on_read(ms(0), 30_000, Some(ms(3)), 7840), None);
        let copied = 70_000u64;
        let mut rcvwin = 2 * copied;
        rcvwin += 2 * (rcvwin * (copied - 65_536) / 65_536);
        assert_eq!(r.on_read(ms(3), 40_000, Some(ms(3)), 7840), Some(rcvwin));
    }

    /// A subflow's own buffer (tcp_rcvbuf_grow): it starts at tcp_rmem[1]'s window less one
    /// advmss, takes no part before its transfer begins, grows from its own last measure when
    /// the connection's grows, and never shrinks.
    #[test]
    fn a_subflow_buffer_grows_from_its_own_measure() {
        let r = RcvSpace::new(117_248, 234_496);
        let mut b = r.subflow_buffer(MSS);
        assert_eq!(b.clamp(), 117_248 - 1448);
        b.grow(60_000, 234_496);
        assert_eq!(b.clamp(), 117_248 - 1448, "not begun: no growth");
        b.begin(65_535);
        assert_eq!(b.space, 14_480, "10 advmss");
        // 2 x 30 000 + 2 x (2 x 30 000) x (30 000 - 14 480) / 14 480 = 188 618.
        b.grow(30_000, 234_496);
        assert_eq!(b.clamp(), 188_618);
        // A smaller measure: the u32 difference wraps, the growth is the ceiling's.
        b.grow(20_000, 234_496);
        assert_eq!(b.clamp(), 234_496);
        b.grow(20_000, 234_496);
        assert_eq!(b.clamp(), 234_496, "never shrinks");
    }

    /// The initial window never exceeds the ceiling (tcp_rmem[2] below tcp_rmem[1]).
    #[test]
    fn the_initial_window_is_capped() {
        assert_eq!(RcvSpace::new(117_248, 50_000).window(), 50_000);
    }
}
