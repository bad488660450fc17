/* The fleet's outlier rule (src/fleet_judge.c), the metric-direction
 * table (src/metric_direction.c), the CSV splitter the fleet reads with
 * (src/csv.c) and the reader of a multi-device run's devices.csv
 * (src/run_devices.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <math.h>
#include <unistd.h>

#include "lib/csv.h"
#include "analysis/fleet.h"
#include "analysis/metric_direction.h"
#include "run/run_devices.h"

/* A fleet of n GPUs with one point of `metric`: values and spreads. */
static void make_fleet(gm_fleet *f, const char *metric, int n, const double *values, const double *spreads)
{
    gm_fleet_init(f);
    f->gpus = calloc((size_t)n, sizeof *f->gpus);
    assert_non_null(f->gpus);
    f->n_gpus = n;
    for (int g = 0; g < n; g++)
        f->gpus[g].dir = strdup("run");
    char *key[GM_POINT_KEY_FIELDS] = {"stream", "triad", "chunked", "per-tensor", "fp32", "", "", "", "4194304", (char *)metric};
    gm_fleet_point *p = gm_fleet_point_find(f, key, "u");
    assert_non_null(p);
    assert_ptr_equal(gm_fleet_point_find(f, key, NULL), p);
    p->obs = calloc((size_t)n, sizeof *p->obs);
    assert_non_null(p->obs);
    p->n_obs = p->cap_obs = n;
    for (int g = 0; g < n; g++)
        p->obs[g] = (gm_fleet_obs){.gpu = g, .value = values[g], .spread = spreads[g]};
}

static void test_two_gpus_slower_one_flagged(void **state)
{
    (void)state;
    gm_fleet f;
    /* Across two GPUs each sits one MAD from the median: only the
     * repetitions' spread can tell the slow one apart. */
    make_fleet(&f, "time", 2, (double[]){10, 20}, (double[]){0.5, 0.5});
    assert_int_equal(gm_fleet_judge(&f, 4), 1);
    assert_int_equal(f.gpus[0].flagged, 0);
    assert_int_equal(f.gpus[1].flagged, 1);
    assert_true(fabs(f.points[0].obs[1].deviation - 10.0) < 1e-9);   /* (20 - 15) / 0.5 */
    assert_true(fabs(f.points[0].median - 15.0) < 1e-9);
    gm_fleet_release(&f);
}

static void test_models_judged_apart(void **state)
{
    (void)state;
    gm_fleet f;
    /* Three H100s and two A100s, the A100s a third slower and one H100
     * slow: each is judged among its own model, so only that H100 is
     * flagged; the point's median is its largest model's. */
    make_fleet(&f, "time", 5, (double[]){10, 10.1, 20, 15, 15.1}, (double[]){0.2, 0.2, 0.2, 0.2, 0.2});
    const char *models[] = {"H100", "H100", "H100", "A100", "A100"};
    for (int g = 0; g < 5; g++)
        snprintf(f.gpus[g].device, sizeof f.gpus[g].device, "%s", models[g]);
    assert_int_equal(gm_fleet_judge(&f, 4), 1);
    assert_int_equal(f.gpus[2].flagged, 1);
    assert_int_equal(f.gpus[3].flagged + f.gpus[4].flagged + f.gpus[0].flagged + f.gpus[1].flagged, 0);
    assert_true(fabs(f.points[0].median - 10.1) < 1e-9);
    assert_int_equal(f.gpus[3].points, 1);
    gm_fleet_release(&f);
    /* One GPU of a model has nobody to be judged against. */
    make_fleet(&f, "time", 2, (double[]){10, 1000}, (double[]){0.1, 0.1});
    snprintf(f.gpus[0].device, sizeof f.gpus[0].device, "H100");
    snprintf(f.gpus[1].device, sizeof f.gpus[1].device, "cpu");
    assert_int_equal(gm_fleet_judge(&f, 4), 0);
    assert_int_equal(f.gpus[0].points + f.gpus[1].points, 0);
    gm_fleet_release(&f);
}

static void test_direction_decides(void **state)
{
    (void)state;
    gm_fleet f;
    /* Bandwidth: the low one is flagged, the high one never. */
    make_fleet(&f, "bandwidth", 3, (double[]){100, 101, 50}, (double[]){1, 1, 1});
    assert_int_equal(gm_fleet_judge(&f, 4), 1);
    assert_true(f.gpus[2].flagged > 0);
    assert_int_equal(f.gpus[0].flagged + f.gpus[1].flagged, 0);
    gm_fleet_release(&f);
    make_fleet(&f, "bandwidth", 3, (double[]){100, 101, 200}, (double[]){1, 1, 1});
    assert_int_equal(gm_fleet_judge(&f, 4), 0);
    gm_fleet_release(&f);
    /* A fact, not a performance: never flagged. */
    make_fleet(&f, "max_batch_model", 3, (double[]){8, 8, 1}, (double[]){0, 0, 0});
    assert_int_equal(gm_fleet_judge(&f, 4), 0);
    gm_fleet_release(&f);
}

static void test_spread_across_gpus_tolerated(void **state)
{
    (void)state;
    gm_fleet f;
    /* Three GPUs spread evenly: the MAD across them is the yardstick. */
    make_fleet(&f, "time", 3, (double[]){10, 14, 18}, (double[]){0.01, 0.01, 0.01});
    assert_int_equal(gm_fleet_judge(&f, 4), 0);
    gm_fleet_release(&f);
    /* The 1% floor: identical repetitions do not make noise an outlier. */
    make_fleet(&f, "time", 2, (double[]){100, 103}, (double[]){0, 0});
    assert_int_equal(gm_fleet_judge(&f, 4), 0);
    gm_fleet_release(&f);
    /* The judged GPU's own noise does not widen its tolerance. */
    make_fleet(&f, "time", 2, (double[]){10, 20}, (double[]){0.5, 50});
    assert_int_equal(gm_fleet_judge(&f, 4), 1);
    assert_int_equal(f.gpus[1].flagged, 1);
    gm_fleet_release(&f);
}

static void test_zero_scale(void **state)
{
    (void)state;
    gm_fleet f;
    make_fleet(&f, "errors", 3, (double[]){0, 0, 5}, (double[]){0, 0, 0});
    assert_int_equal(gm_fleet_judge(&f, 4), 1);
    assert_true(isinf(f.points[0].obs[2].deviation));
    assert_true(f.points[0].obs[0].deviation == 0);
    gm_fleet_release(&f);
    make_fleet(&f, "time", 1, (double[]){7}, (double[]){1});
    assert_int_equal(gm_fleet_judge(&f, 4), 0);
    assert_int_equal(f.gpus[0].points, 0);
    gm_fleet_release(&f);
}

static void test_metric_directions(void **state)
{
    (void)state;
    assert_int_equal(gm_metric_direction_of("time"), GM_BETTER_LOWER);
    assert_int_equal(gm_metric_direction_of("latency_p99"), GM_BETTER_LOWER);
    assert_int_equal(gm_metric_direction_of("alloc_latency_p50"), GM_BETTER_LOWER);
    assert_int_equal(gm_metric_direction_of("bandwidth"), GM_BETTER_HIGHER);
    assert_int_equal(gm_metric_direction_of("max_batch"), GM_BETTER_HIGHER);
    assert_int_equal(gm_metric_direction_of("max_batch_lost"), GM_BETTER_LOWER);
    assert_int_equal(gm_metric_direction_of("max_batch_model"), GM_BETTER_NEITHER);
    assert_int_equal(gm_metric_direction_of("no_such_metric"), GM_BETTER_NEITHER);
}

static void test_csv_split(void **state)
{
    (void)state;
    char line[] = "a,\"b,c\",,\"say \"\"hi\"\"\"";
    char *f[8];
    assert_int_equal(gm_csv_split(line, f, 8), 4);
    assert_string_equal(f[0], "a");
    assert_string_equal(f[1], "b,c");
    assert_string_equal(f[2], "");
    assert_string_equal(f[3], "say \"hi\"");
    char bad[] = "a,\"open";
    assert_int_equal(gm_csv_split(bad, f, 8), -1);
    char many[] = "1,2,3";
    assert_int_equal(gm_csv_split(many, f, 2), -1);
}

static void test_run_devices(void **state)
{
    (void)state;
    char dir[] = "/tmp/gpumem-unit-XXXXXX", path[64];
    char err[256];
    gm_run_device d[4];
    assert_non_null(mkdtemp(dir));
    assert_int_equal(gm_run_devices(dir, d, 4, err, sizeof err), 0);   /* one device: no devices.csv */
    snprintf(path, sizeof path, "%s/devices.csv", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("index,backend,device,device_id,folder,exit_status,result\n"
          "0,opencl,\"cpu, 2 cores\",opencl:1234abcd:0,device0,0,complete\n"
          "2,opencl,cpu,opencl:1234abcd:2,device2,3,killed by signal 9 (Killed)\n", f);
    fclose(f);
    assert_int_equal(gm_run_devices(dir, d, 4, err, sizeof err), 2);
    assert_string_equal(d[0].device, "cpu, 2 cores");
    assert_string_equal(d[1].device_id, "opencl:1234abcd:2");
    assert_string_equal(d[1].folder, "device2");
    assert_int_equal(d[1].index, 2);
    assert_int_equal(d[1].exit_status, 3);
    f = fopen(path, "a");
    fputs("x,opencl\n", f);
    fclose(f);
    assert_int_equal(gm_run_devices(dir, d, 4, err, sizeof err), -1);
    assert_non_null(strstr(err, "devices.csv:4: malformed row"));
    unlink(path);
    rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_two_gpus_slower_one_flagged),
        cmocka_unit_test(test_models_judged_apart),
        cmocka_unit_test(test_direction_decides),
        cmocka_unit_test(test_spread_across_gpus_tolerated),
        cmocka_unit_test(test_zero_scale),
        cmocka_unit_test(test_metric_directions),
        cmocka_unit_test(test_csv_split),
        cmocka_unit_test(test_run_devices),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
