/* SPDX-License-Identifier: GPL-2.0 */
/* The host replay's bpf/bpf_core_read.h: no relocations on the host (bpf_rdonly_cast ignores
 * the type id). */
#ifndef ROVE_HOST_BPF_CORE_READ_H
#define ROVE_HOST_BPF_CORE_READ_H
#define bpf_core_type_id_kernel(type) 0
#endif
