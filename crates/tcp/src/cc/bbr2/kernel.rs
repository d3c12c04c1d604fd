//! The kernel backend's view of BBRv2+'s parameters: a flow's `cc_params`, resolved by the
//! simulator's own parser (so the same keys, defaults and errors), laid out as the eBPF port's
//! `struct bbr2_params` (crates/emu/bpf/bbr2_common.h), one u32 per field in its order.

use super::plus::{RoundRtt, RttMargin, ThetaRef};
use super::snapshots::TxRecords;
use super::{bad, ParamError, Params};

/// The fields of `struct bbr2_params`, in order (the eBPF port's layout).
pub const BBR2_PARAM_FIELDS: &[&str] = &[
    "loss_thresh",
    "beta",
    "headroom",
    "full_loss_cnt",
    "probe_rtt_win_ms",
    "probe_rtt_mode_ms",
    "probe_rtt_cwnd_gain",
    "min_rtt_win_sec",
    "bw_probe_base_us",
    "bw_probe_rand_us",
    "bw_probe_max_rounds",
    "bw_probe_rand_rounds",
    "extra_acked_gain",
    "probe_try",
    "gamma",
    "rtt_margin_additive",
    "rtt_margin_cap_us",
    "round_rtt_srtt",
    "continuous_probing",
    "probe_interval_rounds",
    "probe_interval_rand_rounds",
    "expire_btlbw",
    "theta",
    "theta_rtprop_recent",
    "probe_end_bw_advance",
    "forced_bw_advance_rounds",
    "dual_mode",
    "lambda1",
    "lambda2",
    "eta1",
    "eta2",
    "bdp_compensation",
    "mu",
];

/// "bbr2plus"'s `cc_params` as the eBPF port's `struct bbr2_params` (see [`BBR2_PARAM_FIELDS`]).
/// `tx_records` is not a field: the port always estimates from snapshots, so only "snapshots"
/// is accepted for it.
pub fn bbr2plus_kernel_params(t: &toml::Table) -> Result<Vec<u32>, ParamError> {
    let p = Params::from_table_plus(t)?;
    if t.contains_key("tx_records") && p.tx_records != TxRecords::Snapshots {
        return Err(bad(
            "tx_records",
            "the eBPF port has no per-packet send records (a stock kernel keeps none); \
             accepted on the kernel: \"snapshots\""
                .to_string(),
        ));
    }
    let q = &p.plus;
    let v = vec![
        p.loss_thresh,
        p.beta,
        p.headroom,
        p.full_loss_cnt,
        p.probe_rtt_win_ms,
        p.probe_rtt_mode_ms,
        p.probe_rtt_cwnd_gain,
        p.min_rtt_win_sec,
        p.bw_probe_base_ms.saturating_mul(1000),
        p.bw_probe_rand_ms.saturating_mul(1000),
        p.bw_probe_max_rounds,
        p.bw_probe_rand_rounds,
        p.extra_acked_gain,
        q.probe_try as u32,
        q.gamma,
        (q.rtt_margin == RttMargin::Additive) as u32,
        q.rtt_margin_cap_us,
        (q.round_rtt == RoundRtt::Srtt) as u32,
        q.continuous_probing as u32,
        q.probe_interval_rounds,
        q.probe_interval_rand_rounds,
        q.expire_btlbw as u32,
        q.theta,
        (q.theta_rtprop == ThetaRef::RecentMin) as u32,
        q.probe_end_bw_advance as u32,
        q.forced_bw_advance_rounds,
        q.dual_mode as u32,
        q.lambda1,
        q.lambda2,
        q.eta1,
        q.eta2,
        q.bdp_compensation as u32,
        q.mu,
    ];
    debug_assert_eq!(v.len(), BBR2_PARAM_FIELDS.len());
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resolve(src: &str) -> Result<Vec<u32>, ParamError> {
        bbr2plus_kernel_params(&toml::from_str(src).unwrap())
    }

    #[test]
    fn the_thesis_defaults_are_the_ebpf_ports_bbr2_thesis_plus_params() {
        // bbr2_common.h's bbr2_thesis_plus_params, field by field: alpha 20 % = 51, beta 76,
        // headroom 38, 8 loss events, 5000 / 200 ms, 128, 10 s, 2 s + 1 s in µs, 63 and 2
        // rounds, aggregation gain 256; ProbeTry on, gamma 261, multiplicative, 2000 µs cap,
        // round min, continuous probing, 8 + U[0, 4) rounds, Algorithm 1 on, theta 281,
        // min_rtt, end-of-probe advance on, no forced advance, Algorithm 2 on, lambda 281 / 268,
        // eta 2 / 4, Algorithm 3 on, mu 128.
        let want = [
            51, 76, 38, 8, 5000, 200, 128, 10, 2_000_000, 1_000_000, 63, 2, 256, 1, 261, 0, 2000,
            0, 1, 8, 4, 1, 281, 0, 1, 0, 1, 281, 268, 2, 4, 1, 128,
        ];
        assert_eq!(resolve("").unwrap(), want);
        assert_eq!(want.len(), BBR2_PARAM_FIELDS.len());
    }

    #[test]
    fn the_code_variant_and_overrides_land_in_their_fields() {
        let v = resolve("variant = \"code\"\nloss_thresh = 0.1\ndual_mode = false").unwrap();
        let at = |f: &str| v[BBR2_PARAM_FIELDS.iter().position(|k| *k == f).unwrap()];
        assert_eq!(at("loss_thresh"), 25); // 0.1 · 256 = 25.6, truncated
        assert_eq!(at("rtt_margin_additive"), 1);
        assert_eq!(at("round_rtt_srtt"), 1);
        assert_eq!(at("theta_rtprop_recent"), 1);
        assert_eq!(at("probe_end_bw_advance"), 0);
        assert_eq!(at("forced_bw_advance_rounds"), 25);
        assert_eq!(at("mu"), 102);
        assert_eq!(at("dual_mode"), 0);
        let e = resolve("delta = 1").unwrap_err();
        assert_eq!(e.key, "delta");
    }

    #[test]
    fn only_snapshot_send_records_run_on_the_kernel() {
        assert_eq!(
            resolve("tx_records = \"snapshots\"").unwrap(),
            resolve("").unwrap()
        );
        let e = resolve("tx_records = \"per_packet\"").unwrap_err();
        assert_eq!(e.key, "tx_records");
        assert!(e.message.contains("\"snapshots\""), "{}", e.message);
    }
}
