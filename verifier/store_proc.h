/* SPDX-License-Identifier: MIT */
/*
 * store_proc.h - the store process's entry point (store_proc.c), called in
 * the child by vg_privsep_store_open (store_client.c).
 */
#ifndef VIGIL_VERIFIER_STORE_PROC_H
#define VIGIL_VERIFIER_STORE_PROC_H

/*
 * store_proc_main - open @url, send the result as a DONE on @fd, then
 * answer requests until @fd is closed. Never returns.
 */
_Noreturn void store_proc_main(int fd, const char *url);

#endif
