// SPDX-License-Identifier: GPL-2.0
/*
 * LIA (RFC 6356, the Linked Increases Algorithm) for upstream MPTCP: a coupled congestion
 * control the upstream kernel never had (multipath-tcp.org's mptcp_coupled.c died with its
 * 4.19 fork). The algorithm of rove's simulator port crates/tcp/src/cc/coupled/lia.rs (which
 * documents it): slow start and the halving are Reno's; in congestion avoidance a subflow grows
 * by one packet per N packets acked,
 *
 *     N = max(cwnd_i, floor((Σ_k w_k·rtt_b/rtt_k)² / w_b))
 *
 * over the connection's subflows k that have an RTT sample, b the one with the largest
 * w_k/rtt_k² (w in packets, rtt the smoothed RTT): RFC 6356's min(alpha/cwnd_total, 1/cwnd_i)
 * with equal MSS.
 *
 * Sharing state: a subflow finds its MPTCP connection through its subflow context
 * (icsk_ulp_data->conn, read with bpf_rdonly_cast: the kfunc bpf_mptcp_sock_from_subflow is not
 * allowed in struct_ops programs) and publishes its (cwnd, srtt) into the connection's entry of
 * rove_lia_conns, a hash map keyed by the connection's address, in a slot it claims at init
 * with an atomic compare-and-swap and frees on release.
 *
 * Differences from the simulator's port:
 * - Fixed point: each term w_k·rtt_b/rtt_k is kept in 1/1024 packet (u64) and N truncated once;
 *   the simulator divides in floating point. N can differ by one near an integer.
 * - Packets, not bytes: equal MSS on every subflow is assumed (as mptcp_coupled.c does).
 * - At most 8 subflows are coupled (upstream MPTCP's limit); a ninth runs as Reno.
 * - A subflow's entry is refreshed on its own ACKs (cong_avoid, pkts_acked), as in the
 *   simulator; the slots of the others are read without a lock (aligned u32 reads).
 */
#include "rove_cc.h"
#include <bpf/bpf_core_read.h>

char _license[] SEC("license") = "GPL";

#define LIA_SUBFLOWS 8
#define LIA_FRAC 10 /* terms in 1/1024 packet */

extern void *bpf_rdonly_cast(const void *obj__ign, __u32 btf_id__k) __ksym;

struct lia_conn {
	__u64 sk[LIA_SUBFLOWS]; /* the subflow's address, 0 = a free slot */
	__u32 cwnd[LIA_SUBFLOWS];
	__u32 srtt_us[LIA_SUBFLOWS];
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u64);
	__type(value, struct lia_conn);
} rove_lia_conns SEC(".maps");

struct lia {
	__u64 conn; /* 0: not coupled (a plain TCP socket, or no slot left): Reno */
	__u32 slot;
};

static __always_inline struct lia_conn *conn_of(struct lia *ca)
{
	__u64 key = ca->conn; /* map keys must be on the stack */

	return key ? bpf_map_lookup_elem(&rove_lia_conns, &key) : 0;
}

static __always_inline void publish(struct sock *sk, struct lia *ca, struct lia_conn *c)
{
	struct tcp_sock *tp = tcp_sk(sk);
	__u32 s = ca->slot;

	if (!c || s >= LIA_SUBFLOWS)
		return;
	c->cwnd[s] = tp->snd_cwnd;
	c->srtt_us[s] = tp->srtt_us >> 3;
}

SEC("struct_ops")
void BPF_PROG(lia_init, struct sock *sk)
{
	struct lia *ca = inet_csk_ca(sk);
	struct mptcp_subflow_context *sfc;
	struct lia_conn zero = {}, *c;
	__u64 key;
	int i;

	ca->conn = 0;
	ca->slot = LIA_SUBFLOWS;
	if (!tcp_sk(sk)->is_mptcp)
		return;
	sfc = bpf_rdonly_cast(inet_csk(sk)->icsk_ulp_data,
			      bpf_core_type_id_kernel(struct mptcp_subflow_context));
	key = (__u64)sfc->conn;
	if (!key)
		return;
	bpf_map_update_elem(&rove_lia_conns, &key, &zero, BPF_NOEXIST);
	c = bpf_map_lookup_elem(&rove_lia_conns, &key);
	if (!c)
		return;
	for (i = 0; i < LIA_SUBFLOWS; i++) {
		if (__sync_val_compare_and_swap(&c->sk[i], 0, (__u64)sk) == 0) {
			ca->conn = key;
			ca->slot = i;
			publish(sk, ca, c);
			return;
		}
	}
}

SEC("struct_ops")
void BPF_PROG(lia_release, struct sock *sk)
{
	struct lia *ca = inet_csk_ca(sk);
	struct lia_conn *c = conn_of(ca);
	__u32 s = ca->slot;
	int i, used = 0;

	if (!c || s >= LIA_SUBFLOWS)
		return;
	c->cwnd[s] = 0;
	c->srtt_us[s] = 0;
	c->sk[s] = 0;
	for (i = 0; i < LIA_SUBFLOWS; i++)
		used += c->sk[i] != 0;
	if (!used) {
		__u64 key = ca->conn;

		bpf_map_delete_elem(&rove_lia_conns, &key);
	}
	ca->conn = 0;
}

/* Packets acked per one-packet increase on the subflow in slot `me` (cwnd if alone). */
static __always_inline __u32 acks_per_increment(struct lia_conn *c, __u32 me, __u32 cwnd)
{
	__u32 b = LIA_SUBFLOWS, n = 0, i;
	__u64 s = 0, q;

	/* b: the largest w/rtt² (compared as w_i·rtt_b² > w_b·rtt_i², in u64). */
	for (i = 0; i < LIA_SUBFLOWS; i++) {
		if (!c->sk[i] || !c->srtt_us[i] || !c->cwnd[i])
			continue;
		n++;
		if (b == LIA_SUBFLOWS) {
			b = i;
		} else {
			__u64 ri = c->srtt_us[i], rb = c->srtt_us[b & (LIA_SUBFLOWS - 1)];

			if ((__u64)c->cwnd[i] * rb * rb > (__u64)c->cwnd[b & (LIA_SUBFLOWS - 1)] * ri * ri)
				b = i;
		}
	}
	if (n < 2 || me >= LIA_SUBFLOWS || !c->sk[me] || !c->srtt_us[me])
		return cwnd;
	b &= LIA_SUBFLOWS - 1;
	for (i = 0; i < LIA_SUBFLOWS; i++) {
		if (!c->sk[i] || !c->srtt_us[i] || !c->cwnd[i])
			continue;
		s += ((__u64)c->cwnd[i] << LIA_FRAC) * c->srtt_us[b] / c->srtt_us[i];
	}
	q = (s * s) / ((__u64)c->cwnd[b] << (2 * LIA_FRAC));
	if (q > 0xffffffffULL)
		q = 0xffffffffULL;
	return max_t(__u32, cwnd, (__u32)q);
}

SEC("struct_ops")
void BPF_PROG(lia_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct lia *ca = inet_csk_ca(sk);
	struct lia_conn *c = conn_of(ca);
	__u32 n;

	if (!tcp_is_cwnd_limited(sk))
		return;
	if (tcp_in_slow_start(tp)) {
		acked = tcp_slow_start(tp, acked);
		if (!acked) {
			publish(sk, ca, c);
			return;
		}
	}
	publish(sk, ca, c);
	n = c ? acks_per_increment(c, ca->slot, tp->snd_cwnd) : tp->snd_cwnd;
	tcp_cong_avoid_ai(tp, n, acked);
	publish(sk, ca, c);
}

SEC("struct_ops")
void BPF_PROG(lia_pkts_acked, struct sock *sk, const struct ack_sample *sample)
{
	struct lia *ca = inet_csk_ca(sk);

	publish(sk, ca, conn_of(ca));
}

SEC("struct_ops")
__u32 BPF_PROG(lia_ssthresh, struct sock *sk)
{
	struct lia *ca = inet_csk_ca(sk);

	publish(sk, ca, conn_of(ca));
	return tcp_reno_ssthresh(sk);
}

SEC("struct_ops")
__u32 BPF_PROG(lia_undo_cwnd, struct sock *sk)
{
	return tcp_reno_undo_cwnd(sk);
}

SEC(".struct_ops")
struct tcp_congestion_ops rove_lia = {
	.init = (void *)lia_init,
	.release = (void *)lia_release,
	.ssthresh = (void *)lia_ssthresh,
	.cong_avoid = (void *)lia_cong_avoid,
	.pkts_acked = (void *)lia_pkts_acked,
	.undo_cwnd = (void *)lia_undo_cwnd,
	.name = "lia",
};
