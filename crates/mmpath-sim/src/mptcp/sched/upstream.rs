//! The upstream Linux MPTCP default scheduler (kernel 6.x, net/mptcp/protocol.c,
//! `mptcp_subflow_get_send`, called from `__mptcp_push_pending` / `__subflow_push_pending`).
//!
//! Rule: among active subflows (established and not stale, `mptcp_subflow_active`), pick the
//! one with the lowest linger time, `sk_wmem_queued << 32 / avg_pacing_rate` (how long the
//! data already queued on it will take to leave), separately for normal and backup subflows;
//! the backup pick is used only when no normal subflow is active. If the picked subflow has no
//! send-buffer room (`!sk_stream_memory_free`), wait: the kernel does not fall back to another
//! subflow. Otherwise it gets a burst of up to MPTCP_SEND_BURST_SIZE bytes.
//!
//! Contract with the connection:
//! - Subflow ids are in creation order: upstream's conn_list is appended to (list_add_tail),
//!   so with strict `<` ties go to the oldest (lowest id) subflow.
//! - `burst_bytes(sf)` is read right after `select` returned `sf`: min(64 KB, data-level window
//!   free at select time, the subflow's send-buffer room), at least one MSS. The connection
//!   still clamps it to the unassigned bytes and, for new data, to the data-level window; with
//!   a closed window the kernel still picks a subflow (for a zero-window probe).
//! - `SubflowView::queued_bytes + unacked_bytes` stand for `sk_wmem_queued`.
//! - No actions are emitted; stale detection and reinjection are the connection's (docs/facts.md).

use super::minrtt::{by_id, ensure_len};
use super::{ConnView, SchedAction, Scheduler, SubflowView};
use crate::tcp::sndbuf::per_mss_memory;
use crate::time::Time;

/// MPTCP_SEND_BURST_SIZE (protocol.c): (1 << 16) - sizeof(struct tcphdr) (20)
/// - MAX_TCP_OPTION_SPACE (40) - sizeof(struct ipv6hdr) (40) - sizeof(struct frag_hdr) (8).
pub const MPTCP_SEND_BURST_SIZE: u64 = (1 << 16) - 20 - 40 - 40 - 8;

/// TCP_INIT_CWND (include/net/tcp.h): tcp_sndbuf_expand sizes for at least this many segments.
const TCP_INIT_CWND: u64 = 10;
/// tcp_wmem[1] and tcp_wmem[2] (docs/facts.md, Linux TCP): initial and maximum autotuned sndbuf.
const WMEM_DEFAULT_BYTES: u64 = 16_384;
const WMEM_MAX_BYTES: u64 = 4 << 20;

/// Send-buffer autotuning as tcp_sndbuf_expand does it: room for two congestion windows
/// (`sndbuf_expand` factor 2, "Cubic needs 1.7 factor, rounded to 2") of at least
/// TCP_INIT_CWND segments, each counted at its worst-case memory (tcp/sndbuf.rs `per_mss_memory`), never
/// below tcp_wmem[1] nor above tcp_wmem[2]. What fills it, sk_wmem_queued, is the truesize of the
/// subflow's skbs, which MPTCP builds as GSO packets of up to 64 KB (mptcp_sendmsg_frag appends
/// page fragments): within ~2 % of their payload, so it is counted as payload here. The buffer so
/// holds ~3 congestion windows of data at a 1500-byte MTU, not 2: room the default scheduler
/// needs before a subflow with a long linger time gets data (docs/models.md).
fn autotuned_sndbuf_bytes(sf: &SubflowView) -> u64 {
    let segs = (sf.cwnd as u64).max(TCP_INIT_CWND);
    (2 * segs * u64::from(per_mss_memory(sf.mss))).clamp(WMEM_DEFAULT_BYTES, WMEM_MAX_BYTES)
}

/// sk_wmem_queued: everything handed to the subflow and not yet acknowledged.
fn wmem_queued_bytes(sf: &SubflowView) -> u64 {
    sf.queued_bytes + sf.unacked_bytes
}

/// mptcp_subflow_get_send's linger time, `wmem << 32 / pace` (pace > 0), exactly: in u64 when
/// the shifted queue fits (under 4 GB queued: always in practice), a 128-bit division only
/// otherwise (it costs a library call, on every subflow of every decision).
fn linger_time(wmem: u64, pace: u64) -> u128 {
    if wmem >> 32 == 0 {
        u128::from((wmem << 32) / pace)
    } else {
        (u128::from(wmem) << 32) / u128::from(pace)
    }
}

#[derive(Debug, Clone, Copy, Default)]
struct SfState {
    /// mptcp_subflow_context::avg_pacing_rate (same unit as the view, bits/s); 0 = unset.
    avg_pacing_rate: u64,
    /// sk_sndbuf: tcp_sndbuf_expand only ever grows it (a cwnd cut after an RTO leaves it).
    sndbuf_bytes: u64,
}

/// The upstream default scheduler.
#[derive(Debug, Default)]
pub struct Upstream {
    sf: Vec<SfState>,
    /// msk->snd_burst of the last pick.
    snd_burst: u64,
}

impl Upstream {
    pub fn new() -> Self {
        Self::default()
    }

    fn room_bytes(&self, sf: &SubflowView) -> u64 {
        let sndbuf = self.sf.get(sf.id).map_or(0, |s| s.sndbuf_bytes).max(autotuned_sndbuf_bytes(sf));
        sndbuf.saturating_sub(wmem_queued_bytes(sf))
    }
}

impl Scheduler for Upstream {
    fn name(&self) -> &'static str {
        "default"
    }

    fn select(
        &mut self,
        _now: Time,
        conn: &ConnView,
        sfs: &[SubflowView],
        _act: &mut Vec<SchedAction>,
    ) -> Option<usize> {
        ensure_len(&mut self.sf, sfs, SfState::default());
        // best[0]: normal subflows, best[1]: backups (send_info[SSK_MODE_ACTIVE / _BACKUP]).
        let mut best: [(u128, Option<usize>); 2] = [(u128::MAX, None); 2];
        let mut nr_active = 0;
        for sf in sfs {
            let st = &mut self.sf[sf.id];
            st.sndbuf_bytes = st.sndbuf_bytes.max(autotuned_sndbuf_bytes(sf));
            // mptcp_subflow_active: fully established and not stale.
            if !sf.established || sf.stale {
                continue;
            }
            nr_active += usize::from(!sf.backup);
            // "init pacing rate from socket" when the average is unset.
            if st.avg_pacing_rate == 0 {
                st.avg_pacing_rate = sf.pacing_rate_bps;
            }
            // A view rate of 0 means no RTT sample yet. The kernel never sees 0 on a live
            // subflow: sk_pacing_rate starts at ~0UL ("unlimited", sock_init_data) and the
            // handshake's RTT sample sets it. So 0 is read as unlimited: linger time 0.
            let linger = match st.avg_pacing_rate {
                0 => 0,
                pace => linger_time(wmem_queued_bytes(sf), pace),
            };
            let k = usize::from(sf.backup);
            if linger < best[k].0 {
                best[k] = (linger, Some(sf.id));
            }
        }
        // "pick the best backup if no other subflow is active"
        if nr_active == 0 {
            best[0] = best[1];
        }
        let id = best[0].1?;
        let sf = by_id(sfs, id)?;
        let st = &mut self.sf[id];
        let wmem = wmem_queued_bytes(sf);
        // sk_stream_memory_free(ssk) false: no room on the chosen subflow, wait.
        if wmem >= st.sndbuf_bytes {
            return None;
        }
        let burst = MPTCP_SEND_BURST_SIZE.min(conn.send_window_free_bytes);
        self.snd_burst = burst;
        // avg_pacing_rate, weighted by the bytes already queued and the new burst, smooths the
        // rate used for the linger time (kernel: only when the burst is non-zero).
        if burst > 0 && sf.pacing_rate_bps > 0 {
            let num =
                u128::from(st.avg_pacing_rate) * u128::from(wmem) + u128::from(sf.pacing_rate_bps) * u128::from(burst);
            st.avg_pacing_rate = (num / u128::from(burst + wmem)) as u64;
        }
        Some(id)
    }

    /// The burst the kernel pushes before calling the scheduler again: until msk->snd_burst is
    /// used up or the subflow's send buffer is full (__subflow_push_pending checks
    /// sk_stream_memory_free after each fragment, so at least one segment goes out).
    fn burst_bytes(&self, sf: &SubflowView) -> u64 {
        let mss = sf.mss as u64;
        if self.snd_burst == 0 {
            return mss;
        }
        self.snd_burst.min(self.room_bytes(sf)).max(mss).min(MPTCP_SEND_BURST_SIZE)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The u64 linger time is the 128-bit one wherever it is taken, and the 128-bit path
    /// still serves a queue whose shift does not fit.
    #[test]
    fn linger_time_is_the_128_bit_division() {
        let wide = |w: u64, p: u64| (u128::from(w) << 32) / u128::from(p);
        for w in [0, 1, 1448, 65_428, 4 << 20, (1 << 32) - 1, 1 << 32, u64::MAX] {
            for p in [1, 7, 1_000_000, 2_310_000_000, u64::MAX] {
                assert_eq!(linger_time(w, p), wide(w, p), "wmem {w} pace {p}");
            }
        }
    }

    const MSS: u32 = 1448;

    /// Established subflow, pacing `mbps`, `wmem` bytes queued (half unsent, half unacked).
    fn sf(id: usize, mbps: u64, wmem: u64) -> SubflowView {
        SubflowView {
            id,
            established: true,
            cwnd: 100,
            ssthresh: 0x7fff_ffff,
            mss: MSS,
            srtt_ns: 2_000_000,
            pacing_rate_bps: mbps * 1_000_000,
            queued_bytes: wmem / 2,
            unacked_bytes: wmem - wmem / 2,
            link_up: true,
            ..Default::default()
        }
    }

    fn conn() -> ConnView {
        ConnView {
            unassigned_bytes: 1 << 30,
            send_window_free_bytes: 1 << 30,
            sndbuf_free_bytes: 1 << 30,
            ..Default::default()
        }
    }

    fn pick(s: &mut Upstream, sfs: &[SubflowView]) -> Option<usize> {
        s.select(Time::ZERO, &conn(), sfs, &mut Vec::new())
    }

    #[test]
    fn picks_lowest_linger_time_not_lowest_queue_or_highest_rate() {
        // 0: 100 kB at 1000 Mbps = 0.8 ms; 1: 20 kB at 100 Mbps = 1.6 ms.
        assert_eq!(pick(&mut Upstream::new(), &[sf(0, 1000, 100_000), sf(1, 100, 20_000)]), Some(0));
        // 0: 100 kB at 1000 Mbps = 0.8 ms; 1: 5 kB at 100 Mbps = 0.4 ms.
        assert_eq!(pick(&mut Upstream::new(), &[sf(0, 1000, 100_000), sf(1, 100, 5_000)]), Some(1));
        // Equal linger time: the oldest subflow (list_add_tail order, strict <).
        assert_eq!(pick(&mut Upstream::new(), &[sf(0, 100, 10_000), sf(1, 200, 20_000)]), Some(0));
    }

    #[test]
    fn skips_stale_and_unestablished_subflows() {
        let slow = sf(1, 100, 50_000);
        assert_eq!(pick(&mut Upstream::new(), &[SubflowView { stale: true, ..sf(0, 1000, 0) }, slow]), Some(1));
        assert_eq!(pick(&mut Upstream::new(), &[SubflowView { established: false, ..sf(0, 1000, 0) }, slow]), Some(1));
        // pf and cwnd state are not part of the upstream rule: a full cwnd still takes data.
        let full = SubflowView { in_flight: 100, pf: true, ..sf(0, 1000, 0) };
        assert_eq!(pick(&mut Upstream::new(), &[full, slow]), Some(0));
    }

    #[test]
    fn backup_only_when_no_normal_subflow_is_active() {
        let normal = sf(0, 100, 100_000);
        let backup = SubflowView { backup: true, ..sf(1, 1000, 0) };
        assert_eq!(pick(&mut Upstream::new(), &[normal, backup]), Some(0), "active normal beats idle backup");
        assert_eq!(pick(&mut Upstream::new(), &[SubflowView { stale: true, ..normal }, backup]), Some(1));
        assert_eq!(pick(&mut Upstream::new(), &[backup]), Some(1));
    }

    #[test]
    fn no_sndbuf_room_on_the_pick_means_wait() {
        // cwnd 10: sndbuf = 2 x 10 x 2304 = 46080 bytes. Subflow 0 has the lower linger time
        // but a full buffer; the kernel returns NULL rather than use subflow 1.
        let full = SubflowView { cwnd: 10, ..sf(0, 10_000, 46_080) };
        assert_eq!(pick(&mut Upstream::new(), &[full, sf(1, 100, 20_000)]), None);
        let almost = SubflowView { cwnd: 10, ..sf(0, 10_000, 46_079) };
        assert_eq!(pick(&mut Upstream::new(), &[almost, sf(1, 100, 20_000)]), Some(0));
        // A normal subflow without room does not hand over to a backup either.
        let backup = SubflowView { backup: true, ..sf(1, 1000, 0) };
        assert_eq!(pick(&mut Upstream::new(), &[full, backup]), None);
    }

    #[test]
    fn sndbuf_counts_each_segment_at_its_worst_case_memory() {
        // tcp_sndbuf_expand's per_mss: 1448 + 192 + 320 = 1960 -> 2048, + 256. `ss -m` on the
        // emulating kernel: tb 46080 for a fresh Cubic socket (cwnd 10) at MSS 1448.
        assert_eq!(per_mss_memory(1448), 2304);
        assert_eq!(autotuned_sndbuf_bytes(&SubflowView { cwnd: 10, ..sf(0, 100, 0) }), 46_080);
        // 802.11ad's 7912-byte MTU: 7860 + 512 -> 16384, + 256.
        assert_eq!(per_mss_memory(7860), 16_640);
        // A subflow whose cwnd (100) is full keeps taking data up to ~3 windows queued (1448 x
        // 100 x 3 = 434400 < 460800), which is what lets the linger time grow past a slower one's.
        let busy = SubflowView { in_flight: 100, ..sf(0, 1000, 434_400) };
        assert_eq!(pick(&mut Upstream::new(), &[busy]), Some(0));
    }

    #[test]
    fn sndbuf_only_grows_like_tcp_sndbuf_expand() {
        let mut s = Upstream::new();
        // cwnd 100 seen once: sndbuf 460800 bytes.
        assert_eq!(pick(&mut s, &[sf(0, 100, 0)]), Some(0));
        // After an RTO (cwnd 1) 100 kB queued still fit: the buffer did not shrink.
        let cut = SubflowView { cwnd: 1, ..sf(0, 100, 100_000) };
        assert_eq!(pick(&mut s, &[cut]), Some(0));
        // A fresh scheduler (never saw cwnd 100) sizes for TCP_INIT_CWND: 46080 < 100 kB.
        assert_eq!(pick(&mut Upstream::new(), &[cut]), None);
    }

    #[test]
    fn burst_is_64k_bounded_by_sndbuf_room_and_window() {
        let mut s = Upstream::new();
        let big = sf(0, 1000, 0);
        assert_eq!(pick(&mut s, &[big]), Some(0));
        assert_eq!(s.burst_bytes(&big), MPTCP_SEND_BURST_SIZE);
        assert_eq!(MPTCP_SEND_BURST_SIZE, 65_428);
        // cwnd 10: sndbuf 46080, 37120 queued: 8960 bytes of room.
        let small = SubflowView { cwnd: 10, ..sf(0, 1000, 37_120) };
        let mut s = Upstream::new();
        assert_eq!(pick(&mut s, &[small]), Some(0));
        assert_eq!(s.burst_bytes(&small), 8_960);
        // Room below one segment: one segment still goes (memory was free at the check).
        let tight = SubflowView { cwnd: 10, ..sf(0, 1000, 46_020) };
        let mut s = Upstream::new();
        assert_eq!(pick(&mut s, &[tight]), Some(0));
        assert_eq!(s.burst_bytes(&tight), MSS as u64);
        // Data-level window of 5000 bytes bounds the burst.
        let mut s = Upstream::new();
        let c = ConnView { send_window_free_bytes: 5_000, ..conn() };
        assert_eq!(s.select(Time::ZERO, &c, &[big], &mut Vec::new()), Some(0));
        assert_eq!(s.burst_bytes(&big), 5_000);
    }

    #[test]
    fn zero_pacing_rate_reads_as_unlimited() {
        // No RTT sample yet on subflow 1: linger time 0, it is picked despite its queue.
        let fresh = SubflowView { pacing_rate_bps: 0, ..sf(1, 0, 10_000) };
        assert_eq!(pick(&mut Upstream::new(), &[sf(0, 1000, 1_000), fresh]), Some(1));
    }

    #[test]
    fn linger_time_uses_the_smoothed_pacing_rate() {
        let mut s = Upstream::new();
        // Both 20 kB queued; 0 at 1000 Mbps beats 1 at 600 Mbps.
        assert_eq!(pick(&mut s, &[sf(0, 1000, 20_000), sf(1, 600, 20_000)]), Some(0));
        // Subflow 0's instantaneous rate drops to 500 Mbps: its average (still 1000 Mbps)
        // keeps it first once; an instantaneous-rate rule would switch to subflow 1 at once.
        assert_eq!(pick(&mut s, &[sf(0, 500, 20_000), sf(1, 600, 20_000)]), Some(0));
        // Average now (1000 x 20000 + 500 x 65428) / 85428 = 617 Mbps > 600: still 0; then
        // (617 x 20000 + 500 x 65428) / 85428 = 527 Mbps < 600: subflow 1.
        assert_eq!(pick(&mut s, &[sf(0, 500, 20_000), sf(1, 600, 20_000)]), Some(0));
        assert_eq!(pick(&mut s, &[sf(0, 500, 20_000), sf(1, 600, 20_000)]), Some(1));
    }
}
