//! The correctness oracle: at the end of a run every flow is checked (packet conservation,
//! TCP's byte stream, the SACK scoreboard, the interval bins against the bytes delivered) and
//! the verdicts go into summary.json under `invariants`; a failed check fails the run.

use super::mptcp::CheckFn;
use super::Simulation;
use crate::link::Link;
use crate::packet::Kind;
use crate::scenario::FlowKind;
use serde_json::Value;

impl Simulation {
    /// The oracle's checks on internal flow `i` (a TCP or UDP flow, or an MPTCP subflow; its
    /// connection's own checks are in sim/mptcp/output.rs, `conn_summary`), recorded through `check`
    /// in summary.json's order. Returns the flow's data packets still in the network.
    pub(super) fn check_flow(&self, i: usize, check: &mut CheckFn<'_>, checks: &mut Vec<Value>) -> u64 {
        let f = &self.flows[i];
        let c = &f.counters;
        let pkt_kind = if f.kind == FlowKind::Tcp { Kind::Data } else { Kind::Udp };
        let in_network: u64 = self.links.iter().map(|l| l.count_in_network(i as u16, pkt_kind)).sum();
        // Conservation: every data packet sent arrived, was dropped, or is still in the network.
        let conserved = c.data_sent == c.data_arrived + c.data_dropped + in_network;
        check(
            &f.name,
            "packet-conservation",
            conserved,
            format!(
                "sent {} = arrived {} + dropped {} + in network {}",
                c.data_sent, c.data_arrived, c.data_dropped, in_network
            ),
            checks,
        );
        let binned = f.bins.total();
        if let (Some(s), Some(r)) = (&f.sender, &f.receiver) {
            let delivered = r.check.delivered;
            let stream_ok =
                !c.delivered_unsent && s.snd_una <= r.rcv_nxt() && r.rcv_nxt() == delivered && r.rcv_nxt() <= s.snd_nxt;
            check(
                &f.name,
                "tcp-byte-stream",
                stream_ok,
                format!(
                    "receiver got bytes [0, {}) once, in order; sender sent {} and saw {} acknowledged{}",
                    r.rcv_nxt(),
                    s.snd_nxt,
                    s.snd_una,
                    if c.delivered_unsent { "; a delivery covered bytes never sent" } else { "" }
                ),
                checks,
            );
            check(
                &f.name,
                "sack-scoreboard",
                s.scoreboard_consistent(),
                "sender's SACK/lost/retransmit counters match its segment flags".into(),
                checks,
            );
            check(
                &f.name,
                "interval-accounting",
                binned == delivered,
                format!("interval bins sum to {binned} of {delivered} delivered bytes"),
                checks,
            );
        } else {
            check(
                &f.name,
                "interval-accounting",
                binned == c.udp_bytes_received,
                format!("interval bins sum to {binned} of {} received bytes", c.udp_bytes_received),
                checks,
            );
        }
        in_network
    }
}
