/* The option table's generic value parsers (option_table.h): names out of
 * an option's list of allowed values. */
#include "cli/option_table.h"

#include <stdio.h>
#include <string.h>

#define MAX_VALUES GM_OPTION_MAX_VALUES

void gm_option_allowed(const gm_option *opt, const char *sep, char *buf, size_t len)
{
    const char *names[MAX_VALUES];
    int n = opt->values ? opt->values(names, MAX_VALUES) : 0;
    buf[0] = '\0';
    for (int i = 0; i < n; i++) {
        size_t used = strlen(buf);
        snprintf(buf + used, len - used, "%s%s", i ? sep : "", names[i]);
    }
}

/* Parses a comma-separated list of opt's allowed names into a bit mask. */
int gm_option_parse_names(const gm_option *opt, const char *value, unsigned *mask, char *err, size_t err_len)
{
    const char *table[MAX_VALUES];
    int n = opt->values(table, MAX_VALUES);
    char buf[512], allowed[256];
    gm_option_allowed(opt, ",", allowed, sizeof allowed);
    if (strlen(value) >= sizeof buf || !*value) {
        snprintf(err, err_len, "--%s '%.100s': expected a list of %s", opt->name, value, allowed);
        return -1;
    }
    strcpy(buf, value);
    unsigned m = 0;
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        int found = -1;
        for (int i = 0; i < n; i++)
            if (strcmp(tok, table[i]) == 0)
                found = i;
        if (found < 0) {
            snprintf(err, err_len, "--%s: unknown value '%s' (allowed: %s)", opt->name, tok, allowed);
            return -1;
        }
        m |= 1u << found;
    }
    if (!m) {                     /* only commas: no name at all */
        snprintf(err, err_len, "--%s '%.100s': expected a list of %s", opt->name, value, allowed);
        return -1;
    }
    *mask = m;
    return 0;
}

/* One of opt's allowed names: its index, or -1 with err. */
int gm_option_parse_enum(const gm_option *opt, const char *value, char *err, size_t err_len)
{
    const char *table[MAX_VALUES];
    int n = opt->values(table, MAX_VALUES);
    for (int i = 0; i < n; i++)
        if (strcmp(value, table[i]) == 0)
            return i;
    char allowed[256];
    gm_option_allowed(opt, ", ", allowed, sizeof allowed);
    snprintf(err, err_len, "--%s '%.100s': expected one of %s", opt->name, value, allowed);
    return -1;
}
