//! The path manager's MP_JOIN handshake on every subflow but the first: SYN, SYN/ACK, ACK on the
//! subflow's own path (RFC 8684 3.2; the client sends only after the server's ACK, "the fourth
//! ACK"), retransmitted after Linux's TCP_TIMEOUT_INIT (1 s), doubling.

use super::{Connection, Effect, SubflowIo, Timer};
use crate::packet::{Kind, Packet, Way, SYN_BYTES};
use crate::scenario::Direction;
use crate::time::Time;

impl Connection {
    /// Subflow `j`'s handshake is due (at the start) or timed out (`Timer::Join`): send (again)
    /// its SYN.
    pub fn on_join_timer(&mut self, now: Time, j: usize) {
        let st = &mut self.subs[j];
        if st.established {
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
    fn client_to_server(&self) -> Way {
        match self.direction {
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
        match self.direction {
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
        let last = match self.direction {
            Direction::Download => 2,
            Direction::Upload => 3,
        };
        if p.seq >= last {
            let st = &mut self.subs[j];
            if !st.established {
                st.established = true;
                st.established_at = Some(now);
                st.hs_deadline = None;
                self.push(now, io);
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
