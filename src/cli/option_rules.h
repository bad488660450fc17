/*
 * When an option applies: the rules beside the option table
 * (option_table.c), one per option that concerns only part of what a
 * command does. An option given on the command line that applies to
 * nothing the command was asked for is refused in one line naming the
 * option, what it concerns and what was asked (exit status 2), never
 * ignored. A profile's entries are not judged: a profile sets defaults
 * for every suite at once.
 */
#ifndef GM_OPTION_RULES_H
#define GM_OPTION_RULES_H

#include "cli/option_table.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What a command was asked for, as the rules read it: one view of its
 * options. bench has a view per suite it runs and per profile section of
 * that suite (SUITE, SUITE.cpu, SUITE.gpu: the device's kind is not known
 * before it opens); plan, stress and compare have one. */
typedef struct {
    const char *suite;          /* bench: the suite of this view; NULL for plan */
    bool whole_model;           /* plan: --model without --workload */
    unsigned workloads;         /* bit per gm_runnable_workloads entry (plan: its --workload) */
    unsigned patterns;          /* bench: bit per allocation pattern */
    unsigned modes;             /* bit per gm_plan_mode */
    unsigned oom_parts;         /* bench: bit per gm_oom_part */
    bool several_devices;       /* bench: --device all or a list */
    uint64_t data_parallel;     /* plan: --gpus / --tensor-parallel */
    unsigned offload;           /* plan: --zero-offload (a gm_offload; 0: none) */
    unsigned checks;            /* stress: bit per gm_stress_checks entry */
    bool cards;                 /* compare: a card sheet leads (runs of different devices, or --cards) */
    const gm_shape *shape;      /* the shape: its --model (arch), --paged, roles */
} gm_ask;

/* Does option opt, given with value ("" for a flag), of command cmd (a
 * GM_CMD_* bit) apply to one of the n views? 0 if so (or it has no rule);
 * -1 with one line in err naming the option, what it concerns and what
 * the view that came closest asked. */
int gm_option_rule_check(const gm_option *opt, const char *value, unsigned cmd, const gm_ask *views, int n, char *err,
                         size_t len);

#endif
