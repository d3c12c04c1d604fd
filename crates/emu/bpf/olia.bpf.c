// SPDX-License-Identifier: GPL-2.0
/*
 * OLIA (the Opportunistic Linked-Increases Algorithm; Khalili, Gast, Popovic, Le Boudec,
 * CoNEXT 2012 and IEEE/ACM ToN 21(5) 2013) for upstream MPTCP, which has no coupled congestion
 * control (multipath-tcp.org's mptcp_olia.c died with its 4.19 fork). The algorithm of rove's
 * simulator port crates/tcp/src/cc/coupled/olia.rs (which documents it, with its sources): per
 * packet acked on subflow r in congestion avoidance (windows in packets, rtt the smoothed RTT,
 * over the connection's subflows p that have an RTT sample),
 *
 *     w_r += (w_r / rtt_r²) / (Σ_p w_p / rtt_p)²  +  α_r / w_r
 *
 *   l_r  = max(bytes acked between the last two losses on r, bytes acked since the last one)
 *   B    = the subflows with the largest l_p / rtt_p² (mptcp_olia.c's best paths)
 *   M    = the subflows with the largest window
 *   α_r  = 1/(n·|B∖M|) if r ∈ B∖M;  −1/(n·|M|) if r ∈ M and B∖M ≠ ∅;  0 otherwise
 *
 * and on loss ssthresh = max(w_r/2, 2) (Reno's); slow start as Reno, a coupled subflow dropping
 * the slow-start leftover as mptcp_olia_cong_avoid does. As the kernel (mptcp_olia.c): a
 * subflow's window in the sums and in M is its ssthresh while it is in Recovery
 * (mptcp_get_crt_cwnd); the increase accumulates in a signed counter in 2^-10 packet (scale =
 * 10) that moves cwnd by one packet at ±1023 (by more when an ACK brings more) and restarts at
 * 0; l_r comes from three snapshots of snd_una (loss3 on every cong_avoid, loss1 <- loss2 <-
 * loss3 on entering Loss, Recovery or CWR unless nothing was acked since or the RTO is a
 * repeated one). A subflow alone (or a plain TCP socket) runs Reno exactly. The subflows share
 * their windows, RTTs, ssthresh, Recovery flag and l_r as mptcp_coupled.h describes.
 *
 * The fixed point (the simulator computes the increase in floating point; BPF has none):
 * - S = Σ_p w_p·rtt_r/rtt_p (so that the first term is w_r/S²) is kept exact to 2^-64: each
 *   term as a 64.64 number, by long division of w_p·rtt_r by rtt_p (< 2^32) in 32-bit digits.
 * - The counter's increment per ACK of `acked` packets, trunc(1024·acked·(w_r/S² + α_r/w_r)),
 *   is computed from its two terms, each to the nearest 2^-40 packet: 1024·acked·w_r/S² from
 *   the top 64 bits of S squared (a relative error below 2^-60), 1024·acked/(n·k·w_r) (α_r =
 *   ±1/(n·k)) by 128/64-bit long division. Their sum is truncated toward zero after adding
 *   INC_SNAP (4 · 2^-40): a sum within that of an integer from below counts as the integer, so
 *   an exact integer (equal RTTs, dyadic windows) comes out exact. The simulator's f64 mostly
 *   does too, but truncates one below in about 1 case in 8,000 (tests/test_bpf_replay.py,
 *   test_olia_fixed_point_is_the_exact_increase): there the port keeps the exact value.
 *   Why not fewer bits: the increment is an integer part whose fraction is uniformly spread, so
 *   the chance to truncate differently from the exact value is about the error itself; 2^-16
 *   ratios (BALIA's first fixed point) missed by one 3 times in 29k calls, 2^-40 leaves about
 *   one in 10^8 (only an increment within 10^-11 of an integer can differ).
 * - The best-path metric is compared exactly, l_p·rtt_b² against l_b·rtt_p² in 128 bits, as the
 *   kernel and the simulator do (ties put several subflows in B).
 * Differences from the simulator's port:
 * - the metric is mptcp_olia.c's l/rtt² (olia.rs's default); the draft's l²/rtt
 *   (`best_path_metric = "l2_per_rtt"`) and `kernel_ack_counting` are not selectable (a
 *   kernel flow takes no cc_params but bbr2plus's): the increase counts every packet acked
 *   (olia.rs's default);
 * - l_r is kept in bytes of the u32 sequence space (as mptcp_olia.c), so a distance of 4 GB or
 *   more between losses wraps; the simulator counts packets (× MSS in the metric: the same
 *   comparison with equal MSS);
 * - those of mptcp_coupled.h (equal MSS, at most 8 coupled subflows, lock-free reads).
 */
#include "mptcp_coupled.h"
#include "u128.h"

char _license[] SEC("license") = "GPL";

#define OLIA_SCALE 10                              /* mptcp_olia.c: scale */
#define OLIA_CNT_THRESHOLD ((1 << OLIA_SCALE) - 1) /* mptcp_olia_cong_avoid: ±((1 << scale) - 1) */
#define INC_FRAC 40                                /* the increment's terms in 2^-40 packet */
#define INC_SNAP 4                                 /* 4 · 2^-40 below an integer counts as it */

/* A subflow's state, in icsk_ca_priv. */
struct olia {
	struct coupled cpl;
	__u32 loss1, loss2, loss3; /* snd_una at the second-last loss, the last loss, now (bytes) */
	__s64 cnt;		   /* mptcp_snd_cwnd_cnt, 2^-10 packet */
};

static __always_inline __u32 inter_loss_bytes(const struct olia *ca)
{
	return max_t(__u32, ca->loss3 - ca->loss2, ca->loss2 - ca->loss1);
}

/* publish() and OLIA's own fields. */
static __always_inline void olia_publish(struct sock *sk, struct olia *ca, struct coupled_conn *c)
{
	__u32 s = ca->cpl.slot;

	if (!c || s >= COUPLED_SUBFLOWS)
		return;
	publish(sk, &ca->cpl, c);
	c->ssthresh[s] = tcp_sk(sk)->snd_ssthresh;
	c->in_recovery[s] = inet_csk(sk)->icsk_ca_state == TCP_CA_Recovery;
	c->inter_loss_bytes[s] = inter_loss_bytes(ca);
}

/* mptcp_get_crt_cwnd: a subflow's window in the sums and in M, ssthresh while in Recovery. */
static __always_inline __u32 crt_cwnd(const struct coupled_conn *c, __u32 i)
{
	return c->in_recovery[i] ? c->ssthresh[i] : c->cwnd[i];
}

/*
 * The arithmetic is in global functions (BPF subprograms the verifier checks once, with unknown
 * arguments): inlined into cong_avoid, the branches of the per-subflow loops, of the bit
 * lengths and of the division's 64 steps multiply into more paths than the verifier's budget of
 * a million instructions. The slots are read where they are used (in the map, as LIA and BALIA
 * do), not copied to the stack, where the verifier would track every copied value.
 */

/* round((hi·2^64 + lo) / den); ~0 when the quotient does not fit 64 bits or den is 0. */
__noinline __u64 olia_div_rounded(__u64 hi, __u64 lo, __u64 den)
{
	return u128_div64(u128_add(u128_of(hi, lo), u128_of(0, den >> 1)), den);
}

/* The connection's subflows that count (a window and an RTT sample). */
__noinline __u32 olia_members(const struct coupled_conn *c)
{
	__u32 i, n = 0;

	if (!c)
		return 0;
	for (i = 0; i < COUPLED_SUBFLOWS; i++)
		n += counts(c, i);
	return n;
}

/* Whether slot i is in B (bit 0: its l/rtt² equals the best, l_b/rtt_b², compared as
 * l_i·rtt_b² = l_b·rtt_i²) and in M (bit 1: its window is the largest); 0 if it does not count. */
__noinline __u32 olia_sets(const struct coupled_conn *c, __u32 i, __u32 max_w, __u64 best_l,
			   __u64 best_rtt2)
{
	__u64 rtt;

	if (!c || i >= COUPLED_SUBFLOWS || !counts(c, i))
		return 0;
	rtt = c->srtt_us[i];
	return u128_eq(u128_mul(c->inter_loss_bytes[i], best_rtt2), u128_mul(best_l, rtt * rtt)) |
	       (crt_cwnd(c, i) == max_w) << 1;
}

/*
 * α_r of the subflow in slot `me`, as olia.rs's alpha: 1/a for a > 0, -1/-a for a < 0, 0 for
 * a = 0. B: the subflows with the best metric l/rtt² (l_i/rtt_i² >= the best so far, compared
 * as l_i·rtt_b² >= l_b·rtt_i² in 128 bits; the best starts at 0/1 as in olia.rs); M: those with
 * the largest window. (The counts come from olia_members and olia_sets so that the verifier
 * sees them as numbers, not as one path per combination of subflows.)
 */
__noinline __s64 olia_alpha(const struct coupled_conn *c, __u32 me)
{
	__u64 best_l = 0, best_rtt2 = 1, n = olia_members(c), size_m = 0, size_b_not_m = 0, mine = 0;
	__u32 i, max_w = 0;

	if (!c || me >= COUPLED_SUBFLOWS || n <= 1)
		return 0;
	for (i = 0; i < COUPLED_SUBFLOWS; i++) {
		__u64 rtt = c->srtt_us[i], l = c->inter_loss_bytes[i];

		if (!counts(c, i))
			continue;
		max_w = max_t(__u32, max_w, crt_cwnd(c, i));
		if (!u128_lt(u128_mul(l, best_rtt2), u128_mul(best_l, rtt * rtt))) {
			best_l = l;
			best_rtt2 = rtt * rtt;
		}
	}
	for (i = 0; i < COUPLED_SUBFLOWS; i++) {
		__u64 sets = olia_sets(c, i, max_w, best_l, best_rtt2);

		size_m += sets >> 1;
		size_b_not_m += sets == 1;
		if (i == me)
			mine = sets;
	}
	if (!size_b_not_m)
		return 0;
	if (mine == 1) /* in B, not in M */
		return (__s64)(n * size_b_not_m);
	if (mine & 2)
		return -(__s64)(n * size_m);
	return 0;
}

/*
 * 1024·acked·w_r/S² in 2^-40 packet, S = Σ_p crt_p·rtt_r/rtt_p. S is summed as a 64.64 number
 * S·2^64 (each term exact to 2^-64: w_p·rtt_r < 2^61 divided by rtt_p < 2^32 in two 32-bit
 * digits); with L its bit length and m its top 64 bits (S ≈ m·2^(L-128)), S² ≈ q·2^(2L-192)
 * with q the top 64 bits of m², so the term is acked·w_r·2^(10+40+192-2L) / q. ~0 when it does
 * not fit 64 bits.
 */
__noinline __u64 olia_kelly_voice(const struct coupled_conn *c, __u32 rtt_r, __u32 w_r, __u32 acked)
{
	struct u128 s = u128_of(0, 0), num = u128_of(0, (__u64)acked * w_r);
	__u32 i, bits;
	__u64 m, q;
	int e;

	if (!c)
		return ~0ULL;
	for (i = 0; i < COUPLED_SUBFLOWS; i++) {
		__u64 x, whole, rtt = c->srtt_us[i];

		if (!counts(c, i) || !rtt)
			continue;
		x = (__u64)crt_cwnd(c, i) * rtt_r;
		whole = x / rtt;
		s = u128_add(s, u128_of(whole, u64_frac_div32(x - whole * rtt, rtt)));
	}
	bits = u128_bits(s);
	if (!bits)
		return ~0ULL;
	m = bits > 64 ? u128_shr(s, bits - 64).lo : u128_shl(s, 64 - bits).lo;
	q = u128_mul(m, m).hi;
	e = INC_FRAC + OLIA_SCALE + 192 - 2 * (int)bits;
	if (e >= 0) {
		if (u128_bits(num) + e > 127)
			return ~0ULL;
		num = u128_shl(num, e);
	} else {
		num = u128_shr(num, -e);
	}
	return olia_div_rounded(num.hi, num.lo, q);
}

/* The counter's change for `acked` packets: trunc(1024·acked·(w_r/S² + α_r/w_r)), the sum of
 * the two terms (each in 2^-40) snapped as the header says. */
static __always_inline __s64 increment(const struct coupled_conn *c, __u32 me, __u32 rtt_r,
				       __u32 w_r, __u32 acked)
{
	__s64 alpha = olia_alpha(c, me);
	__u64 a = olia_kelly_voice(c, rtt_r, w_r, acked), b = 0, mag;
	bool negative = false;

	if (alpha) { /* 1024·acked/(n·k·w_r), α_r = ±1/(n·k) */
		struct u128 x = u128_shl(u128_of(0, acked), OLIA_SCALE + INC_FRAC);
		__u64 nk = alpha > 0 ? (__u64)alpha : (__u64)-alpha;

		b = olia_div_rounded(x.hi, x.lo, nk * w_r);
	}
	if (alpha >= 0) {
		mag = a + b < a ? ~0ULL : a + b;
	} else if (a >= b) {
		mag = a - b;
	} else {
		mag = b - a;
		negative = true;
	}
	mag = mag + INC_SNAP < mag ? ~0ULL >> INC_FRAC : (mag + INC_SNAP) >> INC_FRAC;
	return negative ? -(__s64)mag : (__s64)mag;
}

SEC("struct_ops")
void BPF_PROG(olia_init, struct sock *sk)
{
	struct olia *ca = inet_csk_ca(sk);
	__u32 una = tcp_sk(sk)->snd_una;

	coupled_init(sk, &ca->cpl);
	ca->loss1 = una;
	ca->loss2 = una;
	ca->loss3 = una;
	ca->cnt = 0;
	olia_publish(sk, ca, conn_of(&ca->cpl));
}

SEC("struct_ops")
void BPF_PROG(olia_release, struct sock *sk)
{
	struct olia *ca = inet_csk_ca(sk);

	coupled_release(&ca->cpl);
}

SEC("struct_ops")
void BPF_PROG(olia_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct olia *ca = inet_csk_ca(sk);
	struct coupled_conn *c = conn_of(&ca->cpl);
	__u32 me = ca->cpl.slot, steps;
	bool alone;
	__s64 cnt;

	ca->loss3 = tp->snd_una;
	olia_publish(sk, ca, c);
	alone = !c || me >= COUPLED_SUBFLOWS || !counts(c, me) || olia_members(c) <= 1;
	if (!tcp_is_cwnd_limited(sk))
		return;
	if (tcp_in_slow_start(tp)) {
		acked = tcp_slow_start(tp, acked);
		/* A coupled subflow drops the leftover (mptcp_olia_cong_avoid); Reno keeps it. */
		if (!acked || !alone) {
			olia_publish(sk, ca, c);
			return;
		}
	}
	if (alone || !c) {
		tcp_cong_avoid_ai(tp, tp->snd_cwnd, acked);
		olia_publish(sk, ca, c);
		return;
	}
	cnt = ca->cnt + increment(c, me, tp->srtt_us >> 3, max_t(__u32, tp->snd_cwnd, 1), acked);
	if (cnt >= OLIA_CNT_THRESHOLD) {
		steps = 1 + (__u32)((__u64)(cnt - OLIA_CNT_THRESHOLD) >> OLIA_SCALE);
		tp->snd_cwnd = (__u32)min_t(__u64, (__u64)tp->snd_cwnd + steps, tp->snd_cwnd_clamp);
		cnt = 0;
	} else if (cnt <= -OLIA_CNT_THRESHOLD) {
		steps = 1 + (__u32)((__u64)(-cnt - OLIA_CNT_THRESHOLD) >> OLIA_SCALE);
		tp->snd_cwnd = tp->snd_cwnd > steps ? tp->snd_cwnd - steps : 1;
		cnt = 0;
	}
	ca->cnt = cnt;
	olia_publish(sk, ca, c);
}

SEC("struct_ops")
void BPF_PROG(olia_pkts_acked, struct sock *sk, const struct ack_sample *sample)
{
	struct olia *ca = inet_csk_ca(sk);

	olia_publish(sk, ca, conn_of(&ca->cpl));
}

/* mptcp_olia_set_state: a loss episode starts; shift the inter-loss snapshots. */
SEC("struct_ops")
void BPF_PROG(olia_set_state, struct sock *sk, __u8 new_state)
{
	struct olia *ca = inet_csk_ca(sk);
	__u8 old = inet_csk(sk)->icsk_ca_state; /* tcp_set_ca_state calls us before it changes */

	if (new_state == TCP_CA_Loss || new_state == TCP_CA_Recovery || new_state == TCP_CA_CWR) {
		bool repeated_rto = new_state == TCP_CA_Loss && old == TCP_CA_Loss;

		if (ca->loss3 != ca->loss2 && !repeated_rto) {
			ca->loss1 = ca->loss2;
			ca->loss2 = ca->loss3;
		}
	}
	olia_publish(sk, ca, conn_of(&ca->cpl));
}

SEC("struct_ops")
__u32 BPF_PROG(olia_ssthresh, struct sock *sk)
{
	struct olia *ca = inet_csk_ca(sk);

	olia_publish(sk, ca, conn_of(&ca->cpl));
	return tcp_reno_ssthresh(sk);
}

SEC("struct_ops")
__u32 BPF_PROG(olia_undo_cwnd, struct sock *sk)
{
	return tcp_reno_undo_cwnd(sk);
}

SEC(".struct_ops")
struct tcp_congestion_ops rove_olia = {
	.init = (void *)olia_init,
	.release = (void *)olia_release,
	.ssthresh = (void *)olia_ssthresh,
	.cong_avoid = (void *)olia_cong_avoid,
	.pkts_acked = (void *)olia_pkts_acked,
	.set_state = (void *)olia_set_state,
	.undo_cwnd = (void *)olia_undo_cwnd,
	.name = "olia",
};
