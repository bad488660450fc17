#include "lib/datafile.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef GM_DATADIR
#define GM_DATADIR "/usr/local/share/gpumem"
#endif

/* The binary's folder into dir; false if /proc/self/exe cannot be read. */
static bool exe_dir(char *dir, size_t len)
{
    ssize_t n = readlink("/proc/self/exe", dir, len - 1);
    if (n <= 0)
        return false;
    dir[n] = '\0';
    char *slash = strrchr(dir, '/');
    if (slash)
        *slash = '\0';
    return true;
}

static bool readable(char *out, size_t len, const char *dir, const char *sub, const char *relpath)
{
    if ((size_t)snprintf(out, len, "%s%s/%s", dir, sub, relpath) >= len)
        return false;
    return access(out, R_OK) == 0;
}

/* In a source tree, plot scripts sit in plots/ and the rest in share/. */
static bool in_source_tree(char *out, size_t len, const char *root, const char *relpath)
{
    char probe[PATH_MAX];
    if (!readable(probe, sizeof probe, root, "", "Makefile"))
        return false;
    bool plot = strncmp(relpath, "plots/", 6) == 0;
    return readable(out, len, root, plot ? "" : "/share", relpath);
}

bool gm_find_data_file(const char *relpath, char *out, size_t len)
{
    const char *env = getenv("GPUMEM_DATA_DIR");
    if (env && *env && readable(out, len, env, "", relpath))
        return true;
    char dir[PATH_MAX];
    bool have_exe = exe_dir(dir, sizeof dir);
    if (have_exe && in_source_tree(out, len, dir, relpath))
        return true;
    if (in_source_tree(out, len, ".", relpath))
        return true;
    if (readable(out, len, GM_DATADIR, "", relpath))
        return true;
    return have_exe && readable(out, len, dir, "/../share/gpumem", relpath);
}
