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

use super::MpConn;
use crate::scenario::Kernel;
use crate::sim::Simulation;
use crate::tcp::sndbuf::{Autotuned, WMEM_DEFAULT, WMEM_MIN};

/// How a connection's send buffer is sized.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(in crate::sim) enum ConnSndbuf {
    /// SO_SNDBUF: fixed.
    Fixed,
    /// Autotuned from the subflows, up to `tcp_wmem[2]` per subflow.
    Auto { wmem_max: u64 },
}

impl ConnSndbuf {
    /// The buffer before any subflow has grown one (the msk socket's `tcp_wmem[1]`).
    pub(in crate::sim) fn initial(self, fixed: u64) -> u64 {
        match self {
            ConnSndbuf::Fixed => fixed,
            ConnSndbuf::Auto { .. } => WMEM_DEFAULT,
        }
    }
}

/// The connection's buffer from its subflows' (established) autotuned buffers and what it had.
pub(in crate::sim) fn conn_sndbuf(kernel: Kernel, wmem_max: u64, subflows: impl Iterator<Item = u64>) -> u64 {
    match kernel {
        Kernel::V09x => wmem_max,
        Kernel::Upstream => WMEM_MIN + subflows.sum::<u64>(),
    }
}

impl Simulation {
    /// Grows each established subflow's autotuned buffer with its window and sizes the
    /// connection's from them (before a scheduling decision reads it).
    pub(in crate::sim) fn sync_sndbuf(&mut self, c: u16) {
        let cn: &MpConn = &self.conns[c as usize];
        let ConnSndbuf::Auto { wmem_max } = cn.sndbuf_rule else {
            return;
        };
        let mut grown = [0u64; 16];
        let n = cn.subs.len().min(grown.len());
        for (j, g) in grown.iter_mut().enumerate().take(n) {
            let st = &cn.subs[j];
            if !st.established {
                continue;
            }
            let s = self.flows[st.flow as usize].sender.as_ref().expect("subflows are TCP");
            let mut b: Autotuned = st.sndbuf;
            *g = b.grow(s.w.cwnd, s.mss(), s.sndbuf_expand_factor(), wmem_max);
        }
        let cn = &mut self.conns[c as usize];
        for (j, &g) in grown.iter().enumerate().take(n) {
            if g > 0 {
                cn.subs[j].sndbuf.grow_to(g);
            }
        }
        cn.sndbuf = conn_sndbuf(cn.kernel, wmem_max, grown.iter().take(n).copied());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn v09x_caps_at_wmem_max_and_upstream_adds_the_subflows_up() {
        const MB: u64 = 1 << 20;
        let sum = |k: Kernel, subs: &[u64]| conn_sndbuf(k, 4 * MB, subs.iter().copied());
        // Two subflows grown to 3 MB and 4 MB, tcp_wmem[2] = 4 MB.
        assert_eq!(sum(Kernel::V09x, &[3 * MB, 4 * MB]), 4 * MB);
        assert_eq!(sum(Kernel::Upstream, &[3 * MB, 4 * MB]), WMEM_MIN + 7 * MB);
        // Early on, upstream has the sum of small subflow buffers; v0.9x its cap already.
        assert_eq!(sum(Kernel::Upstream, &[40_000, 30_000]), WMEM_MIN + 70_000);
        assert_eq!(sum(Kernel::V09x, &[40_000]), 4 * MB);
        assert_eq!(ConnSndbuf::Fixed.initial(123), 123);
        assert_eq!(ConnSndbuf::Auto { wmem_max: MB }.initial(123), WMEM_DEFAULT);
    }
}
