#include "datafile.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

bool gm_find_data_file(const char *relpath, char *out, size_t len)
{
    char exe_dir[PATH_MAX] = "";
    ssize_t n = readlink("/proc/self/exe", exe_dir, sizeof exe_dir - 1);
    if (n > 0) {
        exe_dir[n] = '\0';
        char *slash = strrchr(exe_dir, '/');
        if (slash)
            *slash = '\0';
    }
    const char *dirs[2] = {n > 0 ? exe_dir : NULL, "."};
    for (int i = 0; i < 2; i++) {
        if (!dirs[i])
            continue;
        if ((size_t)snprintf(out, len, "%s/%s", dirs[i], relpath) < len && access(out, R_OK) == 0)
            return true;
    }
    return false;
}
