/*
 * Fuzz target: what `gpumem fleet` reads from a folder of run folders
 * (src/fleet_load.c, fleet_samples.c), judged and printed. Two run folders
 * of one small real run; the first byte picks which file of the second
 * (results.csv, samples.csv or meta.json) the rest of the input replaces.
 */
#include "fuzz_input.h"
#include "analysis/fleet.h"
#include "analysis/fleet_output.h"

#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char results[] =
    "schema_version,run_id,backend,device,device_id,suite,workload,variant,pattern,precision,batch,seq_len,bytes,"
    "model_bytes,measured_bytes,metric,unit,value,min,max,stdev,reps,status,note\n"
    "2,r,opencl,cpu,opencl:1:0,stream,copy,chunked,per-tensor,fp32,,,65536,196608,,bandwidth,GB/s,1.37,1.21,1.43,0.11,"
    "3,ok,\n"
    "2,r,opencl,cpu,opencl:1:0,stream,copy,chunked,per-tensor,fp32,,,65536,196608,,time,ms,0.095,0.091,0.107,0.008,3,"
    "ok,\n";
static const char samples[] =
    "schema_version,run_id,backend,device,device_id,suite,workload,variant,pattern,precision,batch,seq_len,bytes,"
    "model_bytes,measured_bytes,metric,unit,rep,value\n"
    "2,r,opencl,cpu,opencl:1:0,stream,copy,chunked,per-tensor,fp32,,,65536,196608,,time,ms,0,0.091\n"
    "2,r,opencl,cpu,opencl:1:0,stream,copy,chunked,per-tensor,fp32,,,65536,196608,,time,ms,1,0.095\n"
    "2,r,opencl,cpu,opencl:1:0,stream,copy,chunked,per-tensor,fp32,,,65536,196608,,time,ms,2,0.107\n";
static const char meta[] = "{\"host\": {\"hostname\": \"h\"}, \"device\": {\"name\": \"cpu\", \"uuid\": \"opencl:1:0\"}}\n";

static int put(const char *dir, const char *name, const void *bytes, size_t n)
{
    char path[160];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    size_t w = fwrite(bytes, 1, n, f);
    return fclose(f) != 0 || w != n ? -1 : 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    static char root[64], a[96], b[96];
    if (!root[0]) {
        snprintf(root, sizeof root, "/tmp/gm-fuzz-fleet-%ld", (long)getpid());
        snprintf(a, sizeof a, "%s/a", root);
        snprintf(b, sizeof b, "%s/b", root);
        mkdir(root, 0700);
        mkdir(a, 0700);
        mkdir(b, 0700);
        put(a, "results.csv", results, sizeof results - 1);
        put(a, "samples.csv", samples, sizeof samples - 1);
        put(a, "meta.json", meta, sizeof meta - 1);
    }
    static const char *const names[] = {"results.csv", "samples.csv", "meta.json"};
    const char *const fixed[] = {results, samples, meta};
    const size_t fixed_len[] = {sizeof results - 1, sizeof samples - 1, sizeof meta - 1};
    int which = data[0] % 3;
    for (int i = 0; i < 3; i++)
        if (i == which ? put(b, names[i], data + 1, size - 1) : put(b, names[i], fixed[i], fixed_len[i]))
            return 0;
    gm_fleet f;
    char err[4600];
    gm_fleet_init(&f);
    if (gm_fleet_load(&f, root, err, sizeof err) == 0 && gm_fleet_judge(&f, 4.0) >= 0) {
        FILE *sink = fopen("/dev/null", "w");
        if (sink) {
            gm_fleet_print(&f, root, 4.0, GM_FLEET_CSV, NULL, sink);
            fclose(sink);
        }
    }
    gm_fleet_release(&f);
    return 0;
}
