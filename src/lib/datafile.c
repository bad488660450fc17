#include "lib/datafile.h"

#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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

/* Whether relpath is folder `top` or lies in it. */
static bool under(const char *relpath, const char *top)
{
    size_t n = strlen(top);
    return strncmp(relpath, top, n) == 0 && (relpath[n] == '/' || relpath[n] == '\0');
}

/* In a source tree, plot scripts sit in plots/, reference runs in
 * results/reference/ and the rest in share/. */
static bool in_source_tree(char *out, size_t len, const char *root, const char *relpath)
{
    char probe[PATH_MAX];
    if (!readable(probe, sizeof probe, root, "", "Makefile"))
        return false;
    const char *sub = under(relpath, "plots") ? "" : under(relpath, "reference") ? "/results" : "/share";
    return readable(out, len, root, sub, relpath);
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

static int by_name(const void *a, const void *b)
{
    return strcmp((const char *)a, (const char *)b);
}

int gm_data_file_names(const char *sub, const char *ext, char (*names)[GM_DATA_NAME_LEN], int max)
{
    char folder[PATH_MAX];
    if (!gm_find_data_file(sub, folder, sizeof folder))
        return 0;
    DIR *d = opendir(folder);
    if (!d)
        return 0;
    int n = 0;
    size_t ext_len = ext ? strlen(ext) : 0;
    for (struct dirent *e; n < max && (e = readdir(d));) {
        size_t len = strlen(e->d_name);
        char path[PATH_MAX];
        struct stat st;
        if (e->d_name[0] == '.' || len <= ext_len || len - ext_len >= GM_DATA_NAME_LEN)
            continue;
        if (ext && strcmp(e->d_name + len - ext_len, ext) != 0)
            continue;
        if (!ext && ((size_t)snprintf(path, sizeof path, "%s/%s", folder, e->d_name) >= sizeof path
                     || stat(path, &st) != 0 || !S_ISDIR(st.st_mode)))
            continue;
        snprintf(names[n++], GM_DATA_NAME_LEN, "%.*s", (int)(len - ext_len), e->d_name);
    }
    closedir(d);
    qsort(names, (size_t)n, sizeof names[0], by_name);
    return n;
}
