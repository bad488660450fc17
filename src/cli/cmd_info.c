/* gpumem info: every backend and device with its facts. */
#include "cli/commands.h"
#include "device/device.h"
#include "lib/datafile.h"
#include "lib/units.h"

#include <stdio.h>
#include <string.h>

/* The command as gpumem's list, --help and the man page show it (cli/command.h). */
const gm_command gm_command_info = {
    .name = "info",
    .run = gm_cmd_info,
    .summary = "list every backend and device with its facts",
    .usage = "info",
    .about = "Lists every backend and device with its facts, and the data folders gpumem reads its profiles, model "
        "presets, plot scripts and reference runs from.",
    .exit_status = "0 a usable device was found, 2 bad usage, 3 none",
    .positional = GM_POSITIONAL_NONE,
};

static void print_size(const char *label, uint64_t v)
{
    char buf[32];
    if (v)
        printf("    %-18s %s (%llu bytes)\n", label, gm_format_size(v, buf, sizeof buf), (unsigned long long)v);
}

static void print_device(const gm_backend *be, int i, const gm_device_info *d)
{
    printf("  %s:%d  %s  [%s]\n", be->name, i, d->name, gm_device_type_name(d->type));
    printf("    %-18s %s\n", "vendor", d->vendor);
    if (d->platform[0])
        printf("    %-18s %s\n", "platform", d->platform);
    printf("    %-18s %s\n", "driver", d->driver_version);
    printf("    %-18s %s\n", "runtime", d->runtime_version);
    if (d->uuid[0])
        printf("    %-18s %s\n", "id", d->uuid);
    print_size("memory", d->total_mem);
    if (d->free_mem_known)
        print_size(d->type == GM_DEV_CPU ? "free (host)" : "free", d->free_mem);
    print_size("largest alloc", d->max_alloc);
    print_size("last-level cache", d->llc_bytes);
    if (d->compute_units)
        printf("    %-18s %d\n", "compute units", d->compute_units);
    if (d->clock_mhz)
        printf("    %-18s %d MHz\n", "clock", d->clock_mhz);
    if (d->mem_clock_mhz)
        printf("    %-18s %d MHz, %d-bit bus\n", "memory clock", d->mem_clock_mhz, d->mem_bus_bits);
    printf("    %-18s %s\n", "managed memory", d->has_managed ? "yes" : "no");
    printf("    %-18s %s\n", "fp16 arithmetic", d->has_fp16_native ? "yes" : "no");
}

int gm_cmd_info(int argc, char **argv)
{
    if (argc > 1) {
        if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
            gm_command_help(stdout, &gm_command_info);
            return 0;
        }
        fprintf(stderr, "gpumem info: unexpected argument '%s' (info takes none)\n", argv[1]);
        return 2;
    }
    /* Where the data files are read from (lib/datafile.h). */
    char profile[4200], models[4200], plot[4200], reference[4200];
    printf("data: profiles %s, model presets %s, plot scripts %s, reference runs %s (gpumem compare reference:NAME)\n",
           gm_find_data_file("profiles/quick.ini", profile, sizeof profile) ? profile : "(not found)",
           gm_find_data_file("models", models, sizeof models) ? models : "(not found)",
           gm_find_data_file("plots/style.gp", plot, sizeof plot) ? plot : "(not found)",
           gm_find_data_file("reference", reference, sizeof reference) ? reference : "(not found)");
    int usable = 0;
    for (int b = 0; gm_backends[b]; b++) {
        const gm_backend *be = gm_backends[b];
        char why[256] = "";
        int count = 0;
        if (be->probe(&count, why, sizeof why) != GM_OK || count == 0) {
            printf("%s: unavailable: %s\n", be->name, why);
            continue;
        }
        printf("%s: %d device%s\n", be->name, count, count == 1 ? "" : "s");
        for (int i = 0; i < count; i++) {
            gm_device_info info;
            gm_error e = {0};
            if (be->describe(i, &info, &e) != GM_OK) {
                printf("  %s:%d  (cannot describe: %s)\n", be->name, i, e.msg);
                continue;
            }
            print_device(be, i, &info);
            usable++;
        }
    }
#ifndef GM_HAVE_CUDA
    printf("cuda: not built (nvcc was not found when gpumem was built)\n");
#endif
    return usable ? 0 : 3;
}
