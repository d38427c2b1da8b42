//! Delivery-rate sampling as Linux's net/ipv4/tcp_rate.c (Linux 4.10): every transmission
//! stamps the connection's delivered count and times on the packet (tcp_rate_skb_sent); every
//! ACK builds a rate sample from the newest packet it delivers (tcp_rate_skb_delivered,
//! tcp_rate_gen), which feeds algorithms with a `cong_control` hook (BBR). The app-limited
//! mark is set where sending stops for want of data (tcp_rate_check_app_limited, in
//! sender/transmit.rs).

use super::TcpSender;
use crate::tcp::cc::RateSample;
use crate::tcp::scoreboard::TxRate;
use crate::time::Time;

impl TcpSender {
    /// tcp_rate_skb_sent (the connection's delivery state stamped on a packet) before a
    /// transmission.
    pub(super) fn tx_stamp(&mut self, now: Time) -> TxRate {
        if self.sb.packets_out() == 0 {
            self.first_tx_mstamp = now;
            self.delivered_mstamp = now;
        }
        TxRate {
            delivered: self.delivered,
            delivered_mstamp: self.delivered_mstamp,
            first_tx_mstamp: self.first_tx_mstamp,
            app_limited: self.app_limited != 0,
        }
    }

    /// tcp_rate_gen: this ACK's delivery-rate sample, from the packet the scoreboard picked.
    pub(super) fn rate_gen(
        &mut self,
        now: Time,
        delivered: u32,
        lost: u32,
        prior_in_flight: u32,
        rtt: Option<Time>,
    ) -> RateSample {
        if self.app_limited != 0 && self.delivered > self.app_limited {
            self.app_limited = 0;
        }
        if delivered > 0 {
            self.delivered_mstamp = now;
        }
        let mut rs = RateSample {
            now,
            delivered: None,
            interval: None,
            prior_delivered: 0,
            prior_in_flight,
            acked_sacked: delivered,
            losses: lost,
            rtt,
            is_app_limited: false,
            tp_delivered: self.delivered,
            tp_lost: self.lost,
            delivered_mstamp: self.delivered_mstamp,
            in_flight: self.sb.in_flight(),
            state: self.state,
            mss: self.mss,
            srtt: self.rtt.srtt(),
            edt_ahead: self.wstamp.saturating_sub(now),
        };
        if let Some(p) = self.sb.rate_pick {
            // tcp_rate_skb_delivered: the send interval ends at the picked packet.
            self.first_tx_mstamp = p.sent;
            rs.prior_delivered = p.tx.delivered;
            rs.is_app_limited = p.tx.app_limited;
            rs.delivered = Some(self.delivered - p.tx.delivered);
            let snd = p.sent.saturating_sub(p.tx.first_tx_mstamp);
            let ack = now.saturating_sub(p.tx.delivered_mstamp);
            let interval = snd.max(ack);
            // An interval shorter than the minimum RTT is bogus (ACK compression, a
            // retransmission's spurious sample): no bandwidth sample.
            if self.min_rtt.is_some_and(|m| interval >= m) {
                rs.interval = Some(interval);
            }
        }
        rs
    }
}
