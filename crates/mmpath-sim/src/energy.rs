//! Energy and host models of the client device (seed 002, ASUS ROG Phone II).
//!
//! Radio power: each radio path's client radio is, at every instant, in one of four states:
//! transmitting (the client holds the medium: uplink data or the downlink's TCP ACKs), receiving
//! (the AP holds the medium), awake and idle, or asleep in the 802.11 power-save mode (PSM). The
//! medium reports every TXOP it ends (`RadioMeter::busy`); the gaps between TXOPs are idle up to
//! `psm_timeout` and asleep after it (the radio wakes for the next frame). Energy = sum over the
//! states of power x time. Only the client is metered: the AP runs from the mains.
//!
//! Host receive processing: on the phone, every packet the client receives (over any radio
//! interface) also passes through one shared soft-IRQ / stack server whose per-packet cost
//! depends on whether GRO is on for that interface and on the CPU class the soft-IRQs run on.
//! This is what caps MPTCP's sum below the two radios' sum in seed 002 sections 3.3-3.4 while
//! each interface alone reaches its single-path rate.
//!
//! Every figure cites its source; the uncertain ones say so (docs/models.md, "Energy", "Host").

use crate::time::Time;

/// Power of one client radio in each state, milliwatts, relative to the device's base power
/// (screen on, radios off: seed 002 section 2 measures everything relative to it).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RadioPower {
    pub tx_mw: f64,
    pub rx_mw: f64,
    /// Awake, associated, no frame on the air (listening).
    pub idle_mw: f64,
    /// Asleep in PSM (wakes for beacons; averaged).
    pub psm_mw: f64,
    /// No traffic for this long and the radio enters PSM.
    pub psm_timeout: Time,
}

/// 802.11 power-save entry after 100 ms without data in either direction: the Linux iwlmvm
/// driver's rx_data_timeout / tx_data_timeout (drivers/net/wireless/intel/iwlwifi/mvm/power.c,
/// iwl_mvm_power_build_cmd: 100 * USEC_PER_MSEC), the same order as mac80211's default dynamic
/// PS timeout. The phone's Qualcomm drivers decide this in firmware and do not publish it:
/// uncertain, one value for both radios.
pub const PSM_TIMEOUT: Time = Time(100_000_000);

/// ROG Phone II 802.11ad radio (Qualcomm, wil6210 driver).
pub const ROG_11AD: RadioPower = RadioPower {
    // Seed 002 section 4.1: "the 802.11ad radio consumes only 1600 mW" in Tx mode and "about
    // ... 2200 mW" in Rx mode under backlogged traffic, when the radio is busy all the time.
    tx_mw: 1600.0,
    rx_mw: 2200.0,
    // Not measured by seed 002. mmWave radios keep their wideband front-end and high-rate
    // ADCs on while awake, so their idle power is a large share of the active one (IEEE
    // 802.11-25/0878r0, "IMMW idle power consumption"). Our estimate: 600 mW, ~27 % of the
    // Rx power. UNCERTAIN; it decides whether light downlink loads are cheaper on 11ac
    // (docs/models.md gives the break-even, ~400 mW).
    idle_mw: 600.0,
    // PSM: the radio sleeps between beacons; a few mW (uncertain, small against the rest).
    psm_mw: 10.0,
    psm_timeout: PSM_TIMEOUT,
};

/// ROG Phone II 802.11ac radio (Qualcomm, qcacld driver).
pub const ROG_11AC: RadioPower = RadioPower {
    // Seed 002 section 4.1: "the 802.11ac radio in the ROG Phone II consumes 2800 mW in Tx
    // mode", "about 1100 mW" in Rx mode, under backlogged traffic.
    tx_mw: 2800.0,
    rx_mw: 1100.0,
    // Awake-idle Wi-Fi on a smartphone: ~120 mW (Huang et al., "A close examination of
    // performance and power characteristics of 4G LTE networks", MobiSys 2012: Wi-Fi tail
    // power ~119 mW). Uncertain for this chip.
    idle_mw: 120.0,
    psm_mw: 10.0,
    psm_timeout: PSM_TIMEOUT,
};

/// The power figures of a radio device preset, if the device's power was characterised.
pub fn radio_power(device: &str) -> Option<RadioPower> {
    match device {
        "rog-phone-2-11ad" => Some(ROG_11AD),
        "rog-phone-2-11ac" => Some(ROG_11AC),
        _ => None,
    }
}

/// Time a client radio spent in each state, and the PSM entries (integer ns: exact sums).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StateTimes {
    pub tx_ns: u64,
    pub rx_ns: u64,
    pub idle_ns: u64,
    pub psm_ns: u64,
    pub psm_entries: u64,
}

impl StateTimes {
    /// Joules: sum of power x time (mW x ns = 1e-12 J).
    pub fn joules(&self, p: &RadioPower) -> f64 {
        (self.tx_ns as f64 * p.tx_mw
            + self.rx_ns as f64 * p.rx_mw
            + self.idle_ns as f64 * p.idle_mw
            + self.psm_ns as f64 * p.psm_mw)
            * 1e-12
    }

    fn gap(&mut self, g: u64, timeout: u64) {
        if g > timeout {
            self.idle_ns += timeout;
            self.psm_ns += g - timeout;
            self.psm_entries += 1;
        } else {
            self.idle_ns += g;
        }
    }
}

/// Integrates one client radio's power over the TXOPs its medium reports.
#[derive(Debug, Clone)]
pub struct RadioMeter {
    pub power: RadioPower,
    times: StateTimes,
    /// End of the last TXOP (the radio's last activity); the run starts awake at 0.
    last_end: Time,
}

impl RadioMeter {
    pub fn new(power: RadioPower) -> Self {
        RadioMeter { power, times: StateTimes::default(), last_end: Time::ZERO }
    }

    /// The medium was busy from `start` to `end`: the client transmitted (`tx`) or received.
    pub fn busy(&mut self, start: Time, end: Time, tx: bool) {
        let start = start.max(self.last_end);
        if end <= start {
            return;
        }
        self.times.gap((start - self.last_end).ns(), self.power.psm_timeout.ns());
        let d = (end - start).ns();
        if tx {
            self.times.tx_ns += d;
        } else {
            self.times.rx_ns += d;
        }
        self.last_end = end;
    }

    /// The state times up to `now` (the gap since the last TXOP counted as if it ended now).
    pub fn times_at(&self, now: Time) -> StateTimes {
        let mut t = self.times;
        if now > self.last_end {
            t.gap((now - self.last_end).ns(), self.power.psm_timeout.ns());
        }
        t
    }

    pub fn joules_at(&self, now: Time) -> f64 {
        self.times_at(now).joules(&self.power)
    }
}

/// CPU class the soft-IRQs of the client's interfaces run on (seed 002 section 3.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CpuClass {
    Big,
    Little,
}

/// A client host's shared receive-processing cost.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HostProfile {
    pub name: &'static str,
    /// Per received packet with GRO on: soft-IRQs on LITTLE / big cores, ns.
    pub rx_pkt_ns_little: u64,
    pub rx_pkt_ns_big: u64,
    /// Cost of a received packet with GRO off relative to on (x 1000).
    pub no_gro_permille: u64,
    /// Where the soft-IRQs run unless the scenario says.
    pub default_cpu: CpuClass,
}

/// Segment size the host costs are derived at: MTU 1500 - 52 bytes of IP/TCP headers with
/// timestamps (the path default), 11584 bits per segment.
const DERIVE_MSS_BITS: f64 = 1448.0 * 8.0;

/// The ROG Phone II host. Derived once from seed 002's measured caps (downlink MPTCP, FixedRatio
/// 73:27), so that 002-host checks the mechanism, not the calibration:
/// - LITTLE, GRO on: section 3.4 "whenever SIRQs are scheduled to LITTLE cores, the throughput
///   does not exceed 2 Gbps" (Fig. 2 default median 2.01 Gbps): 11584 bit / 2.0 Gbit/s = 5792 ns.
/// - big, GRO on: section 3.4, soft-IRQ affinity "f0" (big cores) median 2.15 Gbps:
///   11584 / 2.15 = 5388 ns.
/// - GRO off on 11ac: section 3.2, 1810 Mbit/s (82 % of the sum) at 73:27 with the default
///   (LITTLE) placement: the 11ad share (1321 Mbit/s) takes 1321 / 2000 = 66.1 % of the server,
///   so the 11ac share (489 Mbit/s = 42.2 k packets/s) costs 33.9 % / 42.2 k = 8044 ns per
///   packet, 1.389 x the GRO-on cost.
/// - default placement: msm_irqbalance spreads the soft-IRQs over all cores and seed 002's
///   default runs behave like the LITTLE cap (median 2.01 Gbps): LITTLE.
pub const ROG_PHONE_2: HostProfile = HostProfile {
    name: "rog-phone-2",
    rx_pkt_ns_little: 5_792,
    rx_pkt_ns_big: 5_388,
    no_gro_permille: 1_389,
    default_cpu: CpuClass::Little,
};

/// The host of a radio device preset, if its receive processing is limited beyond the
/// per-interface driver cost. Laptops are not (seed 002 section 5: the GRO and soft-IRQ
/// optimisations "are not needed in more powerful laptops").
pub fn host_of(device: &str) -> Option<&'static HostProfile> {
    match device {
        "rog-phone-2-11ad" | "rog-phone-2-11ac" => Some(&ROG_PHONE_2),
        _ => None,
    }
}

impl HostProfile {
    /// Shared-server time per packet received on an interface.
    pub fn rx_pkt_ns(&self, gro: bool, cpu: CpuClass) -> u64 {
        let base = match cpu {
            CpuClass::Big => self.rx_pkt_ns_big,
            CpuClass::Little => self.rx_pkt_ns_little,
        };
        if gro {
            base
        } else {
            base * self.no_gro_permille / 1000
        }
    }

    /// The downlink goodput the shared server allows with every interface at these settings,
    /// Mbit/s (for docs and tests).
    pub fn cap_mbps(&self, gro: bool, cpu: CpuClass) -> f64 {
        DERIVE_MSS_BITS / self.rx_pkt_ns(gro, cpu) as f64 * 1e3
    }
}

impl From<crate::scenario::SoftirqCpu> for CpuClass {
    fn from(c: crate::scenario::SoftirqCpu) -> Self {
        match c {
            crate::scenario::SoftirqCpu::Big => CpuClass::Big,
            crate::scenario::SoftirqCpu::Little => CpuClass::Little,
        }
    }
}

/// The client host of a path, if its device has a host model.
pub fn path_host(p: &crate::scenario::PathCfg) -> Option<&'static HostProfile> {
    p.device.as_deref().and_then(host_of)
}

/// Shared-server cost per packet received on path `p` (None: no host model).
pub fn path_rx_pkt_ns(p: &crate::scenario::PathCfg) -> Option<u64> {
    let h = path_host(p)?;
    Some(h.rx_pkt_ns(p.gro.unwrap_or(true), p.softirq_cpu.map_or(h.default_cpu, CpuClass::from)))
}

/// `gro` and `softirq_cpu` need a client whose host is modelled.
pub fn validate_host(p: &crate::scenario::PathCfg, i: usize) -> Result<(), crate::scenario::ScenarioError> {
    for (k, set) in [("gro", p.gro.is_some()), ("softirq_cpu", p.softirq_cpu.is_some())] {
        if set && path_host(p).is_none() {
            let dev = p.device.as_deref().unwrap_or("none (wired)");
            return Err(crate::scenario::err(
                format!("path.{i}.{k}"),
                format!("only a client with a host model takes {k} (devices rog-phone-2-11ad, rog-phone-2-11ac; this path's: {dev})"),
            ));
        }
    }
    Ok(())
}

/// Joules per bit delivered, as nJ/bit (NaN if nothing was delivered).
pub fn nj_per_bit(joules: f64, bytes: u64) -> f64 {
    if bytes == 0 {
        f64::NAN
    } else {
        joules / (bytes as f64 * 8.0) * 1e9
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const P: RadioPower =
        RadioPower { tx_mw: 1000.0, rx_mw: 2000.0, idle_mw: 100.0, psm_mw: 10.0, psm_timeout: Time(100_000_000) };

    fn ms(x: u64) -> Time {
        Time(x * 1_000_000)
    }

    #[test]
    fn always_busy_is_the_state_power() {
        let mut m = RadioMeter::new(P);
        // Back-to-back TXOPs for 1 s, all received: 2000 mW x 1 s = 2 J.
        for i in 0..1000 {
            m.busy(ms(i), ms(i + 1), false);
        }
        assert!((m.joules_at(ms(1000)) - 2.0).abs() < 1e-12);
        let mut m = RadioMeter::new(P);
        for i in 0..1000 {
            m.busy(ms(i), ms(i + 1), true);
        }
        assert!((m.joules_at(ms(1000)) - 1.0).abs() < 1e-12);
    }

    #[test]
    fn hand_made_schedule_integrates_exactly() {
        let mut m = RadioMeter::new(P);
        // 0-10 ms Tx, 10-30 idle, 30-50 Rx, 50-100 idle (< timeout), 100-110 Tx,
        // then nothing until 1 s: 100 ms idle, 790 ms asleep.
        m.busy(ms(0), ms(10), true);
        m.busy(ms(30), ms(50), false);
        m.busy(ms(100), ms(110), true);
        let t = m.times_at(ms(1000));
        assert_eq!(
            t,
            StateTimes {
                tx_ns: 20_000_000,
                rx_ns: 20_000_000,
                idle_ns: 170_000_000,
                psm_ns: 790_000_000,
                psm_entries: 1
            }
        );
        let j = 0.020 * 1000.0 + 0.020 * 2000.0 + 0.170 * 100.0 + 0.790 * 10.0;
        assert!((m.joules_at(ms(1000)) - j / 1000.0).abs() < 1e-12);
        // A reading does not change the meter.
        assert_eq!(m.times_at(ms(1000)), t);
    }

    #[test]
    fn psm_entry_and_exit() {
        let mut m = RadioMeter::new(P);
        // A gap of exactly the timeout stays awake.
        m.busy(ms(100), ms(101), false);
        assert_eq!(m.times_at(ms(101)).psm_entries, 0);
        // A longer gap sleeps after the timeout and wakes for the next TXOP.
        m.busy(ms(301), ms(302), false);
        let t = m.times_at(ms(302));
        assert_eq!((t.psm_entries, t.psm_ns, t.idle_ns), (1, 100_000_000, 200_000_000));
        // Awake again: a short gap after the wake-up is idle, not asleep.
        m.busy(ms(352), ms(353), true);
        let t = m.times_at(ms(353));
        assert_eq!((t.psm_entries, t.psm_ns, t.idle_ns), (1, 100_000_000, 250_000_000));
        // A radio that never carries anything sleeps after the timeout for the whole run.
        let z = RadioMeter::new(P);
        let t = z.times_at(ms(5000));
        assert_eq!((t.idle_ns, t.psm_ns, t.psm_entries), (100_000_000, 4_900_000_000, 1));
    }

    #[test]
    fn host_costs_match_the_measured_caps() {
        let h = ROG_PHONE_2;
        assert!((h.cap_mbps(true, CpuClass::Little) - 2000.0).abs() < 1.0);
        assert!((h.cap_mbps(true, CpuClass::Big) - 2150.0).abs() < 1.0);
        // GRO off on 11ac at 73:27, LITTLE: 1810 Mbit/s total.
        let ad = 0.73 * 1810.0 / h.cap_mbps(true, CpuClass::Little);
        let ac = 0.27 * 1810.0 / h.cap_mbps(false, CpuClass::Little);
        assert!((ad + ac - 1.0).abs() < 0.002, "{}", ad + ac);
        assert!(host_of("generic-11ad").is_none() && radio_power("panasonic-wigig").is_none());
    }
}
