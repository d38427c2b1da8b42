//! Validation after defaults are filled: ranges, fields that only some paths or flows take, and
//! cross-references (flow -> path names, MPTCP paths, backup paths, MP_PRIO). Each rule returns
//! one error naming the field in `--set` syntax. Radio and host fields and the RTO's ceiling are
//! checked by their components (link/device.rs, energy.rs, tcp/rtt.rs) through `Sections`.

use super::*;

/// Why a radio path takes no outage kind (a schedule step's `drop`, a trace's `outage`).
const RADIO_OUTAGE: &str = "a radio path keeps its own model of an outage (a blockage, antenna turn or trace's \
     down row drops what its MAC had queued, as the wil6210 driver does on a disconnect; a scan or a schedule \
     step's `up = false` pauses it; docs/models.md); only wired paths take this";

/// Why a radio path takes no `reset` step.
const RADIO_RESET: &str = "a reset is a middlebox on a wired path (a router's `reject with tcp reset`); \
     only wired paths take it";

impl Scenario {
    pub(super) fn validate(&self, sections: &dyn Sections) -> Result<(), ScenarioError> {
        fn pos(field: &str, v: f64) -> Result<(), ScenarioError> {
            if v.is_finite() && v > 0.0 {
                Ok(())
            } else {
                Err(err(field, format!("must be > 0 (got {v})")))
            }
        }
        fn nonneg(field: &str, v: f64) -> Result<(), ScenarioError> {
            if v.is_finite() && v >= 0.0 {
                Ok(())
            } else {
                Err(err(field, format!("must be >= 0 (got {v})")))
            }
        }
        // Upper bounds that only catch typos (a rate or delay off by many powers of ten), far
        // beyond any link mmpath models: a 10 Tbit/s rate (bounds.rs, which traces' rates share);
        // a delay, as every time, at most one day (the longest run, time::MAX_USER_SECS).
        use crate::bounds::MAX_RATE_MBPS;
        fn rate(field: &str, v: f64, zero_ok: bool) -> Result<(), ScenarioError> {
            if zero_ok {
                nonneg(field, v)?
            } else {
                pos(field, v)?
            }
            if v > MAX_RATE_MBPS {
                return Err(err(field, format!("must be at most {MAX_RATE_MBPS:e} Mbit/s (got {v})")));
            }
            Ok(())
        }
        fn delay(field: &str, v: f64) -> Result<(), ScenarioError> {
            nonneg(field, v)?;
            at_most_ms(field, v)
        }
        /// A point in time or a span of the run, seconds: >= 0 and at most one day.
        fn secs(field: &str, v: f64) -> Result<(), ScenarioError> {
            nonneg(field, v)?;
            at_most_secs(field, v)
        }
        fn range_u(field: &str, v: u64, lo: u64, hi: u64) -> Result<(), ScenarioError> {
            if v >= lo && v <= hi {
                Ok(())
            } else {
                Err(err(field, format!("must be between {lo} and {hi} (got {v})")))
            }
        }
        pos("duration_s", self.duration_s)?;
        at_most_secs("duration_s", self.duration_s)?;
        pos("timeline.sample_ms", self.timeline.sample_ms)?;
        if self.timeline.sample_ms < 0.1 {
            return Err(err("timeline.sample_ms", format!("must be >= 0.1 (got {})", self.timeline.sample_ms)));
        }
        at_most_ms("timeline.sample_ms", self.timeline.sample_ms)?;
        let b = &self.backbone;
        rate("backbone.rate_mbps", b.rate_mbps, false)?;
        delay("backbone.delay_ms", b.delay_ms)?;
        range_u("backbone.mtu_bytes", b.mtu_bytes as u64, 576, 65_535)?;
        range_u("backbone.frame_overhead_bytes", b.frame_overhead_bytes as u64, 0, 1_000)?;
        let bq = b.queue_bytes.unwrap_or(0);
        if bq < b.mtu_bytes as u64 {
            return Err(err(
                "backbone.queue_bytes",
                format!("must hold at least one MTU ({} bytes) (got {bq})", b.mtu_bytes),
            ));
        }
        if self.path.is_empty() {
            return Err(err("path", "at least one [[path]] is required"));
        }
        if self.path.len() > 64 {
            return Err(err("path", format!("at most 64 paths are supported (got {})", self.path.len())));
        }
        for (i, p) in self.path.iter().enumerate() {
            let f = |k: &str| format!("path.{i}.{k}");
            let name = p.name.as_deref().unwrap_or("");
            if name.is_empty() {
                return Err(err(f("name"), "must not be empty"));
            }
            if self.path[..i].iter().any(|q| q.name.as_deref() == Some(name)) {
                return Err(err(f("name"), format!("duplicate path name {name:?}; path names must be unique")));
            }
            if p.technology == Technology::Wired {
                match p.rate_mbps {
                    Some(r) => rate(&f("rate_mbps"), r, false)?,
                    None => return Err(err(f("rate_mbps"), "required for a wired path (technology = \"wired\")")),
                }
                rate(&f("uplink_rate_mbps"), p.uplink_rate_mbps.or(p.rate_mbps).unwrap_or(0.0), false)?;
                for (k, set) in [
                    ("mcs", p.mcs.is_some()),
                    ("rate_adaptation", p.rate_adaptation.is_some()),
                    ("rssi_dbm", p.rssi_dbm.is_some()),
                    ("signal", p.signal.is_some()),
                    ("device", p.device.is_some()),
                    ("bandwidth_mhz", p.bandwidth_mhz.is_some()),
                    ("streams", p.streams.is_some()),
                    ("short_gi", p.short_gi.is_some()),
                    ("band_ghz", p.band_ghz.is_some()),
                    ("distance_m", p.distance_m.is_some()),
                    ("path_loss_exponent", p.path_loss_exponent.is_some()),
                    ("shadowing_db", p.shadowing_db.is_some()),
                    ("fading_db", p.fading_db.is_some()),
                    ("coherence_ms", p.coherence_ms.is_some()),
                    ("event", !p.event.is_empty()),
                    ("interferer", !p.interferer.is_empty()),
                ] {
                    if set {
                        return Err(err(
                            f(k),
                            "only radio paths take this; set technology = \"11ad\", \"11ac\" or \"11n\"",
                        ));
                    }
                }
            } else {
                // The 802.11 MAC and the PER model replace these on a radio path (sim/build.rs
                // reads them for wired links only): a value here used to be ignored silently.
                if p.loss_pct != 0.0 {
                    return Err(err(
                        f("loss_pct"),
                        format!(
                            "only wired paths take this; a radio path's losses come from its signal and MCS \
                             (rssi_dbm, fading_db, events) (got {})",
                            p.loss_pct
                        ),
                    ));
                }
                if p.frame_overhead_bytes != 0 {
                    return Err(err(
                        f("frame_overhead_bytes"),
                        format!(
                            "only wired paths take this; a radio path's 802.11 MAC adds its own framing (got {})",
                            p.frame_overhead_bytes
                        ),
                    ));
                }
                sections.validate_radio(p, i)?;
            }
            sections.validate_host(p, i)?;
            delay(&f("delay_ms"), p.delay_ms)?;
            range_u(&f("mtu_bytes"), p.mtu_bytes as u64, 576, 65_535)?;
            range_u(&f("frame_overhead_bytes"), p.frame_overhead_bytes as u64, 0, 1_000)?;
            let q = p.queue_bytes.unwrap_or(0);
            if q < p.mtu_bytes as u64 {
                return Err(err(
                    f("queue_bytes"),
                    format!("must hold at least one MTU ({} bytes) (got {q})", p.mtu_bytes),
                ));
            }
            if !(p.loss_pct.is_finite() && (0.0..100.0).contains(&p.loss_pct)) {
                return Err(err(f("loss_pct"), format!("must be in [0, 100) (got {})", p.loss_pct)));
            }
            if let Some(t) = &p.trace {
                if t.file.trim().is_empty() {
                    return Err(err(f("trace.file"), "must name a trace file"));
                }
                if !(t.bin_ms.is_finite() && t.bin_ms >= 0.001 && t.bin_ms <= 10_000.0) {
                    return Err(err(f("trace.bin_ms"), format!("must be between 0.001 and 10000 (got {})", t.bin_ms)));
                }
                secs(&f("trace.start_s"), t.start_s)?;
                if t.outage.is_some() && p.technology != Technology::Wired {
                    return Err(err(f("trace.outage"), RADIO_OUTAGE));
                }
            }
            let mut last = -1.0;
            for (j, s) in p.schedule.iter().enumerate() {
                let g = |k: &str| format!("path.{i}.schedule.{j}.{k}");
                secs(&g("t_s"), s.t_s)?;
                if s.t_s < last {
                    return Err(err(
                        g("t_s"),
                        format!("schedule steps must be in time order ({} after {last})", s.t_s),
                    ));
                }
                last = s.t_s;
                if let Some(r) = s.rate_mbps {
                    if p.technology != Technology::Wired {
                        return Err(err(g("rate_mbps"), "a radio path's rate follows its MCS; schedule `up` only"));
                    }
                    // 0 is allowed: the path stalls (up, but no service) until the next step.
                    rate(&g("rate_mbps"), r, true)?;
                }
                if s.drop {
                    if p.technology != Technology::Wired {
                        return Err(err(g("drop"), RADIO_OUTAGE));
                    }
                    if s.up != Some(false) {
                        let got = match s.up {
                            Some(true) => "`up = true`",
                            _ => "no `up`",
                        };
                        return Err(err(
                            g("drop"),
                            format!("only a step taking the link down takes it: `drop = true` needs `up = false` (got {got})"),
                        ));
                    }
                }
                if s.reset {
                    if p.technology != Technology::Wired {
                        return Err(err(g("reset"), RADIO_RESET));
                    }
                    // Alone in its step: a reset leaves the link as it is, and a link change at
                    // the same instant is a step of its own (the order of the two is then the
                    // file's, not a rule of the step's).
                    let with: Vec<&str> =
                        [("up", s.up.is_some()), ("rate_mbps", s.rate_mbps.is_some()), ("drop", s.drop)]
                            .iter()
                            .filter_map(|&(k, set)| set.then_some(k))
                            .collect();
                    if !with.is_empty() {
                        return Err(err(
                            g("reset"),
                            format!(
                                "a reset step takes only `t_s`: the path stays up and as it is (got `{}` too; \
                                 put a link change in a step of its own, at the same `t_s` if wanted)",
                                with.join("`, `")
                            ),
                        ));
                    }
                    continue;
                }
                if s.rate_mbps.is_none() && s.up.is_none() {
                    return Err(err(
                        format!("path.{i}.schedule.{j}"),
                        "a step needs `rate_mbps` or `up` (or both), or is `reset = true` alone",
                    ));
                }
            }
        }
        self.validate_linked_paths()?;
        if self.flow.is_empty() {
            return Err(err("flow", "at least one [[flow]] is required"));
        }
        if self.flow.len() > 1024 {
            return Err(err("flow", format!("at most 1024 flows are supported (got {})", self.flow.len())));
        }
        let names: Vec<&str> = self.path.iter().filter_map(|p| p.name.as_deref()).collect();
        for (i, fl) in self.flow.iter().enumerate() {
            let f = |k: &str| format!("flow.{i}.{k}");
            let name = fl.name.as_deref().unwrap_or("");
            if name.is_empty() {
                return Err(err(f("name"), "must not be empty"));
            }
            if self.flow[..i].iter().any(|q| q.name.as_deref() == Some(name)) {
                return Err(err(f("name"), format!("duplicate flow name {name:?}; flow names must be unique")));
            }
            let pname = fl.path.as_deref().unwrap_or("");
            if !names.contains(&pname) {
                return Err(err(f("path"), format!("no path named {pname:?} (paths: {})", names.join(", "))));
            }
            secs(&f("start_s"), fl.start_s)?;
            let stop = fl.stop_s.unwrap_or(self.duration_s);
            if !(stop.is_finite() && stop > fl.start_s) {
                return Err(err(f("stop_s"), format!("must be after start_s ({}) (got {stop})", fl.start_s)));
            }
            at_most_secs(&f("stop_s"), stop)?;
            if fl.start_s >= self.duration_s {
                return Err(err(
                    f("start_s"),
                    format!("must be before the end of the run, duration_s = {} (got {})", self.duration_s, fl.start_s),
                ));
            }
            let app = fl.app.unwrap_or(AppKind::Bulk);
            match (fl.kind, app) {
                (FlowKind::Tcp, AppKind::Cbr) => {
                    return Err(err(f("app"), "`cbr` is a UDP application; TCP flows take `bulk` or `rate`"));
                }
                (FlowKind::Mptcp, AppKind::Cbr) => {
                    return Err(err(f("app"), "`cbr` is a UDP application; MPTCP flows take `bulk` or `rate`"));
                }
                (FlowKind::Udp, AppKind::Bulk | AppKind::Rate) => {
                    return Err(err(f("app"), "UDP flows take `cbr`"));
                }
                _ => {}
            }
            match app {
                AppKind::Rate | AppKind::Cbr => match fl.rate_mbps {
                    Some(r) => rate(&f("rate_mbps"), r, false)?,
                    None => {
                        return Err(err(
                            f("rate_mbps"),
                            format!("required for app = \"{}\"", if app == AppKind::Rate { "rate" } else { "cbr" }),
                        ))
                    }
                },
                AppKind::Bulk => {
                    if fl.rate_mbps.is_some() {
                        return Err(err(
                            f("rate_mbps"),
                            "only `rate` and `cbr` apps take a rate; remove it or set app = \"rate\"",
                        ));
                    }
                }
            }
            if let Some(b) = fl.bytes {
                if b == 0 {
                    return Err(err(f("bytes"), "must be > 0 (omit it for an unlimited transfer)"));
                }
            }
            if fl.kind == FlowKind::Udp {
                if fl.cc.is_some() {
                    return Err(err(f("cc"), "UDP flows have no congestion control; remove `cc`"));
                }
                let mtu = self.path_mtu(pname);
                if let Some(pb) = fl.packet_bytes {
                    if pb == 0 || pb + 28 > mtu {
                        return Err(err(
                            f("packet_bytes"),
                            format!("must be between 1 and {} (MTU {mtu} - 28) (got {pb})", mtu - 28),
                        ));
                    }
                }
            } else if fl.packet_bytes.is_some() {
                return Err(err(f("packet_bytes"), "only UDP flows take packet_bytes (TCP uses the MSS)"));
            }
            self.validate_mptcp(i, fl, &names)?;
            let t = &fl.tcp;
            range_u(&f("tcp.initial_cwnd"), t.initial_cwnd as u64, 1, 1000)?;
            if t.limit_output_bytes != 0 {
                range_u(&f("tcp.limit_output_bytes"), t.limit_output_bytes, 2048, 1 << 31)?;
            }
            pos(&f("tcp.min_rto_ms"), t.min_rto_ms)?;
            sections.validate_min_rto(&f("tcp.min_rto_ms"), t.min_rto_ms)?;
            let hz = super::tcp_options::KERNEL_HZ_CHOICES;
            if !hz.contains(&t.kernel_hz) {
                let allowed: Vec<String> = hz.iter().map(u32::to_string).collect();
                return Err(err(
                    f("tcp.kernel_hz"),
                    format!("must be one of Linux's CONFIG_HZ choices {} (got {})", allowed.join(", "), t.kernel_hz),
                ));
            }
            range_u(&f("tcp.rmem_max_bytes"), t.rmem_max(), 4096, 1 << 31)?;
            range_u(&f("tcp.wmem_max_bytes"), t.wmem_max(), 4096, 1 << 31)?;
            for (k, b) in [("tcp.rcvbuf_bytes", t.rcvbuf_bytes), ("tcp.sndbuf_bytes", t.sndbuf_bytes)] {
                if let BufSize::Bytes(v) = b {
                    range_u(&f(k), v, 2048, 1 << 31)?;
                }
            }
        }
        Ok(())
    }

    /// A userspace path-manager policy opens subflows during the run: one per path more, which
    /// the ratio schedulers (one subflow per path), an address mesh (subflows between address
    /// pairs) and the coupled controls (built with their subflows) do not take.
    /// `[[path.interferer]] path = "..."` links two radio paths of the same technology, each the
    /// other's interferer (link/medium/air.rs). A path takes part in at most one such pair, and
    /// the pair is declared once (it works both ways).
    fn validate_linked_paths(&self) -> Result<(), ScenarioError> {
        let names: Vec<&str> = self.path.iter().filter_map(|p| p.name.as_deref()).collect();
        // Each path's partner and the field that linked it.
        let mut partner: Vec<Option<(usize, String)>> = vec![None; self.path.len()];
        for (i, p) in self.path.iter().enumerate() {
            for (j, x) in p.interferer.iter().enumerate() {
                let Some(other) = x.path.as_deref() else { continue };
                let field = format!("path.{i}.interferer.{j}.path");
                let Some(k) = names.iter().position(|n| *n == other) else {
                    return Err(err(field, format!("no path named {other:?} (paths: {})", names.join(", "))));
                };
                if k == i {
                    return Err(err(field, format!("{other:?} is this path; name another radio path of the scenario")));
                }
                let q = &self.path[k];
                if q.technology != p.technology {
                    return Err(err(
                        field,
                        format!(
                            "path {other:?} is {}; the linked path must be a radio path of this path's technology ({})",
                            q.technology.name(),
                            p.technology.name()
                        ),
                    ));
                }
                for (a, b) in [(i, k), (k, i)] {
                    if let Some((c, by)) = &partner[a] {
                        let (an, cn) = (names[a], names[*c]);
                        return Err(err(
                            field,
                            format!(
                                "path {an:?} is linked to {cn:?} already ({by}); a path is linked to at most one \
                                 other, and a link works both ways: declare it once"
                            ),
                        ));
                    }
                    partner[a] = Some((b, field.clone()));
                }
            }
        }
        Ok(())
    }

    fn validate_path_manager(&self, i: usize, fl: &FlowCfg) -> Result<(), ScenarioError> {
        let pm = fl.path_manager.unwrap_or(PmName::Kernel);
        if pm == PmName::Kernel {
            return Ok(());
        }
        let f = |k: &str| format!("flow.{i}.{k}");
        let why = format!("path_manager = \"{}\" opens subflows during the run", pm.name());
        if let Some(s @ (SchedName::Fixedratio | SchedName::Musher | SchedName::Amuse | SchedName::Energy)) =
            fl.scheduler
        {
            return Err(err(
                f("scheduler"),
                format!(
                    "{why}, and the {} scheduler splits traffic between exactly one subflow per path \
                     (allowed with it: path_manager = \"kernel\"; or a scheduler such as \"default\", \"minrtt\", \"blest\")",
                    serde_json::to_value(s).ok().and_then(|v| v.as_str().map(String::from)).unwrap_or_default()
                ),
            ));
        }
        if fl.subflows == Some(SubflowLayout::AddressMesh) {
            return Err(err(f("subflows"), format!("{why} on a path, one per path (allowed with it: \"per-path\")")));
        }
        if fl.coupled.is_some_and(|c| c != CoupledName::Uncoupled) {
            return Err(err(
                f("coupled"),
                format!("{why}, and a coupled control is built with its subflows at the start (allowed with it: \"uncoupled\")"),
            ));
        }
        Ok(())
    }

    /// The MPTCP-only fields: allowed only on MPTCP flows, and consistent with the paths.
    fn validate_mptcp(&self, i: usize, fl: &FlowCfg, names: &[&str]) -> Result<(), ScenarioError> {
        let f = |k: &str| format!("flow.{i}.{k}");
        if fl.kind != FlowKind::Mptcp {
            let set = [
                ("paths", fl.paths.is_some()),
                ("mode", fl.mode.is_some()),
                ("subflows", fl.subflows.is_some()),
                ("backup_paths", fl.backup_paths.is_some()),
                ("kernel", fl.kernel.is_some()),
                ("scheduler", fl.scheduler.is_some()),
                ("ratio", fl.ratio.is_some()),
                ("coupled", fl.coupled.is_some()),
                ("amuse", fl.amuse.is_some()),
                ("prio", !fl.prio.is_empty()),
                ("max_rates_mbps", fl.max_rates_mbps.is_some()),
                ("path_manager", fl.path_manager.is_some()),
            ];
            if let Some((k, _)) = set.iter().find(|(_, s)| *s) {
                return Err(err(f(k), "only MPTCP flows (kind = \"mptcp\") take this field"));
            }
            return Ok(());
        }
        let paths = fl.paths.as_deref().unwrap_or(&[]);
        if paths.is_empty() {
            return Err(err(f("paths"), "an MPTCP flow needs at least one path"));
        }
        if paths.len() > 8 {
            return Err(err(f("paths"), format!("at most 8 subflows are supported (got {})", paths.len())));
        }
        for (j, p) in paths.iter().enumerate() {
            if !names.contains(&p.as_str()) {
                return Err(err(
                    format!("flow.{i}.paths.{j}"),
                    format!("no path named {p:?} (paths: {})", names.join(", ")),
                ));
            }
            if paths[..j].contains(p) {
                return Err(err(format!("flow.{i}.paths.{j}"), format!("path {p:?} is listed twice")));
            }
        }
        for (j, p) in fl.backup_paths.as_deref().unwrap_or(&[]).iter().enumerate() {
            if !paths.contains(p) {
                return Err(err(
                    format!("flow.{i}.backup_paths.{j}"),
                    format!("{p:?} is not one of this flow's paths ({})", paths.join(", ")),
                ));
            }
        }
        if let Some(r) = fl.ratio {
            if r > 100 {
                return Err(err(f("ratio"), format!("segments per 100 for the first path: 0..=100 (got {r})")));
            }
            if !matches!(
                fl.scheduler,
                Some(SchedName::Fixedratio | SchedName::Musher | SchedName::Amuse | SchedName::Energy)
            ) {
                return Err(err(f("ratio"), "only the fixedratio, musher, amuse and energy schedulers take a ratio"));
            }
        }
        if fl.subflows == Some(SubflowLayout::AddressMesh) {
            if self.backbone.enabled {
                return Err(err(
                    f("subflows"),
                    "\"address-mesh\" needs a multihomed server: the AP itself is the endpoint \
                     (backbone.enabled = false); behind a backbone the server has one address (use \"per-path\")",
                ));
            }
            let n = paths.len() * paths.len();
            if n > 8 {
                return Err(err(
                    f("subflows"),
                    format!("\"address-mesh\" opens one subflow per pair of addresses ({n} for {} paths); at most 8 are supported", paths.len()),
                ));
            }
            if matches!(
                fl.scheduler,
                Some(SchedName::Fixedratio | SchedName::Musher | SchedName::Amuse | SchedName::Energy)
            ) {
                return Err(err(
                    f("subflows"),
                    "the fixedratio, musher, amuse and energy schedulers split traffic between exactly one subflow per path; use \"per-path\"",
                ));
            }
        }
        self.validate_path_manager(i, fl)?;
        if fl.scheduler == Some(SchedName::Energy) && paths.len() != 2 {
            return Err(err(
                f("paths"),
                format!("the energy scheduler bundles exactly two paths (11ad first, then 11ac) (got {})", paths.len()),
            ));
        }
        if fl.scheduler == Some(SchedName::Energy) {
            // Its choices take subflow 0 for the 11ad interface and subflow 1 for the 11ac one
            // (which is cheaper to receive or send on, seed 002 Fig. 9): any other pair would be
            // scheduled silently on the wrong premises.
            for (j, want) in [Technology::Dot11ad, Technology::Dot11ac].into_iter().enumerate() {
                let Some(p) = self.path.iter().find(|p| p.name.as_deref() == Some(paths[j].as_str())) else {
                    continue;
                };
                if p.technology != want {
                    let tech = |t: Technology| match t {
                        Technology::Wired => "wired",
                        Technology::Dot11ad => "11ad",
                        Technology::Dot11ac => "11ac",
                        Technology::Dot11n => "11n",
                    };
                    return Err(err(
                        format!("flow.{i}.paths.{j}"),
                        format!(
                            "the energy scheduler bundles an 11ad path first, then an 11ac one: {:?} is {} (paths: {})",
                            paths[j],
                            tech(p.technology),
                            paths.join(", ")
                        ),
                    ));
                }
            }
        }
        if let Some(m) = &fl.max_rates_mbps {
            if fl.scheduler != Some(SchedName::Energy) {
                return Err(err(f("max_rates_mbps"), "only scheduler = \"energy\" takes max_rates_mbps"));
            }
            if m.len() != paths.len() {
                return Err(err(
                    f("max_rates_mbps"),
                    format!("one rate per path in `paths` ({}), got {}", paths.len(), m.len()),
                ));
            }
            for (j, r) in m.iter().enumerate() {
                if !(r.is_finite() && *r > 0.0 && *r <= 1e6) {
                    return Err(err(
                        format!("flow.{i}.max_rates_mbps.{j}"),
                        format!("must be > 0 and <= 1e6 Mbit/s (got {r})"),
                    ));
                }
            }
        }
        if fl.amuse.is_some() && fl.scheduler != Some(SchedName::Amuse) {
            return Err(err(f("amuse"), "only scheduler = \"amuse\" takes amuse switches"));
        }
        for (j, pr) in fl.prio.iter().enumerate() {
            if !(pr.t_s.is_finite() && pr.t_s >= 0.0) {
                return Err(err(format!("flow.{i}.prio.{j}.t_s"), format!("must be >= 0 (got {})", pr.t_s)));
            }
            at_most_secs(&format!("flow.{i}.prio.{j}.t_s"), pr.t_s)?;
            if !paths.contains(&pr.path) {
                return Err(err(
                    format!("flow.{i}.prio.{j}.path"),
                    format!("{:?} is not one of this flow's paths ({})", pr.path, paths.join(", ")),
                ));
            }
        }
        if let Some(p) = &fl.path {
            if !paths.contains(p) {
                return Err(err(f("path"), format!("for MPTCP, `path` is the first of `paths` ({})", paths[0])));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use crate::scenario::testkit::fails;
    use crate::scenario::*;

    /// A schedule step's `drop` and a trace's `outage`: only a wired path's outage takes them,
    /// `drop` only on a step that takes the link down; each mistake is one line.
    #[test]
    fn outage_kinds_are_checked() {
        let wired = |step: &str| fails(&format!(r#"{{"path":[{{"rate_mbps":5,"schedule":[{step}]}}],"flow":[{{}}]}}"#));
        let ok = |json: &str| Scenario::from_json(json).map(|_| ()).unwrap();
        ok(
            r#"{"path":[{"rate_mbps":5,"schedule":[{"t_s":1,"up":false,"drop":true},{"t_s":2,"up":true}]}],"flow":[{}]}"#,
        );
        ok(r#"{"path":[{"rate_mbps":5,"schedule":[{"t_s":1,"up":true,"drop":false}]}],"flow":[{}]}"#);
        assert_eq!(
            wired(r#"{"t_s":1,"up":true,"drop":true}"#),
            "path.0.schedule.0.drop: only a step taking the link down takes it: `drop = true` needs `up = false` (got `up = true`)"
        );
        assert_eq!(
            wired(r#"{"t_s":1,"drop":true}"#),
            "path.0.schedule.0.drop: only a step taking the link down takes it: `drop = true` needs `up = false` (got no `up`)"
        );
        assert_eq!(
            wired(r#"{"t_s":1,"rate_mbps":2,"drop":true}"#),
            "path.0.schedule.0.drop: only a step taking the link down takes it: `drop = true` needs `up = false` (got no `up`)"
        );
        let m = wired(r#"{"t_s":1,"up":false,"drop":"yes"}"#);
        assert_eq!(m, r#"path.0.schedule.0.drop: invalid type: string "yes", expected a boolean"#);
        let radio = |extra: &str| fails(&format!(r#"{{"path":[{{"technology":"11ad"{extra}}}],"flow":[{{}}]}}"#));
        let m = radio(r#","schedule":[{"t_s":1,"up":false,"drop":true}]"#);
        assert!(m.starts_with("path.0.schedule.0.drop: a radio path keeps its own model of an outage"), "{m}");
        let m = radio(r#","trace":{"file":"t.csv","outage":"drop"}"#);
        assert!(m.starts_with("path.0.trace.outage: a radio path keeps its own model of an outage"), "{m}");
        let m = fails(r#"{"path":[{"rate_mbps":5,"trace":{"file":"t.csv","outage":"lose"}}],"flow":[{}]}"#);
        assert!(m.starts_with("path.0.trace.outage: unknown value `lose`, expected `hold` or `drop`"), "{m}");
    }

    /// A schedule step's `reset`: a bool, on a wired path, alone in its step (with `t_s`); a
    /// trace-driven wired path takes it too (the reset leaves the link alone).
    #[test]
    fn reset_steps_are_checked() {
        let wired = |step: &str| fails(&format!(r#"{{"path":[{{"rate_mbps":5,"schedule":[{step}]}}],"flow":[{{}}]}}"#));
        let ok = |json: &str| Scenario::from_json(json).map(|_| ()).unwrap();
        ok(r#"{"path":[{"rate_mbps":5,"schedule":[{"t_s":1,"reset":true},{"t_s":1,"up":false}]}],"flow":[{}]}"#);
        ok(r#"{"path":[{"rate_mbps":5,"trace":{"file":"t.csv"},"schedule":[{"t_s":1,"reset":true}]}],"flow":[{}]}"#);
        let m = wired(r#"{"t_s":1,"reset":"yes"}"#);
        assert_eq!(m, r#"path.0.schedule.0.reset: invalid type: string "yes", expected a boolean"#);
        assert_eq!(
            wired(r#"{"t_s":1,"reset":true,"up":false,"drop":true}"#),
            "path.0.schedule.0.reset: a reset step takes only `t_s`: the path stays up and as it is (got `up`, `drop` \
             too; put a link change in a step of its own, at the same `t_s` if wanted)"
        );
        let m = wired(r#"{"t_s":1,"reset":true,"rate_mbps":2}"#);
        assert!(m.contains("(got `rate_mbps` too;"), "{m}");
        assert_eq!(
            wired(r#"{"t_s":1,"reset":false}"#),
            "path.0.schedule.0: a step needs `rate_mbps` or `up` (or both), or is `reset = true` alone"
        );
        let m = fails(r#"{"path":[{"technology":"11ad","schedule":[{"t_s":1,"reset":true}]}],"flow":[{}]}"#);
        assert_eq!(
            m,
            "path.0.schedule.0.reset: a reset is a middlebox on a wired path (a router's `reject with tcp reset`); \
             only wired paths take it"
        );
    }

    /// `[[path.interferer]] path = ...`: another radio path of the same technology, one pair per
    /// path, declared once, without the fields its own flows and settings decide.
    #[test]
    fn linked_interferers_are_checked() {
        let two = |a: &str, b: &str| {
            format!(
                r#"{{"path":[{{"name":"l1","technology":"11ad"{a}}},{{"name":"l2","technology":"11ad"{b}}},
                {{"name":"w","rate_mbps":5}},{{"name":"ac","technology":"11ac"}}],"flow":[{{"path":"l1"}}]}}"#
            )
        };
        let link = |to: &str, more: &str| format!(r#","interferer":[{{"channel":"same","path":"{to}"{more}}}]"#);
        Scenario::from_json(&two("", &link("l1", r#","beams":"apart""#))).unwrap();
        let cases = [
            (two("", &link("l3", "")), "path.1.interferer.0.path: no path named \"l3\" (paths: l1, l2, w, ac)"),
            (two("", &link("l2", "")), "path.1.interferer.0.path: \"l2\" is this path; name another radio path of the scenario"),
            (two("", &link("w", "")), "path.1.interferer.0.path: path \"w\" is wired; the linked path must be a radio path of this path's technology (11ad)"),
            (two("", &link("ac", "")), "path.1.interferer.0.path: path \"ac\" is 11ac; the linked path must be a radio path of this path's technology (11ad)"),
            (
                two(&link("l2", ""), &link("l1", "")),
                "path.1.interferer.0.path: path \"l2\" is linked to \"l1\" already (path.0.interferer.0.path); a path is linked to at most one other, and a link works both ways: declare it once",
            ),
        ];
        for (json, want) in cases {
            assert_eq!(fails(&json), want);
        }
        for (k, v) in [("load", "0.5"), ("mcs", "9"), ("mtu_bytes", "1500"), ("start_s", "1"), ("stop_s", "2")] {
            let m = fails(&two("", &link("l1", &format!(r#","{k}":{v}"#))));
            assert_eq!(
                m,
                format!(
                    "path.1.interferer.0.{k}: not with `path`: the linked path's own flows decide when it sends, and its \
                     own settings its MCS and MTU (allowed with `path`: channel, power_db, sensed, beams, rejection_db)"
                )
            );
        }
    }

    #[test]
    fn ranges_are_checked() {
        assert_eq!(fails(r#"{"path":[{"rate_mbps":-5}],"flow":[{}]}"#), "path.0.rate_mbps: must be > 0 (got -5)");
        let m = fails(r#"{"path":[{"rate_mbps":5}],"flow":[{"path":"wifi"}]}"#);
        assert_eq!(m, "flow.0.path: no path named \"wifi\" (paths: path0)");
        let m = fails(r#"{"path":[{"rate_mbps":5}],"flow":[{"kind":"udp"}]}"#);
        assert!(m.starts_with("flow.0.rate_mbps: required"), "{m}");
        let m =
            fails(r#"{"path":[{"rate_mbps":5, "schedule":[{"t_s":2,"up":false},{"t_s":1,"up":true}]}],"flow":[{}]}"#);
        assert!(m.starts_with("path.0.schedule.1.t_s"), "{m}");
        let m = fails(r#"{"path":[{"rate_mbps":5}],"flow":[{"tcp":{"rcvbuf_bytes":"big"}}]}"#);
        assert!(m.starts_with("flow.0.tcp.rcvbuf_bytes: invalid value"), "{m}");
        assert!(m.contains("\"auto\" or a positive byte count"), "{m}");
    }

    #[test]
    fn wired_only_link_fields_are_refused_on_radio_paths() {
        // docs/scenario.md: loss_pct and frame_overhead_bytes do not apply to radio paths; they
        // were accepted and then ignored, so a user's 5 % loss silently did nothing.
        let m = fails(r#"{"path":[{"technology":"11ad","loss_pct":5}],"flow":[{}]}"#);
        assert!(m.starts_with("path.0.loss_pct: only wired paths take this"), "{m}");
        let m = fails(r#"{"path":[{"technology":"11ac","frame_overhead_bytes":38}],"flow":[{}]}"#);
        assert!(m.starts_with("path.0.frame_overhead_bytes: only wired paths take this"), "{m}");
        // Their defaults (0) stay valid, and wired paths keep both.
        Scenario::from_json(r#"{"path":[{"technology":"11ad","loss_pct":0}],"flow":[{}]}"#).unwrap();
        Scenario::from_json(r#"{"path":[{"rate_mbps":5,"loss_pct":5,"frame_overhead_bytes":38}],"flow":[{}]}"#)
            .unwrap();
    }

    #[test]
    fn huge_rates_and_delays_are_typos() {
        // Found by tests/fuzz_scenarios.rs: rates and delays of 1e300 were accepted (and
        // saturated to u64::MAX bit/s or ns in the run).
        for (json, want) in [
            (
                r#"{"path":[{"rate_mbps":1e300}],"flow":[{}]}"#,
                "path.0.rate_mbps: must be at most 1e7 Mbit/s (got 1e300)",
            ),
            (
                r#"{"path":[{"rate_mbps":5,"uplink_rate_mbps":2e7}],"flow":[{}]}"#,
                "path.0.uplink_rate_mbps: must be at most",
            ),
            (
                r#"{"backbone":{"rate_mbps":1e18},"path":[{"rate_mbps":5}],"flow":[{}]}"#,
                "backbone.rate_mbps: must be at most",
            ),
            (
                r#"{"path":[{"rate_mbps":5}],"flow":[{"kind":"udp","rate_mbps":1e8}]}"#,
                "flow.0.rate_mbps: must be at most",
            ),
            (
                r#"{"path":[{"rate_mbps":5,"schedule":[{"t_s":1,"rate_mbps":1e9}]}],"flow":[{}]}"#,
                "path.0.schedule.0.rate_mbps: must be at most",
            ),
            (
                r#"{"path":[{"rate_mbps":5,"delay_ms":1e300}],"flow":[{}]}"#,
                "path.0.delay_ms: must be at most 86400000 ms, one day (got 1e300)",
            ),
            (
                r#"{"backbone":{"delay_ms":9e7},"path":[{"rate_mbps":5}],"flow":[{}]}"#,
                "backbone.delay_ms: must be at most",
            ),
        ] {
            let m = fails(json);
            assert!(m.starts_with(want), "{json}: {m}");
        }
        // Found by tests/fuzz_scenarios.rs: a huge or tiny number was printed with all its digits.
        assert_eq!(
            fails(r#"{"path":[{"rate_mbps":-1e300}],"flow":[{}]}"#),
            "path.0.rate_mbps: must be > 0 (got -1e300)"
        );
        let m = fails(r#"{"timeline":{"sample_ms":1e-300},"path":[{"rate_mbps":5}],"flow":[{}]}"#);
        assert_eq!(m, "timeline.sample_ms: must be >= 0.1 (got 1e-300)");
        assert_eq!(
            fails(
                r#"{"path":[{"technology":"11ad","event":[{"kind":"blockage","t_s":-1e30,"duration_s":1}]}],"flow":[{}]}"#
            ),
            "path.0.event.0.t_s: must be >= 0 (got -1e30)"
        );
        // The bounds themselves are allowed; a schedule step may still stall the link (0).
        let ok = r#"{"backbone":{"rate_mbps":1e7,"delay_ms":86400000},"path":[{"rate_mbps":1e7,"schedule":[{"t_s":1,"rate_mbps":0}]}],"flow":[{}]}"#;
        assert!(Scenario::from_json(ok).is_ok());
    }

    /// Found by fuzzing: times up to 1e300 s were accepted and saturated the nanosecond clock.
    /// Every kind of user-given time is at most one day (time::MAX_USER_SECS), each refusal
    /// names its field, and the bound itself is accepted.
    #[test]
    fn times_beyond_one_day_are_refused() {
        assert_eq!(crate::time::MAX_USER_SECS, 86_400);
        let wired = |path: &str, flow: &str| {
            format!(r#"{{"duration_s":86400,"path":[{{"rate_mbps":5{path}}}],"flow":[{{{flow}}}]}}"#)
        };
        let radio =
            |path: &str| format!(r#"{{"duration_s":86400,"path":[{{"technology":"11ad"{path}}}],"flow":[{{}}]}}"#);
        let mptcp = |flow: &str| {
            format!(
                r#"{{"duration_s":86400,"path":[{{"name":"a","rate_mbps":5}},{{"name":"b","rate_mbps":5}}],"flow":[{{"kind":"mptcp"{flow}}}]}}"#
            )
        };
        let trace = |start: &str| format!(r#","trace":{{"file":"t.csv","format":"csv","start_s":{start}}}"#);
        let blockage = |t: &str, d: &str| format!(r#","event":[{{"kind":"blockage","t_s":{t},"duration_s":{d}}}]"#);
        let scan = |every: &str| {
            format!(r#","event":[{{"kind":"scan","t_s":0,"duration_s":10,"every_s":{every},"scan_ms":100}}]"#)
        };
        let interferer = |start: &str, stop: &str| {
            format!(r#","interferer":[{{"channel":"same","start_s":{start},"stop_s":{stop}}}]"#)
        };
        // (scenario at the bound, the same just past it, the message of the refusal)
        let cases: Vec<(String, String, &str)> = vec![
            (
                wired("", ""),
                wired("", "").replace(r#""duration_s":86400"#, r#""duration_s":86400.5"#),
                "duration_s: must be at most 86400 s, one day (got 86400.5)",
            ),
            (
                wired("", "").replace("{\"duration_s", r#"{"timeline":{"sample_ms":86400000},"duration_s"#),
                wired("", "").replace("{\"duration_s", r#"{"timeline":{"sample_ms":1e300},"duration_s"#),
                "timeline.sample_ms: must be at most 86400000 ms, one day (got 1e300)",
            ),
            (
                wired(r#","delay_ms":86400000"#, ""),
                wired(r#","delay_ms":86400001"#, ""),
                "path.0.delay_ms: must be at most 86400000 ms, one day (got 86400001)",
            ),
            (
                wired(&trace("86400"), ""),
                wired(&trace("1e300"), ""),
                "path.0.trace.start_s: must be at most 86400 s, one day (got 1e300)",
            ),
            (
                wired(r#","schedule":[{"t_s":86400,"up":false}]"#, ""),
                wired(r#","schedule":[{"t_s":1e300,"up":false}]"#, ""),
                "path.0.schedule.0.t_s: must be at most 86400 s, one day (got 1e300)",
            ),
            (
                wired("", r#""start_s":86399.5,"stop_s":86400"#),
                wired("", r#""start_s":1e300"#),
                "flow.0.start_s: must be at most 86400 s, one day (got 1e300)",
            ),
            (
                wired("", r#""stop_s":86400"#),
                wired("", r#""stop_s":1e300"#),
                "flow.0.stop_s: must be at most 86400 s, one day (got 1e300)",
            ),
            (
                mptcp(r#","prio":[{"t_s":86400,"path":"b","backup":true}]"#),
                mptcp(r#","prio":[{"t_s":1e300,"path":"b","backup":true}]"#),
                "flow.0.prio.0.t_s: must be at most 86400 s, one day (got 1e300)",
            ),
            (
                radio(&blockage("86400", "1")),
                radio(&blockage("1e300", "1")),
                "path.0.event.0.t_s: must be at most 86400 s, one day (got 1e300)",
            ),
            (
                radio(&blockage("1", "86400")),
                radio(&blockage("1", "1e300")),
                "path.0.event.0.duration_s: must be at most 86400 s, one day (got 1e300)",
            ),
            (
                radio(&scan("86400")),
                radio(&scan("1e300")),
                "path.0.event.0.every_s: must be between 0.001 and 86400 (got 1e300)",
            ),
            (
                radio(r#","interferer":[{"channel":"same","start_s":86400}]"#),
                radio(r#","interferer":[{"channel":"same","start_s":1e300}]"#),
                "path.0.interferer.0.start_s: must be between 0 and 86400 (got 1e300)",
            ),
            (
                radio(&interferer("0", "86400")),
                radio(&interferer("0", "1e300")),
                "path.0.interferer.0.stop_s: must be at most 86400 s, one day (got 1e300)",
            ),
        ];
        for (ok, bad, want) in cases {
            if let Err(e) = Scenario::from_json(&ok) {
                panic!("the bound must be accepted: {ok}: {e}");
            }
            assert_eq!(fails(&bad), want, "{bad}");
        }
    }

    /// Found by fuzzing: tcp.min_rto_ms was only checked > 0, so 1e300 saturated the clock and
    /// anything above Linux's TCP_RTO_MAX (120 s) was a floor no RTO could reach. The other RTO
    /// values (initial 1 s, maximum 120 s) are Linux's constants, not scenario knobs.
    #[test]
    fn min_rto_is_at_most_linux_rto_max() {
        let tcp = |v: &str| format!(r#"{{"path":[{{"rate_mbps":5}}],"flow":[{{"tcp":{{"min_rto_ms":{v}}}}}]}}"#);
        assert_eq!(Scenario::from_json(&tcp("120000")).unwrap().flow[0].tcp.min_rto_ms, 120_000.0);
        assert_eq!(
            fails(&tcp("120000.5")),
            "flow.0.tcp.min_rto_ms: must be at most 120000 ms, Linux's TCP_RTO_MAX (got 120000.5)"
        );
        assert_eq!(
            fails(&tcp("1e300")),
            "flow.0.tcp.min_rto_ms: must be at most 120000 ms, Linux's TCP_RTO_MAX (got 1e300)"
        );
        assert_eq!(fails(&tcp("0")), "flow.0.tcp.min_rto_ms: must be > 0 (got 0)");
        let mptcp = r#"{"path":[{"name":"a","rate_mbps":5},{"name":"b","rate_mbps":5}],"flow":[{"kind":"mptcp","tcp":{"min_rto_ms":200000}}]}"#;
        assert!(fails(mptcp).starts_with("flow.0.tcp.min_rto_ms: must be at most 120000 ms"));
    }

    #[test]
    fn host_and_energy_knobs_are_validated() {
        let phone = |extra: &str| {
            format!(
                r#"{{"path":[{{"name":"ad","technology":"11ad","device":"rog-phone-2"{extra}}},{{"name":"ac","technology":"11ac","device":"rog-phone-2"}}],"flow":[{{"kind":"mptcp","paths":["ad","ac"],"scheduler":"energy"}}]}}"#
            )
        };
        let sc = Scenario::from_json(&phone(r#","gro":false,"softirq_cpu":"big""#)).expect("valid");
        assert_eq!(sc.path[0].device.as_deref(), Some("rog-phone-2-11ad"));
        assert_eq!(sc.path[1].device.as_deref(), Some("rog-phone-2-11ac"));
        let m = fails(&phone(r#","softirq_cpu":"medium""#));
        assert!(m.starts_with("path.0.softirq_cpu"), "{m}");
        let m = fails(r#"{"path":[{"rate_mbps":5,"gro":true}],"flow":[{}]}"#);
        assert!(m.starts_with("path.0.gro: only a radio client with GRO or a host model"), "{m}");
        assert!(m.contains("laptop-11ad") && m.contains("rog-phone-2-11ac") && !m.contains("panasonic"), "{m}");
        // The Panasonic modules' merge is not modelled and they have no host model.
        let m = fails(r#"{"path":[{"technology":"11ad","device":"panasonic-wigig","gro":false}],"flow":[{}]}"#);
        assert!(m.starts_with("path.0.gro"), "{m}");
        // A Linux client merges; `gro = false` turns that off.
        let sc =
            Scenario::from_json(r#"{"path":[{"technology":"11ad","device":"laptop-11ad","gro":false}],"flow":[{}]}"#);
        assert!(sc.is_ok(), "{:?}", sc.err());
        let m = fails(&phone("").replace(r#""scheduler":"energy""#, r#""scheduler":"musher","max_rates_mbps":[1,2]"#));
        assert!(m.starts_with("flow.0.max_rates_mbps: only scheduler"), "{m}");
        let m = fails(&phone("").replace(r#""scheduler":"energy""#, r#""scheduler":"energy","max_rates_mbps":[1600]"#));
        assert!(m.starts_with("flow.0.max_rates_mbps: one rate per path"), "{m}");
        let m =
            fails(&phone("").replace(r#""scheduler":"energy""#, r#""scheduler":"energy","max_rates_mbps":[1600,-1]"#));
        assert!(m.starts_with("flow.0.max_rates_mbps.1"), "{m}");
        let m = fails(&phone("").replace(r#""paths":["ad","ac"]"#, r#""paths":["ad"]"#));
        assert!(m.starts_with("flow.0.paths: the energy scheduler bundles exactly two paths"), "{m}");
        // 11ad first, then 11ac: swapped, or a wired / 11n path, was scheduled as if it were the
        // other radio.
        let m = fails(&phone("").replace(r#""paths":["ad","ac"]"#, r#""paths":["ac","ad"]"#));
        assert!(m.starts_with("flow.0.paths.0: the energy scheduler bundles an 11ad path first"), "{m}");
        assert!(m.contains(r#""ac" is 11ac"#), "{m}");
        let wired = r#"{"path":[{"name":"ad","technology":"11ad","device":"rog-phone-2"},{"name":"w","rate_mbps":600}],"flow":[{"kind":"mptcp","paths":["ad","w"],"scheduler":"energy"}]}"#;
        let m = fails(wired);
        assert!(m.starts_with("flow.0.paths.1: the energy scheduler") && m.contains(r#""w" is wired"#), "{m}");
    }

    /// An address mesh needs a multihomed server, at most 8 subflows, a scheduler that does not
    /// split by path, and an MPTCP flow; each mistake gets its own message.
    #[test]
    fn address_mesh_is_validated() {
        let three = |extra: &str| {
            format!(
                r#"{{"backbone":{{"enabled":false}},"path":[{{"name":"a","rate_mbps":10}},{{"name":"b","rate_mbps":10}},{{"name":"c","rate_mbps":10}}],"flow":[{{"kind":"mptcp","subflows":"address-mesh"{extra}}}]}}"#
            )
        };
        let m = fails(&three(""));
        assert!(
            m.starts_with("flow.0.subflows: \"address-mesh\" opens one subflow per pair of addresses (9 for 3 paths)"),
            "{m}"
        );
        let two = three(r#","paths":["a","b"]"#);
        assert!(Scenario::from_json(&two).is_ok());
        let m = fails(&three(r#","paths":["a","b"],"scheduler":"fixedratio","ratio":70"#));
        assert!(m.starts_with("flow.0.subflows: the fixedratio, musher, amuse and energy schedulers"), "{m}");
        let m = fails(
            &two.replace(r#""kind":"mptcp","#, r#""kind":"tcp","path":"a","#).replace(r#","paths":["a","b"]"#, ""),
        );
        assert!(m.starts_with("flow.0.subflows: only MPTCP flows"), "{m}");
        let m = fails(&two.replace(r#""enabled":false"#, r#""enabled":true"#));
        assert!(m.contains("backbone.enabled = false"), "{m}");
    }
}
