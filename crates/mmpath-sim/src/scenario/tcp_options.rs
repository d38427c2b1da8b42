//! A flow's `tcp` table: socket buffers (`"auto"` or a byte count), the hosts' buffer
//! ceilings, and the Linux stack's knobs (initial cwnd, min RTO, delayed ACK, HyStart, pacing,
//! TSQ, tail loss probes, F-RTO), each defaulting to the kernel's value.

use super::d_true;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

/// Linux tcp_rmem[2] (6 MB on the kernels the papers used; docs/facts.md).
pub(super) fn d_rmem_max() -> u64 {
    6_291_456
}
/// Linux tcp_wmem[2] (4 MB; docs/facts.md).
pub(super) fn d_wmem_max() -> u64 {
    4_194_304
}
/// Linux TCP_INIT_CWND (include/net/tcp.h).
fn d_init_cwnd() -> u32 {
    10
}
/// Linux TCP_RTO_MIN = HZ/5 (include/net/tcp.h).
fn d_min_rto_ms() -> f64 {
    200.0
}

/// A socket buffer size: `"auto"` (Linux autotuning) or a fixed byte count (SO_RCVBUF/SO_SNDBUF).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum BufSize {
    #[default]
    Auto,
    Bytes(u64),
}

impl Serialize for BufSize {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            BufSize::Auto => s.serialize_str("auto"),
            BufSize::Bytes(b) => s.serialize_u64(*b),
        }
    }
}

impl<'de> Deserialize<'de> for BufSize {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = BufSize;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("\"auto\" or a positive byte count")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<BufSize, E> {
                if v == "auto" {
                    Ok(BufSize::Auto)
                } else {
                    Err(E::invalid_value(serde::de::Unexpected::Str(v), &self))
                }
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<BufSize, E> {
                if v == 0 {
                    Err(E::invalid_value(serde::de::Unexpected::Unsigned(0), &self))
                } else {
                    Ok(BufSize::Bytes(v))
                }
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<BufSize, E> {
                if v <= 0 {
                    Err(E::invalid_value(serde::de::Unexpected::Signed(v), &self))
                } else {
                    Ok(BufSize::Bytes(v as u64))
                }
            }
        }
        d.deserialize_any(V)
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TcpOpts {
    /// Receive buffer: "auto" = Linux receive-buffer autotuning up to `rmem_max_bytes`.
    #[serde(default)]
    pub rcvbuf_bytes: BufSize,
    /// Send buffer: "auto" = Linux send-buffer autotuning up to `wmem_max_bytes`.
    #[serde(default)]
    pub sndbuf_bytes: BufSize,
    /// `tcp_rmem[2]` of the receiving host. Unset: the client device's own (a phone's Android
    /// network buffers, `HostProfile`) when the client receives, else Linux's 6 MB.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rmem_max_bytes: Option<u64>,
    /// `tcp_wmem[2]` of the sending host, filled the same way (Linux's 4 MB by default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wmem_max_bytes: Option<u64>,
    #[serde(default = "d_init_cwnd")]
    pub initial_cwnd: u32,
    #[serde(default = "d_min_rto_ms")]
    pub min_rto_ms: f64,
    #[serde(default = "d_true")]
    pub delayed_ack: bool,
    /// CUBIC's HyStart (ignored by other algorithms).
    #[serde(default = "d_true")]
    pub hystart: bool,
    /// Pace every algorithm at the stack's pacing rate (Linux with the fq qdisc or
    /// SO_MAX_PACING_RATE); BBR always paces (Linux internal pacing).
    #[serde(default)]
    pub pacing: bool,
    /// TCP Small Queues: at most this many bytes of the socket may wait below TCP (in the first
    /// hop's queue) before it stops sending (net.ipv4.tcp_limit_output_bytes); 0 turns TSQ off.
    #[serde(default = "d_limit_output")]
    pub limit_output_bytes: u64,
    /// Tail loss probes (net.ipv4.tcp_early_retrans = 3, the default since Linux 3.10).
    #[serde(default = "d_true")]
    pub tail_loss_probes: bool,
    /// F-RTO, spurious-RTO detection and undo (net.ipv4.tcp_frto = 2, the default since 3.10).
    #[serde(default = "d_true")]
    pub frto: bool,
    /// RFC 2861 congestion window validation (net.ipv4.tcp_slow_start_after_idle = 1, Linux's
    /// default): cwnd restarts after an idle spell longer than the RTO and decays while the
    /// application leaves it unused (tcp/sender/idle.rs).
    #[serde(default = "d_true")]
    pub slow_start_after_idle: bool,
    /// The hosts' CONFIG_HZ: Linux's TCP timers (RTO, tail loss probe, RACK reordering,
    /// delayed ACK) count in its ticks and fire from the kernel's timer wheel, late by up to
    /// the wheel level's granularity (tcp/timer_wheel.rs). 250, kernel/Kconfig.hz's default;
    /// 100, 300 or 1000 for a kernel built so.
    #[serde(default = "d_kernel_hz")]
    pub kernel_hz: u32,
}

/// Linux's default timer frequency (kernel/Kconfig.hz: `default HZ_250`).
pub const DEFAULT_KERNEL_HZ: u32 = 250;
/// The frequencies kernel/Kconfig.hz offers (CONFIG_HZ_100, _250, _300, _1000).
pub const KERNEL_HZ_CHOICES: [u32; 4] = [100, 250, 300, 1000];

fn d_kernel_hz() -> u32 {
    DEFAULT_KERNEL_HZ
}

/// net.ipv4.tcp_limit_output_bytes of current kernels (1 MiB; it was 128 KiB before Linux 4.2
/// and 256 KiB after, include/net/tcp.h / tcp_ipv4.c).
fn d_limit_output() -> u64 {
    1_048_576
}

impl TcpOpts {
    /// `tcp_rmem[2]` in effect (filled by `fill_defaults`; Linux's if read before).
    pub fn rmem_max(&self) -> u64 {
        self.rmem_max_bytes.unwrap_or_else(d_rmem_max)
    }
    /// `tcp_wmem[2]` in effect.
    pub fn wmem_max(&self) -> u64 {
        self.wmem_max_bytes.unwrap_or_else(d_wmem_max)
    }
}

impl Default for TcpOpts {
    fn default() -> Self {
        TcpOpts {
            rcvbuf_bytes: BufSize::Auto,
            sndbuf_bytes: BufSize::Auto,
            rmem_max_bytes: None,
            wmem_max_bytes: None,
            initial_cwnd: d_init_cwnd(),
            min_rto_ms: d_min_rto_ms(),
            delayed_ack: true,
            hystart: true,
            pacing: false,
            limit_output_bytes: d_limit_output(),
            tail_loss_probes: true,
            frto: true,
            slow_start_after_idle: true,
            kernel_hz: d_kernel_hz(),
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::scenario::testkit::fails;
    use crate::scenario::*;

    /// Linux's loss-recovery sysctls as TCP options: on by default, off when asked, and a
    /// wrong type named with its field.
    #[test]
    fn loss_probe_and_frto_switches() {
        let tcp = |t: &str| {
            let j = format!(r#"{{"path":[{{"rate_mbps":100}}],"flow":[{{"kind":"tcp"{t}}}]}}"#);
            let s = Scenario::from_json(&j).unwrap();
            (s.flow[0].tcp.tail_loss_probes, s.flow[0].tcp.frto)
        };
        assert_eq!(tcp(""), (true, true));
        assert_eq!(tcp(r#","tcp":{"tail_loss_probes":false}"#), (false, true));
        assert_eq!(tcp(r#","tcp":{"frto":false}"#), (true, false));
        let j = r#"{"path":[{"rate_mbps":100}],"flow":[{"tcp":{"slow_start_after_idle":false}}]}"#;
        assert!(!Scenario::from_json(j).unwrap().flow[0].tcp.slow_start_after_idle);
        let m = fails(r#"{"path":[{"rate_mbps":100}],"flow":[{"tcp":{"frto":"yes"}}]}"#);
        assert!(m.contains("frto") && m.contains("expected a boolean"), "{m}");
    }

    /// CONFIG_HZ: Linux's default 250, one of Kconfig.hz's choices when given, anything else
    /// refused in one line naming the field and the choices.
    #[test]
    fn kernel_hz_is_one_of_linuxs_choices() {
        let hz = |t: &str| {
            let j = format!(r#"{{"path":[{{"rate_mbps":100}}],"flow":[{{"kind":"tcp"{t}}}]}}"#);
            Scenario::from_json(&j).map(|s| s.flow[0].tcp.kernel_hz)
        };
        assert_eq!(hz("").unwrap(), 250);
        assert_eq!(hz(r#","tcp":{"kernel_hz":1000}"#).unwrap(), 1000);
        let m = fails(r#"{"path":[{"rate_mbps":100}],"flow":[{"tcp":{"kernel_hz":200}}]}"#);
        assert!(m.contains("flow.0.tcp.kernel_hz") && m.contains("100, 250, 300, 1000") && m.contains("200"), "{m}");
        let m = fails(r#"{"path":[{"rate_mbps":100}],"flow":[{"tcp":{"kernel_hz":"250"}}]}"#);
        assert!(m.contains("kernel_hz"), "{m}");
    }
}
