// SPDX-License-Identifier: GPL-2.0
/*
 * BBRv2+ (seed 000, chapter 4: the thesis's delay-aware BBRv2) as a BPF tcp_congestion_ops
 * named "bbr2plus": the BBRv2 machine of bbr2_common.h with the BBRv2+ pieces of rove's
 * simulator port crates/tcp/src/cc/bbr2/plus.rs switched on (ProbeTry, continuous probing,
 * the CRUISE-round probe interval, Algorithm 1's BtlBW expiry, Algorithm 2's dual mode,
 * Algorithm 3's BDP compensation). The differences from the simulator are bbr2_common.h's;
 * BBRv2+'s own arithmetic is the simulator's (u64 fixed point in 1/256; its one signed step,
 * the per-round srtt's (rtt - srtt) / 8, is done on magnitudes, truncating toward zero as
 * Rust's i64 division does).
 *
 * Parameters (a flow's cc_params): the kernel backend writes the flow's resolved parameters
 * (rove-tcp's bbr2plus_kernel_params, the simulator's parser, so the same keys and errors)
 * into rove_b2p_params before the flow starts, keyed by the sender's network namespace
 * (its nsfs inode, unique per run) and the flow's destination IPv4 address (unique per flow in
 * a run). [GAP] A socket with no entry (another namespace, MPTCP subflows, IPv6) runs the
 * thesis's defaults, the simulator's "bbr2plus" without cc_params. Entries are not removed
 * by the program: the kernel backend deletes them when the run ends.
 */
#include "bbr2_common.h"

char _license[] SEC("license") = "GPL";

struct bbr2plus_key {
	__u32 netns_ino; /* the sender's network namespace (nsfs inode, ns.inum) */
	__u32 daddr;     /* destination IPv4 address, network byte order */
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, struct bbr2plus_key);
	__type(value, struct bbr2_params);
} rove_b2p_params SEC(".maps");

static __always_inline void bbr2_load_params(struct sock *sk, struct bbr2_params *p)
{
	struct bbr2plus_key key = {};
	struct bbr2_params *found;

	key.netns_ino = sk->__sk_common.skc_net.net->ns.inum;
	key.daddr = sk->__sk_common.skc_daddr;
	found = bpf_map_lookup_elem(&rove_b2p_params, &key);
	if (found)
		*p = *found;
	else
		bbr2_thesis_plus_params(p);
}

BBR2_STRUCT_OPS(rove_bbr2plus, "bbr2plus");
