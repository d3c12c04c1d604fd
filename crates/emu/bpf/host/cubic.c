// SPDX-License-Identifier: GPL-2.0
/*
 * CUBIC's kfuncs for the host replay of c2tcp.bpf.c: net/ipv4/tcp_cubic.c (Linux 6.x; the
 * cubictcp_* functions tcp_cubic.c registers for BPF struct_ops), written for this harness from
 * the kernel's code with its module parameters' defaults: fast_convergence 1, beta 717,
 * initial_ssthresh 0, bic_scale 41, tcp_friendliness 1, hystart 1, hystart_detect 3 (ACK train
 * and delay), hystart_low_window 16, hystart_ack_delta_us 2000. The state is the kernel's
 * struct bictcp (vmlinux.h). Differences from tcp_cubic.c:
 * - the TCP-friendliness loop `while (ack_cnt > delta)` is one division (bpf_cubic.c's form,
 *   the same result);
 * - sk_gso_max_size is whatever the replay's socket holds (sock.c sets 65536, the simulator's
 *   gso_max_size default: crates/tcp/src/cc/cubic.rs); no MIB counters, no pr_debug.
 */
#include "rove_cc.h"

#define BICTCP_BETA_SCALE 1024
#define BICTCP_HZ 10 /* BIC HZ 2^10 = 1024 */
#define HYSTART_ACK_TRAIN 0x1
#define HYSTART_DELAY 0x2
#define HYSTART_MIN_SAMPLES 8
#define HYSTART_DELAY_MIN 4000U  /* 4 ms */
#define HYSTART_DELAY_MAX 16000U /* 16 ms */

/* tcp_cubic.c module parameters (defaults). */
#define FAST_CONVERGENCE 1
#define BETA 717
#define BIC_SCALE 41
#define TCP_FRIENDLINESS 1
#define HYSTART 1
#define HYSTART_DETECT (HYSTART_ACK_TRAIN | HYSTART_DELAY)
#define HYSTART_LOW_WINDOW 16
#define HYSTART_ACK_DELTA_US 2000

/* cubictcp_register's precomputed scales. */
#define BETA_SCALE (8 * (BICTCP_BETA_SCALE + BETA) / 3 / (BICTCP_BETA_SCALE - BETA))
#define CUBE_RTT_SCALE (BIC_SCALE * 10)
#define CUBE_FACTOR ((1ULL << (10 + 3 * BICTCP_HZ)) / (BIC_SCALE * 10))

static inline void bictcp_reset(struct bictcp *ca)
{
	__builtin_memset(ca, 0, __builtin_offsetof(struct bictcp, unused));
	ca->found = 0;
}

static inline __u32 bictcp_clock_us(const struct sock *sk)
{
	return tcp_sk(sk)->tcp_mstamp;
}

static inline void bictcp_hystart_reset(struct sock *sk)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct bictcp *ca = inet_csk_ca(sk);

	ca->round_start = ca->last_ack = bictcp_clock_us(sk);
	ca->end_seq = tp->snd_nxt;
	ca->curr_rtt = ~0U;
	ca->sample_cnt = 0;
}

void cubictcp_init(struct sock *sk)
{
	bictcp_reset(inet_csk_ca(sk));
	if (HYSTART)
		bictcp_hystart_reset(sk);
}

void cubictcp_cwnd_event(struct sock *sk, enum tcp_ca_event event)
{
	if (event == CA_EVENT_TX_START) {
		struct bictcp *ca = inet_csk_ca(sk);
		__u32 now = tcp_jiffies32();
		__s32 delta = now - tcp_sk(sk)->lsndtime;

		/* Application-limited (idle) for a while: shift epoch_start. */
		if (ca->epoch_start && delta > 0) {
			ca->epoch_start += delta;
			if (after(ca->epoch_start, now))
				ca->epoch_start = now;
		}
	}
}

static inline int fls64(__u64 x)
{
	return x ? 64 - __builtin_clzll(x) : 0;
}

/* cubic_root: table lookup and one Newton-Raphson step (Willy Tarreau's table). */
static __u32 cubic_root(__u64 a)
{
	__u32 x, b, shift;
	static const __u8 v[] = {
		0,   54,  54,  54,  118, 118, 118, 118, 123, 129, 134, 138, 143, 147, 151, 156,
		157, 161, 164, 168, 170, 173, 176, 179, 181, 185, 187, 190, 192, 194, 197, 199,
		200, 202, 204, 206, 209, 211, 213, 215, 217, 219, 221, 222, 224, 225, 227, 229,
		231, 232, 234, 236, 237, 239, 240, 242, 244, 245, 246, 248, 250, 251, 252, 254,
	};

	b = fls64(a);
	if (b < 7) /* a in [0..63] */
		return ((__u32)v[(__u32)a] + 35) >> 6;
	b = ((b * 84) >> 8) - 1;
	shift = (a >> (b * 3));
	x = ((__u32)(((__u32)v[shift] + 10) << b)) >> 6;
	x = (2 * x + (__u32)(a / ((__u64)x * (__u64)(x - 1))));
	x = ((x * 341) >> 10);
	return x;
}

static inline void bictcp_update(struct bictcp *ca, __u32 cwnd, __u32 acked)
{
	__u32 delta, bic_target, max_cnt;
	__u64 offs, t;

	ca->ack_cnt += acked; /* count the number of ACKed packets */
	if (ca->last_cwnd == cwnd && (__s32)(tcp_jiffies32() - ca->last_time) <= CONFIG_HZ / 32)
		return;
	/* cnt is recomputed at most once per jiffy. */
	if (ca->epoch_start && tcp_jiffies32() == ca->last_time)
		goto tcp_friendliness;
	ca->last_cwnd = cwnd;
	ca->last_time = tcp_jiffies32();
	if (ca->epoch_start == 0) {
		ca->epoch_start = tcp_jiffies32(); /* record beginning */
		ca->ack_cnt = acked;               /* start counting */
		ca->tcp_cwnd = cwnd;               /* syn with cubic */
		if (ca->last_max_cwnd <= cwnd) {
			ca->bic_K = 0;
			ca->bic_origin_point = cwnd;
		} else {
			ca->bic_K = cubic_root(CUBE_FACTOR * (ca->last_max_cwnd - cwnd));
			ca->bic_origin_point = ca->last_max_cwnd;
		}
	}
	t = (__s32)(tcp_jiffies32() - ca->epoch_start);
	t += usecs_to_jiffies(ca->delay_min);
	t <<= BICTCP_HZ; /* from HZ to bictcp_HZ */
	t /= CONFIG_HZ;
	if (t < ca->bic_K) /* t - K */
		offs = ca->bic_K - t;
	else
		offs = t - ca->bic_K;
	/* c/rtt * (t-K)^3 */
	delta = (CUBE_RTT_SCALE * offs * offs * offs) >> (10 + 3 * BICTCP_HZ);
	if (t < ca->bic_K) /* below origin */
		bic_target = ca->bic_origin_point - delta;
	else /* above origin */
		bic_target = ca->bic_origin_point + delta;
	if (bic_target > cwnd)
		ca->cnt = cwnd / (bic_target - cwnd);
	else
		ca->cnt = 100 * cwnd; /* very small increment */
	/* The initial growth may be too conservative while the bandwidth is unknown. */
	if (ca->last_max_cwnd == 0 && ca->cnt > 20)
		ca->cnt = 20; /* increase cwnd 5% per RTT */

tcp_friendliness:
	if (TCP_FRIENDLINESS) {
		__u32 scale = BETA_SCALE;

		delta = (cwnd * scale) >> 3;
		if (ca->ack_cnt > delta && delta) {
			__u32 n = ca->ack_cnt / delta;

			/* the kernel's loop leaves ack_cnt in (0, delta] */
			if (ca->ack_cnt % delta == 0)
				n--;
			ca->ack_cnt -= n * delta;
			ca->tcp_cwnd += n;
		}
		if (ca->tcp_cwnd > cwnd) { /* if bic is slower than tcp */
			delta = ca->tcp_cwnd - cwnd;
			max_cnt = cwnd / delta;
			if (ca->cnt > max_cnt)
				ca->cnt = max_cnt;
		}
	}
	/* At most 1 packet per 2 acked: cwnd grows at most 1.5x per RTT. */
	ca->cnt = max_t(__u32, ca->cnt, 2U);
}

void cubictcp_cong_avoid(struct sock *sk, __u32 ack, __u32 acked)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct bictcp *ca = inet_csk_ca(sk);

	if (!tcp_is_cwnd_limited(sk))
		return;
	if (tcp_in_slow_start(tp)) {
		acked = tcp_slow_start(tp, acked);
		if (!acked)
			return;
	}
	bictcp_update(ca, tcp_snd_cwnd(tp), acked);
	tcp_cong_avoid_ai(tp, ca->cnt, acked);
}

__u32 cubictcp_recalc_ssthresh(struct sock *sk)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	struct bictcp *ca = inet_csk_ca(sk);

	ca->epoch_start = 0; /* end of epoch */
	/* Wmax and fast convergence */
	if (tcp_snd_cwnd(tp) < ca->last_max_cwnd && FAST_CONVERGENCE)
		ca->last_max_cwnd = (tcp_snd_cwnd(tp) * (BICTCP_BETA_SCALE + BETA)) /
				    (2 * BICTCP_BETA_SCALE);
	else
		ca->last_max_cwnd = tcp_snd_cwnd(tp);
	return max_t(__u32, (tcp_snd_cwnd(tp) * BETA) / BICTCP_BETA_SCALE, 2U);
}

void cubictcp_state(struct sock *sk, __u8 new_state)
{
	if (new_state == TCP_CA_Loss) {
		bictcp_reset(inet_csk_ca(sk));
		bictcp_hystart_reset(sk);
	}
}

/* hystart_ack_delay: a TSO/GRO cushion, at most 1 ms, from the pacing rate. */
static __u32 hystart_ack_delay(const struct sock *sk)
{
	unsigned long rate = sk->sk_pacing_rate;

	if (!rate)
		return 0;
	return min_t(__u64, USEC_PER_MSEC, (__u64)sk->sk_gso_max_size * 4 * USEC_PER_SEC / rate);
}

static void hystart_update(struct sock *sk, __u32 delay)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct bictcp *ca = inet_csk_ca(sk);
	__u32 threshold;

	if (after(tp->snd_una, ca->end_seq))
		bictcp_hystart_reset(sk);
	/* hystart triggers when cwnd is larger than some threshold */
	if (tcp_snd_cwnd(tp) < HYSTART_LOW_WINDOW)
		return;
	if (HYSTART_DETECT & HYSTART_ACK_TRAIN) {
		__u32 now = bictcp_clock_us(sk);

		/* first detection parameter - ack-train detection */
		if ((__s32)(now - ca->last_ack) <= HYSTART_ACK_DELTA_US) {
			ca->last_ack = now;
			threshold = ca->delay_min + hystart_ack_delay(sk);
			/* Pacing might have delayed packets up to RTT/2 during slow start. */
			if (sk->sk_pacing_status == SK_PACING_NONE)
				threshold >>= 1;
			if ((__s32)(now - ca->round_start) > threshold) {
				ca->found = 1;
				tp->snd_ssthresh = tcp_snd_cwnd(tp);
			}
		}
	}
	if (HYSTART_DETECT & HYSTART_DELAY) {
		/* obtain the minimum delay of more than sampling packets */
		if (ca->curr_rtt > delay)
			ca->curr_rtt = delay;
		if (ca->sample_cnt < HYSTART_MIN_SAMPLES) {
			ca->sample_cnt++;
		} else {
			__u32 d = ca->delay_min >> 3;

			d = d < HYSTART_DELAY_MIN ? HYSTART_DELAY_MIN :
			    d > HYSTART_DELAY_MAX ? HYSTART_DELAY_MAX : d;
			if (ca->curr_rtt > ca->delay_min + d) {
				ca->found = 1;
				tp->snd_ssthresh = tcp_snd_cwnd(tp);
			}
		}
	}
}

void cubictcp_acked(struct sock *sk, const struct ack_sample *sample)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	struct bictcp *ca = inet_csk_ca(sk);
	__u32 delay;

	/* Some calls are for duplicates without timestamps */
	if (sample->rtt_us < 0)
		return;
	/* Discard delay samples right after fast recovery */
	if (ca->epoch_start && (__s32)(tcp_jiffies32() - ca->epoch_start) < (__s32)CONFIG_HZ)
		return;
	delay = sample->rtt_us;
	if (delay == 0)
		delay = 1;
	/* first time call or link delay decreases */
	if (ca->delay_min == 0 || ca->delay_min > delay)
		ca->delay_min = delay;
	if (!ca->found && tcp_in_slow_start(tp) && HYSTART)
		hystart_update(sk, delay);
}
