//! Recording: 100 ms interval bins, the timeline sampled every few ms, link events, and a
//! fixed-size log histogram for RTT percentiles. Everything is kept in columns (one Vec per
//! column) so the Python side receives whole arrays, never rows.

/// Log-scale histogram of positive values: 1 % wide bins from 1e-3 to 1e6 (units of the
/// caller, ms for RTTs). Percentiles are exact to the bin width; memory is fixed.
#[derive(Debug, Clone, Default)]
pub struct LogHistogram {
    counts: Vec<u32>,
    n: u64,
    sum: f64,
    min: f64,
    max: f64,
}

const H_LO: f64 = 1e-3;
const H_GROWTH: f64 = 1.01;
const H_BINS: usize = 2_100; // 1.01^2100 * 1e-3 > 1e6

impl LogHistogram {
    fn bin(v: f64) -> usize {
        if v <= H_LO {
            0
        } else {
            (((v / H_LO).ln() / H_GROWTH.ln()) as usize).min(H_BINS - 1)
        }
    }

    pub fn record(&mut self, v: f64) {
        if !v.is_finite() || v < 0.0 {
            return;
        }
        if self.counts.is_empty() {
            self.counts = vec![0; H_BINS];
            self.min = f64::INFINITY;
            self.max = f64::NEG_INFINITY;
        }
        self.counts[Self::bin(v)] += 1;
        self.n += 1;
        self.sum += v;
        self.min = self.min.min(v);
        self.max = self.max.max(v);
    }

    pub fn count(&self) -> u64 {
        self.n
    }

    /// Adds every sample of `other` (an MPTCP connection's RTTs are its subflows' together).
    pub fn merge(&mut self, other: &LogHistogram) {
        if other.n == 0 {
            return;
        }
        if self.counts.is_empty() {
            *self = other.clone();
            return;
        }
        for (a, b) in self.counts.iter_mut().zip(&other.counts) {
            *a += b;
        }
        self.n += other.n;
        self.sum += other.sum;
        self.min = self.min.min(other.min);
        self.max = self.max.max(other.max);
    }

    pub fn mean(&self) -> Option<f64> {
        (self.n > 0).then(|| self.sum / self.n as f64)
    }
    pub fn min(&self) -> Option<f64> {
        (self.n > 0).then_some(self.min)
    }
    pub fn max(&self) -> Option<f64> {
        (self.n > 0).then_some(self.max)
    }

    /// The q-quantile (0..=1): the geometric centre of the bin holding it, clamped to the
    /// observed range.
    pub fn quantile(&self, q: f64) -> Option<f64> {
        if self.n == 0 {
            return None;
        }
        let rank = ((q.clamp(0.0, 1.0) * self.n as f64).ceil() as u64).max(1);
        let mut seen = 0u64;
        for (i, &c) in self.counts.iter().enumerate() {
            seen += c as u64;
            if seen >= rank {
                let centre = H_LO * H_GROWTH.powf(i as f64 + 0.5);
                return Some(centre.clamp(self.min, self.max));
            }
        }
        Some(self.max)
    }
}

/// Rows the timeline reserves room for at the start (a 10 ms blockage run's first ~55 s):
/// a run that hands its rows out in chunks (`Simulation::drain`) never needs more; one that does
/// not grows the buffer as it goes, instead of reserving a day-long run's whole timeline at once.
pub const TIMELINE_FIRST_ROWS: usize = 1 << 14;

/// Columns of timeline.parquet (see docs/core-api.md and docs/outputs.md).
#[derive(Debug, Default)]
pub struct TimelineCols {
    pub t_s: Vec<f64>,
    pub flow: Vec<i32>,
    pub path: Vec<i32>,
    pub cwnd_bytes: Vec<f64>,
    pub ssthresh_bytes: Vec<f64>,
    pub srtt_ms: Vec<f64>,
    pub rttvar_ms: Vec<f64>,
    pub in_flight_bytes: Vec<f64>,
    pub rwnd_bytes: Vec<f64>,
    pub cc_state: Vec<i8>,
    pub queue_bytes: Vec<f64>,
    pub phy_rate_mbps: Vec<f64>,
    pub mcs: Vec<f64>,
    pub rssi_dbm: Vec<f64>,
    pub snr_db: Vec<f64>,
    pub link_up: Vec<bool>,
    pub delivered_bytes: Vec<u64>,
    pub retransmits: Vec<u64>,
    /// MPTCP: the subflow's index in its connection (-1: the connection row, or plain TCP/UDP).
    pub subflow: Vec<i32>,
    /// MPTCP subflow state: 0 active, 1 pf (v0.9x), 2 stale (upstream), 3 not established,
    /// 4 backup standing by; -1 for rows that are not subflows.
    pub sf_state: Vec<i8>,
    /// MPTCP: bytes the scheduler has assigned to the subflow so far (its decisions).
    pub scheduled_bytes: Vec<u64>,
    /// MPTCP connection row: the scheduler's own state (e.g. MuSher's ratio), NaN if none.
    pub sched_metric: Vec<f64>,
    /// Joules the client radios of the row's path (a connection row: all its paths) used since
    /// the start (energy.rs); NaN if none is metered.
    pub energy_j: Vec<f64>,
}

impl TimelineCols {
    pub fn with_capacity(n: usize) -> Self {
        TimelineCols {
            t_s: Vec::with_capacity(n),
            flow: Vec::with_capacity(n),
            path: Vec::with_capacity(n),
            cwnd_bytes: Vec::with_capacity(n),
            ssthresh_bytes: Vec::with_capacity(n),
            srtt_ms: Vec::with_capacity(n),
            rttvar_ms: Vec::with_capacity(n),
            in_flight_bytes: Vec::with_capacity(n),
            rwnd_bytes: Vec::with_capacity(n),
            cc_state: Vec::with_capacity(n),
            queue_bytes: Vec::with_capacity(n),
            phy_rate_mbps: Vec::with_capacity(n),
            mcs: Vec::with_capacity(n),
            rssi_dbm: Vec::with_capacity(n),
            snr_db: Vec::with_capacity(n),
            link_up: Vec::with_capacity(n),
            delivered_bytes: Vec::with_capacity(n),
            retransmits: Vec::with_capacity(n),
            subflow: Vec::with_capacity(n),
            sf_state: Vec::with_capacity(n),
            scheduled_bytes: Vec::with_capacity(n),
            sched_metric: Vec::with_capacity(n),
            energy_j: Vec::with_capacity(n),
        }
    }
    pub fn len(&self) -> usize {
        self.t_s.len()
    }
    /// The rows so far, leaving an empty buffer of the same capacity (the run hands its timeline
    /// out in chunks: memory bounded by one chunk, not by the run's length).
    pub fn take(&mut self) -> TimelineCols {
        let cap = self.t_s.capacity();
        std::mem::replace(self, TimelineCols::with_capacity(cap))
    }
    pub fn is_empty(&self) -> bool {
        self.t_s.is_empty()
    }
}

/// One timeline row, pushed column by column.
#[derive(Debug, Clone, Copy)]
pub struct TimelineRow {
    pub t_s: f64,
    pub flow: i32,
    pub path: i32,
    pub cwnd_bytes: f64,
    pub ssthresh_bytes: f64,
    pub srtt_ms: f64,
    pub rttvar_ms: f64,
    pub in_flight_bytes: f64,
    pub rwnd_bytes: f64,
    pub cc_state: i8,
    pub queue_bytes: f64,
    pub phy_rate_mbps: f64,
    pub mcs: f64,
    pub rssi_dbm: f64,
    pub snr_db: f64,
    pub link_up: bool,
    pub delivered_bytes: u64,
    pub retransmits: u64,
    pub subflow: i32,
    pub sf_state: i8,
    pub scheduled_bytes: u64,
    pub sched_metric: f64,
    pub energy_j: f64,
}

impl TimelineCols {
    pub fn push(&mut self, r: TimelineRow) {
        self.t_s.push(r.t_s);
        self.flow.push(r.flow);
        self.path.push(r.path);
        self.cwnd_bytes.push(r.cwnd_bytes);
        self.ssthresh_bytes.push(r.ssthresh_bytes);
        self.srtt_ms.push(r.srtt_ms);
        self.rttvar_ms.push(r.rttvar_ms);
        self.in_flight_bytes.push(r.in_flight_bytes);
        self.rwnd_bytes.push(r.rwnd_bytes);
        self.cc_state.push(r.cc_state);
        self.queue_bytes.push(r.queue_bytes);
        self.phy_rate_mbps.push(r.phy_rate_mbps);
        self.mcs.push(r.mcs);
        self.rssi_dbm.push(r.rssi_dbm);
        self.snr_db.push(r.snr_db);
        self.link_up.push(r.link_up);
        self.delivered_bytes.push(r.delivered_bytes);
        self.retransmits.push(r.retransmits);
        self.subflow.push(r.subflow);
        self.sf_state.push(r.sf_state);
        self.scheduled_bytes.push(r.scheduled_bytes);
        self.sched_metric.push(r.sched_metric);
        self.energy_j.push(r.energy_j);
    }
}

/// Link events (down, up, rate change) for marking plots.
#[derive(Debug, Default)]
pub struct EventCols {
    pub t_s: Vec<f64>,
    pub path: Vec<i32>,
    pub kind: Vec<i8>,
    pub value: Vec<f64>,
}

pub const EVENT_KINDS: [&str; 3] = ["down", "up", "rate"];
pub const EV_DOWN: i8 = 0;
pub const EV_UP: i8 = 1;
pub const EV_RATE: i8 = 2;

/// Interval columns: one row per flow per bin (iperf3 -i style), built at the end from
/// per-flow bin arrays that delivery adds into.
#[derive(Debug, Default)]
pub struct IntervalCols {
    pub t_s: Vec<f64>,
    pub flow: Vec<i32>,
    pub subflow: Vec<i32>,
    pub path: Vec<i32>,
    pub bytes: Vec<u64>,
}

/// Per-flow byte counts in fixed bins over the run. Only the bins not yet handed out are kept
/// (`take_until`): a run streams its intervals as it goes, so memory is bounded by the bins
/// between two hand-outs, not by the run's length (issue 26).
#[derive(Debug, Clone)]
pub struct Bins {
    pub width_ns: u64,
    /// Bins over the whole run.
    n: usize,
    /// Index of `bytes[0]`: the bins before it were handed out.
    first: usize,
    bytes: Vec<u64>,
    /// Bytes of the bins handed out.
    taken: u64,
}

impl Bins {
    pub fn new(width_ns: u64, span_ns: u64) -> Bins {
        let n = span_ns.div_ceil(width_ns).max(1) as usize;
        Bins { width_ns, n, first: 0, bytes: Vec::with_capacity(n.min(64)), taken: 0 }
    }
    /// Bins over the whole run.
    pub fn count(&self) -> usize {
        self.n
    }
    /// The first bin not yet handed out.
    pub fn first(&self) -> usize {
        self.first
    }
    pub fn add(&mut self, t_ns: u64, bytes: u64) {
        let i = ((t_ns / self.width_ns) as usize).min(self.n - 1);
        // Time only moves on, and only bins that ended before now are handed out.
        debug_assert!(i >= self.first, "bin {i} was handed out already");
        let j = i.saturating_sub(self.first);
        if j >= self.bytes.len() {
            self.bytes.resize(j + 1, 0);
        }
        self.bytes[j] += bytes;
    }
    /// Bytes of bin `i` (0 for one nothing was added to, or one handed out).
    pub fn get(&self, i: usize) -> u64 {
        i.checked_sub(self.first).and_then(|j| self.bytes.get(j)).copied().unwrap_or(0)
    }
    /// Hands out the bins before `upto` (they are dropped; their bytes stay in `total`).
    pub fn take_until(&mut self, upto: usize) {
        let upto = upto.min(self.n);
        if upto <= self.first {
            return;
        }
        let k = (upto - self.first).min(self.bytes.len());
        self.taken += self.bytes.drain(..k).sum::<u64>();
        self.first = upto;
    }
    /// Bytes of every bin, handed out or not.
    pub fn total(&self) -> u64 {
        self.taken + self.bytes.iter().sum::<u64>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histogram_quantiles_within_a_bin() {
        let mut h = LogHistogram::default();
        for i in 1..=1000 {
            h.record(i as f64);
        }
        let p95 = h.quantile(0.95).unwrap();
        assert!((p95 - 950.0).abs() / 950.0 < 0.011, "{p95}");
        assert_eq!(h.min(), Some(1.0));
        assert_eq!(h.max(), Some(1000.0));
        assert!((h.mean().unwrap() - 500.5).abs() < 1e-9);
        assert_eq!(LogHistogram::default().quantile(0.5), None);
    }

    #[test]
    fn merged_histogram_is_the_histogram_of_all_samples() {
        let (mut a, mut b, mut all) = (LogHistogram::default(), LogHistogram::default(), LogHistogram::default());
        for i in 1..=300 {
            a.record(i as f64);
            all.record(i as f64);
        }
        for i in 301..=1000 {
            b.record(i as f64);
            all.record(i as f64);
        }
        let mut m = LogHistogram::default();
        m.merge(&a);
        m.merge(&LogHistogram::default());
        m.merge(&b);
        assert_eq!((m.count(), m.min(), m.max()), (1000, Some(1.0), Some(1000.0)));
        assert_eq!(m.quantile(0.95), all.quantile(0.95));
        assert!((m.mean().unwrap() - 500.5).abs() < 1e-9);
    }

    #[test]
    fn bins_clamp_the_last_edge() {
        let mut b = Bins::new(100, 1000);
        b.add(0, 1);
        b.add(999, 2);
        b.add(1000, 3); // exactly at the end: last bin
        assert_eq!(b.count(), 10);
        assert_eq!(b.get(9), 5);
        assert_eq!(b.total(), 6);
    }

    #[test]
    fn bins_handed_out_keep_their_total_and_free_their_memory() {
        let mut b = Bins::new(100, 1000);
        b.add(50, 1);
        b.add(250, 2);
        b.take_until(2);
        assert_eq!((b.first(), b.get(0), b.get(2)), (2, 0, 2));
        assert_eq!(b.bytes.len(), 1, "bins 0 and 1 are no longer held");
        b.add(950, 4);
        b.take_until(3);
        assert_eq!((b.get(9), b.total()), (4, 7));
        b.take_until(99); // past the end: every bin
        assert_eq!((b.first(), b.total(), b.bytes.len()), (10, 7, 0));
    }
}
