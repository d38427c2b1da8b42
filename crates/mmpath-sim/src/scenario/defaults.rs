//! Filling the defaults that depend on other fields (names, radio PHY options by technology,
//! device presets, interferers' MCS and rejection, MPTCP mode / scheduler / ratio, socket
//! buffer ceilings from the client host), so that the normalized scenario spells them out.

use super::tcp_options::{d_rmem_max, d_wmem_max};
use super::*;

impl Scenario {
    pub(super) fn fill_defaults(&mut self, sections: &dyn Sections) {
        for (i, p) in self.path.iter_mut().enumerate() {
            if p.name.is_none() {
                p.name = Some(format!("path{i}"));
            }
            if p.technology == Technology::Wired {
                if p.uplink_rate_mbps.is_none() {
                    p.uplink_rate_mbps = p.rate_mbps;
                }
            } else {
                if p.rate_adaptation.is_none() {
                    p.rate_adaptation =
                        Some(if p.mcs.is_some() { RateAdaptation::Fixed } else { RateAdaptation::Ideal });
                }
                if p.rssi_dbm.is_none() && p.signal.is_none() && p.distance_m.is_none() {
                    p.signal = Some(Signal::Strong);
                }
                p.path_loss_exponent.get_or_insert(2.0);
                p.shadowing_db.get_or_insert(0.0);
                p.fading_db.get_or_insert(0.0);
                p.coherence_ms.get_or_insert(10.0);
                if p.device.is_none() {
                    p.device = Some(sections.default_device(p.technology).to_string());
                }
                // "rog-phone-2" names the phone; each of its bands has its own preset. It has no
                // 11n one: the name stays, and validation says it is not an 11n device (rather
                // than blaming "rog-phone-2-11ac", which the user did not write).
                if p.device.as_deref() == Some("rog-phone-2") {
                    match p.technology {
                        Technology::Dot11ad => p.device = Some("rog-phone-2-11ad".into()),
                        Technology::Dot11ac => p.device = Some("rog-phone-2-11ac".into()),
                        _ => {}
                    }
                }
                if matches!(p.technology, Technology::Dot11ac | Technology::Dot11n) {
                    let ac = p.technology == Technology::Dot11ac;
                    p.bandwidth_mhz.get_or_insert(if ac { 80 } else { 20 });
                    p.streams.get_or_insert(if ac { 2 } else { 1 });
                    p.short_gi.get_or_insert(true);
                    p.band_ghz.get_or_insert(if ac { 5.0 } else { 2.4 });
                }
                if !p.interferer.is_empty() {
                    sections.fill_interferers(p);
                }
            }
            if p.queue_bytes.is_none() {
                // A radio device's driver may set its interface's qdisc length (device.rs).
                let frames = p.device.as_deref().and_then(|d| sections.queue_frames(d));
                p.queue_bytes = Some(frames.unwrap_or(DEFAULT_QUEUE_FRAMES) * p.mtu_bytes as u64);
            }
        }
        if self.backbone.queue_bytes.is_none() {
            self.backbone.queue_bytes = Some(DEFAULT_QUEUE_FRAMES * self.backbone.mtu_bytes as u64);
        }
        let first_path = self.path.first().and_then(|p| p.name.clone());
        // The client host behind each path, where its device has one (a phone).
        let hosts: Vec<(String, (u64, u64))> = self
            .path
            .iter()
            .filter_map(|p| {
                let h = p.device.as_deref().and_then(|d| sections.host_buffer_ceilings(d))?;
                Some((p.name.clone()?, h))
            })
            .collect();
        for (i, f) in self.flow.iter_mut().enumerate() {
            if f.name.is_none() {
                f.name = Some(format!("flow{i}"));
            }
            if f.app.is_none() {
                f.app = Some(match f.kind {
                    FlowKind::Tcp | FlowKind::Mptcp => AppKind::Bulk,
                    FlowKind::Udp => AppKind::Cbr,
                });
            }
            if f.kind != FlowKind::Udp && f.cc.is_none() {
                f.cc = Some(CcKind::Cubic);
            }
            if f.kind == FlowKind::Mptcp {
                if f.paths.is_none() {
                    f.paths = Some(self.path.iter().filter_map(|p| p.name.clone()).collect());
                }
                let mode = *f.mode.get_or_insert(MptcpMode::Fullmesh);
                if f.backup_paths.is_none() {
                    let ps = f.paths.as_deref().unwrap_or(&[]);
                    f.backup_paths =
                        Some(if mode == MptcpMode::Backup { ps.iter().skip(1).cloned().collect() } else { vec![] });
                }
                let kernel = *f.kernel.get_or_insert(Kernel::Upstream);
                if f.scheduler.is_none() || f.scheduler == Some(SchedName::Default) {
                    f.scheduler = Some(match kernel {
                        Kernel::Upstream => SchedName::Upstream,
                        Kernel::V09x => SchedName::Minrtt,
                    });
                }
                f.coupled.get_or_insert(CoupledName::Uncoupled);
                if f.path.is_none() {
                    f.path = f.paths.as_ref().and_then(|p| p.first().cloned());
                }
                if matches!(f.scheduler, Some(SchedName::Fixedratio | SchedName::Musher | SchedName::Amuse))
                    && f.ratio.is_none()
                {
                    // Start from an even split; MuSher and AMuSe move away from it.
                    f.ratio = Some(50);
                }
                if f.scheduler == Some(SchedName::Amuse) && f.amuse.is_none() {
                    f.amuse = Some(AmuseCfg::default());
                }
            }
            if f.path.is_none() {
                f.path = first_path.clone();
            }
            if f.stop_s.is_none() {
                f.stop_s = Some(self.duration_s);
            }
            // Socket buffer ceilings: the client's own host sets them for its end of the flow
            // (what it receives on a download, what it sends on an upload); the server end is a
            // Linux host with the kernel's defaults.
            let used = f.paths.clone().unwrap_or_else(|| f.path.iter().cloned().collect());
            let client = hosts.iter().find(|(n, _)| used.contains(n)).map(|(_, h)| *h);
            let down = f.direction == Direction::Download;
            if f.tcp.rmem_max_bytes.is_none() {
                f.tcp.rmem_max_bytes = Some(client.filter(|_| down).map_or_else(d_rmem_max, |h| h.0));
            }
            if f.tcp.wmem_max_bytes.is_none() {
                f.tcp.wmem_max_bytes = Some(client.filter(|_| !down).map_or_else(d_wmem_max, |h| h.1));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::scenario::*;

    const OK: &str = r#"{"path":[{"rate_mbps":2310,"mtu_bytes":7912}],"flow":[{"cc":"reno"}]}"#;

    #[test]
    fn defaults_are_filled() {
        let s = Scenario::from_json(OK).unwrap();
        assert_eq!(s.path[0].name.as_deref(), Some("path0"));
        assert_eq!(s.path[0].queue_bytes, Some(7_912_000));
        assert_eq!(s.flow[0].app, Some(AppKind::Bulk));
        assert_eq!(s.flow[0].stop_s, Some(10.0));
        assert_eq!(s.flow[0].tcp.initial_cwnd, 10);
        // Round trip: the normalized form parses to the same normalized form.
        let again = Scenario::from_json(&s.to_json()).unwrap();
        assert_eq!(again.to_json(), s.to_json());
    }

    /// The phone's end of a flow takes Android's buffer ceilings, the server's end Linux's; a
    /// laptop client and explicit values keep theirs.
    #[test]
    fn socket_buffer_ceilings_follow_the_client_host() {
        let sc = |dev: &str, dir: &str, tcp: &str| {
            let j = format!(
                r#"{{"path":[{{"name":"ad","technology":"11ad","device":"{dev}"}}],
                    "flow":[{{"kind":"tcp","path":"ad","direction":"{dir}"{tcp}}}]}}"#
            );
            let s = Scenario::from_json(&j).unwrap();
            let t = &s.flow[0].tcp;
            (t.rmem_max(), t.wmem_max())
        };
        let phone = crate::energy::ROG_PHONE_2;
        assert_eq!(sc("rog-phone-2", "download", ""), (phone.tcp_rmem_max, 4_194_304));
        assert_eq!(sc("rog-phone-2", "upload", ""), (6_291_456, phone.tcp_wmem_max));
        assert_eq!(sc("laptop-11ad", "download", ""), (6_291_456, 4_194_304));
        let set = r#","tcp":{"rmem_max_bytes":33554432}"#;
        assert_eq!(sc("rog-phone-2", "download", set), (33_554_432, 4_194_304));
        // The filled values are spelled out in the normalized scenario.
        let s =
            Scenario::from_json(r#"{"path":[{"technology":"11ac","device":"rog-phone-2"}],"flow":[{"kind":"tcp"}]}"#)
                .unwrap();
        assert!(s.to_json().contains(r#""rmem_max_bytes":4194304"#), "{}", s.to_json());
    }

    /// The phone has no 11n radio: the error names what the user wrote.
    #[test]
    fn the_phone_on_11n_is_refused_by_its_own_name() {
        let e =
            Scenario::from_json(r#"{"path":[{"technology":"11n","device":"rog-phone-2"}],"flow":[{"kind":"tcp"}]}"#)
                .unwrap_err()
                .to_string();
        assert!(e.starts_with(r#"path.0.device: unknown 11n device "rog-phone-2""#), "{e}");
    }
}
