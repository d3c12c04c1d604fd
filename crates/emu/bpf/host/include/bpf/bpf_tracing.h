/* SPDX-License-Identifier: GPL-2.0 */
/* The host replay's bpf/bpf_tracing.h: BPF_PROG is a plain function of its arguments. */
#ifndef ROVE_HOST_BPF_TRACING_H
#define ROVE_HOST_BPF_TRACING_H
#define BPF_PROG(name, args...) name(args)
#endif
