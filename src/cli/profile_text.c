/* Finding a profile and reading its entries as text (profile_text.h). */
#include "cli/profile_text.h"

#include "lib/datafile.h"

#include <ini.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

bool gm_profile_find(const char *name, char *path, size_t len)
{
    if (strchr(name, '/')) {
        snprintf(path, len, "%s", name);
        return access(path, R_OK) == 0;
    }
    const char *env = getenv("GPUMEM_PROFILE_DIR");
    if (env && (size_t)snprintf(path, len, "%s/%s.ini", env, name) < len && access(path, R_OK) == 0)
        return true;
    char rel[300];
    snprintf(rel, sizeof rel, "profiles/%s.ini", name);
    return gm_find_data_file(rel, path, len);
}

static int on_text_entry(void *user, const char *section, const char *name, const char *value)
{
    gm_profile_text *t = user;
    if (t->n < (int)(sizeof t->entry / sizeof t->entry[0])) {
        snprintf(t->entry[t->n].section, sizeof t->entry[t->n].section, "%s", section);
        snprintf(t->entry[t->n].name, sizeof t->entry[t->n].name, "%s", name);
        snprintf(t->entry[t->n].value, sizeof t->entry[t->n].value, "%s", value);
        t->n++;
    }
    return 1;
}

int gm_profile_text_read(const char *name, gm_profile_text *t)
{
    char path[4200];
    t->n = 0;
    snprintf(t->name, sizeof t->name, "%s", name);
    if (!gm_profile_find(name, path, sizeof path) || ini_parse(path, on_text_entry, t) != 0) {
        t->n = 0;
        return -1;
    }
    return 0;
}

const char *gm_profile_says(gm_profile_text *t, const char *name)
{
    size_t used = 0;
    /* [bench] first, then the suites' sections in the file's order. */
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < t->n; i++) {
            bool bench = strcmp(t->entry[i].section, "bench") == 0;
            if (strcmp(t->entry[i].name, name) != 0 || bench != (pass == 0) || used >= sizeof t->said)
                continue;
            used += (size_t)snprintf(t->said + used, sizeof t->said - used, "%s%s%s%s%s", used ? ", " : "",
                                     bench ? "" : "[", bench ? "" : t->entry[i].section, bench ? "" : "] ",
                                     t->entry[i].value);
        }
    return used ? t->said : NULL;
}
