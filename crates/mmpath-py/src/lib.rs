//! `mmpath._core`: the thin PyO3 layer over mmpath-sim. It converts types and maps errors;
//! no simulation logic lives here. Contract: docs/core-api.md.

mod parquet_sink;
mod parquet_source;
mod pypm;
mod pysched;

use mmpath_sim::scenario::Scenario;
use mmpath_sim::sim::{RunOutput, Simulation as Sim, CC_STATES, LINK_EVENT_KINDS};
use mmpath_sim::trace::{EventCols, IntervalCols, TimelineCols};
use mmpath_sim::Time;
use numpy::IntoPyArray;
use pyo3::create_exception;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

create_exception!(_core, ScenarioError, PyValueError, "A scenario field is missing, unknown or out of range.");
// Named as users import it (`mmpath.SchedulerError`), so it pickles (process pools, Dask).
create_exception!(mmpath, SchedulerError, PyRuntimeError, "A custom (Python) MPTCP scheduler failed.");

fn scenario_err(e: mmpath_sim::ScenarioError) -> PyErr {
    ScenarioError::new_err(e.to_string())
}

/// Validates a scenario (JSON) and returns it with every default filled in (JSON).
#[pyfunction]
fn normalize_scenario(json: &str) -> PyResult<String> {
    Scenario::from_json(json).map(|s| s.to_json()).map_err(scenario_err)
}

/// Parses an mmpath CSV channel trace (docs/traces.md) with the core's own parser, for the
/// analyzer: one entry per step, each field as the channel has it after that step (a field a
/// row leaves empty keeps its earlier value; NaN where never given). ValueError with the
/// parser's `FILE:LINE: message` for a malformed trace.
#[pyfunction]
fn parse_csv_trace<'py>(py: Python<'py>, text: &str, label: &str) -> PyResult<Bound<'py, PyDict>> {
    use mmpath_sim::link::trace::{parse, ChannelState, TraceFormat, TraceOpts};
    let tr = parse(text, label, TraceFormat::Csv, &TraceOpts::default())
        .map_err(|e| PyValueError::new_err(e.to_string()))?;
    let n = tr.steps.len();
    let (mut t, mut rate, mut mcs, mut up) =
        (Vec::with_capacity(n), Vec::with_capacity(n), Vec::with_capacity(n), Vec::with_capacity(n));
    let (mut rssi, mut snr, mut sector) = (Vec::with_capacity(n), Vec::with_capacity(n), Vec::with_capacity(n));
    let mut st = ChannelState::default();
    let f = |v: Option<f64>| v.unwrap_or(f64::NAN);
    for step in &tr.steps {
        st.apply(&step.set);
        t.push(step.at.secs_f64());
        rate.push(f(st.rate_bps.map(|b| b as f64 / 1e6)));
        mcs.push(f(st.mcs.map(f64::from)));
        up.push(f(st.up.map(|u| if u { 1.0 } else { 0.0 })));
        rssi.push(f(st.rssi_dbm.map(f64::from)));
        snr.push(f(st.snr_db.map(f64::from)));
        sector.push(f(st.sector.map(f64::from)));
    }
    let d = PyDict::new(py);
    for (k, v) in [
        ("t_s", t),
        ("rate_mbps", rate),
        ("mcs", mcs),
        ("link_up", up),
        ("rssi_dbm", rssi),
        ("snr_db", snr),
        ("sector", sector),
    ] {
        d.set_item(k, v.into_pyarray(py))?;
    }
    Ok(d)
}

/// The signal a path manager hears on a radio path of device preset `name` against the RSSI the
/// channel has (docs/traces.md `rssi_dbm`): the device's receiver gain over the standard's
/// sensitivities is added, as the simulator's path manager hears it (sim/path.rs update_radio).
/// ValueError naming the presets for an unknown name.
#[pyfunction]
fn device_rx_gain_db(name: &str) -> PyResult<f64> {
    use mmpath_sim::link::device::{find, DEVICES};
    find(name).map(|d| d.rx_gain_db).ok_or_else(|| {
        let names: Vec<&str> = DEVICES.iter().map(|d| d.name).collect();
        PyValueError::new_err(format!("unknown device preset {name:?} (presets: {})", names.join(", ")))
    })
}

/// Reads a wil6210 / NUWiNS log (docs/traces.md) with the core's own parser, for the analyzer:
/// one entry per row (not only the changes a trace keeps), NaN where a row leaves a cell empty;
/// `first_s` (None without a time column), `clock_times` and `time_unit` describe the time
/// column. ValueError with the parser's `FILE:LINE: message` for a malformed log.
#[pyfunction]
fn parse_wil6210_log<'py>(py: Python<'py>, text: &str, label: &str) -> PyResult<Bound<'py, PyDict>> {
    let log =
        mmpath_sim::link::trace::read_wil6210_log(text, label).map_err(|e| PyValueError::new_err(e.to_string()))?;
    fn nan<T: Copy + Into<f64>>(v: &[Option<T>]) -> Vec<f64> {
        v.iter().map(|x| x.map_or(f64::NAN, Into::into)).collect()
    }
    let d = PyDict::new(py);
    d.set_item("t_s", log.t_s.into_pyarray(py))?;
    d.set_item("mcs", nan(&log.mcs).into_pyarray(py))?;
    d.set_item("sector", nan(&log.sector).into_pyarray(py))?;
    let up: Vec<f64> = log.up.iter().map(|u| u.map_or(f64::NAN, |u| if u { 1.0 } else { 0.0 })).collect();
    d.set_item("link_up", up.into_pyarray(py))?;
    d.set_item("sqi", nan(&log.sqi).into_pyarray(py))?;
    d.set_item("rssi_dbm", nan(&log.rssi_dbm).into_pyarray(py))?;
    let rate: Vec<f64> = log.rate_bps.iter().map(|r| r.map_or(f64::NAN, |b| b as f64 / 1e6)).collect();
    d.set_item("rate_mbps", rate.into_pyarray(py))?;
    d.set_item("first_s", log.first_s)?;
    d.set_item("clock_times", log.clock_times)?;
    d.set_item("time_unit", log.time_unit)?;
    Ok(d)
}

/// The column a wil6210 header cell names (time, mcs, sector, status, sqi, rssi, throughput),
/// None for one the parser ignores: the analyzer's detection of a wil6210 log by its first line.
#[pyfunction]
fn wil6210_column(cell: &str) -> Option<&'static str> {
    mmpath_sim::link::trace::wil6210_column(cell)
}

#[pyfunction]
fn version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

/// One simulation run, driven from Python in chunks (for progress bars and Ctrl-C).
#[pyclass(module = "mmpath._core")]
struct Simulation {
    sim: Sim,
    done: bool,
    /// The first error of a Python scheduler, raised when control is back in Python.
    sched_error: pysched::ErrorSlot,
}

impl Simulation {
    fn check_scheduler(&self, py: Python<'_>) -> PyResult<()> {
        match self.sched_error.lock().expect("error slot").take() {
            // Ctrl-C (KeyboardInterrupt, raised in whatever Python code runs when it arrives:
            // nearly always the scheduler's) and SystemExit are not the scheduler's mistakes:
            // they go on as themselves, or an `except SchedulerError` around the run eats them.
            Some((_, cause)) if !cause.is_instance_of::<pyo3::exceptions::PyException>(py) => Err(cause),
            Some((msg, cause)) => {
                let err = SchedulerError::new_err(msg);
                err.set_cause(py, Some(cause)); // the user's traceback, as `raise ... from e`
                Err(err)
            }
            None => Ok(()),
        }
    }
}

fn json_to_py<'py>(py: Python<'py>, v: &serde_json::Value) -> PyResult<Bound<'py, PyAny>> {
    use serde_json::Value as V;
    Ok(match v {
        V::Null => py.None().into_bound(py),
        V::Bool(b) => b.into_pyobject(py)?.to_owned().into_any(),
        V::Number(n) => {
            if let Some(u) = n.as_u64() {
                u.into_pyobject(py)?.into_any()
            } else if let Some(i) = n.as_i64() {
                i.into_pyobject(py)?.into_any()
            } else {
                n.as_f64().unwrap_or(f64::NAN).into_pyobject(py)?.into_any()
            }
        }
        V::String(s) => s.into_pyobject(py)?.into_any(),
        V::Array(a) => {
            let l = PyList::empty(py);
            for x in a {
                l.append(json_to_py(py, x)?)?;
            }
            l.into_any()
        }
        V::Object(o) => {
            let d = PyDict::new(py);
            for (k, x) in o {
                d.set_item(k, json_to_py(py, x)?)?;
            }
            d.into_any()
        }
    })
}

/// The timeline, interval and link-event columns of a chunk (or of what finish() had left), as
/// numpy arrays: the Vecs are handed over, not copied.
fn chunk_to_py<'py>(
    py: Python<'py>,
    d: &Bound<'py, PyDict>,
    intervals: IntervalCols,
    timeline: TimelineCols,
    events: EventCols,
) -> PyResult<()> {
    let iv = PyDict::new(py);
    let i = intervals;
    iv.set_item("t_s", i.t_s.into_pyarray(py))?;
    iv.set_item("flow", i.flow.into_pyarray(py))?;
    iv.set_item("subflow", i.subflow.into_pyarray(py))?;
    iv.set_item("path", i.path.into_pyarray(py))?;
    iv.set_item("bytes", i.bytes.into_pyarray(py))?;
    d.set_item("intervals", iv)?;
    let tl = PyDict::new(py);
    let t = timeline;
    tl.set_item("t_s", t.t_s.into_pyarray(py))?;
    tl.set_item("flow", t.flow.into_pyarray(py))?;
    tl.set_item("path", t.path.into_pyarray(py))?;
    tl.set_item("cwnd_bytes", t.cwnd_bytes.into_pyarray(py))?;
    tl.set_item("ssthresh_bytes", t.ssthresh_bytes.into_pyarray(py))?;
    tl.set_item("srtt_ms", t.srtt_ms.into_pyarray(py))?;
    tl.set_item("rttvar_ms", t.rttvar_ms.into_pyarray(py))?;
    tl.set_item("in_flight_bytes", t.in_flight_bytes.into_pyarray(py))?;
    tl.set_item("rwnd_bytes", t.rwnd_bytes.into_pyarray(py))?;
    tl.set_item("cc_state", t.cc_state.into_pyarray(py))?;
    tl.set_item("queue_bytes", t.queue_bytes.into_pyarray(py))?;
    tl.set_item("phy_rate_mbps", t.phy_rate_mbps.into_pyarray(py))?;
    tl.set_item("mcs", t.mcs.into_pyarray(py))?;
    tl.set_item("rssi_dbm", t.rssi_dbm.into_pyarray(py))?;
    tl.set_item("snr_db", t.snr_db.into_pyarray(py))?;
    tl.set_item("link_up", t.link_up.into_pyarray(py))?;
    tl.set_item("delivered_bytes", t.delivered_bytes.into_pyarray(py))?;
    tl.set_item("retransmits", t.retransmits.into_pyarray(py))?;
    tl.set_item("subflow", t.subflow.into_pyarray(py))?;
    tl.set_item("sf_state", t.sf_state.into_pyarray(py))?;
    tl.set_item("scheduled_bytes", t.scheduled_bytes.into_pyarray(py))?;
    tl.set_item("sched_metric", t.sched_metric.into_pyarray(py))?;
    tl.set_item("energy_j", t.energy_j.into_pyarray(py))?;
    d.set_item("timeline", tl)?;

    let ev = PyDict::new(py);
    let e = events;
    ev.set_item("t_s", e.t_s.into_pyarray(py))?;
    ev.set_item("path", e.path.into_pyarray(py))?;
    ev.set_item("kind", e.kind.into_pyarray(py))?;
    ev.set_item("value", e.value.into_pyarray(py))?;
    d.set_item("events", ev)?;

    Ok(())
}

fn output_to_py<'py>(py: Python<'py>, out: RunOutput) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("summary", json_to_py(py, &out.summary)?)?;
    chunk_to_py(py, &d, out.intervals, out.timeline, out.events)?;
    let ch = PyDict::new(py);
    for (name, csv) in out.channel_csv {
        ch.set_item(name, csv)?;
    }
    d.set_item("channel_csv", ch)?;
    d.set_item("flow_names", out.flow_names)?;
    d.set_item("path_names", out.path_names)?;
    d.set_item("cc_states", CC_STATES.to_vec())?;
    d.set_item("event_kinds", LINK_EVENT_KINDS.to_vec())?;
    Ok(d)
}

#[pymethods]
impl Simulation {
    #[new]
    fn new(json: &str, seed: u64) -> PyResult<Self> {
        let sim = Sim::from_json(json, seed).map_err(scenario_err)?;
        Ok(Simulation { sim, done: false, sched_error: Default::default() })
    }

    /// Runs MPTCP flow `flow` with a scheduler written in Python (see pysched.rs); before the
    /// run starts only.
    fn set_scheduler(&mut self, py: Python<'_>, flow: &str, scheduler: Py<PyAny>) -> PyResult<()> {
        let paths = self.sim.scenario().path.iter().map(|p| p.name.clone().unwrap_or_default()).collect();
        let s = pysched::PyScheduler::new(py, scheduler, paths, self.sched_error.clone())?;
        self.sim.set_scheduler(flow, Box::new(s)).map_err(PyValueError::new_err)
    }

    #[getter]
    fn duration_s(&self) -> f64 {
        self.sim.end().secs_f64()
    }

    #[getter]
    fn now_s(&self) -> f64 {
        self.sim.now().secs_f64()
    }

    /// Timeline rows the run records per simulated second: how far to run before `drain()` for
    /// chunks of a given size.
    #[getter]
    fn timeline_rows_per_s(&self) -> f64 {
        self.sim.timeline_rows_per_s()
    }

    #[getter]
    fn events(&self) -> u64 {
        self.sim.events_processed()
    }

    /// Advances to min(t_s, duration) with the GIL released.
    fn run_until(&mut self, py: Python<'_>, t_s: f64) -> PyResult<()> {
        if self.done {
            return Err(PyRuntimeError::new_err("this simulation has finished; create a new one"));
        }
        let sim = &mut self.sim;
        py.detach(|| sim.run_until(Time::from_secs_f64(t_s)));
        self.check_scheduler(py)
    }

    /// The names the integer columns stand for, as finish() gives them: {"flow_names",
    /// "path_names", "cc_states", "event_kinds"} (to decode chunks before the run ends).
    fn names<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let sc = self.sim.scenario();
        let d = PyDict::new(py);
        d.set_item("flow_names", sc.flow.iter().map(|f| f.name.clone().unwrap_or_default()).collect::<Vec<_>>())?;
        d.set_item("path_names", sc.path.iter().map(|p| p.name.clone().unwrap_or_default()).collect::<Vec<_>>())?;
        d.set_item("cc_states", CC_STATES.to_vec())?;
        d.set_item("event_kinds", LINK_EVENT_KINDS.to_vec())?;
        Ok(d)
    }

    /// What the run recorded since the last call (see docs/core-api.md): {"timeline",
    /// "intervals", "events"}, each a dict of numpy columns; the core keeps none of it.
    fn drain<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        if self.done {
            return Err(PyRuntimeError::new_err("this simulation has finished; create a new one"));
        }
        let c = self.sim.drain();
        let d = PyDict::new(py);
        chunk_to_py(py, &d, c.intervals, c.timeline, c.events)?;
        Ok(d)
    }

    /// Runs to the end and returns the results (see docs/core-api.md).
    fn finish<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        if self.done {
            return Err(PyRuntimeError::new_err("finish() was already called on this simulation"));
        }
        self.done = true;
        let sim = &mut self.sim;
        let out = py.detach(|| sim.finish());
        self.check_scheduler(py)?;
        output_to_py(py, out)
    }
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(normalize_scenario, m)?)?;
    m.add_function(wrap_pyfunction!(version, m)?)?;
    m.add_function(wrap_pyfunction!(parse_csv_trace, m)?)?;
    m.add_function(wrap_pyfunction!(device_rx_gain_db, m)?)?;
    m.add_function(wrap_pyfunction!(parse_wil6210_log, m)?)?;
    m.add_function(wrap_pyfunction!(wil6210_column, m)?)?;
    m.add_class::<Simulation>()?;
    m.add_class::<parquet_sink::ParquetSink>()?;
    m.add_class::<parquet_source::ParquetSource>()?;
    m.add_class::<pypm::PathManagerPolicy>()?;
    m.add("ScenarioError", m.py().get_type::<ScenarioError>())?;
    m.add("SchedulerError", m.py().get_type::<SchedulerError>())?;
    Ok(())
}
