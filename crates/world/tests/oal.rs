//! OAL (seed-004) in whole runs: the AP sampler's ground truth and load, and the controller's
//! effect on CUBIC senders behind a congested access point.

use crate::common;

use common::run;

/// Three CUBIC downloads through an 802.11a AP (54 Mbit/s, DropTail `buffer` per station)
/// behind a 100 Mbit/s, 10 ms wired path; station s3 at `s3_snr` (22 dB at 54 Mbit/s: half its
/// frames fail, so the MAC drops some at the retry limit). `oal` is the controller's keys, or
/// empty for none.
fn congested_ap(duration: &str, buffer: &str, s3_snr: &str, oal: &str) -> String {
    let mut s = format!(
        r#"
duration = "{duration}"
[links.wan]
rate = "100Mbps"
delay = "10ms"
[links.wan_up]
rate = "100Mbps"
delay = "10ms"
[links.air]
kind = "wifi"
mcs = 7
buffer = "{buffer}"
[links.air.stations.s1]
snr = "30dB"
[links.air.stations.s2]
snr = "30dB"
[links.air.stations.s3]
snr = "{s3_snr}"
"#
    );
    let per: usize = std::env::var("OAL_PER").ok().and_then(|v| v.parse().ok()).unwrap_or(1);
    for st in ["s1", "s2", "s3"] {
        for k in 0..per {
            s += &format!(
                "[[flows]]\nname = \"{st}-{k}\"\ncc = \"cubic\"\npath = [\"wan\", \"air:{st}\"]\nack_path = [\"air:{st}:up\", \"wan_up\"]\n"
            );
        }
    }
    if !oal.is_empty() {
        s += &format!("[[controllers]]\nkind = \"oal\"\nlink = \"air\"\n{oal}\n");
    }
    s
}

fn report(w: &rove_world::World) -> serde_json::Value {
    w.controllers[0].as_ref().unwrap().report().unwrap()
}

#[test]
fn explore() {
    let buf = std::env::var("OAL_BUF").unwrap_or("30pkt".into());
    let snr = std::env::var("OAL_SNR").unwrap_or("22dB".into());
    let extra = std::env::var("OAL_KEYS").unwrap_or_default();
    for (label, keys) in [("cubic", "act = false"), ("oal", "act = true")] {
        let (w, s) = run(&congested_ap("30s", &buf, &snr, &format!("{keys}\n{extra}")));
        let r = report(&w);
        let gp: Vec<f64> = s.flows.iter().map(|f| f.goodput_mbps).collect();
        eprintln!("{label}: goodput {gp:?} total {:.2}\n{r:#}", gp.iter().sum::<f64>());
    }
}
