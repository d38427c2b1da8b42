//! `_core.PathManagerPolicy`: the core's path-manager policies (mmpath-sim mptcp/pm/) for the
//! `mmpath-pm` daemon, which runs them against the real kernel. Only conversion lives here:
//! event dicts in, action dicts out, every bad input a ValueError of one line naming the key
//! and what is allowed. Contract: docs/core-api.md.

use mmpath_sim::mptcp::pm::{self, PathManager, PmAction, PmEvent, PmName, PmParams, PARAM_NAMES};
use mmpath_sim::Time;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

/// The event kinds, in the order messages list them.
const EVENT_KINDS: [&str; 10] = [
    "link_up",
    "link_down",
    "link_quality",
    "scan_start",
    "scan_end",
    "conn_created",
    "subflow_established",
    "subflow_closed",
    "subflow_rto",
    "subflow_stale",
];
/// Paths are indexes into the daemon's list of interfaces: a bound against a typo.
const MAX_PATH: i64 = 255;

fn bad(msg: String) -> PyErr {
    PyValueError::new_err(msg)
}

fn names(v: &[&str]) -> String {
    v.join(", ")
}

/// A time in seconds: finite and not negative.
fn secs(what: &str, v: f64) -> PyResult<Time> {
    if !v.is_finite() || v < 0.0 {
        return Err(bad(format!("{what}: a time in seconds, finite and >= 0 (got {v})")));
    }
    Ok(Time::from_secs_f64(v))
}

/// An integer key of `d` in lo..=hi.
fn int_in(d: &Bound<'_, PyDict>, what: &str, key: &str, lo: i64, hi: i64) -> PyResult<Option<i64>> {
    let Some(v) = d.get_item(key)? else { return Ok(None) };
    if v.is_instance_of::<pyo3::types::PyBool>() {
        return Err(bad(format!("{what}[{key:?}]: an integer from {lo} to {hi} (got a bool)")));
    }
    match v.extract::<i64>() {
        Ok(x) if (lo..=hi).contains(&x) => Ok(Some(x)),
        Ok(x) => Err(bad(format!("{what}[{key:?}]: an integer from {lo} to {hi} (got {x})"))),
        Err(_) => Err(bad(format!("{what}[{key:?}]: an integer from {lo} to {hi} (got {})", v.repr()?))),
    }
}

/// A finite number key of `d`.
fn num(d: &Bound<'_, PyDict>, what: &str, key: &str) -> PyResult<Option<f64>> {
    let Some(v) = d.get_item(key)? else { return Ok(None) };
    match v.extract::<f64>() {
        Ok(x) if x.is_finite() && !v.is_instance_of::<pyo3::types::PyBool>() => Ok(Some(x)),
        _ => Err(bad(format!("{what}[{key:?}]: a finite number (got {})", v.repr()?))),
    }
}

/// The keys of `d`, each one of `allowed`.
fn only_keys(d: &Bound<'_, PyDict>, what: &str, allowed: &[&str]) -> PyResult<()> {
    for k in d.keys() {
        let k: String =
            k.extract().map_err(|_| bad(format!("{what}: keys are strings (allowed: {})", names(allowed))))?;
        if !allowed.contains(&k.as_str()) {
            return Err(bad(format!("{what}: unknown key {k:?} (allowed: {})", names(allowed))));
        }
    }
    Ok(())
}

fn parse_event(d: &Bound<'_, PyDict>) -> PyResult<PmEvent> {
    let what = "event";
    let kind: String = match d.get_item("kind")? {
        Some(k) => {
            k.extract().map_err(|_| bad(format!("event[\"kind\"]: a string, one of {}", names(&EVENT_KINDS))))?
        }
        None => return Err(bad(format!("event: no \"kind\" (one of {})", names(&EVENT_KINDS)))),
    };
    let subflow_event = kind.starts_with("subflow_");
    let allowed: &[&str] = match kind.as_str() {
        "link_quality" => &["kind", "path", "signal_dbm", "mcs"],
        "subflow_closed" => &["kind", "path", "subflow", "error"],
        k if k.starts_with("subflow_") => &["kind", "path", "subflow"],
        k if EVENT_KINDS.contains(&k) => &["kind", "path"],
        k => return Err(bad(format!("event[\"kind\"]: unknown kind {k:?} (allowed: {})", names(&EVENT_KINDS)))),
    };
    only_keys(d, &format!("{kind} event"), allowed)?;
    let path = int_in(d, what, "path", 0, MAX_PATH)?
        .ok_or_else(|| bad(format!("{kind} event: no \"path\" (an integer from 0 to {MAX_PATH})")))?
        as u16;
    let subflow = if subflow_event {
        int_in(d, what, "subflow", 0, 65535)?
            .ok_or_else(|| bad(format!("{kind} event: no \"subflow\" (an integer from 0 to 65535)")))? as u16
    } else {
        0
    };
    Ok(match kind.as_str() {
        "link_up" => PmEvent::LinkUp { path },
        "link_down" => PmEvent::LinkDown { path },
        "link_quality" => {
            let signal_dbm = num(d, what, "signal_dbm")?;
            let mcs = int_in(d, what, "mcs", 0, 255)?.map(|m| m as u8);
            if signal_dbm.is_none() && mcs.is_none() {
                return Err(bad("link_quality event: give \"signal_dbm\" (dBm) and / or \"mcs\" (an integer)".into()));
            }
            PmEvent::LinkQuality { path, signal_dbm, mcs }
        }
        "scan_start" => PmEvent::ScanStart { path },
        "scan_end" => PmEvent::ScanEnd { path },
        "conn_created" => PmEvent::ConnCreated { path },
        "subflow_established" => PmEvent::SubflowEstablished { path, subflow },
        "subflow_closed" => {
            let error = match d.get_item("error")? {
                None => false,
                Some(e) if e.is_instance_of::<pyo3::types::PyBool>() => e.extract()?,
                Some(e) => {
                    return Err(bad(format!("subflow_closed event[\"error\"]: True or False (got {})", e.repr()?)))
                }
            };
            PmEvent::SubflowClosed { path, subflow, error }
        }
        "subflow_rto" => PmEvent::SubflowRto { path, subflow },
        _ => PmEvent::SubflowStale { path, subflow },
    })
}

fn parse_params(name: PmName, params: Option<&Bound<'_, PyDict>>) -> PyResult<PmParams> {
    let mut p = PmParams::default();
    let Some(d) = params else { return Ok(p) };
    let what = format!("{} params", name.name());
    let takes = pm::params_of(name);
    for k in d.keys() {
        let k: String = k.extract().map_err(|_| bad(format!("{what}: keys are strings")))?;
        if !takes.contains(&k.as_str()) {
            let allowed = if takes.is_empty() { "none".to_string() } else { names(takes) };
            let known = if PARAM_NAMES.contains(&k.as_str()) { "not read by this policy" } else { "unknown" };
            return Err(bad(format!("{what}: {k:?} is {known} (allowed: {allowed})")));
        }
    }
    if let Some(v) = d.get_item("backup_paths")? {
        let list = v.cast::<PyList>().map_err(|_| bad(format!("{what}[\"backup_paths\"]: a list of path indexes")))?;
        p.backup_paths.clear();
        for x in list.iter() {
            match x.extract::<i64>() {
                Ok(i) if (0..=MAX_PATH).contains(&i) && !x.is_instance_of::<pyo3::types::PyBool>() => {
                    p.backup_paths.push(i as u16)
                }
                _ => {
                    return Err(bad(format!(
                        "{what}[\"backup_paths\"]: path indexes, integers from 0 to {MAX_PATH} (got {})",
                        x.repr()?
                    )))
                }
            }
        }
    }
    let w = what.as_str();
    if let Some(x) = num(d, w, "leave_dbm")? {
        p.leave_dbm = x;
    }
    if let Some(x) = num(d, w, "return_dbm")? {
        p.return_dbm = x;
    }
    if let Some(x) = int_in(d, w, "leave_mcs", 0, 255)? {
        p.leave_mcs = x as u8;
    }
    if let Some(x) = int_in(d, w, "return_mcs", 0, 255)? {
        p.return_mcs = x as u8;
    }
    if let Some(x) = num(d, w, "hold_s")? {
        p.hold = secs(&format!("{w}[\"hold_s\"]"), x)?;
    }
    if let Some(x) = num(d, w, "backoff_s")? {
        if x <= 0.0 {
            return Err(bad(format!("{w}[\"backoff_s\"]: a time in seconds > 0 (got {x})")));
        }
        p.backoff = secs(&format!("{w}[\"backoff_s\"]"), x)?;
    }
    if let Some(x) = num(d, w, "max_backoff_s")? {
        p.max_backoff = secs(&format!("{w}[\"max_backoff_s\"]"), x)?;
    }
    if p.return_dbm < p.leave_dbm || p.return_mcs < p.leave_mcs {
        return Err(bad(format!(
            "{w}: the return thresholds must not be below the leaving ones (return_dbm {} >= leave_dbm {}, \
             return_mcs {} >= leave_mcs {})",
            p.return_dbm, p.leave_dbm, p.return_mcs, p.leave_mcs
        )));
    }
    if p.max_backoff < p.backoff {
        return Err(bad(format!(
            "{w}: max_backoff_s ({}) must be at least backoff_s ({})",
            p.max_backoff.secs_f64(),
            p.backoff.secs_f64()
        )));
    }
    Ok(p)
}

fn action_to_py<'py>(py: Python<'py>, a: PmAction) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    let (kind, path, subflow) = match a {
        PmAction::CreateSubflow { path } => ("create_subflow", path, None),
        PmAction::CloseSubflow { path, subflow } => ("close_subflow", path, Some(subflow)),
        PmAction::SetBackup { path } => ("set_backup", path, None),
        PmAction::ClearBackup { path } => ("clear_backup", path, None),
        PmAction::Announce { path } => ("announce", path, None),
        PmAction::Remove { path } => ("remove", path, None),
    };
    d.set_item("kind", kind)?;
    d.set_item("path", path)?;
    if let Some(s) = subflow {
        d.set_item("subflow", s)?;
    }
    Ok(d)
}

/// A path-manager policy of the core, for the `mmpath-pm` daemon. The interface is fixed
/// (docs/core-api.md):
///
/// PathManagerPolicy(name: str, params: dict | None = None)
///     name: "kernel" | "fast-failback" | "link-aware-backup" | "recreate".
///     params (each optional): link-aware-backup: backup_paths (list of path indexes),
///     leave_dbm, leave_mcs, return_dbm, return_mcs, hold_s; recreate: backoff_s,
///     max_backoff_s. Defaults: docs/path-manager.md "Policies".
/// .on_event(now_s: float, event: dict) -> list[dict]
///     event: {"kind": "link_up" | "link_down" | "link_quality" | "scan_start" | "scan_end" |
///     "conn_created" | "subflow_established" | "subflow_closed" | "subflow_rto" |
///     "subflow_stale", "path": int, ...}: link_quality has "signal_dbm" (float, dBm) and / or
///     "mcs" (int); subflow_* have "subflow" (int); subflow_closed has "error" (bool, default
///     False).
///     actions: {"kind": "create_subflow" | "close_subflow" | "set_backup" | "clear_backup" |
///     "announce" | "remove", "path": int} and, for close_subflow, "subflow": int; in the order
///     they are to be carried out.
/// .poll_at() -> float | None: when the policy next wants on_timer (seconds, the clock of now_s).
/// .on_timer(now_s: float) -> list[dict]: actions, as on_event.
/// .name -> str
/// Paths are indexes the caller maps to interfaces; subflow ids are the caller's. Bad input:
/// ValueError with one line naming the key and what is allowed.
#[pyclass(module = "mmpath._core")]
pub struct PathManagerPolicy {
    policy: Box<dyn PathManager>,
    out: Vec<PmAction>,
}

impl PathManagerPolicy {
    fn take<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let list = PyList::empty(py);
        for a in self.out.drain(..) {
            list.append(action_to_py(py, a)?)?;
        }
        Ok(list)
    }
}

#[pymethods]
impl PathManagerPolicy {
    #[new]
    #[pyo3(signature = (name, params = None))]
    fn new(name: &str, params: Option<&Bound<'_, PyDict>>) -> PyResult<Self> {
        let Some(n) = PmName::from_name(name) else {
            let all: Vec<&str> = PmName::ALL.iter().map(|p| p.name()).collect();
            return Err(bad(format!("path manager policy: unknown name {name:?} (allowed: {})", names(&all))));
        };
        let p = parse_params(n, params)?;
        Ok(PathManagerPolicy { policy: pm::build(n, &p), out: Vec::with_capacity(8) })
    }

    #[getter]
    fn name(&self) -> &'static str {
        self.policy.name()
    }

    fn on_event<'py>(
        &mut self,
        py: Python<'py>,
        now_s: f64,
        event: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyList>> {
        let now = secs("now_s", now_s)?;
        let d = event.cast::<PyDict>().map_err(|_| {
            bad(format!("event: a dict (got {})", event.repr().map(|r| r.to_string()).unwrap_or_default()))
        })?;
        let ev = parse_event(d)?;
        self.policy.on_event(now, &ev, &mut self.out);
        self.take(py)
    }

    fn poll_at(&self) -> Option<f64> {
        self.policy.poll_at().map(Time::secs_f64)
    }

    fn on_timer<'py>(&mut self, py: Python<'py>, now_s: f64) -> PyResult<Bound<'py, PyList>> {
        let now = secs("now_s", now_s)?;
        self.policy.on_timer(now, &mut self.out);
        self.take(py)
    }
}
