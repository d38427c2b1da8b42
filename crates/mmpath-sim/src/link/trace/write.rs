//! Recording a run's channel: steps written in mmpath's CSV format (csv.rs, docs/traces.md
//! "Recording"), all columns, times and rates as exact decimals and floats in their shortest
//! exact form, so that reading the file back gives the same steps.

use super::csv::CSV_COLUMNS;
use super::TraceStep;

/// Writes steps in mmpath's CSV format (all columns; empty cell = unchanged), readable back by
/// `parse(.., TraceFormat::Csv, ..)` into the same steps. Times and rates are written as exact
/// decimals (ns and bit/s resolution), floats in their shortest exact form. Fails with
/// `InvalidInput` if the steps are not strictly increasing in time or hold NaN / infinity.
pub fn write_csv(w: &mut impl std::io::Write, steps: &[TraceStep]) -> std::io::Result<()> {
    let invalid = |m: String| std::io::Error::new(std::io::ErrorKind::InvalidInput, m);
    for pair in steps.windows(2) {
        if pair[1].at <= pair[0].at {
            return Err(invalid(format!(
                "steps must be strictly increasing in time ({:?} follows {:?})",
                pair[1].at, pair[0].at
            )));
        }
    }
    writeln!(w, "# mmpath channel trace: one row per step, an empty cell keeps the previous value")?;
    writeln!(w, "{}", CSV_COLUMNS.join(","))?;
    for s in steps {
        let float = |v: Option<f32>, name: &str| -> std::io::Result<String> {
            match v {
                None => Ok(String::new()),
                Some(x) if x.is_finite() => Ok(format!("{x}")),
                Some(x) => Err(invalid(format!("{name} at {:?} is {x} (only finite values can be written)", s.at))),
            }
        };
        let t = fixed_decimal(s.at.ns(), 9);
        let c = &s.set;
        let rate = c.rate_bps.map(|r| fixed_decimal(r, 6)).unwrap_or_default();
        let mcs = c.mcs.map(|m| m.to_string()).unwrap_or_default();
        let up = c.up.map(|u| if u { "1" } else { "0" }).unwrap_or_default();
        let rssi = float(c.rssi_dbm, "rssi_dbm")?;
        let snr = float(c.snr_db, "snr_db")?;
        let sector = c.sector.map(|x| x.to_string()).unwrap_or_default();
        writeln!(w, "{t},{rate},{mcs},{up},{rssi},{snr},{sector}")?;
    }
    Ok(())
}

/// `v / 10^digits` as an exact decimal without trailing zeros: (1500000, 6) -> "1.5".
fn fixed_decimal(v: u64, digits: u32) -> String {
    let div = 10u64.pow(digits);
    let (int, frac) = (v / div, v % div);
    if frac == 0 {
        return int.to_string();
    }
    let f = format!("{frac:0width$}", width = digits as usize);
    format!("{int}.{}", f.trim_end_matches('0'))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::link::trace::testkit::*;
    use crate::link::trace::ChannelState;

    #[test]
    fn csv_round_trip() {
        let none = ChannelState::default();
        let steps = vec![
            TraceStep::new(
                Time::ZERO,
                ChannelState {
                    rate_bps: Some(2_310_000_000),
                    mcs: Some(8),
                    up: Some(true),
                    rssi_dbm: Some(-55.25),
                    snr_db: Some(17.3),
                    sector: Some(12),
                },
            ),
            TraceStep::new(Time(1), ChannelState { rate_bps: Some(0), up: Some(false), ..none }),
            TraceStep::new(Time(1_234_567_891), ChannelState { rssi_dbm: Some(-0.1), snr_db: Some(1e-7), ..none }),
            TraceStep::new(Time::from_secs(80_000), ChannelState { rate_bps: Some(1), mcs: Some(31), ..none }),
            TraceStep::new(
                Time(86_399_000_000_001),
                // The largest rate a trace may hold (bounds.rs), as a path's rate_mbps.
                ChannelState { rate_bps: Some(crate::bounds::MAX_RATE_BPS), sector: Some(65535), ..none },
            ),
            // The latest time a trace may hold: one day (time.rs MAX_USER_SECS), the longest run.
            TraceStep::new(Time::from_secs(86_400), none),
        ];
        let mut buf = Vec::new();
        write_csv(&mut buf, &steps).unwrap();
        let text = String::from_utf8(buf).unwrap();
        let t = p(&text, TraceFormat::Csv).unwrap();
        assert_eq!(t.steps, steps, "{text}");
        assert_eq!(t.period, Time::from_secs(86_400));
        assert!(text.contains("\n0.000000001,0,,0,,,\n"), "{text}");

        // Random steps round-trip too.
        let mut rng = Lcg(7);
        let mut steps = Vec::new();
        let mut at = 0u64;
        for _ in 0..500 {
            at += 1 + rng.next() % 50_000_000_000;
            let pick = rng.next();
            let set = ChannelState {
                rate_bps: (pick & 1 != 0).then(|| rng.next() % 10_000_000_000_000),
                mcs: (pick & 2 != 0).then(|| (rng.next() % 32) as u8),
                up: (pick & 4 != 0).then(|| rng.next().is_multiple_of(2)),
                rssi_dbm: (pick & 8 != 0).then(|| -((rng.next() % 100_000) as f32) / 997.0),
                snr_db: (pick & 16 != 0).then(|| f32::from_bits((rng.next() % 0x7f00_0000) as u32)),
                sector: (pick & 32 != 0).then(|| rng.next() as u16),
            };
            steps.push(TraceStep::new(Time(at), set));
        }
        let mut buf = Vec::new();
        write_csv(&mut buf, &steps).unwrap();
        let t = parse(std::str::from_utf8(&buf).unwrap(), "rt", TraceFormat::Csv, &opts()).unwrap();
        assert_eq!(t.steps, steps);
    }

    #[test]
    fn rssi_only_steps_round_trip() {
        // A radio path's record with only its signal changing (a walk, rate adaptation ideal).
        let none = ChannelState::default();
        let steps = vec![
            TraceStep::new(Time::ZERO, ChannelState { rssi_dbm: Some(-50.0), ..none }),
            TraceStep::new(Time::from_ms(250), ChannelState { rssi_dbm: Some(-66.25), ..none }),
            TraceStep::new(Time::from_secs(1), none),
        ];
        let mut buf = Vec::new();
        write_csv(&mut buf, &steps).unwrap();
        let t = p(std::str::from_utf8(&buf).unwrap(), TraceFormat::Csv).unwrap();
        assert_eq!(t.steps, steps);
        // And hand-written with only the columns it uses.
        let t = p("t_s,rssi_dbm\n0,-50\n0.25,-66.25\n1,\n", TraceFormat::Csv).unwrap();
        assert_eq!(t.steps, steps);
    }

    #[test]
    fn write_csv_rejects_bad_steps() {
        let mut buf = Vec::new();
        let none = ChannelState::default();
        let same = [TraceStep::new(Time(5), none), TraceStep::new(Time(5), none)];
        assert_eq!(write_csv(&mut buf, &same).unwrap_err().kind(), std::io::ErrorKind::InvalidInput);
        let nan = [TraceStep::new(Time(5), ChannelState { rssi_dbm: Some(f32::NAN), ..none })];
        assert_eq!(write_csv(&mut buf, &nan).unwrap_err().kind(), std::io::ErrorKind::InvalidInput);
    }
}
