/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The host replay's stand-in for libbpf's bpf/bpf_helpers.h (placed first on the include path):
 * the same macros, so a NAME.bpf.c compiles unchanged for x86_64, with each helper an ordinary
 * function of the replay (env.c): the clock comes from the recorded line, maps are small
 * in-process tables, bpf_get_prandom_u32 returns the recorded random stream.
 */
#ifndef ROVE_HOST_BPF_HELPERS_H
#define ROVE_HOST_BPF_HELPERS_H

#define SEC(name)
#define __always_inline inline __attribute__((always_inline))
#define __noinline __attribute__((noinline))
#define __weak __attribute__((weak))
#define __ksym
#define __kconfig

/* Map definitions: libbpf's declarations, so (map)->key and (map)->value carry the types. */
#define __uint(name, val) int(*name)[val]
#define __type(name, val) typeof(val) *name
#define __array(name, val) typeof(val) *name[]

void *rove_map_lookup(void *map, const void *key, unsigned long key_size,
		      unsigned long value_size);
long rove_map_update(void *map, const void *key, const void *value, unsigned long key_size,
		     unsigned long value_size, unsigned long long flags);
long rove_map_delete(void *map, const void *key, unsigned long key_size);

#define bpf_map_lookup_elem(m, k) \
	rove_map_lookup((m), (k), sizeof(*(m)->key), sizeof(*(m)->value))
#define bpf_map_update_elem(m, k, v, f) \
	rove_map_update((m), (k), (v), sizeof(*(m)->key), sizeof(*(m)->value), (f))
#define bpf_map_delete_elem(m, k) rove_map_delete((m), (k), sizeof(*(m)->key))

/* Socket storage: a map keyed by the socket's address. */
void *rove_sk_storage_get(void *map, void *sk, void *value, unsigned long value_size,
			  unsigned long long flags);
long rove_sk_storage_delete(void *map, void *sk);
#define bpf_sk_storage_get(m, sk, v, f) \
	rove_sk_storage_get((m), (sk), (v), sizeof(*(m)->value), (f))
#define bpf_sk_storage_delete(m, sk) rove_sk_storage_delete((m), (sk))

unsigned long long bpf_jiffies64(void);
unsigned long long bpf_ktime_get_ns(void);
unsigned int bpf_get_prandom_u32(void);

#endif
