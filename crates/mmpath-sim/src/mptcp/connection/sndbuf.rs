//! The connection-level send buffer: how much data the application may have written and not yet
//! had data-ACKed. With SO_SNDBUF set it is that number; autotuned, each kernel builds it from its
//! subflows' own autotuned buffers (tcp/sndbuf.rs, grown with each subflow's window):
//!
//! - linux-v0.9x (mptcp_update_sndbuf, net/mptcp/mptcp_ctrl.c, v0.90-v0.95): the sum over the
//!   subflows that can send, capped at `tcp_wmem[2]`, and never below what the meta socket had.
//!   v0.9x grows each subflow's buffer per segment by cwnd x max srtt / own srtt at over twice
//!   the MSS in truesize (mptcp_check_snd_buf), so the cap is reached within a few RTTs
//!   (docs/models.md): the model gives the meta socket `tcp_wmem[2]` from the start;
//! - linux-upstream (__mptcp_sync_sndbuf, net/mptcp/protocol.h, since Linux 6.7): `tcp_wmem[0]`
//!   plus the sum over the subflows, uncapped ("the msk max wmem limit is <nr_subflows> * tcp
//!   wmem[2]"). With two subflows each grown to `tcp_wmem[2]`, twice what one TCP socket may hold;
//!   the emulator showed it (x-kernel: ~5.8 MB in flight on this machine's kernel against the
//!   4 MB a `tcp_wmem[2]` cap allowed the model).

use super::{Connection, SubflowIo};
use crate::tcp::sndbuf::{per_mss_memory, WMEM_DEFAULT, WMEM_MIN};

/// How a connection's send buffer is sized.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ConnSndbuf {
    /// SO_SNDBUF, or v0.9x's `tcp_wmem[2]`: fixed.
    Fixed,
    /// Upstream's: `tcp_wmem[0]` plus the subflows' autotuned buffers, each up to `tcp_wmem[2]`.
    UpstreamSum { wmem_max: u64 },
}

impl ConnSndbuf {
    /// The buffer before any subflow has grown one (the msk socket's `tcp_wmem[1]`).
    pub fn initial(self, fixed: u64) -> u64 {
        match self {
            ConnSndbuf::Fixed => fixed,
            ConnSndbuf::UpstreamSum { .. } => WMEM_DEFAULT,
        }
    }
}

/// Upstream's connection buffer from its subflows' (established) autotuned buffers.
fn upstream_sndbuf(subflows: impl Iterator<Item = u64>) -> u64 {
    WMEM_MIN + subflows.sum::<u64>()
}

impl Connection {
    /// Grows each established subflow's autotuned buffer with its window and sizes the
    /// connection's from them (before a scheduling decision reads it).
    pub(super) fn sync_sndbuf(&mut self, io: &impl SubflowIo) {
        let ConnSndbuf::UpstreamSum { wmem_max } = self.sndbuf_rule else {
            return;
        };
        let grown = self.subs.iter_mut().filter(|st| st.established).map(|st| {
            let s = io.sender(st.flow);
            // Each subflow's sk_sndbuf counts its segments at their worst-case memory
            // (tcp_sndbuf_expand's per_mss), what fills the msk's buffer is page fragments
            // (mptcp_sendmsg: truesize ~ payload): so many payload bytes fit.
            st.sndbuf.grow(s.w.cwnd, per_mss_memory(s.mss()), s.sndbuf_expand_factor(), wmem_max)
        });
        self.sndbuf = upstream_sndbuf(grown);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn upstream_adds_the_subflows_up() {
        const MB: u64 = 1 << 20;
        // Two subflows grown to 3 MB and 4 MB (tcp_wmem[2] = 4 MB): more than one socket's cap.
        assert_eq!(upstream_sndbuf([3 * MB, 4 * MB].into_iter()), WMEM_MIN + 7 * MB);
        // Early on, the sum of small subflow buffers.
        assert_eq!(upstream_sndbuf([40_000, 30_000].into_iter()), WMEM_MIN + 70_000);
        assert_eq!(ConnSndbuf::Fixed.initial(123), 123);
        assert_eq!(ConnSndbuf::UpstreamSum { wmem_max: MB }.initial(123), WMEM_DEFAULT);
    }
}
