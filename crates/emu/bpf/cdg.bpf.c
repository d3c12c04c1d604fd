// SPDX-License-Identifier: GPL-2.0
/*
 * CAIA Delay-Gradient (CDG) for a stock kernel: net/ipv4/tcp_cdg.c (Linux 6.x) as a BPF
 * tcp_congestion_ops, the algorithm of rove's simulator port crates/tcp/src/cc/cdg.rs (which
 * documents it). Differences from the C original:
 * - The backoff cannot enter CWR: tcp_enter_cwr is not callable from BPF and icsk_ca_state is
 *   not writable. The backoff sets cwnd and ssthresh to the backed-off window at once (the
 *   kernel reduces to it over one RTT by PRR) and then holds as CWR would: the kernel calls no
 *   cong_avoid until snd_una reaches the snd_nxt of the backoff (high_seq), so the port returns
 *   from cong_avoid until the ACK reaches it, and runs CA_EVENT_COMPLETE_CWR's bookkeeping (a
 *   new gradient round) on that ACK, where the kernel would send the event. A real
 *   COMPLETE_CWR (the end of a recovery that came meanwhile) ends the hold too.
 * - The gradient window (kcalloc'ed in the kernel) lives in per-socket storage (an sk_storage
 *   map); if it cannot be created, window = 1, as the kernel's allocation-failure fallback.
 * - Signed division (the gradient's extrapolation) is done on magnitudes: BPF has none.
 * - undo_cwnd is tcp_reno_undo_cwnd, max(cwnd, prior_cwnd), where tcp_cdg.c returns max(cwnd,
 *   cwnd at the last ssthresh call): the same number, since the kernel sets prior_cwnd = cwnd
 *   just before every ssthresh call (tcp_init_cwnd_reduction, tcp_enter_loss) and a backoff
 *   here calls no ssthresh and has nothing to undo (tests/test_bpf_replay.py compares them);
 * - get_random_u32 is bpf_get_prandom_u32; the module parameters are fixed at their defaults
 *   (window 8, backoff_beta 0.7071*1024, backoff_factor 42, hystart_detect 3, use_ineff 5,
 *   use_shadow 1, use_tolerance 0); no get_info; no MIB counters.
 */
#include "rove_cc.h"

char _license[] SEC("license") = "GPL";

#define WINDOW 8               /* module parameter window (a power of 2) */
#define BACKOFF_BETA 724       /* 0.7071 * 1024 */
#define BACKOFF_FACTOR 42
#define HYSTART_ACK_TRAIN 1
#define HYSTART_DELAY 2
#define HYSTART_DETECT 3
#define USE_INEFF 5
#define USE_SHADOW 1

enum cdg_state { CDG_UNKNOWN = 0, CDG_NONFULL = 1, CDG_FULL = 2, CDG_BACKOFF = 3 };

struct cdg_minmax {
	__s32 min;
	__s32 max;
};

struct cdg_ring {
	struct cdg_minmax g[WINDOW];
};

struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct cdg_ring);
} rove_cdg_grads SEC(".maps");

struct cdg {
	struct cdg_minmax rtt;
	struct cdg_minmax rtt_prev;
	struct cdg_minmax gsum;
	__u8 gfilled;
	__u8 tail;
	__u8 state;
	__u8 delack;
	__u8 has_ring; /* the gradient ring exists (else window 1) */
	__u32 rtt_seq;
	__u32 shadow_wnd;
	__u16 backoff_cnt;
	__u16 sample_cnt;
	__s32 delay_min;
	__u32 last_ack;
	__u32 round_start;
	__u32 cwr_seq; /* the hold in place of CWR lasts until an ACK reaches this */
	__u8 in_cwr;
};

static __always_inline bool mm_zero(const struct cdg_minmax *m)
{
	return m->min == 0 && m->max == 0;
}

/* C's signed division (truncating toward zero) for a positive divisor: BPF (v3) has no signed
 * division instruction. */
static __always_inline __s32 sdiv_pos(__s32 a, __u32 b)
{
	return a < 0 ? -(__s32)((__u32)(-a) / b) : (__s32)((__u32)a / b);
}

static __always_inline __s32 min_not_zero_s32(__s32 a, __s32 b)
{
	return a == 0 ? b : (b == 0 ? a : (a < b ? a : b));
}

/* nexp_u32: exp(-ux * 1e-6) * U32_MAX, by the kernel's table of exp(-x)*65536-1 for x = 0,
 * 0.000256, 0.000512, ... and one multiply per set bit. */
static __always_inline __u32 nexp_u32(__u32 ux)
{
	static const __u16 v[] = {
		65535, 65518, 65501, 65468, 65401, 65267, 65001, 64470, 63422,
		61378, 57484, 50423, 38795, 22965, 8047, 987, 14,
	};
	__u32 msb = ux >> 8;
	__u32 res;
	int i;

	if (msb > 0xffff) /* ux >= 2^24: the result is <= 222/U32_MAX */
		return 0;
	res = 0xffffffffu - (ux & 0xff) * (0xffffffffu / 1000000);
	for (i = 1; i < 17 && msb; i++, msb >>= 1) {
		__u32 y = v[i & -(msb & 1)] + 1;

		res = ((__u64)res * y) >> 16;
	}
	return res;
}

static __always_inline void hystart_update(struct sock *sk, struct cdg *ca)
{
	struct tcp_sock *tp = tcp_sk(sk);

	ca->delay_min = min_not_zero_s32(ca->delay_min, ca->rtt.min);
	if (ca->delay_min == 0)
		return;
	if (HYSTART_DETECT & HYSTART_ACK_TRAIN) {
		__u32 now_us = (__u32)tp->tcp_mstamp;

		if (ca->last_ack == 0 || !tcp_is_cwnd_limited(sk)) {
			ca->last_ack = now_us;
			ca->round_start = now_us;
		} else if (before(now_us, ca->last_ack + 3000)) {
			__u32 base_owd = max_t(__u32, ca->delay_min / 2U, 125U);

			ca->last_ack = now_us;
			if (after(now_us, ca->round_start + base_owd)) {
				tp->snd_ssthresh = tp->snd_cwnd;
				return;
			}
		}
	}
	if (HYSTART_DETECT & HYSTART_DELAY) {
		if (ca->sample_cnt < 8) {
			ca->sample_cnt++;
		} else {
			__s32 thresh = max_t(__u32, ca->delay_min + ca->delay_min / 8U, 125U);

			if (ca->rtt.min > thresh)
				tp->snd_ssthresh = tp->snd_cwnd;
		}
	}
}

static __always_inline __s32 cdg_grad(struct sock *sk, struct cdg *ca)
{
	__s32 gmin = ca->rtt.min - ca->rtt_prev.min;
	__s32 gmax = ca->rtt.max - ca->rtt_prev.max;
	__s32 grad;
	struct cdg_ring *ring = ca->has_ring ? bpf_sk_storage_get(&rove_cdg_grads, sk, 0, 0) : 0;

	if (ring) {
		__u32 t = ca->tail & (WINDOW - 1);

		ca->gsum.min += gmin - ring->g[t].min;
		ca->gsum.max += gmax - ring->g[t].max;
		ring->g[t].min = gmin;
		ring->g[t].max = gmax;
		ca->tail = (t + 1) & (WINDOW - 1);
		gmin = ca->gsum.min;
		gmax = ca->gsum.max;
	}
	grad = gmin > 0 ? gmin : gmax;
	/* Extrapolate the gradient window while it fills. */
	if (!ca->gfilled) {
		if (!ring)
			grad *= WINDOW;
		else if (ca->tail == 0)
			ca->gfilled = 1;
		else
			grad = sdiv_pos(grad * WINDOW, ca->tail);
	}
	if (gmin <= -32 || gmax <= -32) /* the backoff was effectual */
		ca->backoff_cnt = 0;
	return grad;
}

/* CDG's backoff decision (tcp_cdg_backoff), and the reduction in place of CWR. */
static __always_inline bool cdg_backoff(struct sock *sk, struct cdg *ca, __u32 grad)
{
	struct tcp_sock *tp = tcp_sk(sk);
	__u32 w;

	if (bpf_get_prandom_u32() <= nexp_u32(grad * BACKOFF_FACTOR))
		return false;
	ca->backoff_cnt++;
	if (ca->backoff_cnt > USE_INEFF)
		return false;
	ca->shadow_wnd = max_t(__u32, ca->shadow_wnd, tp->snd_cwnd);
	ca->state = CDG_BACKOFF;
	/* tcp_enter_cwr: ssthresh = ssthresh() in state BACKOFF, then (here at once) cwnd; CWR
	 * lasts until snd_una reaches high_seq = snd_nxt. */
	w = max_t(__u32, 2U, (tp->snd_cwnd * BACKOFF_BETA) >> 10);
	tp->snd_ssthresh = w;
	tcp_snd_cwnd_set(tp, min_t(__u32, tp->snd_cwnd, w));
	ca->cwr_seq = tp->snd_nxt;
	ca->in_cwr = 1;
	return true;
}

/* CA_EVENT_COMPLETE_CWR's bookkeeping (tcp_cdg_cwnd_event): a new gradient round. */
static __always_inline void complete_cwr(struct sock *sk, struct cdg *ca)
{
	ca->in_cwr = 0;
	ca->state = CDG_UNKNOWN;
	ca->rtt_seq = tcp_sk(sk)->snd_nxt;
	ca->rtt_prev = ca->rtt;
	ca->rtt.min = 0;
	ca->rtt.max = 0;
}

SEC("struct_ops")
void BPF_PROG(cdg_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	struct cdg *ca = inet_csk_ca(sk);
	struct tcp_sock *tp = tcp_sk(sk);
	__u32 prior, incr;

	if (ca->in_cwr) {
		if (before(ack, ca->cwr_seq))
			return; /* the kernel calls no cong_avoid in CWR */
		complete_cwr(sk, ca);
	}
	if (tcp_in_slow_start(tp) && HYSTART_DETECT)
		hystart_update(sk, ca);
	if (after(ack, ca->rtt_seq) && !mm_zero(&ca->rtt)) {
		__s32 grad = 0;

		if (!mm_zero(&ca->rtt_prev))
			grad = cdg_grad(sk, ca);
		ca->rtt_seq = tp->snd_nxt;
		ca->rtt_prev = ca->rtt;
		ca->rtt.min = 0;
		ca->rtt.max = 0;
		ca->last_ack = 0;
		ca->sample_cnt = 0;
		if (grad > 0 && cdg_backoff(sk, ca, grad))
			return;
	}
	if (!tcp_is_cwnd_limited(sk)) {
		ca->shadow_wnd = min_t(__u32, ca->shadow_wnd, tp->snd_cwnd);
		return;
	}
	prior = tp->snd_cwnd;
	tcp_reno_cong_avoid(sk, ack, acked);
	incr = tp->snd_cwnd - prior;
	ca->shadow_wnd = max_t(__u32, ca->shadow_wnd, ca->shadow_wnd + incr);
}

SEC("struct_ops")
void BPF_PROG(cdg_acked, struct sock *sk, const struct ack_sample *sample)
{
	struct cdg *ca = inet_csk_ca(sk);
	struct tcp_sock *tp = tcp_sk(sk);
	__s32 rtt_us = sample->rtt_us;

	if (rtt_us <= 0)
		return;
	/* Delayed-ACK filter (Hayes, CAIA TR 100219A, as tcp_cdg.c). */
	if (tp->sacked_out == 0) {
		if (sample->pkts_acked == 1 && ca->delack) {
			ca->rtt.min = ca->rtt.min < rtt_us ? ca->rtt.min : rtt_us;
			ca->delack--;
			return;
		} else if (sample->pkts_acked > 1 && ca->delack < 5) {
			ca->delack++;
		}
	}
	ca->rtt.min = min_not_zero_s32(ca->rtt.min, rtt_us);
	ca->rtt.max = ca->rtt.max > rtt_us ? ca->rtt.max : rtt_us;
}

SEC("struct_ops")
__u32 BPF_PROG(cdg_ssthresh, struct sock *sk)
{
	struct cdg *ca = inet_csk_ca(sk);
	struct tcp_sock *tp = tcp_sk(sk);

	if (ca->state == CDG_BACKOFF)
		return max_t(__u32, 2U, (tp->snd_cwnd * BACKOFF_BETA) >> 10);
	ca->shadow_wnd = min_t(__u32, ca->shadow_wnd >> 1, tp->snd_cwnd);
	if (USE_SHADOW)
		return max_t(__u32, max_t(__u32, 2U, ca->shadow_wnd), tp->snd_cwnd >> 1);
	return max_t(__u32, 2U, tp->snd_cwnd >> 1);
}

static __always_inline void cdg_reset(struct sock *sk, struct cdg *ca)
{
	struct cdg_ring *ring;
	struct tcp_sock *tp = tcp_sk(sk);

	__builtin_memset(ca, 0, sizeof(*ca));
	ring = bpf_sk_storage_get(&rove_cdg_grads, sk, 0, BPF_SK_STORAGE_GET_F_CREATE);
	if (ring) {
		__builtin_memset(ring, 0, sizeof(*ring));
		ca->has_ring = 1;
	}
	ca->rtt_seq = tp->snd_nxt;
	ca->shadow_wnd = tp->snd_cwnd;
}

SEC("struct_ops")
void BPF_PROG(cdg_cwnd_event, struct sock *sk, enum tcp_ca_event ev)
{
	struct cdg *ca = inet_csk_ca(sk);

	switch (ev) {
	case CA_EVENT_CWND_RESTART:
		cdg_reset(sk, ca);
		break;
	case CA_EVENT_COMPLETE_CWR:
		complete_cwr(sk, ca);
		break;
	default:
		break;
	}
}

SEC("struct_ops")
void BPF_PROG(cdg_init, struct sock *sk)
{
	cdg_reset(sk, inet_csk_ca(sk));
}

SEC("struct_ops")
void BPF_PROG(cdg_release, struct sock *sk)
{
	bpf_sk_storage_delete(&rove_cdg_grads, sk);
}

SEC("struct_ops")
__u32 BPF_PROG(cdg_undo_cwnd, struct sock *sk)
{
	return tcp_reno_undo_cwnd(sk);
}

SEC(".struct_ops")
struct tcp_congestion_ops rove_cdg = {
	.cong_avoid = (void *)cdg_cong_avoid,
	.cwnd_event = (void *)cdg_cwnd_event,
	.pkts_acked = (void *)cdg_acked,
	.undo_cwnd = (void *)cdg_undo_cwnd,
	.ssthresh = (void *)cdg_ssthresh,
	.release = (void *)cdg_release,
	.init = (void *)cdg_init,
	.name = "cdg",
};
