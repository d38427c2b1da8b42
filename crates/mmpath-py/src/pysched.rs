//! MPTCP schedulers written in Python: an object with `select(now_s, subflows, conn)` (and,
//! optionally, `on_ack(now_s, subflow, acked_bytes)`, `on_rto(now_s, subflow)`,
//! `on_link_event(now_s, subflow, event)` and a `name`) runs behind the core's `Scheduler`
//! trait. Every call crosses into Python, so it is slow; the core stays pure Rust.
//!
//! A Python error (or an answer that is not a subflow index or None) is kept, the scheduler
//! waits from then on, and the run's driver raises it once control is back in Python: a
//! `SchedulerError` whose message names the line of the user's code that raised (file:line, the
//! innermost frame) and whose `__cause__` is the original exception, traceback and all.

use mmpath_sim::mptcp::sched::{ConnView, LinkEvent, SchedAction, Scheduler, SubflowView};
use mmpath_sim::Time;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use std::sync::{Arc, Mutex};

/// The first error a Python scheduler raised (the message, and the Python exception itself),
/// shared with the `Simulation` that runs it.
pub type ErrorSlot = Arc<Mutex<Option<(String, PyErr)>>>;

/// Where a Python error was raised: " (at FILE:LINE, in FUNCTION)" from the innermost frame of
/// its traceback; empty for errors without one (the checks of select's answer below).
fn raised_at(py: Python<'_>, e: &PyErr) -> String {
    let Some(tb) = e.traceback(py) else {
        return String::new();
    };
    let at = || -> PyResult<String> {
        let frames = py.import("traceback")?.call_method1("extract_tb", (tb,))?;
        let n = frames.len()?;
        if n == 0 {
            return Ok(String::new());
        }
        let f = frames.get_item(n - 1)?;
        Ok(format!(" (at {}:{}, in {})", f.getattr("filename")?, f.getattr("lineno")?, f.getattr("name")?))
    };
    at().unwrap_or_default()
}

pub struct PyScheduler {
    obj: Py<PyAny>,
    name: String,
    paths: Vec<String>,
    error: ErrorSlot,
    hooks: [bool; 3],
    /// select takes the connection view as its third argument; docs/schedulers.md's shorter form
    /// `select(now, subflows)` is accepted too.
    takes_conn: bool,
}

/// How many of (now_s, subflows, conn) a select method accepts: 3, or 2 for the short form
/// `select(now, subflows)`. Callables whose signature Python cannot read get all three.
fn select_arity(select: &Bound<'_, PyAny>) -> PyResult<usize> {
    let py = select.py();
    let Ok(sig) = py.import("inspect")?.call_method1("signature", (select,)) else { return Ok(3) };
    let probe = |args: Bound<'_, pyo3::types::PyTuple>| sig.call_method1("bind", args).is_ok();
    if probe(pyo3::types::PyTuple::new(
        py,
        [0.0f64.into_pyobject(py)?.into_any(), PyList::empty(py).into_any(), PyDict::new(py).into_any()],
    )?) {
        Ok(3)
    } else if probe(pyo3::types::PyTuple::new(
        py,
        [0.0f64.into_pyobject(py)?.into_any(), PyList::empty(py).into_any()],
    )?) {
        Ok(2)
    } else {
        Err(pyo3::exceptions::PyTypeError::new_err(format!(
            "a custom scheduler's select{} must take (now_s, subflows, conn) or (now_s, subflows)",
            sig.str()?
        )))
    }
}

impl PyScheduler {
    pub fn new(py: Python<'_>, obj: Py<PyAny>, paths: Vec<String>, error: ErrorSlot) -> PyResult<Self> {
        let b = obj.bind(py);
        if !b.hasattr("select")? || !b.getattr("select")?.is_callable() {
            return Err(pyo3::exceptions::PyTypeError::new_err(
                "a custom scheduler needs a method select(now_s, subflows, conn) (or select(now_s, subflows)) returning a subflow index or None",
            ));
        }
        let name = match b.getattr("name") {
            Ok(n) if n.is_instance_of::<pyo3::types::PyString>() => n.extract::<String>()?,
            _ => b.get_type().name()?.to_string(),
        };
        let has = |m: &str| b.hasattr(m).unwrap_or(false);
        let hooks = [has("on_ack"), has("on_rto"), has("on_link_event")];
        let takes_conn = select_arity(&b.getattr("select")?)? == 3;
        Ok(PyScheduler { obj, name, paths, error, hooks, takes_conn })
    }

    fn fail(&self, msg: String, cause: PyErr) {
        let mut slot = self.error.lock().expect("error slot");
        if slot.is_none() {
            *slot = Some((format!("custom scheduler {:?}: {msg}", self.name), cause));
        }
    }

    fn failed(&self) -> bool {
        self.error.lock().expect("error slot").is_some()
    }

    fn subflow_dict<'py>(&self, py: Python<'py>, v: &SubflowView) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        d.set_item("id", v.id)?;
        d.set_item("path", self.paths.get(v.path as usize).cloned().unwrap_or_default())?;
        d.set_item("established", v.established)?;
        d.set_item("backup", v.backup)?;
        d.set_item("pf", v.pf)?;
        d.set_item("stale", v.stale)?;
        d.set_item("in_loss", v.in_loss)?;
        d.set_item("cwnd", v.cwnd)?;
        d.set_item("ssthresh", v.ssthresh)?;
        d.set_item("in_flight", v.in_flight)?;
        d.set_item("queued_bytes", v.queued_bytes)?;
        d.set_item("unacked_bytes", v.unacked_bytes)?;
        d.set_item("mss", v.mss)?;
        d.set_item("srtt_ms", if v.srtt_ns > 0 { Some(v.srtt_ns as f64 / 1e6) } else { None })?;
        d.set_item("rttvar_ms", v.rttvar_ns as f64 / 1e6)?;
        d.set_item("pacing_rate_bps", v.pacing_rate_bps)?;
        d.set_item("delivered_bytes", v.delivered_bytes)?;
        d.set_item("link_up", v.link_up)?;
        d.set_item("scanning", v.scanning)?;
        d.set_item("has_cwnd_room", v.has_cwnd_room())?;
        Ok(d)
    }

    fn call_select(&self, py: Python<'_>, now: Time, conn: &ConnView, sfs: &[SubflowView]) -> PyResult<Option<usize>> {
        let list = PyList::empty(py);
        for v in sfs {
            list.append(self.subflow_dict(py, v)?)?;
        }
        let r = if self.takes_conn {
            let c = PyDict::new(py);
            c.set_item("unassigned_bytes", conn.unassigned_bytes)?;
            c.set_item("send_window_free_bytes", conn.send_window_free_bytes)?;
            c.set_item("data_in_flight_bytes", conn.data_in_flight_bytes)?;
            c.set_item("reinjecting", conn.reinjecting)?;
            c.set_item("data_acked_bytes", conn.data_acked_bytes)?;
            self.obj.bind(py).call_method1("select", (now.secs_f64(), list, c))?
        } else {
            self.obj.bind(py).call_method1("select", (now.secs_f64(), list))?
        };
        if r.is_none() {
            return Ok(None);
        }
        // A bool is an int to Python (True == 1); as an answer it is a mistake, not subflow 1.
        let i: i64 =
            (!r.is_instance_of::<pyo3::types::PyBool>()).then(|| r.extract().ok()).flatten().ok_or_else(|| {
                pyo3::exceptions::PyTypeError::new_err(format!(
                    "select() must return a subflow index or None, not {}",
                    r.get_type().name().map(|n| n.to_string()).unwrap_or_default()
                ))
            })?;
        if i < 0 || i as usize >= sfs.len() {
            return Err(pyo3::exceptions::PyValueError::new_err(format!(
                "select() returned {i}; subflow indexes are 0..{}",
                sfs.len().saturating_sub(1)
            )));
        }
        Ok(Some(i as usize))
    }

    fn hook(
        &self,
        method: &str,
        args: impl for<'py> FnOnce(Python<'py>) -> PyResult<Bound<'py, pyo3::types::PyTuple>>,
    ) {
        if self.failed() {
            return;
        }
        let res = Python::attach(|py| {
            let call = || -> PyResult<()> {
                let a = args(py)?;
                self.obj.bind(py).call_method1(method, a)?;
                Ok(())
            };
            call().map_err(|e| {
                let at = raised_at(py, &e);
                (e, at)
            })
        });
        if let Err((e, at)) = res {
            self.fail(format!("{method}(): {e}{at}"), e);
        }
    }
}

impl Scheduler for PyScheduler {
    fn name(&self) -> &str {
        &self.name
    }

    fn select(
        &mut self,
        now: Time,
        conn: &ConnView,
        sfs: &[SubflowView],
        _act: &mut Vec<SchedAction>,
    ) -> Option<usize> {
        if self.failed() {
            return None;
        }
        let res = Python::attach(|py| {
            self.call_select(py, now, conn, sfs).map_err(|e| {
                let at = raised_at(py, &e);
                (e, at)
            })
        });
        match res {
            Ok(pick) => pick,
            Err((e, at)) => {
                self.fail(format!("select(): {e}{at}"), e);
                None
            }
        }
    }

    fn on_ack(&mut self, now: Time, sf: usize, acked_bytes: u64) {
        if self.hooks[0] {
            self.hook("on_ack", |py| {
                pyo3::types::PyTuple::new(
                    py,
                    [
                        now.secs_f64().into_pyobject(py)?.into_any(),
                        sf.into_pyobject(py)?.into_any(),
                        acked_bytes.into_pyobject(py)?.into_any(),
                    ],
                )
            });
        }
    }

    fn on_rto(&mut self, now: Time, sf: usize) {
        if self.hooks[1] {
            self.hook("on_rto", |py| {
                pyo3::types::PyTuple::new(
                    py,
                    [now.secs_f64().into_pyobject(py)?.into_any(), sf.into_pyobject(py)?.into_any()],
                )
            });
        }
    }

    fn on_link_event(
        &mut self,
        now: Time,
        sf: usize,
        ev: LinkEvent,
        _conn: &ConnView,
        _sfs: &[SubflowView],
        _act: &mut Vec<SchedAction>,
    ) {
        if self.hooks[2] {
            let name = match ev {
                LinkEvent::Down => "down",
                LinkEvent::Up => "up",
                LinkEvent::ScanStart => "scan_start",
                LinkEvent::ScanEnd => "scan_end",
            };
            self.hook("on_link_event", |py| {
                pyo3::types::PyTuple::new(
                    py,
                    [
                        now.secs_f64().into_pyobject(py)?.into_any(),
                        sf.into_pyobject(py)?.into_any(),
                        name.into_pyobject(py)?.into_any(),
                    ],
                )
            });
        }
    }
}
