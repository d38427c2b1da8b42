//! Send-buffer autotuning, as Linux's tcp_sndbuf_expand (net/ipv4/tcp_input.c, 4.10 and
//! current alike): room for `sndbuf_expand` congestion windows (ops->sndbuf_expand: 2, "Cubic
//! needs 1.7 factor, rounded to 2"; BBR 3) of at least TCP_INIT_CWND segments, never above
//! `tcp_wmem[2]`. The kernel only ever raises sk_sndbuf (`if (sk->sk_sndbuf < sndmem)`): a
//! congestion-window cut (fast recovery, an RTO's cwnd of 1) leaves the buffer, and the data
//! queued in it, where they were, so F-RTO's step 2.b and a tail loss probe still find new data
//! to send. Linux counts skb truesize against sk_sndbuf; payload bytes on both sides here.

/// `tcp_wmem[1]`: the send buffer before autotuning grows it.
pub const WMEM_DEFAULT: u64 = 16_384;
/// `tcp_wmem[0]`: the least a socket is given (upstream MPTCP's connection buffer starts there).
pub const WMEM_MIN: u64 = 4_096;
/// TCP_INIT_CWND (include/net/tcp.h): tcp_sndbuf_expand sizes for at least this many segments.
const TCP_INIT_CWND: u64 = 10;

/// The buffer tcp_sndbuf_expand asks for at this window: `factor` windows of `cwnd` (at least
/// TCP_INIT_CWND) segments of `mss`, between `tcp_wmem[1]` and `tcp_wmem[2]`.
pub fn expand(cwnd: u32, mss: u32, factor: u32, wmem_max: u64) -> u64 {
    (factor as u64 * (cwnd as u64).max(TCP_INIT_CWND) * mss as u64).max(WMEM_DEFAULT).min(wmem_max)
}

/// An autotuned send buffer: grows to what the window asks for, never shrinks.
#[derive(Debug, Clone, Copy, Default)]
pub struct Autotuned {
    bytes: u64,
}

impl Autotuned {
    /// The buffer after the window has been `cwnd` (tcp_sndbuf_expand on this ACK).
    pub fn grow(&mut self, cwnd: u32, mss: u32, factor: u32, wmem_max: u64) -> u64 {
        self.bytes = self.bytes.max(expand(cwnd, mss, factor, wmem_max));
        self.bytes
    }

    /// The buffer now, had the window been `cwnd` at its last ACK (without recording it).
    pub fn at(&self, cwnd: u32, mss: u32, factor: u32, wmem_max: u64) -> u64 {
        self.bytes.max(expand(cwnd, mss, factor, wmem_max))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grows_with_the_window_and_keeps_its_size_after_a_cut() {
        let mut b = Autotuned::default();
        // At the initial window: two windows of 10 segments.
        assert_eq!(b.grow(10, 1448, 2, 4 << 20), 2 * 10 * 1448);
        assert_eq!(b.grow(500, 1448, 2, 4 << 20), 2 * 500 * 1448);
        // An RTO's cwnd of 1: the buffer stays (Linux only raises sk_sndbuf).
        assert_eq!(b.grow(1, 1448, 2, 4 << 20), 2 * 500 * 1448);
        assert_eq!(b.at(1, 1448, 2, 4 << 20), 2 * 500 * 1448);
        // tcp_wmem[2] caps it; BBR asks for three windows.
        assert_eq!(b.grow(5000, 1448, 2, 4 << 20), 4 << 20);
        assert_eq!(expand(100, 1000, 3, 1 << 30), 300_000);
        // Never below tcp_wmem[1].
        assert_eq!(expand(1, 100, 2, 1 << 30), WMEM_DEFAULT);
    }
}
