//! The path manager's MP_JOIN handshake on every subflow but the first: SYN, SYN/ACK, ACK on the
//! subflow's own path (RFC 8684 3.2; the client sends only after the server's ACK, "the fourth
//! ACK"), retransmitted after Linux's TCP_TIMEOUT_INIT (1 s), doubling.

use super::{Connection, Effect, SubflowIo, Timer};
use crate::mptcp::pm::PmEvent;
use crate::packet::{Kind, Packet, Way, SYN_BYTES};
use crate::scenario::Direction;
use crate::time::Time;

impl Connection {
    /// Subflow `j`'s handshake is due (at the start) or timed out (`Timer::Join`): send (again)
    /// its SYN.
    pub fn on_join_timer(&mut self, now: Time, j: usize) {
        let st = &mut self.subs[j];
        if st.established || st.closed {
            return;
        }
        match st.hs_deadline {
            Some(d) if now < d => return,
            Some(_) => st.hs_rto = Time(st.hs_rto.ns() * 2),
            None => {}
        }
        let d = now + st.hs_rto;
        st.hs_deadline = Some(d);
        let f = st.flow;
        self.effects.push(Effect::Timer(d, Timer::Join(f)));
        let client_to_server = self.client_to_server();
        self.send_handshake(now, j, 0, client_to_server);
    }

    /// The way along a subflow's route from the client to the server.
    pub(super) fn client_to_server(&self) -> Way {
        match self.info.direction {
            Direction::Download => Way::Reverse,
            Direction::Upload => Way::Forward,
        }
    }

    /// The handshake segment the data sender sends and times: the server's SYN/ACK (step 1) in a
    /// download, the client's SYN (step 0) in an upload. Its answer (the next step) is the
    /// subflow's first RTT sample, as Linux takes one from every handshake (tcp_synack_rtt_meas
    /// on the passive side, tcp_ack_update_rtt on the SYN/ACK on the active side), so a joined
    /// subflow's first data is timed by its path's RTT, not TCP_TIMEOUT_INIT.
    fn timed_step(&self) -> u64 {
        match self.info.direction {
            Direction::Download => 1,
            Direction::Upload => 0,
        }
    }

    fn send_handshake(&mut self, now: Time, j: usize, step: u64, way: Way) {
        if step == self.timed_step() {
            self.subs[j].hs_sent_at = Some(now);
        }
        let mut p = Packet::empty(self.subs[j].flow, Kind::Syn, way);
        p.seq = step;
        p.size_bytes = SYN_BYTES;
        self.effects.push(Effect::Send(p));
    }

    /// A handshake segment of subflow `j` reached its end: answer it, or, at the data sender,
    /// the subflow is established. MP_JOIN: SYN, SYN/ACK, ACK; the server may send once it has
    /// the third segment; the client only after the server's ACK of it (RFC 8684 3.2, "the
    /// fourth ACK").
    pub fn on_handshake(&mut self, now: Time, j: usize, p: &Packet, io: &mut impl SubflowIo) {
        if self.subs[j].closed {
            return;
        }
        let c2s = self.client_to_server();
        if p.seq == self.timed_step() + 1 {
            let st = &mut self.subs[j];
            if let Some(t) = st.hs_sent_at.take() {
                let s = io.sender_out(st.flow).0;
                if s.rtt.srtt().is_none() {
                    s.rtt.sample(now - t);
                }
            }
        }
        let last = match self.info.direction {
            Direction::Download => 2,
            Direction::Upload => 3,
        };
        if p.seq >= last {
            let st = &mut self.subs[j];
            if !st.established && !st.closed {
                st.established = true;
                st.established_at = Some(now);
                st.begin_rcvbuf();
                st.hs_deadline = None;
                self.push(now, io);
                self.pm_note(j, |path, subflow| PmEvent::SubflowEstablished { path, subflow });
                self.pm_flush(now, io);
            }
            return;
        }
        let back = if p.way == c2s {
            if c2s == Way::Forward {
                Way::Reverse
            } else {
                Way::Forward
            }
        } else {
            c2s
        };
        self.send_handshake(now, j, p.seq + 1, back);
    }
}

#[cfg(test)]
mod tests {
    use super::super::testkit::*;

    fn syn(j: u16, step: u64, way: Way) -> Packet {
        let mut p = Packet::empty(j, Kind::Syn, way);
        p.seq = step;
        p
    }

    /// The SYN goes at the flow's start and again after TCP_TIMEOUT_INIT (1 s), doubling; an
    /// event left over from an earlier deadline sends nothing.
    #[test]
    fn a_join_is_retried_after_one_second_then_two() {
        let (mut cn, mut io) = connection(Kernel::Upstream, SchedName::Upstream, &[false, false], 1 << 20);
        let t0 = ms(100);
        cn.on_join_timer(t0, 1);
        settle(&mut cn, &mut io, t0);
        // A download's client is at the far end of the data's route: its SYN goes back along it.
        assert_eq!(io.syns(), vec![(1, 0, Way::Reverse)]);
        assert_eq!(io.timers, vec![(t0 + ms(1000), Timer::Join(1))]);
        cn.on_join_timer(t0 + ms(500), 1);
        settle(&mut cn, &mut io, t0 + ms(500));
        assert_eq!(io.syns().len(), 1, "not due yet");
        cn.on_join_timer(t0 + ms(1000), 1);
        settle(&mut cn, &mut io, t0 + ms(1000));
        assert_eq!(io.syns().len(), 2);
        assert_eq!(io.timers.last(), Some(&(t0 + ms(3000), Timer::Join(1))), "the timeout doubled");
        cn.on_join_timer(t0 + ms(3000), 1);
        settle(&mut cn, &mut io, t0 + ms(3000));
        assert_eq!(io.timers.last(), Some(&(t0 + ms(7000), Timer::Join(1))));
    }

    /// Download: the server (the data sender) answers the SYN with its SYN/ACK and times it;
    /// the client's ACK gives the subflow its first RTT sample and establishes it, which
    /// pushes; a join timer after that sends nothing.
    #[test]
    fn the_handshake_times_the_first_rtt_and_establishes_the_subflow() {
        let (mut cn, mut io) = connection(Kernel::Upstream, SchedName::Upstream, &[false, false], 1 << 20);
        cn.on_handshake(ms(10), 1, &syn(1, 0, Way::Reverse), &mut io);
        settle(&mut cn, &mut io, ms(10));
        assert_eq!(io.syns(), vec![(1, 1, Way::Forward)], "SYN/ACK back to the client");
        assert!(!cn.subs[1].established);
        cn.on_handshake(ms(17), 1, &syn(1, 2, Way::Reverse), &mut io);
        assert!(cn.take_effects().iter().any(|e| matches!(e, Effect::Push)), "establishing pushes");
        assert!(cn.subs[1].established);
        assert_eq!(cn.subs[1].established_at, Some(ms(17)));
        assert_eq!(io.senders[1].rtt.srtt(), Some(ms(7)), "SYN/ACK at 10 ms, its answer at 17 ms");
        assert_eq!(io.syns().len(), 1, "nothing more to send");
        cn.restore_effects(Vec::new());
        cn.on_join_timer(ms(1010), 1);
        settle(&mut cn, &mut io, ms(1010));
        assert_eq!(io.syns().len(), 1);
        assert!(io.timers.is_empty());
    }

    /// Only an established subflow carries data.
    #[test]
    fn data_waits_for_the_join() {
        let (mut cn, mut io) = connection(Kernel::V09x, SchedName::Minrtt, &[false, false], 1 << 20);
        write(&mut cn, &mut io, Time::ZERO, 40 * MSS as u64);
        assert!(!io.data_on(0).is_empty());
        assert!(io.data_on(1).is_empty(), "subflow 1 has not joined");
        cn.on_handshake(ms(10), 1, &syn(1, 0, Way::Reverse), &mut io);
        cn.on_handshake(ms(20), 1, &syn(1, 2, Way::Reverse), &mut io);
        settle(&mut cn, &mut io, ms(20));
        assert!(!io.data_on(1).is_empty(), "joined: it takes what subflow 0's window left");
    }
}
