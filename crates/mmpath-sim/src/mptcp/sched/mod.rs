//! MPTCP packet schedulers behind one trait.
//!
//! A scheduler sees a read-only snapshot of the connection (`ConnView`) and of every subflow
//! (`SubflowView`) and answers one question at a time: which subflow gets the next chunk of
//! connection data (`select`), or none for now (wait). The connection calls it in a loop
//! while it has data to send and the scheduler keeps choosing a subflow; every chosen chunk
//! (`burst_bytes` of the chosen subflow) is appended to that subflow's send queue and mapped
//! to data sequence numbers. Schedulers may also ask the connection for side effects through
//! `SchedAction` (penalize a subflow, opportunistic retransmission, clear pf, restore cwnd,
//! take back a subflow's unsent queue) and receive hooks for ACKs, RTOs, link events and a
//! periodic tick.
//!
//! Which subflows are *available* differs by kernel (docs/facts.md, MPTCP): the schedulers decide
//! that themselves from the views, so each can follow its own source.

pub mod amuse;
pub mod blest;
pub mod ecf;
pub mod energy;
pub mod fixedratio;
pub mod minrtt;
pub mod musher;
pub mod ratio;
pub mod redundant;
pub mod roundrobin;
pub mod upstream;

use crate::time::Time;

/// What a scheduler knows about one subflow, refreshed before every call.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct SubflowView {
    /// Index of the subflow in the connection (what `select` returns).
    pub id: usize,
    /// Index of the path (radio interface) the subflow runs over.
    pub path: u16,
    /// Handshake done (MP_CAPABLE or MP_JOIN completed): it may carry data.
    pub established: bool,
    /// Backup flag (MP_JOIN or MP_PRIO): used only when no non-backup subflow is available.
    pub backup: bool,
    /// linux-v0.9x "potentially failed": set on an RTO, cleared by a valid packet from the peer.
    pub pf: bool,
    /// linux-upstream stale: no progress for stale_loss_cnt retransmit intervals.
    pub stale: bool,
    /// The subflow is in TCP's Loss state (recovering from an RTO).
    pub in_loss: bool,
    /// Congestion window and slow-start threshold, in packets.
    pub cwnd: u32,
    pub ssthresh: u32,
    /// Packets in flight (Linux tcp_packets_in_flight).
    pub in_flight: u32,
    /// Bytes handed to the subflow and not yet sent (its send queue beyond snd_nxt).
    pub queued_bytes: u64,
    /// Bytes sent and not yet acknowledged at subflow level.
    pub unacked_bytes: u64,
    pub mss: u32,
    /// Smoothed RTT and its variation, ns; 0 = no sample yet.
    pub srtt_ns: u64,
    pub rttvar_ns: u64,
    /// Linux sk_pacing_rate as the stack computes it (cwnd x mss / srtt x 1.2, or x 2 in slow
    /// start), bits/s; 0 before the first RTT sample.
    pub pacing_rate_bps: u64,
    /// Bytes acknowledged on this subflow so far (rate estimates take differences).
    pub delivered_bytes: u64,
    /// The subflow's interface is up (no blockage / outage reported by the driver).
    pub link_up: bool,
    /// The subflow's interface is off channel for a scan right now.
    pub scanning: bool,
    /// TCP Small Queues holds the subflow back: enough of its data waits in the host's queue
    /// (TSQ_THROTTLED; v0.9x mptcp_is_temp_unavailable skips such a subflow).
    pub throttled: bool,
}

/// The largest skb the sender builds: GSO_MAX_SIZE (65536, include/linux/netdevice.h) - 1 -
/// MAX_TCP_HEADER (320 on x86_64 with wireless and IP tunnels configured:
/// L1_CACHE_ALIGN(128 + LL_MAX_HEADER 96 + 48), include/net/tcp.h, include/linux/netdevice.h),
/// the bound tcp_xmit_size_goal (net/ipv4/tcp.c) starts from.
pub const SKB_MAX_PAYLOAD: u64 = 65_536 - 1 - 320;

/// The meta socket's skb size, bytes: v0.9x's tcp_sendmsg fills skbs of the size goal, which
/// mptcp_xmit_size_goal (net/mptcp/mptcp_output.c) takes as the largest subflow's
/// tcp_xmit_size_goal at the meta MSS (mptcp_current_mss: the largest subflow MSS): whole
/// meta-MSS segments within SKB_MAX_PAYLOAD. (tcp_bound_to_half_wnd would lower it under a
/// peer window below 128 KiB; not modelled.)
pub fn meta_skb_bytes(meta_mss: u32) -> u64 {
    let m = meta_mss.max(1) as u64;
    (SKB_MAX_PAYLOAD / m * m).max(m)
}

/// The meta MSS (mptcp_current_mss): the largest MSS of the established subflows.
pub fn meta_mss(sfs: &[SubflowView]) -> Option<u32> {
    sfs.iter().filter(|v| v.established).map(|v| v.mss).max()
}

/// Bytes v0.9x's `mptcp_next_segment` (net/mptcp/mptcp_sched.c) lets the chosen subflow take
/// of a meta skb of `skb` bytes in one decision: as many whole segments as tcp_cwnd_test
/// allows (the cwnd's free packets, at most half the cwnd: net/ipv4/tcp_output.c), up to the
/// skb. At least one segment (the scheduler chose a subflow with room). Deviation: where the
/// cwnd would take the whole skb the kernel hands over the skb with its sub-MSS tail (the
/// meta skb is cut at the meta MSS, the larger subflow's); here only its whole segments go,
/// and the rest starts the next decision.
pub fn next_segment_bytes(sf: &SubflowView, skb: u64) -> u64 {
    let mss = sf.mss.max(1) as u64;
    let segs = if sf.in_flight >= sf.cwnd { 1 } else { (sf.cwnd >> 1).max(1).min(sf.cwnd - sf.in_flight) as u64 };
    (segs * mss).min(skb / mss * mss).max(mss)
}

impl SubflowView {
    /// cwnd has room beyond what is in flight and already queued, and TSQ is not holding the
    /// subflow back (v0.9x mptcp_is_temp_unavailable).
    pub fn has_cwnd_room(&self) -> bool {
        !self.throttled && !self.cwnd_full()
    }

    /// What is in flight and queued fills the cwnd: in_flight + ceil(queued / mss) >= cwnd,
    /// without the division (this runs for every subflow on every decision): ceil(q / m) <= k
    /// exactly when q <= k * m.
    pub fn cwnd_full(&self) -> bool {
        self.in_flight >= self.cwnd
            || self.queued_bytes > (self.cwnd - self.in_flight - 1) as u64 * self.mss.max(1) as u64
    }
}

/// What a scheduler knows about the connection as a whole.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ConnView {
    /// Application bytes written but not yet assigned to any subflow.
    pub unassigned_bytes: u64,
    /// Bytes still allowed by the peer's data-level receive window (from the next new DSN).
    pub send_window_free_bytes: u64,
    /// Data sent and not yet data-ACKed (connection level).
    pub data_in_flight_bytes: u64,
    /// The next chunk to assign is a reinjection (data of a failed subflow), not new data.
    pub reinjecting: bool,
    /// Data ACKed at connection level so far (bytes).
    pub data_acked_bytes: u64,
    /// Connection send-buffer bytes free (sndbuf minus unacknowledged data).
    pub sndbuf_free_bytes: u64,
    /// The subflow that carried the connection's head-of-line data: the oldest byte sent and
    /// not yet data-ACKed (v0.9x: the first subflow in the path_mask of the meta write queue's
    /// head). None when nothing is data-unacknowledged. Read by the v0.9x-family schedulers'
    /// penalization and opportunistic retransmission (mptcp_rcv_buf_optimization): the
    /// connection must honour `ReinjectHeadOfLine(f)` only if that segment was not already
    /// sent on `f` (the path_mask test), since this field names one carrier only.
    pub hol_subflow: Option<usize>,
}

/// Side effects a scheduler asks the connection for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SchedAction {
    /// minRTT penalization (v0.9x mptcp_rcv_buf_optimization): cwnd = max(cwnd / 2, 1), and
    /// ssthresh halved (at least 2) only if cwnd was at or above it; at most once per RTT.
    Penalize(usize),
    /// Opportunistic retransmission: send the connection's head-of-line unacknowledged data
    /// again on this subflow.
    ReinjectHeadOfLine(usize),
    /// Clear the subflow's pf / stale flag.
    ClearPf(usize),
    /// Restore the subflow's cwnd and ssthresh to what they were before its last RTO, and
    /// retransmit now instead of waiting for the backed-off timer.
    RestoreCwnd(usize),
    /// Take the subflow's unsent send queue back to the connection (it is reassigned).
    Reclaim(usize),
}

/// Link events the connection forwards to its scheduler.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinkEvent {
    Down,
    Up,
    ScanStart,
    ScanEnd,
}

pub trait Scheduler: Send + Sync {
    fn name(&self) -> &str;

    /// The subflow that gets the next chunk, or None to wait until something changes (an ACK,
    /// a timer, a link event). Called repeatedly while it returns Some and data remains.
    fn select(&mut self, now: Time, conn: &ConnView, sfs: &[SubflowView], act: &mut Vec<SchedAction>) -> Option<usize>;

    /// Bytes to assign to `sf` in one decision: one MSS unless the scheduler bursts. Not read
    /// for a scheduler that `hands_out_skbs`.
    fn burst_bytes(&self, sf: &SubflowView) -> u64 {
        sf.mss as u64
    }

    /// The scheduler's choice takes a whole meta skb, or as much of it as the subflow's cwnd
    /// allows (`next_segment_bytes`), as v0.9x's default `mptcp_next_segment` gives it: minRTT
    /// and the schedulers built on it (BLEST, ECF). The ratio family and round-robin have
    /// their own next_segment with a segment quota, and keep `burst_bytes`.
    fn hands_out_skbs(&self) -> bool {
        false
    }

    /// Send every chunk on all available subflows (the redundant scheduler).
    fn redundant(&self) -> bool {
        false
    }

    /// Whether the scheduler reads `SubflowView::pacing_rate_bps`. Computing it costs a
    /// division per subflow per decision, so for a scheduler that says no the connection
    /// leaves it 0. Yes unless a scheduler knows better (schedulers written outside the core
    /// get the real rate).
    fn reads_pacing_rate(&self) -> bool {
        true
    }

    /// `acked_bytes` newly acknowledged on subflow `sf`.
    fn on_ack(&mut self, _now: Time, _sf: usize, _acked_bytes: u64) {}

    /// Subflow `sf` had a retransmission timeout.
    fn on_rto(&mut self, _now: Time, _sf: usize) {}

    /// A link event on subflow `sf`'s interface.
    fn on_link_event(
        &mut self,
        _now: Time,
        _sf: usize,
        _ev: LinkEvent,
        _conn: &ConnView,
        _sfs: &[SubflowView],
        _act: &mut Vec<SchedAction>,
    ) {
    }

    /// When the scheduler next wants `on_tick` (MuSher samples the rate periodically).
    fn next_tick(&self, _now: Time) -> Option<Time> {
        None
    }

    /// The periodic tick asked for by `next_tick`.
    fn on_tick(&mut self, _now: Time, _conn: &ConnView, _sfs: &[SubflowView], _act: &mut Vec<SchedAction>) {}

    /// Whether this scheduler arbitrates scan requests on its subflows' interfaces (AMuSe
    /// SCAN): the scan then waits until the subflow's send queue is empty (seed 004: "stops the
    /// assignment of packets to subflow about to undertake scanning and waits for the
    /// subflow-level send-queue to be emptied out").
    fn arbitrates_scans(&self) -> bool {
        false
    }

    /// Scheduler-specific state for the timeline (e.g. the current ratio); NaN if none.
    fn metric(&self) -> f64 {
        f64::NAN
    }
}

/// Which scheduler a flow names: the scenario's enum (scenario/mptcp.rs), which serde reads;
/// `build` below makes the scheduler it names.
pub use crate::scenario::SchedName;

/// The parameters the schedulers that take any read (from the scenario's flow entry).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SchedParams {
    /// Segments per 100 for the first subflow: fixedratio's ratio, MuSher's and AMuSe's
    /// starting one (`None`: an even split), the energy-aware scheduler's fixed one if set.
    pub ratio: Option<u32>,
    /// AMuSe's three mechanisms (seed 004): scan, contention, blockage.
    pub amuse: [bool; 3],
    /// Energy-aware: the paths' maximum rates (11ad first), the direction, and the two
    /// subflows' MSS (its ratios are shares of bytes; the rounds count segments).
    pub max_mbps: [f64; 2],
    pub uplink: bool,
    pub mss: [u32; 2],
}

impl Default for SchedParams {
    fn default() -> Self {
        SchedParams { ratio: None, amuse: [true; 3], max_mbps: [0.0; 2], uplink: false, mss: [0; 2] }
    }
}

/// Builds the scheduler `name` names (config = factory).
pub fn build(name: SchedName, p: &SchedParams) -> Box<dyn Scheduler> {
    // fixedratio, MuSher and AMuSe start from an even split unless told.
    let ratio = p.ratio.unwrap_or(50);
    match name {
        SchedName::Default | SchedName::Upstream => Box::new(upstream::Upstream::new()),
        SchedName::Minrtt => Box::new(minrtt::MinRtt::new()),
        SchedName::Roundrobin => Box::new(roundrobin::RoundRobin::new()),
        SchedName::Redundant => Box::new(redundant::Redundant::new()),
        SchedName::Blest => Box::new(blest::Blest::new()),
        SchedName::Ecf => Box::new(ecf::Ecf::new()),
        SchedName::Fixedratio => Box::new(fixedratio::FixedRatio::new(ratio)),
        SchedName::Musher => Box::new(musher::MuSher::new(ratio)),
        SchedName::Amuse => {
            let [scan, contention, blockage] = p.amuse;
            Box::new(amuse::AMuSe::new(ratio, scan, contention, blockage))
        }
        SchedName::Energy => Box::new(energy::EnergyAware::new(p.ratio, p.max_mbps, p.uplink, p.mss)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `has_cwnd_room` is in_flight + ceil(queued / mss) < cwnd, computed without dividing.
    #[test]
    fn cwnd_room_counts_queued_bytes_in_whole_segments() {
        for cwnd in 0..6u32 {
            for in_flight in 0..8u32 {
                for queued in 0..(4 * 1448 + 3) {
                    for mss in [0u32, 1, 1448] {
                        let v = SubflowView { cwnd, in_flight, queued_bytes: queued, mss, ..Default::default() };
                        let want = (in_flight as u64 + queued.div_ceil(mss.max(1) as u64)) < cwnd as u64;
                        assert_eq!(
                            v.has_cwnd_room(),
                            want,
                            "cwnd {cwnd} in flight {in_flight} queued {queued} mss {mss}"
                        );
                    }
                }
            }
        }
        let v = SubflowView { cwnd: 10, throttled: true, mss: 1448, ..Default::default() };
        assert!(!v.has_cwnd_room());
    }

    /// Only the upstream default scheduler reads the views' pacing rate (its burst sizing);
    /// the others let the connection skip computing it. A scheduler that does not say gets it.
    #[test]
    fn only_the_upstream_scheduler_asks_for_the_pacing_rate() {
        let p = SchedParams { max_mbps: [1000.0, 500.0], mss: [1448, 1448], ..Default::default() };
        assert!(build(SchedName::Default, &p).reads_pacing_rate());
        assert!(build(SchedName::Upstream, &p).reads_pacing_rate());
        for k in [
            SchedName::Minrtt,
            SchedName::Roundrobin,
            SchedName::Redundant,
            SchedName::Blest,
            SchedName::Ecf,
            SchedName::Fixedratio,
            SchedName::Musher,
            SchedName::Amuse,
            SchedName::Energy,
        ] {
            assert!(!build(k, &p).reads_pacing_rate(), "{k:?}");
        }
        struct Outside;
        impl Scheduler for Outside {
            fn name(&self) -> &str {
                "outside"
            }
            fn select(&mut self, _: Time, _: &ConnView, _: &[SubflowView], _: &mut Vec<SchedAction>) -> Option<usize> {
                None
            }
        }
        assert!(Outside.reads_pacing_rate());
    }
}

#[cfg(test)]
mod next_segment_tests {
    use super::*;

    fn view(cwnd: u32, in_flight: u32, mss: u32) -> SubflowView {
        SubflowView { cwnd, in_flight, mss, established: true, ..Default::default() }
    }

    /// The meta skb: whole meta-MSS segments within 64 KiB less the headers' reserve.
    #[test]
    fn the_meta_skb_is_whole_meta_segments_below_64_kib() {
        assert_eq!(meta_skb_bytes(7_840), 8 * 7_840);
        assert_eq!(meta_skb_bytes(1_448), 45 * 1_448);
        assert_eq!(meta_skb_bytes(70_000), 70_000, "at least one segment");
    }

    /// tcp_cwnd_test's quota: the cwnd's free packets, at most half the cwnd, within the skb.
    #[test]
    fn a_decision_takes_what_the_cwnd_allows_of_one_skb() {
        let skb = meta_skb_bytes(7_840);
        assert_eq!(next_segment_bytes(&view(20, 4, 1_000), skb), 10 * 1_000, "half the cwnd");
        assert_eq!(next_segment_bytes(&view(20, 15, 1_000), skb), 5 * 1_000, "the free packets");
        assert_eq!(next_segment_bytes(&view(200, 0, 1_428), skb), 43 * 1_428, "whole segments of the skb");
        assert_eq!(next_segment_bytes(&view(10, 10, 1_428), skb), 1_428, "at least one segment");
    }
}
