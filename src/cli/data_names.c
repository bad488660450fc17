/* The names the data folders hold, as option values (data_names.h). */
#include "cli/data_names.h"

#include "lib/datafile.h"

#define MAX_DATA_NAMES 128

static int data_names(const char *sub, const char *ext, char (*store)[GM_DATA_NAME_LEN], const char **names, int max)
{
    int n = gm_data_file_names(sub, ext, store, max < MAX_DATA_NAMES ? max : MAX_DATA_NAMES);
    for (int i = 0; i < n; i++)
        names[i] = store[i];
    return n;
}

int gm_model_preset_names(const char **names, int max)
{
    static char store[MAX_DATA_NAMES][GM_DATA_NAME_LEN];
    return data_names("models", ".json", store, names, max);
}

int gm_profile_names(const char **names, int max)
{
    static char store[MAX_DATA_NAMES][GM_DATA_NAME_LEN];
    return data_names("profiles", ".ini", store, names, max);
}
