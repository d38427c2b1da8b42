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

/// tcp_sndbuf_expand's worst-case memory per segment (net/ipv4/tcp_input.c: "each frame consumes
/// one skb and skb->head is kmalloced using power of two area of memory"):
/// `roundup_pow_of_two(MSS + MAX_TCP_HEADER + SKB_DATA_ALIGN(sizeof(struct skb_shared_info)))`
/// plus `SKB_DATA_ALIGN(sizeof(struct sk_buff))`. On x86_64 without WLAN, Hyper-V or IP tunnels
/// LL_MAX_HEADER is 32 (include/linux/netdevice.h), so MAX_TCP_HEADER is L1_CACHE_ALIGN(128 +
/// 32) = 192 (include/net/tcp.h); skb_shared_info takes 320 bytes and sk_buff 256 once aligned.
/// Checked on the emulating kernel (Linux 6.18; docs/models.md, MPTCP, the connection's send
/// buffer): a fresh Cubic socket over a 1500-byte MTU shows tb 46080 = 2 x 10 x 2304 in `ss -m`.
const MAX_TCP_HEADER: u32 = 192;
const SKB_SHINFO_BYTES: u32 = 320;
const SKB_STRUCT_BYTES: u32 = 256;

pub fn per_mss_memory(mss: u32) -> u32 {
    // The model's MSS stands for max(mss_clamp, mss_cache): they differ by the options (<= 40
    // bytes), which moves the power of two only for an MTU within 40 bytes of one.
    (mss + MAX_TCP_HEADER + SKB_SHINFO_BYTES).next_power_of_two() + SKB_STRUCT_BYTES
}

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
    fn per_mss_memory_is_the_kernels_worst_case_skb() {
        // 1448 + 192 + 320 = 1960 -> 2048, + 256: `ss -m` tb 46080 = 2 x 10 x 2304 at cwnd 10.
        assert_eq!(per_mss_memory(1448), 2304);
        assert_eq!(per_mss_memory(1428), 2304);
        assert_eq!(per_mss_memory(7860), 16_640);
    }

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
