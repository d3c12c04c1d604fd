//! Several access points on one WiFi channel (`aps`, crates/sim link/wifi/bss.rs) in whole
//! runs: n saturated APs against Bianchi's n contenders, their airtime shares and surveys,
//! the keys' errors, and OAL with one controller per AP (scenarios/oal/three-aps.toml).

use crate::common;
use crate::wifi::bianchi_bps;

use common::run;
use rove_sim::link::wifi::phy;

/// `n` APs on one channel, one station each (ap`k` with s`k`), every AP sending `rate` of
/// 1500-byte CBR down to its station; nothing goes up.
fn saturated_aps(n: u32, rate: &str, cell_keys: &str, duration: &str) -> String {
    let aps: Vec<String> = (0..n).map(|k| format!("\"ap{k}\"")).collect();
    let mut s = format!(
        "duration = \"{duration}\"\n[links.air]\nkind = \"wifi\"\nmcs = 7\naps = [{}]\n{cell_keys}\n",
        aps.join(", ")
    );
    for k in 0..n {
        s += &format!("[links.air.stations.s{k}]\nsnr = \"30dB\"\nap = \"ap{k}\"\n");
    }
    for k in 0..n {
        s += &format!(
            "[[flows]]\nname = \"s{k}\"\nworkload = \"cbr\"\nrate = \"{rate}\"\npath = [\"air:s{k}\"]\n"
        );
    }
    s
}

/// An AP with several stations is one contender; n APs are n. Bianchi's saturation throughput
/// for n contenders (802.11a at 54 Mbit/s, 1500-byte packets, basic access, no aggregation,
/// infinite retries: Ts = 326 µs, Tc = 342 µs, σ = 9 µs, as crates/world/tests/wifi.rs), with
/// n = 1..5 saturated APs each sending down to its one station (60 Mbit/s offered each): within
/// 5 %, and each AP's airtime share is 1/n within 3 %. 100 s a run: the DCF is fair in the long
/// run only (a winner's CW restarts at CWmin while the losers' have doubled), and over 20 s the
/// shares of 5 contenders (APs here or stations in wifi.rs, the same draws) still spread by
/// ±4.4 %; over 100 s by ±2.2 % (seeds 1-3).
///
/// Each AP's survey: the busy time is the channel's, the same at every AP; its tx time is its
/// data PPDUs' air time (collisions included; it sends no Acks), and, every PPDU being one
/// 248 µs frame or an Ack heard, busy = tx + rx exactly (`survey_rx = "all"`).
///
/// Measured (rove at seed 1; error = rove / Bianchi - 1; airtime: the largest deviation of an
/// AP's share from 1/n):
///
/// | n | Bianchi Mbit/s | rove Mbit/s | error   | airtime |
/// |---|----------------|-------------|---------|---------|
/// | 1 | 30.50          | 30.51       | +0.03 % | 0.00 %  |
/// | 2 | 31.21          | 30.75       | -1.49 % | 0.22 %  |
/// | 3 | 30.65          | 30.13       | -1.68 % | 0.35 %  |
/// | 4 | 29.96          | 29.50       | -1.55 % | 0.99 %  |
/// | 5 | 29.34          | 28.92       | -1.40 % | 2.24 %  |
#[test]
fn n_saturated_aps_match_bianchis_n_contenders_and_share_airtime_equally() {
    let ts = (phy::data_ns(1500, 7) + phy::SIFS_NS + phy::ack_ns(7) + phy::DIFS_NS) as f64 / 1e9;
    let tc = (phy::data_ns(1500, 7) + phy::eifs_ns()) as f64 / 1e9;
    let sigma = phy::SLOT_NS as f64 / 1e9;
    let duration_s = 100.0;
    let mut rows = Vec::new();
    for n in 1..=5u32 {
        let expected = bianchi_bps(n, 1500.0 * 8.0, sigma, ts, tc);
        let (w, _) = run(&saturated_aps(n, "60Mbps", "retry_limit = 1000000", "100s"));
        let stats = w.links[0].stats();
        assert_eq!(stats.mac_drops, 0, "n = {n}");
        let got = stats.departed_bytes as f64 * 8.0 / duration_s;
        let err = got / expected - 1.0;
        let totals = w.links[0].radio().unwrap().radio_totals();
        let air: Vec<f64> = (0..n as usize)
            .map(|k| totals.ports[2 * k].1.airtime_ns as f64)
            .collect();
        let all: f64 = air.iter().sum();
        let worst = air
            .iter()
            .map(|a| (a / all * f64::from(n) - 1.0).abs())
            .fold(0.0, f64::max);
        rows.push(format!(
            "| {n} | {:.2} | {:.2} | {:+.2} % | {:.2} % |",
            expected / 1e6,
            got / 1e6,
            err * 100.0,
            worst * 100.0
        ));
        eprintln!("{}", rows.last().unwrap());
        assert!(err.abs() < 0.05, "{}", rows.join("\n"));
        assert!(worst < 0.03, "{}", rows.join("\n"));
        // The uplink ports never sent.
        assert!((0..n as usize).all(|k| totals.ports[2 * k + 1].1.airtime_ns == 0));
        // Per AP (a cell of one reports its AP's survey alone).
        let surveys: Vec<_> = if n == 1 {
            vec![totals.survey]
        } else {
            totals.aps.iter().map(|a| a.1).collect()
        };
        let busy = surveys[0].busy_ns;
        for (k, s) in surveys.iter().enumerate() {
            assert_eq!(s.busy_ns, busy, "n = {n}, ap{k}");
            assert_eq!(s.tx_ns, totals.ports[2 * k].1.airtime_ns, "n = {n}, ap{k}");
            assert_eq!(s.tx_ns + s.rx_ns, busy, "n = {n}, ap{k}");
        }
    }
}

/// With one AP named in `aps` the cell is today's cell: the same bytes through it, the same
/// counters (only the AP's name differs, and it is not written with one AP).
#[test]
fn one_named_ap_is_the_cell_without_aps() {
    let plain = "duration = \"5s\"\n[links.air]\nkind = \"wifi\"\nmcs = 7\n[links.air.stations.a]\nsnr = \"22dB\"\n[links.air.stations.b]\n[[flows]]\nname = \"a\"\ncc = \"cubic\"\npath = [\"air:a\"]\nack_path = [\"air:a:up\"]\n[[flows]]\nname = \"b\"\nworkload = \"cbr\"\nrate = \"20Mbps\"\npath = [\"air:b:up\"]\n";
    let named = plain
        .replace("mcs = 7\n", "mcs = 7\naps = [\"home\"]\n")
        .replace(
            "[links.air.stations.b]\n",
            "[links.air.stations.b]\nap = \"home\"\n",
        );
    let (wa, sa) = run(plain);
    let (wb, sb) = run(&named);
    assert_eq!(
        serde_json::to_string(&sa.links).unwrap(),
        serde_json::to_string(&sb.links).unwrap()
    );
    assert_eq!(sa.flows[0].bytes_delivered, sb.flows[0].bytes_delivered);
    let totals = |w: &rove_world::World| w.links[0].radio().unwrap().radio_totals();
    assert_eq!(totals(&wa), totals(&wb));
}

/// The keys of a multi-AP cell and of OAL on it are checked when the scenario is read: one-line
/// errors naming the full key and what is accepted.
#[test]
fn bad_multi_ap_keys_are_one_line_errors_naming_the_full_key() {
    let scenario = |air: &str, stations: &str| {
        format!(
            "duration = \"1s\"\n[links.air]\nkind = \"wifi\"\n{air}\n{stations}\n[[flows]]\npath = [\"air:s1\"]\nack_path = [\"air:s1:up\"]\n"
        )
    };
    let two = "[links.air.stations.s1]\nap = \"ap1\"\n[links.air.stations.s2]\nap = \"ap2\"";
    let err = |air: &str, stations: &str| common::parse_error(&scenario(air, stations));
    let (at, msg) = err("aps = \"ap1\"", two);
    assert_eq!(at, "links.air.aps");
    assert!(msg.contains("[\"ap1\", \"ap2\"]"), "{msg}");
    let (at, msg) = err("aps = [\"ap1\", \"ap1\"]", two);
    assert_eq!(at, "links.air.aps");
    assert!(msg.contains("listed twice"), "{msg}");
    let (at, msg) = err("aps = [\"ap1\", \"ap2\", \"ap3\"]", two);
    assert_eq!(at, "links.air.aps");
    assert!(msg.contains("\"ap3\" has no stations"), "{msg}");
    let (at, msg) = err(
        "aps = [\"ap1\", \"ap2\"]",
        "[links.air.stations.s1]\nsnr = \"30dB\"\n[links.air.stations.s2]\nap = \"ap2\"",
    );
    assert_eq!(at, "links.air.stations.s1.ap");
    assert!(msg.contains("missing required key \"ap\""), "{msg}");
    assert!(msg.contains("\"ap1\", \"ap2\""), "{msg}");
    let (at, msg) = err(
        "aps = [\"ap1\", \"ap2\"]",
        "[links.air.stations.s1]\nap = \"ap9\"\n[links.air.stations.s2]\nap = \"ap2\"",
    );
    assert_eq!(at, "links.air.stations.s1.ap");
    assert_eq!(msg, "expected one of \"ap1\", \"ap2\", got \"ap9\"");
    let (at, msg) = err("", "[links.air.stations.s1]\nap = \"ap1\"");
    assert_eq!(at, "links.air.stations.s1.ap");
    assert!(msg.contains("aps = ["), "{msg}");
    let (at, msg) = err("survey_rx = \"mine\"\n", "[links.air.stations.s1]");
    assert_eq!(at, "links.air.survey_rx");
    assert!(msg.contains("\"all\"") && msg.contains("\"bss\""), "{msg}");

    // OAL's `ap`: required on a cell of several, one of its APs.
    let with_oal = |oal: &str| {
        scenario("aps = [\"ap1\", \"ap2\"]", two)
            + &format!("[[controllers]]\nkind = \"oal\"\nlink = \"air\"\n{oal}\n")
    };
    let load_err = |text: &str| match rove_world::load(text, &Default::default()) {
        Ok(_) => panic!("accepted: {text}"),
        Err(e) => e.to_string(),
    };
    for (oal, says) in [
        ("", "has several access points (ap1, ap2); name the one"),
        ("ap = \"ap3\"", "unknown access point \"ap3\""),
        ("ap = 1", "ap"),
    ] {
        let e = load_err(&with_oal(oal));
        assert!(
            e.contains("controllers[0].ap") && e.contains(says),
            "{oal:?}: {e}"
        );
        assert!(!e.trim_end().contains('\n'), "{e}");
    }
    assert!(rove_world::load(&with_oal("ap = \"ap2\""), &Default::default()).is_ok());
}

/// scenarios/oal/three-aps.toml (seed-004's testbed: 3 APs on one channel × 3 stations, 9
/// CUBIC downloads, one OAL controller per AP), 30 s: each controller samples its own AP's
/// counters only (its congestion and MAC drops are its AP's downlink ports' in summary.json),
/// records and acts on its own stations' flows only (its features.parquet rows, tagged with
/// its AP), and acts.
///
/// Measured (30 s): the controllers on ap1, ap2, ap3 counted 275, 144, 156 congestion drops
/// and 29, 13, 20 MAC drops, acted in 204, 167, 58 ticks and rewrote 208, 265, 12 ACKs.
#[test]
fn three_aps_with_one_oal_controller_each_act_on_their_own_ap_only() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../scenarios/oal/three-aps.toml"
    ))
    .unwrap();
    let (w, s) = run(&text);
    let radio = s
        .links
        .iter()
        .find(|l| l.name == "air")
        .unwrap()
        .radio
        .as_ref()
        .unwrap();
    assert_eq!(radio.aps.len(), 3);
    let mut seen_flows = Vec::new();
    for (k, c) in w.controllers.iter().flatten().enumerate() {
        let ap = &radio.aps[k];
        let r = c.report().unwrap();
        let n = |key: &str| r[key].as_u64().unwrap_or_else(|| panic!("{key} in {r}"));
        eprintln!(
            "{}: congestion drops {}, MAC drops {}, acting ticks {}, rewrites {}",
            ap.ap,
            n("congestion_drops"),
            n("mac_drops"),
            n("acting_ticks"),
            n("rewrites")
        );
        assert_eq!(
            n("congestion_drops"),
            ap.overflow_drops + ap.codel_drops,
            "{}",
            ap.ap
        );
        assert_eq!(n("mac_drops"), ap.mac_drops, "{}", ap.ap);
        assert!(
            n("congestion_drops") > 0 && n("acting_ticks") > 0 && n("rewrites") > 0,
            "{r}"
        );
        // Its rows: its own three flows (named after its stations), tagged with its AP.
        let log = c.features().unwrap();
        assert_eq!(log.tags, vec![("ap", ap.ap.clone())]);
        let mut flows: Vec<&str> = log
            .flow
            .iter()
            .map(|&i| s.flows[i as usize].name.as_str())
            .collect();
        flows.sort();
        flows.dedup();
        assert_eq!(flows, ap.stations, "{}", ap.ap);
        seen_flows.extend(flows.iter().map(|f| f.to_string()));
    }
    assert_eq!(seen_flows.len(), 9);
}
