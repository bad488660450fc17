/* The list of stress checks (stress/stress.h), each defined in its own
 * file: the one file that names them all. */
#include "stress/stress.h"

#include <stddef.h>

const gm_stress_check *const gm_stress_checks[] = {
    &gm_stress_memtest,      &gm_stress_churn,       &gm_stress_oom_recovery,
    &gm_stress_swap_integrity, &gm_stress_concurrency, &gm_stress_soak, NULL,
};
