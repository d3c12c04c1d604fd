// SPDX-License-Identifier: GPL-2.0
/*
 * The algorithm of bbr2.bpf.c and bbr2plus.bpf.c (each defines its struct_ops map and where
 * its parameters come from, bbr2_load_params).
 *
 * BBR v2 ("v2alpha") for a stock kernel: Google's net/ipv4/tcp_bbr2.c (github.com/google/bbr,
 * branch v2alpha) as a BPF tcp_congestion_ops with .cong_control, the algorithm of rove's
 * simulator port crates/tcp/src/cc/bbr2/mod.rs (which documents the model and the state
 * machine; the function names below are tcp_bbr2.c's). The state machine, the filters
 * (bw_hi over two probe cycles, the 5 s probe_rtt_min and 10 s min_rtt filters, the
 * ACK-aggregation max filter), inflight_hi/inflight_lo/bw_lo, the random probe wait and the
 * constants are the original's; the differences:
 *
 * - Per-socket state: struct bbr2 (about 1.7 KB with the send-time ring below) does not fit
 *   icsk_ca_priv (104 bytes); it lives in BPF socket storage (rove_bbr2_state, created in
 *   .init, deleted in .release). If it cannot be created (memory), the socket runs Reno
 *   (the kernel's tcp_reno_* kfuncs) and says so nowhere else: [GAP].
 * - rs->tx_in_flight and rs->lost: v2alpha's tcp_rate.c records, per skb at send time, the
 *   packets in flight and tp->lost; a stock kernel's rate_sample has neither. The port keeps
 *   a ring of the last SNAP_RING (128) ACKs' (tp->delivered, tp->lost, in-flight estimate)
 *   and, for a rate sample, takes the last snapshot with delivered <= rs->prior_delivered
 *   (rs->prior_delivered is tp->delivered when the sampled packet was sent, so that snapshot
 *   is the state the packet was sent in): lost = tp->lost - snapshot.lost, tx_in_flight =
 *   snapshot.in_flight. [GAP] The in-flight estimate of a snapshot is what the ACK leaves in
 *   flight plus what it releases, capped by the new cwnd: min(cwnd, in_flight + acked_sacked),
 *   at least in_flight + 1 (a cwnd-limited sender fills to cwnd after the ACK; a paced one
 *   sends about acked_sacked more). When the ring holds nothing as old as the sampled packet
 *   (more than 128 ACKs per round trip) the oldest snapshot is used, which counts fewer
 *   losses; with an empty ring tx_in_flight is 0 (never "too high").
 * - skb_marked_lost (v2alpha's per-lost-skb hook) does not exist in a stock kernel. Its work
 *   is done at the start of the next .cong_control with rs->losses > 0 (the ACK that marked
 *   the losses; v2alpha calls the hook during that ACK's processing, before bbr2_main): the
 *   loss round starts at tp->delivered, and while probing the loss rate of the ACK's sample
 *   (estimates above) is tested once per ACK instead of once per lost skb; if too high,
 *   inflight_hi is cut to bbr2_inflight_hi_from_lost_skb's value with pcount = rs->losses
 *   (the losses the ACK marked, as one skb), unless the ACK's sample is app-limited (v2alpha
 *   reads the lost skb's own tx.is_app_limited).
 * - ProbeRTT cannot mark the flow app-limited (tp->app_limited is not writable from a BPF
 *   tcp_congestion_ops in 6.18, net/ipv4/bpf_tcp_ca.c): samples taken in PROBE_RTT count as
 *   not app-limited. They are below the bandwidth peak, so bw_hi (a max filter) ignores them;
 *   bw_latest/inflight_latest (used only in a round with loss) may see them.
 * - sk_pacing_status is set to SK_PACING_NEEDED by a test and a write (the kernel's
 *   cmpxchg is not available to BPF); the socket is owned by the stack's locked path here.
 * - ECN (ecn_alpha, the ECN exit of STARTUP, ECN re-probing) is omitted as in the simulator:
 *   rove's links do not mark (ECN is off by default in v2alpha: bbr_ecn_enable = false).
 * - Left out, as in the simulator: the fast path (a CPU saving), usage_based_cwnd and
 *   refill_add_inc (off by default), the debug fields, get_info (unsupported for BPF).
 * - Kept from the kernel where the simulator differs: PROBE_RTT's min filter refreshes on an
 *   expired window only for an ACK that was not delayed (rs->is_ack_delayed); BBR's bdp before
 *   any RTT sample is bbr->init_cwnd; the TSO goal reads sk->sk_pacing_shift (10 unless a
 *   qdisc changes it) and caps at GSO_LEGACY_MAX_SIZE - 1 - MAX_TCP_HEADER (320, x86_64).
 * - Random numbers are bpf_get_prandom_u32 scaled as the kernel's prandom_u32_max
 *   ((u64)r * n >> 32); the simulator draws from its seeded stream.
 * - The parameters are tcp_bbr2.c's module defaults, held in the state (struct bbr2_params)
 *   so that variants can set them at init.
 *
 * The verifier accepts the original's constructs as they are: 64-bit unsigned division, no
 * signed division, no floating point; the only loop (the ring search) is bounded.
 */
#ifndef BBR2_COMMON_H
#define BBR2_COMMON_H

#include "rove_cc.h"

/* Fixed-point scales and v1 constants kept by tcp_bbr2.c (tcp_bbr.c). */
#define BW_SCALE 24
#define BW_UNIT (1ULL << BW_SCALE)
#define BBR_SCALE 8
#define BBR_UNIT (1U << BBR_SCALE)
#define BBR_HIGH_GAIN (BBR_UNIT * 2885 / 1000 + 1) /* bbr_high_gain, bbr_startup_cwnd_gain */
#define BBR_DRAIN_GAIN (BBR_UNIT * 1000 / 2885)    /* bbr_drain_gain */
#define BBR_CWND_GAIN (BBR_UNIT * 2)               /* bbr_cwnd_gain */
#define BBR_CWND_MIN_TARGET 4                      /* bbr_cwnd_min_target */
#define BBR_FULL_BW_THRESH (BBR_UNIT * 5 / 4)      /* bbr_full_bw_thresh */
#define BBR_FULL_BW_CNT 3                          /* bbr_full_bw_cnt */
#define BBR_MIN_TSO_RATE 1200000                   /* bbr_min_tso_rate, bit/s */
#define BBR_PACING_MARGIN_PERCENT 1                /* bbr_pacing_margin_percent */
#define BBR_EXTRA_ACKED_WIN_RTTS 5                 /* bbr_extra_acked_win_rtts */
#define BBR_ACK_EPOCH_ACKED_RESET_THRESH (1U << 20)
#define BBR_EXTRA_ACKED_MAX_US (100 * 1000)        /* bbr_extra_acked_max_us */
#define GSO_LEGACY_MAX_SIZE 65536                  /* include/linux/netdevice.h */
#define MAX_TCP_HEADER 320                         /* L1_CACHE_ALIGN(128 + MAX_HEADER), x86_64 */
/* v2 constants of tcp_bbr2.c (v2alpha). */
#define BBR_PACING_GAIN_UP (BBR_UNIT * 5 / 4)      /* bbr_pacing_gain[B2_UP] */
#define BBR_PACING_GAIN_DOWN (BBR_UNIT * 3 / 4)    /* bbr_pacing_gain[B2_DOWN] */
#define BBR_BW_PROBE_PIF_GAIN (BBR_UNIT * 5 / 4)   /* bbr_bw_probe_pif_gain */
#define BBR_BW_PROBE_RENO_GAIN BBR_UNIT            /* bbr_bw_probe_reno_gain */
#define BBR_TSO_RTT_SHIFT 9                        /* bbr_tso_rtt_shift */
#define LOSS_EVENTS_MAX 0xF                        /* loss_events_in_round:4 */
#define PROBE_UP_ROUNDS_MAX 30                     /* bw_probe_up_rounds cap */
/* BBRv2+ (seed 000 4.4.2; plus.rs). */
#define PLUS_PRE_UP_GAIN (BBR_UNIT * 110 / 100)        /* ProbeTry's first round, 1.10 */
#define PLUS_DOWN_SLIGHTLY_GAIN (BBR_UNIT * 90 / 100)  /* after a failed ProbeTry, 0.90 */

#define SNAP_RING 128 /* send-time snapshots kept (a power of 2) */
#define SNAP_BITS 7

enum bbr2_mode { B2_STARTUP, B2_DRAIN, B2_PROBE_BW, B2_PROBE_RTT };
enum bbr2_phase {
	B2_UP = 0,
	B2_DOWN = 1,
	B2_CRUISE = 2,
	B2_REFILL = 3,
	B2_PRE_UP = 4,        /* BBRv2+ ProbeTry, first round (pacing 1.10) */
	B2_GUARD = 5,         /* BBRv2+ ProbeTry, second round (1.0): UP or DOWN_SLIGHTLY */
	B2_POST_UP = 6,       /* BBRv2+ continuous probing: a round at 1.0 with UP's feedback */
	B2_DOWN_SLIGHTLY = 7, /* BBRv2+ after a failed ProbeTry (0.90); otherwise as DOWN */
};
enum bbr2_ack_phase {
	B2_ACKS_INIT,
	B2_ACKS_REFILLING,
	B2_ACKS_PROBE_STARTING,
	B2_ACKS_PROBE_FEEDBACK,
	B2_ACKS_PROBE_STOPPING,
};

/* The tunables (tcp_bbr2.c's module parameters; fractions in 1/256). */
struct bbr2_params {
	__u32 loss_thresh;         /* bbr_loss_thresh = BBR_UNIT * 2 / 100 */
	__u32 beta;                /* bbr_beta = BBR_UNIT * 30 / 100 */
	__u32 headroom;            /* bbr_inflight_headroom = BBR_UNIT * 15 / 100 */
	__u32 full_loss_cnt;       /* bbr_full_loss_cnt = 8 */
	__u32 probe_rtt_win_ms;    /* bbr_probe_rtt_win_ms = 5000 */
	__u32 probe_rtt_mode_ms;   /* bbr_probe_rtt_mode_ms = 200 */
	__u32 probe_rtt_cwnd_gain; /* bbr_probe_rtt_cwnd_gain = BBR_UNIT / 2 */
	__u32 min_rtt_win_sec;     /* bbr_min_rtt_win_sec = 10 */
	__u32 bw_probe_base_us;    /* bbr_bw_probe_base_us = 2 s */
	__u32 bw_probe_rand_us;    /* bbr_bw_probe_rand_us = 1 s */
	__u32 bw_probe_max_rounds; /* bbr_bw_probe_max_rounds = 63 */
	__u32 bw_probe_rand_rounds; /* bbr_bw_probe_rand_rounds = 2 */
	__u32 extra_acked_gain;    /* bbr_extra_acked_gain = BBR_UNIT */
	/* BBRv2+ (bbr2plus.bpf.c; all off for bbr2): the simulator's plus.rs `Plus`, factors in
	 * 1/256, booleans 0/1. The layout is written by the kernel backend (rove-tcp's
	 * bbr2plus_kernel_params gives the same order). */
	__u32 probe_try;
	__u32 gamma;
	__u32 rtt_margin_additive;  /* 0: multiplicative (thesis), 1: additive (code) */
	__u32 rtt_margin_cap_us;
	__u32 round_rtt_srtt;       /* 0: per-round min RTT (thesis), 1: per-round srtt (code) */
	__u32 continuous_probing;
	__u32 probe_interval_rounds;
	__u32 probe_interval_rand_rounds;
	__u32 expire_btlbw;
	__u32 theta;
	__u32 theta_rtprop_recent;  /* 0: min_rtt (thesis), 1: recent 4-round min (code) */
	__u32 probe_end_bw_advance;
	__u32 forced_bw_advance_rounds;
	__u32 dual_mode;
	__u32 lambda1;
	__u32 lambda2;
	__u32 eta1;
	__u32 eta2;
	__u32 bdp_compensation;
	__u32 mu;
};

#define PLUS_ROUNDS 4 /* JITTER_WIN_ROUNDS = RECENT_MIN_RTT_ROUNDS = 4 (plus.rs) */

/* BBRv2+'s per-connection state (plus.rs PlusState). */
struct bbr2_plus_state {
	__u32 round_min_us;
	__u32 prev_round_min_us;
	__u32 round_srtt_us;
	__u32 prev_round_srtt_us;
	__u32 recent_round_min_us[PLUS_ROUNDS];
	__u32 recent_idx;
	__u32 jitter_max_us[PLUS_ROUNDS];
	__u32 jitter_idx;
	__u32 phase_min_us;
	__u32 probe_try_ref_us;
	__u32 before_probe_us;
	__u32 probe_wait_rounds;
	__u32 rounds_without_max;
	__u32 fast_probing;
	__u32 buffer_filling;
	__u32 buffer_empty;
	__u32 last_cruise_min_us;
	__u32 ever_min_rtt_us;
};

struct bbr2_snap {
	__u32 delivered;
	__u32 lost;
	__u32 in_flight;
};

struct bbr2 {
	struct bbr2_params p;
	__u64 cycle_mstamp;
	__u64 ack_epoch_mstamp;
	__u32 min_rtt_us;
	__u32 min_rtt_stamp;
	__u32 probe_rtt_done_stamp;
	__u32 probe_rtt_min_us;
	__u32 probe_rtt_min_stamp;
	__u32 next_rtt_delivered;
	__u32 prior_cwnd;
	__u32 init_cwnd;
	__u32 full_bw;
	__u32 full_bw_cnt;
	__u32 pacing_gain;
	__u32 cwnd_gain;
	__u32 ack_epoch_acked;
	__u32 extra_acked[2];
	__u32 extra_acked_win_rtts;
	__u32 extra_acked_win_idx;
	__u32 bw_hi[2]; /* tcp_bbr2.c's max_bw[2] */
	__u32 bw_lo;
	__u32 inflight_hi;
	__u32 inflight_lo;
	__u32 bw_latest;
	__u32 inflight_latest;
	__u32 loss_round_delivered;
	__u32 loss_events_in_round;
	__u32 rounds_since_probe;
	__u32 probe_wait_us;
	__u32 bw_probe_up_cnt;
	__u32 bw_probe_up_acks;
	__u32 bw_probe_up_rounds;
	__u32 undo_bw_lo;
	__u32 undo_inflight_lo;
	__u32 undo_inflight_hi;
	__u8 mode;
	__u8 prev_ca_state;
	__u8 cycle_idx;
	__u8 ack_phase;
	__u8 round_start;
	__u8 idle_restart;
	__u8 probe_rtt_round_done;
	__u8 has_seen_rtt;
	__u8 full_bw_reached;
	__u8 loss_round_start;
	__u8 loss_in_round;
	__u8 bw_probe_samples;
	__u8 prev_probe_too_high;
	__u8 stopped_risky_probe;
	struct bbr2_plus_state ps;
	__u32 snap_count; /* snapshots written; the ring holds the last SNAP_RING */
	struct bbr2_snap snap[SNAP_RING];
};

struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct bbr2);
} rove_bbr2_state SEC(".maps");

/* The send-time estimates a stock kernel lacks (see the header): rs->tx_in_flight, rs->lost. */
struct bbr2_tx {
	__u32 in_flight;
	__u32 lost;
	bool is_app_limited;
};

static __always_inline struct bbr2 *bbr2_get(struct sock *sk)
{
	return bpf_sk_storage_get(&rove_bbr2_state, sk, 0, 0);
}

static __always_inline void bbr2_default_params(struct bbr2_params *p)
{
	p->loss_thresh = BBR_UNIT * 2 / 100;
	p->beta = BBR_UNIT * 30 / 100;
	p->headroom = BBR_UNIT * 15 / 100;
	p->full_loss_cnt = 8;
	p->probe_rtt_win_ms = 5000;
	p->probe_rtt_mode_ms = 200;
	p->probe_rtt_cwnd_gain = BBR_UNIT * 1 / 2;
	p->min_rtt_win_sec = 10;
	p->bw_probe_base_us = 2 * USEC_PER_SEC;
	p->bw_probe_rand_us = 1 * USEC_PER_SEC;
	p->bw_probe_max_rounds = 63;
	p->bw_probe_rand_rounds = 2;
	p->extra_acked_gain = BBR_UNIT;
	/* BBRv2+ off (plus.rs Plus::off): only BBRv2's end-of-probe bw_hi advance stays on; the
	 * numbers are the thesis's, unused while their pieces are off. */
	p->probe_try = 0;
	p->gamma = BBR_UNIT * 102 / 100;      /* gamma 1.02 (Table 4.2) */
	p->rtt_margin_additive = 0;
	p->rtt_margin_cap_us = 2000;          /* the code's fast_conv_rtt_error_us */
	p->round_rtt_srtt = 0;
	p->continuous_probing = 0;
	p->probe_interval_rounds = 0;
	p->probe_interval_rand_rounds = 4;    /* fast_conv_probe_cycle_random */
	p->expire_btlbw = 0;
	p->theta = BBR_UNIT * 110 / 100;      /* theta 1.1 (Table 4.2) */
	p->theta_rtprop_recent = 0;
	p->probe_end_bw_advance = 1;
	p->forced_bw_advance_rounds = 0;
	p->dual_mode = 0;
	p->lambda1 = BBR_UNIT * 110 / 100;    /* lambda1 1.1 (4.4.3) */
	p->lambda2 = BBR_UNIT * 105 / 100;    /* lambda2 1.05 */
	p->eta1 = 2;
	p->eta2 = 4;
	p->bdp_compensation = 0;
	p->mu = BBR_UNIT / 2;                 /* mu 0.5 (Table 4.2) */
}

/* BBRv2+ as the thesis describes it (plus.rs Plus::thesis, Table 4.2): "bbr2plus" without
 * cc_params. */
static __always_inline void bbr2_thesis_plus_params(struct bbr2_params *p)
{
	bbr2_default_params(p);
	p->loss_thresh = BBR_UNIT * 20 / 100; /* alpha 20 % (Table 4.2) */
	p->probe_try = 1;
	p->continuous_probing = 1;
	p->probe_interval_rounds = 8;         /* "approximately BBR's 8 rounds" (4.4.2) */
	p->expire_btlbw = 1;
	p->dual_mode = 1;
	p->bdp_compensation = 1;
}

/* Each object's source of parameters (bbr2.bpf.c: the defaults; bbr2plus.bpf.c: a map). */
static __always_inline void bbr2_load_params(struct sock *sk, struct bbr2_params *p);

/* msecs_to_jiffies for HZ dividing 1000 (rounds up, include/linux/jiffies.h). */
static __always_inline __u32 msecs_to_jiffies(__u32 ms)
{
	__u32 per = 1000 / CONFIG_HZ;
	return (ms + per - 1) / per;
}

static __always_inline __u32 tcp_packets_in_flight(const struct tcp_sock *tp)
{
	return tp->packets_out - (tp->sacked_out + tp->lost_out) + tp->retrans_out;
}

/* prandom_u32_max: uniform in [0, n). */
static __always_inline __u32 prandom_u32_max(__u32 n)
{
	return (__u32)(((__u64)bpf_get_prandom_u32() * n) >> 32);
}

static __always_inline __u64 tcp_stamp_us_delta(__u64 t1, __u64 t0)
{
	return (__s64)(t1 - t0) > 0 ? t1 - t0 : 0;
}

/* ---------------------------------------------------------------------------------------- */
/* Estimates and pacing */

static __always_inline __u32 bbr_max_bw(const struct bbr2 *bbr)
{
	return max_t(__u32, bbr->bw_hi[0], bbr->bw_hi[1]);
}

static __always_inline __u32 bbr_bw(const struct bbr2 *bbr)
{
	return min_t(__u32, bbr_max_bw(bbr), bbr->bw_lo);
}

/* bbr_rate_bytes_per_sec: rate (BW_UNIT pkt/us) * gain, less the pacing margin, in bytes/s. */
static __always_inline __u64 bbr_rate_bytes_per_sec(struct sock *sk, __u64 rate, __u32 gain)
{
	unsigned int mss = tcp_sk(sk)->mss_cache;

	rate *= mss;
	rate *= gain;
	rate >>= BBR_SCALE;
	rate *= USEC_PER_SEC / 100 * (100 - BBR_PACING_MARGIN_PERCENT);
	return rate >> BW_SCALE;
}

static __always_inline unsigned long bbr_bw_to_pacing_rate(struct sock *sk, __u32 bw, __u32 gain)
{
	__u64 rate = bbr_rate_bytes_per_sec(sk, bw, gain);

	return min_t(__u64, rate, sk->sk_max_pacing_rate);
}

static __always_inline void bbr_init_pacing_rate_from_rtt(struct sock *sk, struct bbr2 *bbr)
{
	struct tcp_sock *tp = tcp_sk(sk);
	__u32 rtt_us;
	__u64 bw;

	if (tp->srtt_us) {
		rtt_us = max_t(__u32, tp->srtt_us >> 3, 1U);
		bbr->has_seen_rtt = 1;
	} else {
		rtt_us = USEC_PER_MSEC;
	}
	bw = (__u64)tp->snd_cwnd * BW_UNIT / rtt_us;
	sk->sk_pacing_rate = bbr_bw_to_pacing_rate(sk, (__u32)min_t(__u64, bw, 0xffffffffULL),
						   BBR_HIGH_GAIN);
}

static __always_inline void bbr_set_pacing_rate(struct sock *sk, struct bbr2 *bbr, __u32 bw,
						__u32 gain)
{
	unsigned long rate = bbr_bw_to_pacing_rate(sk, bw, gain);

	if (!bbr->has_seen_rtt && tcp_sk(sk)->srtt_us)
		bbr_init_pacing_rate_from_rtt(sk, bbr);
	if (bbr->full_bw_reached || rate > sk->sk_pacing_rate)
		sk->sk_pacing_rate = rate;
}

/* bbr_min_tso_segs: one segment per burst below bbr_min_tso_rate, else two. */
static __always_inline __u32 bbr_min_tso_segs_of(struct sock *sk)
{
	return sk->sk_pacing_rate < (BBR_MIN_TSO_RATE >> 3) ? 1 : 2;
}

/* bbr_tso_segs_goal (v2alpha, with bbr_tso_rtt_shift). */
static __always_inline __u32 bbr_tso_segs_goal(struct sock *sk, const struct bbr2 *bbr)
{
	struct tcp_sock *tp = tcp_sk(sk);
	__u64 bytes = sk->sk_pacing_rate >> sk->sk_pacing_shift;
	__u32 r = bbr->min_rtt_us >> BBR_TSO_RTT_SHIFT;
	__u32 segs;

	if (r < 32)
		bytes += GSO_LEGACY_MAX_SIZE >> r;
	bytes = min_t(__u64, bytes, GSO_LEGACY_MAX_SIZE - 1 - MAX_TCP_HEADER);
	segs = (__u32)(bytes / max_t(__u32, tp->mss_cache, 1U));
	return max_t(__u32, segs, bbr_min_tso_segs_of(sk));
}

/* ---------------------------------------------------------------------------------------- */
/* Inflight arithmetic */

/* bbr_bdp: ceil(bw * min_rtt * gain) packets; init_cwnd before any RTT sample. */
static __always_inline __u32 bbr_bdp(const struct bbr2 *bbr, __u32 bw, __u32 gain)
{
	__u64 w;

	if (bbr->min_rtt_us == ~0U)
		return bbr->init_cwnd;
	w = (__u64)bw * bbr->min_rtt_us;
	return (__u32)((((w * gain) >> BBR_SCALE) + BW_UNIT - 1) / BW_UNIT);
}

/* ---------------------------------------------------------------------------------------- */
/* BBRv2+ pieces that only read the model (plus.rs; all inert for bbr2) */

/* Enters PROBE_BW sub-state `phase` (every transition goes through here). */
static __always_inline void bbr2_enter_phase(struct bbr2 *bbr, __u32 phase)
{
	bbr->cycle_idx = phase;
	bbr->ps.phase_min_us = ~0U;
}

/* bbr2_advance_bw_hi_filter: forget the older cycle's max (not before a sample). */
static __always_inline void bbr2_advance_bw_hi_filter(struct bbr2 *bbr)
{
	if (!bbr->bw_hi[1])
		return;
	bbr->bw_hi[0] = bbr->bw_hi[1];
	bbr->bw_hi[1] = 0;
}

static __always_inline bool bbr2_probe_end_bw_advance(const struct bbr2 *bbr)
{
	return bbr->p.probe_end_bw_advance || !bbr->ps.fast_probing;
}

static __always_inline void bbr2_plus_init(struct bbr2_plus_state *s)
{
	int i;

	s->round_min_us = ~0U;
	s->prev_round_min_us = ~0U;
	s->round_srtt_us = ~0U;
	s->prev_round_srtt_us = ~0U;
	for (i = 0; i < PLUS_ROUNDS; i++) {
		s->recent_round_min_us[i] = ~0U;
		s->jitter_max_us[i] = 0;
	}
	s->recent_idx = 0;
	s->jitter_idx = 0;
	s->phase_min_us = ~0U;
	s->probe_try_ref_us = ~0U;
	s->before_probe_us = ~0U;
	s->probe_wait_rounds = 0;
	s->rounds_without_max = 0;
	s->fast_probing = 1;
	s->buffer_filling = 0;
	s->buffer_empty = 0;
	s->last_cruise_min_us = ~0U;
	s->ever_min_rtt_us = ~0U;
}

/* within_margin: rtt <= factor * ref (multiplicative) or rtt <= ref + min((factor - 1) * ref,
 * cap) (additive); true when either has no sample. */
static __always_inline bool plus_within_margin(__u32 rtt_us, __u32 ref_us, __u32 factor,
					       __u32 additive, __u32 cap_us)
{
	__u64 threshold, extra;

	if (rtt_us == ~0U || ref_us == ~0U)
		return true;
	if (additive) {
		extra = ((__u64)ref_us * (factor > BBR_UNIT ? factor - BBR_UNIT : 0)) >> BBR_SCALE;
		threshold = ref_us + min_t(__u64, extra, cap_us);
	} else {
		threshold = ((__u64)ref_us * factor) >> BBR_SCALE;
	}
	return rtt_us <= threshold;
}

/* Algorithm 1's trigger: rtt > theta * rtprop; false with no sample. */
static __always_inline bool plus_rtt_above(__u32 rtt_us, __u32 rtprop_us, __u32 theta)
{
	if (rtt_us == ~0U || rtprop_us == ~0U)
		return false;
	return ((__u64)rtt_us << BBR_SCALE) > (__u64)rtprop_us * theta;
}

static __always_inline __u32 plus_max_jitter_us(const struct bbr2 *bbr)
{
	__u32 m = 0;
	int i;

	for (i = 0; i < PLUS_ROUNDS; i++)
		m = max_t(__u32, m, bbr->ps.jitter_max_us[i]);
	return m;
}

/* Algorithm 3 (4.4.4): the cwnd target's BDP over RTprop + Max_4RTT(jitter) when the jitter
 * exceeds mu * RTprop (plus.rs compensated_bdp / compensated_rtprop). */
static __always_inline __u32 bbr2_compensated_bdp(const struct bbr2 *bbr, __u32 bw, __u32 gain)
{
	__u32 rtprop = bbr->min_rtt_us, jitter;
	__u64 w;

	if (!bbr->p.bdp_compensation || rtprop == ~0U)
		return bbr_bdp(bbr, bw, gain);
	jitter = plus_max_jitter_us(bbr);
	if (((__u64)jitter << BBR_SCALE) > (__u64)rtprop * bbr->p.mu)
		rtprop = (__u32)min_t(__u64, (__u64)rtprop + jitter, 0xfffffffeULL);
	w = (__u64)bw * rtprop;
	return (__u32)((((w * gain) >> BBR_SCALE) + BW_UNIT - 1) / BW_UNIT);
}

/* plus_update_rtt_rounds: per-ACK RTT bookkeeping (round min / srtt, the sub-state's min, the
 * 4-round jitter max); a round's statistics close when the next round starts. */
static __always_inline void bbr2_plus_update_rtt_rounds(struct sock *sk, struct bbr2 *bbr,
							const struct rate_sample *rs)
{
	struct bbr2_plus_state *s = &bbr->ps;
	__u32 rtt, jitter;

	if (bbr->round_start) {
		s->recent_round_min_us[s->recent_idx & (PLUS_ROUNDS - 1)] = s->prev_round_min_us;
		s->recent_idx = (s->recent_idx + 1) & (PLUS_ROUNDS - 1);
		s->prev_round_min_us = s->round_min_us;
		s->round_min_us = ~0U;
		s->prev_round_srtt_us = s->round_srtt_us;
		s->round_srtt_us = ~0U;
		s->jitter_idx = (s->jitter_idx + 1) & (PLUS_ROUNDS - 1);
		s->jitter_max_us[s->jitter_idx & (PLUS_ROUNDS - 1)] = 0;
	}
	if (rs->rtt_us >= 0) {
		rtt = (__u32)min_t(__u64, (__u64)rs->rtt_us, 0xfffffffeULL);
		s->round_min_us = min_t(__u32, s->round_min_us, rtt);
		s->phase_min_us = min_t(__u32, s->phase_min_us, rtt);
		s->ever_min_rtt_us = min_t(__u32, s->ever_min_rtt_us, rtt);
		/* srtt += (rtt - srtt) / 8, truncated toward zero (no signed division in BPF) */
		if (s->round_srtt_us == ~0U)
			s->round_srtt_us = rtt;
		else if (rtt >= s->round_srtt_us)
			s->round_srtt_us += (rtt - s->round_srtt_us) / 8;
		else
			s->round_srtt_us -= (s->round_srtt_us - rtt) / 8;
	}
	jitter = tcp_sk(sk)->mdev_us >> 2; /* the code's tp->mdev_us >> 2 (Table 4.1) */
	if (jitter > s->jitter_max_us[s->jitter_idx & (PLUS_ROUNDS - 1)])
		s->jitter_max_us[s->jitter_idx & (PLUS_ROUNDS - 1)] = jitter;
}

static __always_inline __u32 plus_theta_rtprop_us(const struct bbr2 *bbr)
{
	__u32 recent = ~0U;
	int i;

	if (!bbr->p.theta_rtprop_recent)
		return bbr->min_rtt_us;
	for (i = 0; i < PLUS_ROUNDS; i++)
		recent = min_t(__u32, recent, bbr->ps.recent_round_min_us[i]);
	return recent == ~0U ? bbr->min_rtt_us : recent;
}

/* plus_maybe_advance_bw_filter: at a round start in PROBE_BW with BBRv2+'s ProbeBW in use,
 * the code's forced advance and Algorithm 1 (the completed round's min RTT above theta *
 * RTprop in CRUISE or DOWN* expires the older bw_hi slot). */
static __always_inline void bbr2_plus_maybe_advance_bw_filter(struct bbr2 *bbr)
{
	if (!bbr->round_start || bbr->mode != B2_PROBE_BW || !bbr->ps.fast_probing)
		return;
	if (bbr->p.forced_bw_advance_rounds > 0) {
		bbr->ps.rounds_without_max++;
		if (bbr->ps.rounds_without_max >= bbr->p.forced_bw_advance_rounds) {
			bbr->ps.rounds_without_max = 0;
			bbr2_advance_bw_hi_filter(bbr);
		}
	}
	if (bbr->p.expire_btlbw &&
	    (bbr->cycle_idx == B2_CRUISE || bbr->cycle_idx == B2_DOWN ||
	     bbr->cycle_idx == B2_DOWN_SLIGHTLY) &&
	    plus_rtt_above(bbr->ps.prev_round_min_us, plus_theta_rtprop_us(bbr), bbr->p.theta))
		bbr2_advance_bw_hi_filter(bbr);
}

/* bbr_quantization_budget with bbr_cwnd_tso_budget = 1 (flooring). */
static __always_inline __u32 bbr_quantization_budget(struct sock *sk, const struct bbr2 *bbr,
						     __u32 cwnd)
{
	__u32 tso = 3 * bbr_tso_segs_goal(sk, bbr);

	cwnd = max_t(__u32, cwnd, tso);
	cwnd = max_t(__u32, cwnd, BBR_CWND_MIN_TARGET);
	if (bbr->mode == B2_PROBE_BW && bbr->cycle_idx == B2_UP)
		cwnd += 2;
	return cwnd;
}

static __always_inline __u32 bbr_inflight(struct sock *sk, const struct bbr2 *bbr, __u32 bw,
					  __u32 gain)
{
	return bbr_quantization_budget(sk, bbr, bbr_bdp(bbr, bw, gain));
}

/* bbr2_target_inflight: min(1 BDP at the current bw, cwnd). */
static __always_inline __u32 bbr2_target_inflight(struct sock *sk, const struct bbr2 *bbr)
{
	__u32 bdp = bbr_inflight(sk, bbr, bbr_bw(bbr), BBR_UNIT);

	return min_t(__u32, bdp, tcp_sk(sk)->snd_cwnd);
}

/* bbr2_inflight_with_headroom. */
static __always_inline __u32 bbr2_inflight_with_headroom(const struct bbr2 *bbr)
{
	__u32 headroom, headroom_fraction = bbr->p.headroom;

	if (bbr->inflight_hi == ~0U)
		return ~0U;
	headroom = (__u32)(((__u64)bbr->inflight_hi * headroom_fraction) >> BBR_SCALE);
	headroom = max_t(__u32, headroom, 1U);
	return max_t(__s32, (__s32)(bbr->inflight_hi - headroom), BBR_CWND_MIN_TARGET);
}

/* bbr_packets_in_net_at_edt. */
static __always_inline __u32 bbr_packets_in_net_at_edt(struct sock *sk, const struct bbr2 *bbr,
						       __u32 inflight_now)
{
	struct tcp_sock *tp = tcp_sk(sk);
	__u64 now_ns = tp->tcp_clock_cache;
	__u64 edt_ns = max_t(__u64, tp->tcp_wstamp_ns, now_ns);
	__u64 interval_us = (edt_ns - now_ns) / 1000;
	__u64 interval_delivered = ((__u64)bbr_bw(bbr) * interval_us) >> BW_SCALE;
	__u32 inflight_at_edt = inflight_now;

	if (bbr->pacing_gain > BBR_UNIT)
		inflight_at_edt += bbr_tso_segs_goal(sk, bbr);
	if (interval_delivered >= inflight_at_edt)
		return 0;
	return inflight_at_edt - (__u32)interval_delivered;
}

static __always_inline __u32 bbr_extra_acked(const struct bbr2 *bbr)
{
	return max_t(__u32, bbr->extra_acked[0], bbr->extra_acked[1]);
}

/* bbr_ack_aggregation_cwnd (bbr_extra_acked_in_startup = 1). */
static __always_inline __u32 bbr_ack_aggregation_cwnd(const struct bbr2 *bbr)
{
	__u32 max_aggr_cwnd, aggr_cwnd;

	if (!bbr->p.extra_acked_gain)
		return 0;
	max_aggr_cwnd = (__u32)((__u64)bbr_bw(bbr) * BBR_EXTRA_ACKED_MAX_US / BW_UNIT);
	aggr_cwnd = (bbr->p.extra_acked_gain * bbr_extra_acked(bbr)) >> BBR_SCALE;
	return min_t(__u32, aggr_cwnd, max_aggr_cwnd);
}

/* bbr2_probe_rtt_cwnd. */
static __always_inline __u32 bbr2_probe_rtt_cwnd(const struct bbr2 *bbr)
{
	if (bbr->p.probe_rtt_cwnd_gain == 0)
		return BBR_CWND_MIN_TARGET;
	return max_t(__u32, BBR_CWND_MIN_TARGET,
		     bbr_bdp(bbr, bbr_bw(bbr), bbr->p.probe_rtt_cwnd_gain));
}

/* ---------------------------------------------------------------------------------------- */
/* cwnd */

static __always_inline void bbr_save_cwnd(struct sock *sk, struct bbr2 *bbr)
{
	__u32 cwnd = tcp_sk(sk)->snd_cwnd;

	if (bbr->prev_ca_state < TCP_CA_Recovery && bbr->mode != B2_PROBE_RTT)
		bbr->prior_cwnd = cwnd;
	else
		bbr->prior_cwnd = max_t(__u32, bbr->prior_cwnd, cwnd);
}

/* bbr_set_cwnd (v2alpha: no packet conservation). */
static __always_inline void bbr_set_cwnd(struct sock *sk, struct bbr2 *bbr, __u32 acked,
					 __u32 bw, __u32 gain)
{
	struct tcp_sock *tp = tcp_sk(sk);
	__u32 cwnd = tp->snd_cwnd, target;

	if (acked) {
		target = bbr2_compensated_bdp(bbr, bw, gain);
		target += bbr_ack_aggregation_cwnd(bbr);
		target = bbr_quantization_budget(sk, bbr, target);
		if (bbr->full_bw_reached)
			cwnd = min_t(__u32, cwnd + acked, target);
		else if (cwnd < target || cwnd < 2 * bbr->init_cwnd)
			cwnd = cwnd + acked;
		cwnd = max_t(__u32, cwnd, BBR_CWND_MIN_TARGET);
	}
	tp->snd_cwnd = min_t(__u32, cwnd, tp->snd_cwnd_clamp);
	if (bbr->mode == B2_PROBE_RTT)
		tp->snd_cwnd = min_t(__u32, tp->snd_cwnd, bbr2_probe_rtt_cwnd(bbr));
}

/* bbr2_bound_cwnd_for_inflight_model. */
static __always_inline void bbr2_bound_cwnd_for_inflight_model(struct sock *sk, struct bbr2 *bbr)
{
	struct tcp_sock *tp = tcp_sk(sk);
	__u32 cap = ~0U;

	if (bbr->mode == B2_PROBE_BW && bbr->cycle_idx != B2_CRUISE) {
		cap = bbr->inflight_hi;
	} else if (bbr->mode == B2_PROBE_RTT ||
		   (bbr->mode == B2_PROBE_BW && bbr->cycle_idx == B2_CRUISE)) {
		cap = bbr2_inflight_with_headroom(bbr);
	}
	cap = min_t(__u32, cap, bbr->inflight_lo);
	cap = max_t(__u32, cap, BBR_CWND_MIN_TARGET);
	tp->snd_cwnd = min_t(__u32, cap, tp->snd_cwnd);
}

/* ---------------------------------------------------------------------------------------- */
/* Send-time snapshots (in place of v2alpha's per-skb tx.in_flight and tx.lost) */

static __always_inline void bbr2_snapshot(struct sock *sk, struct bbr2 *bbr, __u32 acked)
{
	struct tcp_sock *tp = tcp_sk(sk);
	__u32 inflight = tcp_packets_in_flight(tp);
	__u32 est = min_t(__u32, tp->snd_cwnd, inflight + acked);
	__u32 i = bbr->snap_count & (SNAP_RING - 1);

	bbr->snap[i].delivered = tp->delivered;
	bbr->snap[i].lost = tp->lost;
	bbr->snap[i].in_flight = max_t(__u32, est, inflight + 1);
	bbr->snap_count++;
}

/* The state the packet sampled by `rs` was sent in: the last snapshot with delivered <=
 * rs->prior_delivered (binary search over the ring, oldest to newest). */
static __always_inline void bbr2_tx_of(struct sock *sk, struct bbr2 *bbr,
				       const struct rate_sample *rs, struct bbr2_tx *tx)
{
	__u32 n = min_t(__u32, bbr->snap_count, SNAP_RING);
	__u32 first = bbr->snap_count - n; /* logical index of the oldest */
	__u32 lo = 0, hi = n, k, idx;
	__u32 want = rs->prior_delivered;

	tx->is_app_limited = rs->is_app_limited;
	tx->in_flight = 0;
	tx->lost = 0;
	if (n == 0)
		return;
	/* Find the first logical position whose delivered is after `want`. */
	for (k = 0; k <= SNAP_BITS; k++) {
		__u32 mid;

		if (lo >= hi)
			break;
		mid = (lo + hi) / 2;
		idx = (first + mid) & (SNAP_RING - 1);
		if (after(bbr->snap[idx].delivered, want))
			hi = mid;
		else
			lo = mid + 1;
	}
	idx = (first + (lo > 0 ? lo - 1 : 0)) & (SNAP_RING - 1);
	tx->in_flight = bbr->snap[idx].in_flight;
	tx->lost = tcp_sk(sk)->lost - bbr->snap[idx].lost;
}

/* ---------------------------------------------------------------------------------------- */
/* Congestion signals and bounds */

/* bbr2_is_inflight_too_high (loss part): lost > tx_in_flight * loss_thresh. */
static __always_inline bool bbr2_is_inflight_too_high(const struct bbr2 *bbr,
						      const struct bbr2_tx *tx)
{
	__u32 loss_thresh;

	if (tx->lost > 0 && tx->in_flight) {
		loss_thresh = (__u32)(((__u64)tx->in_flight * bbr->p.loss_thresh) >> BBR_SCALE);
		if (tx->lost > loss_thresh)
			return true;
	}
	return false;
}

static __always_inline void bbr2_reset_lower_bounds(struct bbr2 *bbr)
{
	bbr->bw_lo = ~0U;
	bbr->inflight_lo = ~0U;
}

static __always_inline void bbr2_reset_congestion_signals(struct bbr2 *bbr)
{
	bbr->loss_in_round = 0;
	bbr->bw_latest = 0;
	bbr->inflight_latest = 0;
}

static __always_inline bool bbr2_is_probing_bandwidth(const struct bbr2 *bbr)
{
	return bbr->mode == B2_STARTUP ||
	       (bbr->mode == B2_PROBE_BW &&
		(bbr->cycle_idx == B2_REFILL || bbr->cycle_idx == B2_UP ||
		 bbr->cycle_idx == B2_PRE_UP || bbr->cycle_idx == B2_GUARD ||
		 bbr->cycle_idx == B2_POST_UP));
}

/* bbr2_adapt_lower_bounds (loss only: ECN is off). */
static __always_inline void bbr2_adapt_lower_bounds(struct sock *sk, struct bbr2 *bbr)
{
	__u32 cut = BBR_UNIT - bbr->p.beta;

	if (bbr2_is_probing_bandwidth(bbr))
		return;
	if (bbr->loss_in_round) {
		/* bbr2_init_lower_bounds */
		if (bbr->bw_lo == ~0U)
			bbr->bw_lo = bbr_max_bw(bbr);
		if (bbr->inflight_lo == ~0U)
			bbr->inflight_lo = tcp_sk(sk)->snd_cwnd;
		/* bbr2_loss_lower_bounds */
		bbr->bw_lo = max_t(__u32, bbr->bw_latest,
				   (__u32)(((__u64)bbr->bw_lo * cut) >> BBR_SCALE));
		bbr->inflight_lo = max_t(__u32, bbr->inflight_latest,
					 (__u32)(((__u64)bbr->inflight_lo * cut) >> BBR_SCALE));
	}
	bbr->bw_lo = max_t(__u32, 1U, bbr->bw_lo);
}

/* bbr2_update_congestion_signals. */
static __always_inline void bbr2_update_congestion_signals(struct sock *sk, struct bbr2 *bbr,
							   const struct rate_sample *rs,
							   __u32 sample_bw)
{
	__u32 delivered = rs->delivered > 0 ? (__u32)rs->delivered : 0;

	bbr->loss_round_start = 0;
	if (rs->interval_us <= 0 || !rs->acked_sacked)
		return;
	if (!rs->is_app_limited || sample_bw >= bbr_max_bw(bbr))
		bbr->bw_hi[1] = max_t(__u32, sample_bw, bbr->bw_hi[1]); /* take_bw_hi_sample */
	bbr->loss_in_round |= (rs->losses > 0);
	bbr->bw_latest = max_t(__u32, bbr->bw_latest, sample_bw);
	bbr->inflight_latest = max_t(__u32, bbr->inflight_latest, delivered);
	if (before(rs->prior_delivered, bbr->loss_round_delivered))
		return;
	bbr->loss_round_delivered = tcp_sk(sk)->delivered;
	bbr->loss_round_start = 1;
	bbr2_adapt_lower_bounds(sk, bbr);
	bbr->loss_in_round = 0;
	bbr->bw_latest = sample_bw;
	bbr->inflight_latest = delivered;
}

/* ---------------------------------------------------------------------------------------- */
/* PROBE_BW sub-states */

/* bbr2_pick_probe_wait. */
static __always_inline void bbr2_pick_probe_wait(struct bbr2 *bbr)
{
	bbr->rounds_since_probe = prandom_u32_max(bbr->p.bw_probe_rand_rounds);
	bbr->probe_wait_us = bbr->p.bw_probe_base_us + prandom_u32_max(bbr->p.bw_probe_rand_us);
}

/* bbr2_raise_inflight_hi_slope. */
static __always_inline void bbr2_raise_inflight_hi_slope(struct sock *sk, struct bbr2 *bbr)
{
	__u32 rounds = min_t(__u32, bbr->bw_probe_up_rounds, PROBE_UP_ROUNDS_MAX);
	__u32 growth_this_round = 1U << rounds;

	bbr->bw_probe_up_rounds = min_t(__u32, rounds + 1, PROBE_UP_ROUNDS_MAX);
	bbr->bw_probe_up_cnt = max_t(__u32, tcp_sk(sk)->snd_cwnd / growth_this_round, 1U);
}

static __always_inline void bbr2_start_bw_probe_up(struct sock *sk, struct bbr2 *bbr)
{
	struct tcp_sock *tp = tcp_sk(sk);

	bbr->ack_phase = B2_ACKS_PROBE_STARTING;
	bbr->next_rtt_delivered = tp->delivered;
	bbr->cycle_mstamp = tp->tcp_mstamp;
	bbr2_enter_phase(bbr, B2_UP);
	bbr->ps.before_probe_us = bbr->ps.prev_round_min_us; /* plus_on_probe_up */
	bbr2_raise_inflight_hi_slope(sk, bbr);
}

static __always_inline void bbr2_start_bw_probe_refill(struct sock *sk, struct bbr2 *bbr,
						       __u32 bw_probe_up_rounds)
{
	bbr2_reset_lower_bounds(bbr);
	bbr->bw_probe_up_rounds = bw_probe_up_rounds;
	bbr->bw_probe_up_acks = 0;
	bbr->stopped_risky_probe = 0;
	bbr->ack_phase = B2_ACKS_REFILLING;
	bbr->next_rtt_delivered = tcp_sk(sk)->delivered;
	bbr2_enter_phase(bbr, B2_REFILL);
}

static __always_inline void bbr2_start_bw_probe_down(struct sock *sk, struct bbr2 *bbr)
{
	struct tcp_sock *tp = tcp_sk(sk);

	bbr2_reset_congestion_signals(bbr);
	bbr->bw_probe_up_cnt = ~0U;
	bbr2_pick_probe_wait(bbr);
	if (bbr->p.probe_interval_rounds > 0) /* plus_pick_probe_wait_rounds */
		bbr->ps.probe_wait_rounds =
			bbr->p.probe_interval_rounds +
			prandom_u32_max(bbr->p.probe_interval_rand_rounds);
	bbr->cycle_mstamp = tp->tcp_mstamp;
	bbr->ack_phase = B2_ACKS_PROBE_STOPPING;
	bbr->next_rtt_delivered = tp->delivered;
	bbr2_enter_phase(bbr, B2_DOWN);
}

static __always_inline void bbr2_start_bw_probe_cruise(struct bbr2 *bbr)
{
	if (bbr->inflight_lo != ~0U)
		bbr->inflight_lo = min_t(__u32, bbr->inflight_lo, bbr->inflight_hi);
	bbr2_enter_phase(bbr, B2_CRUISE);
}

/* ---------------------------------------------------------------------------------------- */
/* BBRv2+ steps of the PROBE_BW machine (plus.rs; never reached for bbr2) */

/* The per-round statistic ProbeTry compares, of the round that ended last. */
static __always_inline __u32 plus_prev_round_rtt_us(const struct bbr2 *bbr)
{
	return bbr->p.round_rtt_srtt ? bbr->ps.prev_round_srtt_us : bbr->ps.prev_round_min_us;
}

static __always_inline bool plus_within_gamma(const struct bbr2 *bbr, __u32 rtt, __u32 ref)
{
	return plus_within_margin(rtt, ref, bbr->p.gamma, bbr->p.rtt_margin_additive,
				  bbr->p.rtt_margin_cap_us);
}

/* ProbeTry (4.4.2): PRE_UP's round sets the reference; GUARD's round decides UP or
 * DOWN_SLIGHTLY. */
static __always_inline void bbr2_plus_probe_try_step(struct sock *sk, struct bbr2 *bbr)
{
	if (!bbr->round_start)
		return;
	if (bbr->cycle_idx == B2_PRE_UP) {
		bbr->ps.probe_try_ref_us = plus_prev_round_rtt_us(bbr);
		bbr2_enter_phase(bbr, B2_GUARD);
	} else if (plus_within_gamma(bbr, plus_prev_round_rtt_us(bbr), bbr->ps.probe_try_ref_us)) {
		bbr->bw_probe_samples = 1;
		bbr2_start_bw_probe_up(sk, bbr);
	} else {
		bbr2_start_bw_probe_down(sk, bbr);
		bbr2_enter_phase(bbr, B2_DOWN_SLIGHTLY);
	}
}

/* UP is over (queue building): POST_UP for a round with continuous probing, else DOWN. */
static __always_inline void bbr2_plus_end_probe_up(struct sock *sk, struct bbr2 *bbr)
{
	if (bbr->p.continuous_probing && bbr->ps.fast_probing) {
		bbr2_enter_phase(bbr, B2_POST_UP);
		bbr->next_rtt_delivered = tcp_sk(sk)->delivered;
	} else {
		bbr2_start_bw_probe_down(sk, bbr);
	}
}

/* POST_UP's round ends: UP again if its min RTT is within gamma of the one before UP. */
static __always_inline void bbr2_plus_post_up_step(struct sock *sk, struct bbr2 *bbr)
{
	if (!bbr->round_start)
		return;
	if (plus_within_gamma(bbr, bbr->ps.phase_min_us, bbr->ps.before_probe_us))
		bbr2_start_bw_probe_up(sk, bbr);
	else
		bbr2_start_bw_probe_down(sk, bbr);
}

/* CRUISE ends: Algorithm 2 (4.4.3, plus.rs dual_mode_step) on its min RTT. True when it
 * restarted from STARTUP. */
static __always_inline bool bbr2_plus_end_cruise(struct bbr2 *bbr)
{
	struct bbr2_plus_state *s = &bbr->ps;
	__u32 cruise = s->phase_min_us, rtprop = bbr->min_rtt_us;
	__u64 threshold, ref;
	bool to_bbr2 = false;

	if (!bbr->p.dual_mode)
		return false;
	if (cruise != ~0U && rtprop != ~0U) {
		ref = min_t(__u32, s->ever_min_rtt_us, rtprop);
		if (s->fast_probing) {
			if (bbr->p.rtt_margin_additive)
				threshold = min_t(__u32, s->last_cruise_min_us, rtprop) +
					    ((ref * (bbr->p.lambda1 - BBR_UNIT)) >> BBR_SCALE);
			else
				threshold = ((__u64)rtprop * bbr->p.lambda1) >> BBR_SCALE;
			s->buffer_filling = cruise > threshold ? s->buffer_filling + 1 : 0;
			if (s->buffer_filling >= bbr->p.eta1) {
				s->buffer_filling = 0;
				s->fast_probing = 0;
				to_bbr2 = true;
			}
		} else {
			if (bbr->p.rtt_margin_additive)
				threshold = rtprop + ((ref * (bbr->p.lambda2 - BBR_UNIT)) >> BBR_SCALE);
			else
				threshold = ((__u64)rtprop * bbr->p.lambda2) >> BBR_SCALE;
			s->buffer_empty = cruise <= threshold ? s->buffer_empty + 1 : 0;
			if (s->buffer_empty >= bbr->p.eta2) {
				s->buffer_empty = 0;
				s->fast_probing = 1;
			}
		}
	}
	if (cruise != ~0U)
		s->last_cruise_min_us = cruise;
	if (!to_bbr2)
		return false;
	/* restart_from_startup: STARTUP with full-pipe detection and the lower bounds reset. */
	bbr->mode = B2_STARTUP;
	bbr->full_bw_reached = 0;
	bbr->full_bw = 0;
	bbr->full_bw_cnt = 0;
	bbr2_reset_lower_bounds(bbr);
	bbr->bw_probe_samples = 0;
	bbr->ack_phase = B2_ACKS_INIT;
	return true;
}

/* bbr2_handle_inflight_too_high: cut inflight_hi, stop probing (react once per probe). */
static __always_inline void bbr2_handle_inflight_too_high(struct sock *sk, struct bbr2 *bbr,
							  const struct bbr2_tx *tx)
{
	__u32 cut;

	bbr->prev_probe_too_high = 1;
	bbr->bw_probe_samples = 0;
	if (!tx->is_app_limited) {
		cut = (__u32)(((__u64)bbr2_target_inflight(sk, bbr) * (BBR_UNIT - bbr->p.beta)) >>
			      BBR_SCALE);
		bbr->inflight_hi = max_t(__u32, tx->in_flight, cut);
	}
	if (bbr->mode == B2_PROBE_BW &&
	    (bbr->cycle_idx == B2_UP || bbr->cycle_idx == B2_POST_UP))
		bbr2_start_bw_probe_down(sk, bbr);
}

/* bbr2_probe_inflight_hi_upward. */
static __always_inline void bbr2_probe_inflight_hi_upward(struct sock *sk, struct bbr2 *bbr,
							  const struct rate_sample *rs)
{
	struct tcp_sock *tp = tcp_sk(sk);
	__u32 delta, cnt;

	if (!tcp_is_cwnd_limited(sk) || tp->snd_cwnd < bbr->inflight_hi) {
		bbr->bw_probe_up_acks = 0; /* don't accmulate unused credits */
		return;
	}
	bbr->bw_probe_up_acks += rs->acked_sacked;
	cnt = max_t(__u32, bbr->bw_probe_up_cnt, 1U);
	if (bbr->bw_probe_up_acks >= cnt) {
		delta = bbr->bw_probe_up_acks / cnt;
		bbr->bw_probe_up_acks -= delta * cnt;
		bbr->inflight_hi += delta;
	}
	if (bbr->round_start)
		bbr2_raise_inflight_hi_slope(sk, bbr);
}

/* bbr2_adapt_upper_bounds: true when it decided a state transition. */
static __always_inline bool bbr2_adapt_upper_bounds(struct sock *sk, struct bbr2 *bbr,
						    const struct rate_sample *rs,
						    const struct bbr2_tx *tx)
{
	if (bbr->ack_phase == B2_ACKS_PROBE_STARTING && bbr->round_start)
		bbr->ack_phase = B2_ACKS_PROBE_FEEDBACK;
	if (bbr->ack_phase == B2_ACKS_PROBE_STOPPING && bbr->round_start) {
		bbr->bw_probe_samples = 0;
		bbr->ack_phase = B2_ACKS_INIT;
		if (bbr->mode == B2_PROBE_BW && !rs->is_app_limited &&
		    bbr2_probe_end_bw_advance(bbr))
			bbr2_advance_bw_hi_filter(bbr);
		if (bbr->mode == B2_PROBE_BW && bbr->stopped_risky_probe &&
		    !bbr->prev_probe_too_high) {
			bbr2_start_bw_probe_refill(sk, bbr, 0);
			return true;
		}
	}
	if (bbr2_is_inflight_too_high(bbr, tx)) {
		if (bbr->bw_probe_samples)
			bbr2_handle_inflight_too_high(sk, bbr, tx);
	} else {
		if (bbr->inflight_hi == ~0U)
			return false;
		if (tx->in_flight > bbr->inflight_hi)
			bbr->inflight_hi = tx->in_flight;
		if (bbr->mode == B2_PROBE_BW && bbr->cycle_idx == B2_UP)
			bbr2_probe_inflight_hi_upward(sk, bbr, rs);
	}
	return false;
}

static __always_inline bool bbr2_has_elapsed_in_phase(struct sock *sk, const struct bbr2 *bbr,
						      __u32 interval_us)
{
	return (__s64)(tcp_sk(sk)->tcp_mstamp - (bbr->cycle_mstamp + interval_us)) > 0;
}

/* bbr2_is_reno_coexistence_probe_time. */
static __always_inline bool bbr2_is_reno_coexistence_probe_time(struct sock *sk,
								 const struct bbr2 *bbr)
{
	__u32 inflight = bbr2_target_inflight(sk, bbr);
	__u32 reno_rounds = (__u32)(((__u64)inflight * BBR_BW_PROBE_RENO_GAIN) >> BBR_SCALE);
	__u32 rounds = min_t(__u32, bbr->p.bw_probe_max_rounds, reno_rounds);

	return bbr->rounds_since_probe >= rounds;
}

/* bbr2_check_time_to_probe_bw's test. */
static __always_inline bool bbr2_is_time_to_probe_bw(struct sock *sk, const struct bbr2 *bbr)
{
	return bbr2_has_elapsed_in_phase(sk, bbr, bbr->probe_wait_us) ||
	       bbr2_is_reno_coexistence_probe_time(sk, bbr) ||
	       (bbr->p.probe_interval_rounds > 0 && bbr->ps.fast_probing &&
		bbr->ps.probe_wait_rounds == 0); /* plus_probe_rounds_over */
}

/* bbr2_check_time_to_cruise. */
static __always_inline bool bbr2_check_time_to_cruise(struct sock *sk, const struct bbr2 *bbr,
						      __u32 inflight, __u32 bw)
{
	if (inflight > bbr2_inflight_with_headroom(bbr))
		return false;
	return inflight <= bbr_inflight(sk, bbr, bw, BBR_UNIT);
}

/* bbr2_update_cycle_phase. */
static __noinline void bbr2_update_cycle_phase(struct sock *sk, struct bbr2 *bbr,
					       const struct rate_sample *rs,
					       const struct bbr2_tx *tx)
{
	struct tcp_sock *tp = tcp_sk(sk);
	__u32 inflight, bw;
	bool is_risky = false, is_queuing = false;

	if (!bbr->full_bw_reached)
		return;
	if (bbr2_adapt_upper_bounds(sk, bbr, rs, tx))
		return;
	if (bbr->mode != B2_PROBE_BW)
		return;
	inflight = bbr_packets_in_net_at_edt(sk, bbr, rs->prior_in_flight);
	bw = bbr_max_bw(bbr);

	switch (bbr->cycle_idx) {
	case B2_CRUISE:
		if (bbr->round_start && bbr->ps.probe_wait_rounds) /* plus_count_cruise_round */
			bbr->ps.probe_wait_rounds--;
		if (bbr2_is_time_to_probe_bw(sk, bbr)) {
			if (bbr2_plus_end_cruise(bbr))
				break; /* Algorithm 2 restarted from STARTUP */
			bbr2_start_bw_probe_refill(sk, bbr, 0);
		}
		break;
	case B2_REFILL:
		if (bbr->round_start) {
			if (bbr->p.probe_try && bbr->ps.fast_probing) { /* plus_after_refill */
				bbr2_enter_phase(bbr, B2_PRE_UP);
			} else {
				bbr->bw_probe_samples = 1;
				bbr2_start_bw_probe_up(sk, bbr);
			}
		}
		break;
	case B2_PRE_UP:
	case B2_GUARD:
		bbr2_plus_probe_try_step(sk, bbr);
		break;
	case B2_POST_UP:
		bbr2_plus_post_up_step(sk, bbr);
		break;
	case B2_UP:
		if (bbr->prev_probe_too_high && inflight >= bbr->inflight_hi) {
			bbr->stopped_risky_probe = 1;
			is_risky = true;
		} else if (tcp_stamp_us_delta(tp->tcp_mstamp, bbr->cycle_mstamp) >
				   bbr->min_rtt_us &&
			   inflight >= bbr_inflight(sk, bbr, bw, BBR_BW_PROBE_PIF_GAIN)) {
			is_queuing = true;
		}
		if (is_risky) {
			bbr->prev_probe_too_high = 0;
			bbr2_start_bw_probe_down(sk, bbr);
		} else if (is_queuing) {
			bbr->prev_probe_too_high = 0;
			bbr2_plus_end_probe_up(sk, bbr);
		}
		break;
	case B2_DOWN:
	case B2_DOWN_SLIGHTLY:
		if (bbr2_is_time_to_probe_bw(sk, bbr)) {
			bbr2_start_bw_probe_refill(sk, bbr, 0);
			break;
		}
		if (bbr2_check_time_to_cruise(sk, bbr, inflight, bw))
			bbr2_start_bw_probe_cruise(bbr);
		break;
	default:
		break;
	}
}

/* ---------------------------------------------------------------------------------------- */
/* STARTUP, DRAIN, PROBE_RTT */

/* bbr_check_full_bw_reached (as v1). */
static __always_inline void bbr_check_full_bw_reached(struct bbr2 *bbr,
						      const struct rate_sample *rs)
{
	__u32 bw_thresh;

	if (bbr->full_bw_reached || !bbr->round_start || rs->is_app_limited)
		return;
	bw_thresh = (__u32)(((__u64)bbr->full_bw * BBR_FULL_BW_THRESH) >> BBR_SCALE);
	if (bbr_max_bw(bbr) >= bw_thresh) {
		bbr->full_bw = bbr_max_bw(bbr);
		bbr->full_bw_cnt = 0;
		return;
	}
	++bbr->full_bw_cnt;
	bbr->full_bw_reached = bbr->full_bw_cnt >= BBR_FULL_BW_CNT;
}

/* bbr2_check_loss_too_high_in_startup. */
static __always_inline void bbr2_check_loss_too_high_in_startup(struct sock *sk,
								 struct bbr2 *bbr,
								 const struct rate_sample *rs,
								 const struct bbr2_tx *tx)
{
	if (bbr->full_bw_reached)
		return;
	if (rs->losses && bbr->loss_events_in_round < LOSS_EVENTS_MAX)
		bbr->loss_events_in_round++;
	if (bbr->p.full_loss_cnt && bbr->loss_round_start &&
	    inet_csk(sk)->icsk_ca_state == TCP_CA_Recovery &&
	    bbr->loss_events_in_round >= bbr->p.full_loss_cnt &&
	    bbr2_is_inflight_too_high(bbr, tx)) {
		/* bbr2_handle_queue_too_high_in_startup */
		bbr->full_bw_reached = 1;
		bbr->inflight_hi = bbr_inflight(sk, bbr, bbr_max_bw(bbr), BBR_UNIT);
		return;
	}
	if (bbr->loss_round_start)
		bbr->loss_events_in_round = 0;
}

/* bbr2_check_drain. */
static __always_inline void bbr2_check_drain(struct sock *sk, struct bbr2 *bbr)
{
	struct tcp_sock *tp = tcp_sk(sk);

	if (bbr->mode == B2_STARTUP && bbr->full_bw_reached) {
		bbr->mode = B2_DRAIN;
		tp->snd_ssthresh = bbr_inflight(sk, bbr, bbr_max_bw(bbr), BBR_UNIT);
		bbr2_reset_congestion_signals(bbr);
	}
	if (bbr->mode == B2_DRAIN &&
	    bbr_packets_in_net_at_edt(sk, bbr, tcp_packets_in_flight(tp)) <=
		    bbr_inflight(sk, bbr, bbr_max_bw(bbr), BBR_UNIT)) {
		bbr->mode = B2_PROBE_BW;
		bbr2_start_bw_probe_down(sk, bbr);
	}
}

/* bbr2_exit_probe_rtt. */
static __always_inline void bbr2_exit_probe_rtt(struct sock *sk, struct bbr2 *bbr)
{
	bbr2_reset_lower_bounds(bbr);
	if (bbr->full_bw_reached) {
		bbr->mode = B2_PROBE_BW;
		bbr2_start_bw_probe_down(sk, bbr);
		bbr2_start_bw_probe_cruise(bbr);
	} else {
		bbr->mode = B2_STARTUP;
	}
}

/* bbr2_check_probe_rtt_done. */
static __always_inline void bbr2_check_probe_rtt_done(struct sock *sk, struct bbr2 *bbr)
{
	struct tcp_sock *tp = tcp_sk(sk);
	__u32 now = tcp_jiffies32();

	if (!(bbr->probe_rtt_done_stamp && after(now, bbr->probe_rtt_done_stamp)))
		return;
	bbr->probe_rtt_min_stamp = now;
	tp->snd_cwnd = max_t(__u32, tp->snd_cwnd, bbr->prior_cwnd);
	bbr2_exit_probe_rtt(sk, bbr);
}

/* bbr_update_min_rtt (v2alpha): the probe_rtt_min filter, the min_rtt filter, PROBE_RTT. */
static __noinline void bbr2_update_min_rtt(struct sock *sk, struct bbr2 *bbr,
					   const struct rate_sample *rs)
{
	struct tcp_sock *tp = tcp_sk(sk);
	__u32 now = tcp_jiffies32();
	bool probe_rtt_expired, min_rtt_expired;

	probe_rtt_expired =
		after(now, bbr->probe_rtt_min_stamp + msecs_to_jiffies(bbr->p.probe_rtt_win_ms));
	if (rs->rtt_us >= 0 && (rs->rtt_us <= bbr->probe_rtt_min_us ||
				(probe_rtt_expired && !rs->is_ack_delayed))) {
		bbr->probe_rtt_min_us = (__u32)rs->rtt_us;
		bbr->probe_rtt_min_stamp = now;
	}
	min_rtt_expired = after(now, bbr->min_rtt_stamp + bbr->p.min_rtt_win_sec * CONFIG_HZ);
	if (bbr->probe_rtt_min_us <= bbr->min_rtt_us || min_rtt_expired) {
		bbr->min_rtt_us = bbr->probe_rtt_min_us;
		bbr->min_rtt_stamp = bbr->probe_rtt_min_stamp;
	}
	if (bbr->p.probe_rtt_mode_ms > 0 && probe_rtt_expired && !bbr->idle_restart &&
	    bbr->mode != B2_PROBE_RTT) {
		bbr->mode = B2_PROBE_RTT;
		bbr_save_cwnd(sk, bbr);
		bbr->probe_rtt_done_stamp = 0;
		bbr->ack_phase = B2_ACKS_PROBE_STOPPING;
		bbr->next_rtt_delivered = tp->delivered;
	}
	if (bbr->mode == B2_PROBE_RTT) {
		/* tp->app_limited = delivered + in_flight: not writable from BPF (header). */
		if (!bbr->probe_rtt_done_stamp &&
		    tcp_packets_in_flight(tp) <= bbr2_probe_rtt_cwnd(bbr)) {
			bbr->probe_rtt_done_stamp =
				now + msecs_to_jiffies(bbr->p.probe_rtt_mode_ms);
			bbr->probe_rtt_round_done = 0;
			bbr->next_rtt_delivered = tp->delivered;
		} else if (bbr->probe_rtt_done_stamp) {
			if (bbr->round_start)
				bbr->probe_rtt_round_done = 1;
			if (bbr->probe_rtt_round_done)
				bbr2_check_probe_rtt_done(sk, bbr);
		}
	}
	if (rs->delivered > 0)
		bbr->idle_restart = 0;
}

/* bbr_update_ack_aggregation (bbr_extra_acked_in_startup: 1-round window before full bw). */
static __always_inline void bbr_update_ack_aggregation(struct sock *sk, struct bbr2 *bbr,
						       const struct rate_sample *rs)
{
	struct tcp_sock *tp = tcp_sk(sk);
	__u32 epoch_us, expected_acked, extra_acked, win_rtts;

	if (!bbr->p.extra_acked_gain || rs->acked_sacked <= 0 || rs->delivered < 0 ||
	    rs->interval_us <= 0)
		return;
	win_rtts = bbr->full_bw_reached ? BBR_EXTRA_ACKED_WIN_RTTS : 1;
	if (bbr->round_start) {
		bbr->extra_acked_win_rtts = min_t(__u32, 0x1F, bbr->extra_acked_win_rtts + 1);
		if (bbr->extra_acked_win_rtts >= win_rtts) {
			bbr->extra_acked_win_rtts = 0;
			bbr->extra_acked_win_idx = bbr->extra_acked_win_idx ? 0 : 1;
			bbr->extra_acked[bbr->extra_acked_win_idx & 1] = 0;
		}
	}
	epoch_us = (__u32)tcp_stamp_us_delta(tp->delivered_mstamp, bbr->ack_epoch_mstamp);
	expected_acked = (__u32)(((__u64)bbr_bw(bbr) * epoch_us) / BW_UNIT);
	if (bbr->ack_epoch_acked <= expected_acked ||
	    (bbr->ack_epoch_acked + rs->acked_sacked >= BBR_ACK_EPOCH_ACKED_RESET_THRESH)) {
		bbr->ack_epoch_acked = 0;
		bbr->ack_epoch_mstamp = tp->delivered_mstamp;
		expected_acked = 0;
	}
	bbr->ack_epoch_acked = min_t(__u32, 0xFFFFF, bbr->ack_epoch_acked + rs->acked_sacked);
	extra_acked = bbr->ack_epoch_acked - expected_acked;
	extra_acked = min_t(__u32, extra_acked, tp->snd_cwnd);
	extra_acked = min_t(__u32, extra_acked, 0xFFFF); /* u16 extra_acked[] */
	if (extra_acked > bbr->extra_acked[bbr->extra_acked_win_idx & 1])
		bbr->extra_acked[bbr->extra_acked_win_idx & 1] = extra_acked;
}

/* bbr_update_round_start, with v2's rounds_since_probe counter. */
static __always_inline void bbr_update_round_start(struct sock *sk, struct bbr2 *bbr,
						   const struct rate_sample *rs)
{
	bbr->round_start = 0;
	if (rs->interval_us <= 0)
		return;
	if (!before(rs->prior_delivered, bbr->next_rtt_delivered)) {
		bbr->next_rtt_delivered = tcp_sk(sk)->delivered;
		bbr->round_start = 1;
		bbr->rounds_since_probe = min_t(__u32, bbr->rounds_since_probe + 1, 0xFF);
	}
}

/* bbr2_update_gains. */
static __always_inline void bbr2_update_gains(struct bbr2 *bbr)
{
	switch (bbr->mode) {
	case B2_STARTUP:
		bbr->pacing_gain = BBR_HIGH_GAIN;
		bbr->cwnd_gain = BBR_HIGH_GAIN;
		break;
	case B2_DRAIN:
		bbr->pacing_gain = BBR_DRAIN_GAIN;
		bbr->cwnd_gain = BBR_HIGH_GAIN;
		break;
	case B2_PROBE_BW:
		bbr->pacing_gain = bbr->cycle_idx == B2_UP       ? BBR_PACING_GAIN_UP
				   : bbr->cycle_idx == B2_DOWN   ? BBR_PACING_GAIN_DOWN
				   : bbr->cycle_idx == B2_PRE_UP ? PLUS_PRE_UP_GAIN
				   : bbr->cycle_idx == B2_DOWN_SLIGHTLY ? PLUS_DOWN_SLIGHTLY_GAIN
									 : BBR_UNIT;
		bbr->cwnd_gain = BBR_CWND_GAIN;
		break;
	default: /* B2_PROBE_RTT */
		bbr->pacing_gain = BBR_UNIT;
		bbr->cwnd_gain = BBR_UNIT;
		break;
	}
}

/* The work of v2alpha's skb_marked_lost hook, for the ACK that marked rs->losses packets. */
static __always_inline void bbr2_losses_marked(struct sock *sk, struct bbr2 *bbr,
					       const struct rate_sample *rs,
					       const struct bbr2_tx *tx)
{
	struct bbr2_tx cut = *tx;
	__u32 pcount = (__u32)rs->losses, inflight_prev, lost_prev, loss_budget, lost_prefix;
	__u32 divisor;

	if (!bbr->loss_in_round) /* first loss in this round trip */
		bbr->loss_round_delivered = tcp_sk(sk)->delivered;
	bbr->loss_in_round = 1;
	if (!bbr->bw_probe_samples || !bbr2_is_inflight_too_high(bbr, tx))
		return;
	/* bbr2_inflight_hi_from_lost_skb: the inflight at which the loss rate crossed
	 * loss_thresh, solving (lost_prev + prefix) / (inflight_prev + prefix) = loss_thresh. */
	if (tx->in_flight < pcount || tx->lost < pcount) {
		cut.in_flight = ~0U;
	} else {
		inflight_prev = tx->in_flight - pcount;
		lost_prev = tx->lost - pcount;
		loss_budget = (__u32)(((__u64)inflight_prev * bbr->p.loss_thresh + BBR_UNIT - 1) >>
				      BBR_SCALE);
		if (lost_prev >= loss_budget) {
			lost_prefix = 0;
		} else {
			divisor = BBR_UNIT - min_t(__u32, bbr->p.loss_thresh, BBR_UNIT - 1);
			lost_prefix = (__u32)(((__u64)(loss_budget - lost_prev) << BBR_SCALE) /
					      divisor);
		}
		cut.in_flight = inflight_prev + lost_prefix;
	}
	bbr2_handle_inflight_too_high(sk, bbr, &cut);
}

/* ---------------------------------------------------------------------------------------- */
/* tcp_congestion_ops */

/* bbr2_main. */
SEC("struct_ops")
void BPF_PROG(bbr2_cong_control, struct sock *sk, __u32 ack, int flag,
	      const struct rate_sample *rs)
{
	struct bbr2 *bbr = bbr2_get(sk);
	struct bbr2_tx tx;
	__u32 sample_bw = 0, bw;

	if (!bbr) {
		tcp_reno_cong_avoid(sk, ack, rs->acked_sacked); /* no state: Reno */
		return;
	}
	bbr2_tx_of(sk, bbr, rs, &tx);
	if (rs->losses > 0)
		bbr2_losses_marked(sk, bbr, rs, &tx);

	bbr_update_round_start(sk, bbr, rs);
	bbr2_plus_update_rtt_rounds(sk, bbr, rs);
	if (rs->interval_us > 0 && rs->delivered >= 0) /* bbr_calculate_bw_sample */
		sample_bw = (__u32)min_t(__u64, ((__u64)rs->delivered * BW_UNIT +
						 (__u64)rs->interval_us - 1) /
							(__u64)rs->interval_us,
					 0xffffffffULL);
	if (sample_bw >= bbr_max_bw(bbr)) /* plus_note_bw_sample */
		bbr->ps.rounds_without_max = 0;
	/* bbr2_update_model */
	bbr2_update_congestion_signals(sk, bbr, rs, sample_bw);
	bbr_update_ack_aggregation(sk, bbr, rs);
	bbr2_check_loss_too_high_in_startup(sk, bbr, rs, &tx);
	bbr_check_full_bw_reached(bbr, rs);
	bbr2_check_drain(sk, bbr);
	bbr2_plus_maybe_advance_bw_filter(bbr);
	bbr2_update_cycle_phase(sk, bbr, rs, &tx);
	bbr2_update_min_rtt(sk, bbr, rs);
	bbr2_update_gains(bbr);

	bw = bbr_bw(bbr);
	bbr_set_pacing_rate(sk, bbr, bw, bbr->pacing_gain);
	bbr_set_cwnd(sk, bbr, rs->acked_sacked, bw, bbr->cwnd_gain);
	bbr2_bound_cwnd_for_inflight_model(sk, bbr);

	bbr->prev_ca_state = inet_csk(sk)->icsk_ca_state;
	bbr2_snapshot(sk, bbr, rs->acked_sacked);
}

SEC("struct_ops")
void BPF_PROG(bbr2_init, struct sock *sk)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct bbr2 *bbr;
	__u32 now = tcp_jiffies32();

	bbr = bpf_sk_storage_get(&rove_bbr2_state, sk, 0, BPF_SK_STORAGE_GET_F_CREATE);
	if (!bbr)
		return; /* runs as Reno */
	__builtin_memset(bbr, 0, __builtin_offsetof(struct bbr2, snap)); /* the ring is empty: snap_count = 0 */
	bbr2_load_params(sk, &bbr->p);

	bbr->prior_cwnd = 0;
	tp->snd_ssthresh = TCP_INFINITE_SSTHRESH;
	bbr->next_rtt_delivered = tp->delivered;
	bbr->prev_ca_state = TCP_CA_Open;
	bbr->init_cwnd = min_t(__u32, 0x7F, tp->snd_cwnd);
	bbr->probe_rtt_done_stamp = 0;
	bbr->probe_rtt_round_done = 0;
	bbr->probe_rtt_min_us = tp->rtt_min.s[0].v; /* tcp_min_rtt */
	bbr->probe_rtt_min_stamp = now;
	bbr->min_rtt_us = tp->rtt_min.s[0].v;
	bbr->min_rtt_stamp = now;
	bbr->has_seen_rtt = 0;
	bbr_init_pacing_rate_from_rtt(sk, bbr);
	bbr->round_start = 0;
	bbr->idle_restart = 0;
	bbr->full_bw_reached = 0;
	bbr->full_bw = 0;
	bbr->full_bw_cnt = 0;
	bbr->cycle_mstamp = 0;
	bbr->cycle_idx = B2_CRUISE;
	bbr->mode = B2_STARTUP;
	bbr->pacing_gain = BBR_HIGH_GAIN;
	bbr->cwnd_gain = BBR_HIGH_GAIN;
	bbr->ack_epoch_mstamp = tp->tcp_mstamp;
	bbr->bw_hi[0] = 0;
	bbr->bw_hi[1] = 0;
	bbr->inflight_hi = ~0U;
	bbr2_reset_lower_bounds(bbr);
	bbr2_reset_congestion_signals(bbr);
	bbr->loss_round_delivered = tp->delivered + 1; /* start loss rounds after 1st flight */
	bbr->loss_round_start = 0;
	bbr->loss_events_in_round = 0;
	bbr->bw_probe_up_cnt = ~0U;
	bbr->bw_probe_up_acks = 0;
	bbr->bw_probe_up_rounds = 0;
	bbr->bw_probe_samples = 0;
	bbr->prev_probe_too_high = 0;
	bbr->stopped_risky_probe = 0;
	bbr->ack_phase = B2_ACKS_INIT;
	bbr2_pick_probe_wait(bbr);
	bbr2_plus_init(&bbr->ps);
	/* cmpxchg(&sk->sk_pacing_status, SK_PACING_NONE, SK_PACING_NEEDED) */
	if (sk->sk_pacing_status == SK_PACING_NONE)
		sk->sk_pacing_status = SK_PACING_NEEDED;
}

SEC("struct_ops")
void BPF_PROG(bbr2_release, struct sock *sk)
{
	bpf_sk_storage_delete(&rove_bbr2_state, sk);
}

/* bbr2_ssthresh: entering recovery; save cwnd and the bounds for undo. */
SEC("struct_ops")
__u32 BPF_PROG(bbr2_ssthresh, struct sock *sk)
{
	struct bbr2 *bbr = bbr2_get(sk);

	if (!bbr)
		return tcp_reno_ssthresh(sk);
	bbr_save_cwnd(sk, bbr);
	bbr->undo_bw_lo = bbr->bw_lo;
	bbr->undo_inflight_lo = bbr->inflight_lo;
	bbr->undo_inflight_hi = bbr->inflight_hi;
	return tcp_sk(sk)->snd_ssthresh;
}

/* bbr2_undo_cwnd (bbr_undo = 1). */
SEC("struct_ops")
__u32 BPF_PROG(bbr2_undo_cwnd, struct sock *sk)
{
	struct bbr2 *bbr = bbr2_get(sk);

	if (!bbr)
		return tcp_reno_undo_cwnd(sk);
	bbr->full_bw = 0;
	bbr->full_bw_cnt = 0;
	bbr->loss_in_round = 0;
	bbr->bw_lo = max_t(__u32, bbr->bw_lo, bbr->undo_bw_lo);
	bbr->inflight_lo = max_t(__u32, bbr->inflight_lo, bbr->undo_inflight_lo);
	bbr->inflight_hi = max_t(__u32, bbr->inflight_hi, bbr->undo_inflight_hi);
	return bbr->prior_cwnd;
}

/* bbr2_cwnd_event: restarting from idle. */
SEC("struct_ops")
void BPF_PROG(bbr2_cwnd_event, struct sock *sk, enum tcp_ca_event event)
{
	struct bbr2 *bbr = bbr2_get(sk);
	struct tcp_sock *tp = tcp_sk(sk);

	if (!bbr || event != CA_EVENT_TX_START || !tp->app_limited)
		return;
	bbr->idle_restart = 1;
	bbr->ack_epoch_mstamp = tp->tcp_mstamp;
	bbr->ack_epoch_acked = 0;
	if (bbr->mode == B2_PROBE_BW)
		bbr_set_pacing_rate(sk, bbr, bbr_bw(bbr), BBR_UNIT);
	else if (bbr->mode == B2_PROBE_RTT)
		bbr2_check_probe_rtt_done(sk, bbr);
}

/* bbr2_set_state. */
SEC("struct_ops")
void BPF_PROG(bbr2_set_state, struct sock *sk, __u8 new_state)
{
	struct bbr2 *bbr = bbr2_get(sk);
	struct tcp_sock *tp = tcp_sk(sk);

	if (!bbr)
		return;
	if (new_state == TCP_CA_Loss) {
		bbr->prev_ca_state = TCP_CA_Loss;
		bbr->full_bw = 0;
		if (!bbr2_is_probing_bandwidth(bbr) && bbr->inflight_lo == ~0U)
			bbr->inflight_lo = max_t(__u32, tp->snd_cwnd, bbr->prior_cwnd);
	} else if (bbr->prev_ca_state == TCP_CA_Loss && new_state != TCP_CA_Loss) {
		tp->snd_cwnd = max_t(__u32, tp->snd_cwnd, bbr->prior_cwnd);
	}
}

SEC("struct_ops")
__u32 BPF_PROG(bbr2_min_tso_segs, struct sock *sk)
{
	return bbr_min_tso_segs_of(sk);
}

/* bbr_sndbuf_expand: room for 3 windows (pacing gain cycling and ACK aggregation). */
SEC("struct_ops")
__u32 BPF_PROG(bbr2_sndbuf_expand, struct sock *sk)
{
	return 3;
}

/* The struct_ops table of a BBRv2 machine: every hook above, under the rove `cc` name NAME. */
#define BBR2_STRUCT_OPS(var, cc_name)                                  \
	SEC(".struct_ops")                                            \
	struct tcp_congestion_ops var = {                             \
		.cong_control = (void *)bbr2_cong_control,             \
		.init = (void *)bbr2_init,                             \
		.release = (void *)bbr2_release,                       \
		.ssthresh = (void *)bbr2_ssthresh,                     \
		.undo_cwnd = (void *)bbr2_undo_cwnd,                   \
		.cwnd_event = (void *)bbr2_cwnd_event,                 \
		.set_state = (void *)bbr2_set_state,                   \
		.min_tso_segs = (void *)bbr2_min_tso_segs,             \
		.sndbuf_expand = (void *)bbr2_sndbuf_expand,           \
		.name = cc_name,                                       \
	}

#endif
