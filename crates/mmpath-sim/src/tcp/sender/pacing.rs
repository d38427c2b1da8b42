//! Pacing, as Linux's internal pacing with earliest departure times (Linux 4.20+
//! net/ipv4/tcp_output.c: tcp_update_skb_after_send, tcp_pacing_check; the rate from
//! tcp_input.c tcp_update_pacing_rate): when the algorithm asks for it (BBR, SK_PACING_NEEDED)
//! or the scenario turns it on (the fq qdisc or SO_MAX_PACING_RATE), a packet leaves no earlier
//! than the pacing schedule, and the next release time is a timer deadline like the RTO.
//! Also sk_pacing_rate itself, which Linux keeps even without pacing (CUBIC's HyStart and TSQ
//! read it).

use super::TcpSender;
use crate::time::Time;

/// Linux's pacing ratios for sk_pacing_rate, which the stack sets even without fq: the sysctls
/// net.ipv4.tcp_pacing_ss_ratio (default 200 %) and tcp_pacing_ca_ratio (default 120 %), added
/// by commit 43e122b014c9 ("tcp: refine pacing rate determination", Linux 4.1); the same
/// defaults in 4.10 (tcp_input.c) and upstream 6.18 (tcp_ipv4.c tcp_sk_init). The simulator has
/// them as constants (no scenario knob): docs/models.md, Pacing.
const PACING_SS_RATIO: f64 = 2.0;
const PACING_CA_RATIO: f64 = 1.2;
/// tcp_update_skb_after_send: the first 10 data segments are not paced ("Original sch_fq does
/// not pace first 10 MSS").
const UNPACED_SEGMENTS: u64 = 10;
/// tcp_tso_autosize's bound, as Linux 4.10 has it: GSO_MAX_SIZE - 1 - MAX_TCP_HEADER bytes of
/// payload per skb (MAX_TCP_HEADER: 320 on x86-64).
const TSO_MAX_BYTES: u64 = 65_536 - 1 - 320;
/// net.ipv4.tcp_min_tso_segs (default 2): the fewest segments tcp_tso_autosize puts in an skb.
const MIN_TSO_SEGS: u32 = 2;

impl TcpSender {
    /// The pacing rate in force, bits/s of payload (None: not pacing, or no rate yet).
    pub fn pacing_rate_bps(&self) -> Option<u64> {
        if !self.pacing {
            return None;
        }
        match self.cc.pacing_rate_bps() {
            Some(r) => Some(r),
            None => self.linux_pacing_rate_bps(),
        }
    }

    /// Linux sk_pacing_rate (tcp_update_pacing_rate), bits/s; 0 before the first RTT sample.
    pub fn stack_pacing_rate_bps(&self) -> u64 {
        self.linux_pacing_rate_bps().unwrap_or(0)
    }

    /// `stack_pacing_rate_bps`, kept from the last call while its inputs (srtt, the packets
    /// it counts and which ratio applies; the MSS is fixed) are the same: TSQ's limit reads it
    /// before every segment and an MPTCP scheduler's view on every decision, mostly between two
    /// ACKs that change them. The same number as a fresh computation, without its float
    /// division.
    pub fn stack_pacing_rate_memo(&mut self) -> u64 {
        let Some(srtt) = self.rtt.srtt() else { return 0 };
        let key = (srtt.ns(), self.pacing_packets(), self.pacing_ss_ratio_applies());
        match self.pacing_memo {
            Some((k, rate)) if k == key => rate,
            _ => {
                let rate = self.stack_pacing_rate_bps();
                self.pacing_memo = Some((key, rate));
                rate
            }
        }
    }

    /// tcp_update_pacing_rate's choice of ratio: tcp_pacing_ss_ratio only while
    /// `snd_cwnd < snd_ssthresh / 2` ("approaching end of slow start and should slow down"),
    /// tcp_pacing_ca_ratio otherwise, so the second half of slow start (ssthresh / 2 <= cwnd <
    /// ssthresh) already paces at 120 %. The initial ssthresh (TCP_INFINITE_SSTHRESH,
    /// 0x7fffffff) halved is still above any cwnd: 200 % until the first reduction. Checked in
    /// net/ipv4/tcp_input.c of Linux 4.10 and 6.18 (the same test; 6.18 reads the cwnd through
    /// tcp_snd_cwnd() and the sysctls per network namespace).
    fn pacing_ss_ratio_applies(&self) -> bool {
        self.w.cwnd < self.w.ssthresh / 2
    }

    /// The packets tcp_update_pacing_rate counts: max(snd_cwnd, packets_out).
    fn pacing_packets(&self) -> u32 {
        self.w.cwnd.max(self.sb.packets_out())
    }

    /// sk_pacing_rate as tcp_update_pacing_rate sets it: 200 % of cwnd x mss / srtt while
    /// cwnd < ssthresh / 2, else 120 %, with cwnd at least packets_out; None before an RTT
    /// sample (Linux leaves the rate unlimited then).
    fn linux_pacing_rate_bps(&self) -> Option<u64> {
        let srtt = self.rtt.srtt()?;
        let ratio = if self.pacing_ss_ratio_applies() { PACING_SS_RATIO } else { PACING_CA_RATIO };
        let pkts = self.pacing_packets() as f64;
        Some((pkts * self.mss as f64 * 8.0 * ratio / srtt.secs_f64().max(1e-9)) as u64)
    }

    /// Segments per skb (tcp_tso_segs): the algorithm's goal, or tcp_tso_autosize: about 1 ms
    /// at the pacing rate (sk_pacing_rate >> 10 bytes), at least tcp_min_tso_segs, within
    /// 64 KiB.
    fn tso_segs(&self) -> u32 {
        if let Some(goal) = self.cc.tso_segs_goal() {
            return goal.max(1);
        }
        let bytes = ((self.pacing_rate_bps().unwrap_or(0) / 8) >> 10).min(TSO_MAX_BYTES);
        ((bytes / u64::from(self.mss.max(1))) as u32).max(MIN_TSO_SEGS)
    }

    /// tcp_pacing_check: is the next packet held back by the pacing schedule? If so, wait
    /// for its release time. Linux checks once per skb: the segments of an skb being sent
    /// (`skb_segs_left`) leave with its first.
    pub(super) fn pace_blocked(&mut self, now: Time) -> bool {
        if self.skb_segs_left > 0 {
            return false;
        }
        if self.pacing && self.wstamp > now {
            self.pace_wait = Some(self.wstamp);
            return true;
        }
        false
    }

    /// tcp_update_skb_after_send, per segment of the skb being sent: advance the earliest
    /// departure time by len / rate, less up to half of it as credit for lateness ("take into
    /// account OS jitter"). Linux does it once per skb, with the skb's length; segment by
    /// segment, the credit found at the skb's first segment is spent at most half of each
    /// segment at a time, which sums to Linux's min(half the skb, the credit).
    pub(super) fn advance_departure(&mut self, now: Time, len: u32) {
        if !self.pacing {
            return;
        }
        let first = self.skb_segs_left == 0;
        self.skb_segs_left = if first { self.tso_segs() - 1 } else { self.skb_segs_left - 1 };
        let prior = self.wstamp;
        self.wstamp = self.wstamp.max(now);
        if first {
            self.skb_credit_ns = (self.wstamp - prior).ns();
        }
        if self.stats.segments_sent < UNPACED_SEGMENTS {
            return;
        }
        let Some(rate) = self.pacing_rate_bps().filter(|&r| r > 0) else { return };
        let mut len_ns = (len as u128 * 8 * 1_000_000_000 / rate as u128) as u64;
        let credit = (len_ns / 2).min(self.skb_credit_ns);
        self.skb_credit_ns -= credit;
        len_ns -= credit;
        self.wstamp += Time(len_ns);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tcp::sender::testkit::*;

    /// The kept pacing rate follows each of its inputs: a new srtt, a new cwnd, and an
    /// ssthresh that moves the sender in or out of slow start (200 % against 120 %).
    #[test]
    fn the_kept_pacing_rate_follows_srtt_cwnd_and_ssthresh() {
        let mut s = sender(1000);
        assert_eq!(s.stack_pacing_rate_memo(), 0, "no RTT sample yet");
        s.rtt.sample(Time::from_ms(10));
        let check = |s: &mut TcpSender| {
            let fresh = s.stack_pacing_rate_bps();
            assert!(fresh > 0);
            assert_eq!(s.stack_pacing_rate_memo(), fresh, "cwnd {} ssthresh {}", s.w.cwnd, s.w.ssthresh);
            assert_eq!(s.stack_pacing_rate_memo(), fresh, "kept");
        };
        check(&mut s);
        s.rtt.sample(Time::from_ms(30));
        check(&mut s);
        s.w.cwnd += 7;
        check(&mut s);
        s.w.ssthresh = s.w.cwnd / 2;
        check(&mut s);
    }

    /// Within 1 bit/s (the rate is computed in floating point, as a bit rate).
    fn near(got: u64, want: u64) -> bool {
        got.abs_diff(want) <= 1
    }

    /// tcp_update_pacing_rate's ratio, state by state (srtt 10 ms, MSS 1000): 200 % from the
    /// start (the infinite ssthresh halved is above any cwnd) and while cwnd < ssthresh / 2,
    /// 120 % from ssthresh / 2 on, which is still slow start (cwnd < ssthresh), and after it.
    /// The same rate whether the sender paces or only keeps sk_pacing_rate (TSQ, the upstream
    /// MPTCP scheduler), nothing being out.
    #[test]
    fn the_pacing_rate_drops_to_the_ca_ratio_at_half_ssthresh() {
        for pacing in [false, true] {
            let mut s = sender_with(1000, cc::build(CcKind::Cubic, &TcpOpts::default()), pacing);
            s.rtt.sample(Time::from_ms(10));
            // cwnd x 1000 B x 8 / 10 ms, in bits/s, at `pct` percent.
            let at = |cwnd: u64, pct: u64| cwnd * 1000 * 8 * 100 * pct / 100;
            let cases: [(u32, u32, u64); 6] = [
                (10, INFINITE_SSTHRESH, 200), // initial slow start
                (29, 60, 200),                // cwnd < ssthresh / 2
                (30, 60, 120),                // ssthresh / 2: slow start still, 120 %
                (59, 60, 120),                // the last cwnd of slow start
                (60, 60, 120),                // congestion avoidance
                (80, 60, 120),
            ];
            for (cwnd, ssthresh, pct) in cases {
                s.w.cwnd = cwnd;
                s.w.ssthresh = ssthresh;
                let want = at(cwnd as u64, pct);
                let got = s.stack_pacing_rate_bps();
                assert!(near(got, want), "pacing {pacing} cwnd {cwnd} ssthresh {ssthresh}: {got} != {want}");
                assert_eq!(s.stack_pacing_rate_memo(), got, "the kept rate, cwnd {cwnd}");
                if pacing {
                    assert_eq!(s.pacing_rate_bps(), Some(got));
                }
            }
        }
    }

    /// tcp_update_pacing_rate counts max(cwnd, packets_out): after the window shrinks below
    /// what is out (a reduction, an RTO's cwnd of 1), sk_pacing_rate, and with it TSQ's limit,
    /// still counts every packet out.
    #[test]
    fn the_pacing_rate_counts_the_packets_out_above_cwnd() {
        let mut s = sender(1000);
        s.set_app_limit(u64::MAX);
        let mut out = Vec::new();
        s.try_send(Time::ZERO, &mut out);
        assert_eq!(out.len(), 10);
        s.rtt.sample(Time::from_ms(10));
        s.w.cwnd = 4;
        s.w.ssthresh = 8;
        // 10 packets at 120 % (4 >= 8 / 2), not 4.
        let want = 10 * 1000 * 8 * 100 * 120 / 100;
        let got = s.stack_pacing_rate_memo();
        assert!(near(got, want), "{got} != {want}");
        assert_eq!(got, s.stack_pacing_rate_bps());
    }

    /// With pacing on, packets leave at the pacing rate: one per len / rate, each release time
    /// being the sender's timer deadline (the first 10 segments are not paced, as in Linux).
    #[test]
    fn pacing_spaces_skbs_at_the_pacing_rate() {
        let mut s = sender_with(1000, cc::build(CcKind::Cubic, &TcpOpts::default()), true);
        s.set_loss_probes(false); // the loop below follows the pacing timer only
        s.set_app_limit(u64::MAX);
        let mut out = Vec::new();
        s.try_send(Time::ZERO, &mut out);
        assert_eq!(out.len(), 10, "the initial window leaves at once");
        // Two segments ACKed after 10 ms: srtt 10 ms, cwnd 12, room for 4 more.
        out.clear();
        s.on_ack(Time::from_ms(10), &ack(2000, &[]), &mut out);
        let rate = s.pacing_rate_bps().expect("pacing rate");
        // tcp_update_pacing_rate in slow start: 2 x cwnd x mss / srtt.
        assert_eq!(rate, 2 * 12 * 1000 * 8 * 100);
        // tcp_tso_autosize: 19.2 Mbit/s is 2400 bytes a millisecond, 2 segments an skb.
        assert_eq!(s.tso_segs(), 2);
        assert_eq!(out.len(), 2, "one skb, then the pacing schedule holds the next");
        let gap = Time(1000 * 8 * 1_000_000_000 / rate);
        let mut times = vec![Time::from_ms(10); 2];
        while let Some(d) = s.timer_deadline().filter(|&d| d < Time::from_ms(100)) {
            out.clear();
            s.on_timer(d, &mut out);
            for _ in &out {
                times.push(d);
            }
        }
        assert_eq!(times.len(), 4, "cwnd 12 with 8 in flight: 4 sent, an skb of 2 at a time");
        // The segments of an skb leave together; the next skb waits the skb's length at the
        // rate, halved for the first (the sender was idle: credit for lateness, up to half).
        assert_eq!((times[1], times[3]), (times[0], times[2]), "{times:?}");
        assert_eq!(times[2] - times[0], Time(2 * gap.ns() - gap.ns()), "{times:?}");
    }
}
