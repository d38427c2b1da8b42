//! A run handed out in chunks (`Simulation::drain`, issue 26: the Python front writes each chunk
//! to disk so a day-long run's memory is bounded) records exactly what one run to the end does:
//! the same timeline rows, interval rows and link events, in the same order, bit for bit, and
//! the same summary; and between two chunks the core holds only what the last stretch recorded.

use mmpath_sim::{RunOutput, Simulation, Time};

/// Two wired paths, one blocked for a while, and an MPTCP flow over both plus a UDP flow.
const SCENARIO: &str = r#"{"duration_s": 3.0, "backbone": {"enabled": false},
    "path": [{"name": "A", "rate_mbps": 100, "delay_ms": 2, "mtu_bytes": 1500,
              "schedule": [{"t_s": 1.0, "up": false}, {"t_s": 1.7, "up": true}]},
             {"name": "B", "rate_mbps": 50, "delay_ms": 5, "mtu_bytes": 1500}],
    "flow": [{"name": "mp", "kind": "mptcp"},
             {"name": "u", "kind": "udp", "path": "B", "rate_mbps": 5}]}"#;

#[derive(Default, PartialEq, Debug)]
struct All {
    tl_t: Vec<u64>,
    tl_flow: Vec<i32>,
    tl_cwnd: Vec<u64>,
    tl_srtt: Vec<u64>,
    tl_delivered: Vec<u64>,
    tl_energy: Vec<u64>,
    iv_t: Vec<u64>,
    iv_flow: Vec<i32>,
    iv_sub: Vec<i32>,
    iv_bytes: Vec<u64>,
    ev_t: Vec<u64>,
    ev_kind: Vec<i8>,
}

impl All {
    fn add(
        &mut self,
        tl: &mmpath_sim::trace::TimelineCols,
        iv: &mmpath_sim::trace::IntervalCols,
        ev: &mmpath_sim::trace::EventCols,
    ) {
        let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        self.tl_t.extend(bits(&tl.t_s));
        self.tl_flow.extend(&tl.flow);
        self.tl_cwnd.extend(bits(&tl.cwnd_bytes));
        self.tl_srtt.extend(bits(&tl.srtt_ms));
        self.tl_delivered.extend(&tl.delivered_bytes);
        self.tl_energy.extend(bits(&tl.energy_j));
        self.iv_t.extend(bits(&iv.t_s));
        self.iv_flow.extend(&iv.flow);
        self.iv_sub.extend(&iv.subflow);
        self.iv_bytes.extend(&iv.bytes);
        self.ev_t.extend(bits(&ev.t_s));
        self.ev_kind.extend(&ev.kind);
    }
    fn add_rest(&mut self, out: &RunOutput) {
        self.add(&out.timeline, &out.intervals, &out.events);
    }
}

#[test]
fn chunks_put_together_are_the_whole_run() {
    let mut whole = Simulation::from_json(SCENARIO, 7).expect("valid scenario");
    let one = whole.finish();
    let mut want = All::default();
    want.add_rest(&one);
    assert!(want.tl_t.len() > 1000 && want.iv_t.len() > 100 && want.ev_t.len() == 2, "the run records something");

    // Stretches that end mid-bin (0.137 s) and exactly on bin edges (0.1 s) alike.
    for step in [0.137, 0.1, 1.0] {
        let mut sim = Simulation::from_json(SCENARIO, 7).expect("valid scenario");
        let mut got = All::default();
        let rows_per_s = sim.timeline_rows_per_s();
        let mut t = 0.0;
        while t < 3.0 {
            t += step;
            sim.run_until(Time::from_secs_f64(t));
            let c = sim.drain();
            // Only what the stretch recorded: its samples (one per flow, subflow and connection
            // per 10 ms), never the run so far.
            assert!(c.timeline.len() as f64 <= rows_per_s * step + 5.0, "{} rows after {t} s", c.timeline.len());
            got.add(&c.timeline, &c.intervals, &c.events);
        }
        let rest = sim.finish();
        got.add_rest(&rest);
        assert_eq!(got, want, "drained every {step} s");
        assert_eq!(rest.summary, one.summary, "drained every {step} s");
    }
}
