/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What rove's coupled MPTCP congestion controls (lia.bpf.c, olia.bpf.c, balia.bpf.c) share: how
 * the subflows of one MPTCP connection find each other and see each other's window and RTT.
 *
 * A subflow finds its connection through its subflow context (icsk_ulp_data->conn, read with
 * bpf_rdonly_cast: the kfunc bpf_mptcp_sock_from_subflow is not allowed in struct_ops programs)
 * and claims a slot in the connection's entry of rove_mp_conns, a hash map keyed by the
 * connection's address, with an atomic compare-and-swap at init; it frees the slot at release
 * (the entry goes with the last slot). It publishes its (cwnd, srtt) into its slot on its own
 * hooks; the slots of the others are read without a lock (aligned u32 reads). Each object has
 * its own map (the same name, a separate instance). An algorithm that needs more of the others
 * than (cwnd, srtt) publishes it beside them with its own hooks, as the simulator's SlotState
 * holds it (crates/tcp/src/cc/coupled/mod.rs): OLIA the ssthresh, whether the subflow is in
 * Recovery, and its inter-loss distance.
 *
 * - At most COUPLED_SUBFLOWS subflows are coupled (upstream MPTCP's limit of 8); a ninth, a
 *   plain TCP socket, or a subflow whose connection has no entry runs as Reno (conn == 0).
 * - Packets, not bytes: equal MSS on every subflow is assumed (as multipath-tcp.org's
 *   mptcp_coupled.c and mptcp_balia.c do).
 */
#ifndef ROVE_MPTCP_COUPLED_H
#define ROVE_MPTCP_COUPLED_H

#include "rove_cc.h"
#include <bpf/bpf_core_read.h>

#define COUPLED_SUBFLOWS 8

extern void *bpf_rdonly_cast(const void *obj__ign, __u32 btf_id__k) __ksym;

struct coupled_conn {
	__u64 sk[COUPLED_SUBFLOWS]; /* the subflow's address, 0 = a free slot */
	__u32 cwnd[COUPLED_SUBFLOWS];
	__u32 srtt_us[COUPLED_SUBFLOWS];
	/* Written by OLIA only (olia.bpf.c); 0 for the others. */
	__u32 ssthresh[COUPLED_SUBFLOWS];
	__u32 in_recovery[COUPLED_SUBFLOWS];	/* icsk_ca_state == TCP_CA_Recovery */
	__u32 inter_loss_bytes[COUPLED_SUBFLOWS]; /* OLIA's l_r, bytes */
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u64);
	__type(value, struct coupled_conn);
} rove_mp_conns SEC(".maps");

/* A subflow's place in its connection, in icsk_ca_priv. */
struct coupled {
	__u64 conn; /* 0: not coupled (a plain TCP socket, or no slot left): Reno */
	__u32 slot;
};

static __always_inline struct coupled_conn *conn_of(struct coupled *ca)
{
	__u64 key = ca->conn; /* map keys must be on the stack */

	return key ? bpf_map_lookup_elem(&rove_mp_conns, &key) : 0;
}

static __always_inline void publish(struct sock *sk, struct coupled *ca, struct coupled_conn *c)
{
	struct tcp_sock *tp = tcp_sk(sk);
	__u32 s = ca->slot;

	if (!c || s >= COUPLED_SUBFLOWS)
		return;
	c->cwnd[s] = tp->snd_cwnd;
	c->srtt_us[s] = tp->srtt_us >> 3;
}

/* Whether slot i holds a subflow with a window and an RTT sample (one that counts). */
static __always_inline bool counts(const struct coupled_conn *c, __u32 i)
{
	return c->sk[i] && c->srtt_us[i] && c->cwnd[i];
}

/* init: claim a slot in the connection's entry (made if missing). */
static __always_inline void coupled_init(struct sock *sk, struct coupled *ca)
{
	struct mptcp_subflow_context *sfc;
	struct coupled_conn zero = {}, *c;
	__u64 key;
	int i;

	ca->conn = 0;
	ca->slot = COUPLED_SUBFLOWS;
	if (!tcp_sk(sk)->is_mptcp)
		return;
	sfc = bpf_rdonly_cast(inet_csk(sk)->icsk_ulp_data,
			      bpf_core_type_id_kernel(struct mptcp_subflow_context));
	key = (__u64)sfc->conn;
	if (!key)
		return;
	bpf_map_update_elem(&rove_mp_conns, &key, &zero, BPF_NOEXIST);
	c = bpf_map_lookup_elem(&rove_mp_conns, &key);
	if (!c)
		return;
	for (i = 0; i < COUPLED_SUBFLOWS; i++) {
		if (__sync_val_compare_and_swap(&c->sk[i], 0, (__u64)sk) == 0) {
			ca->conn = key;
			ca->slot = i;
			publish(sk, ca, c);
			return;
		}
	}
}

/* release: free the slot; the entry goes with the connection's last slot. */
static __always_inline void coupled_release(struct coupled *ca)
{
	struct coupled_conn *c = conn_of(ca);
	__u32 s = ca->slot;
	int i, used = 0;

	if (!c || s >= COUPLED_SUBFLOWS)
		return;
	c->cwnd[s] = 0;
	c->srtt_us[s] = 0;
	c->ssthresh[s] = 0;
	c->in_recovery[s] = 0;
	c->inter_loss_bytes[s] = 0;
	c->sk[s] = 0;
	for (i = 0; i < COUPLED_SUBFLOWS; i++)
		used += c->sk[i] != 0;
	if (!used) {
		__u64 key = ca->conn;

		bpf_map_delete_elem(&rove_mp_conns, &key);
	}
	ca->conn = 0;
}

#endif /* ROVE_MPTCP_COUPLED_H */
