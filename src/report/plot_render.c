/* Running gnuplot on a plot script (report/plot_data.h: gm_plot_render),
 * and where its data files go (gm_plot_data_base). */
#include "report/plot_data.h"

#include "lib/datafile.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int gm_plot_data_base(const char *dir, const char *kind, char *base, size_t len, char *err, size_t err_len)
{
    if ((size_t)snprintf(base, len, "%s/%s", dir, GM_PLOT_DATA_FOLDER) >= len) {
        snprintf(err, err_len, "%.300s: path too long", dir);
        return -1;
    }
    if (mkdir(base, 0755) != 0 && errno != EEXIST) {
        snprintf(err, err_len, "cannot create %.300s: %s", base, strerror(errno));
        return -1;
    }
    if ((size_t)snprintf(base, len, "%s/%s/%s", dir, GM_PLOT_DATA_FOLDER, kind) >= len) {
        snprintf(err, err_len, "%.300s: path too long", dir);
        return -1;
    }
    return 0;
}

int gm_plot_render(const gm_plot_set *set, const char *dir, char *err, size_t len)
{
    char panels[1024] = "", cmd[32768], plotdir[4200], rel[128], script[4200], base[4300];
    snprintf(rel, sizeof rel, "plots/%s.gp", set->kind);
    if (!gm_find_data_file(rel, script, sizeof script)) {
        snprintf(err, len, "%s not found (next to the binary or in the working folder)", rel);
        return -1;
    }
    if (gm_plot_data_base(dir, set->kind, base, sizeof base, err, len) != 0)
        return -1;
    snprintf(plotdir, sizeof plotdir, "%s", script);
    char *slash = strrchr(plotdir, '/');
    if (slash)
        *slash = '\0';
    for (int i = 0; i < set->n_panels; i++)
        snprintf(panels + strlen(panels), sizeof panels - strlen(panels), "%s%s", i ? " " : "", set->panels[i]);
    static const char *const terms[] = {"png", "svg"};
    for (int t = 0; t < 2; t++) {
        snprintf(cmd, sizeof cmd,
                 "gnuplot -e \"term='%s'; out='%s/%s.%s'; base='%s'; panels='%s'; npanels=%d; plotdir='%s'; %s\" '%s' "
                 "2>'%s.%s.log'",
                 terms[t], dir, set->kind, terms[t], base, panels, set->n_panels, plotdir, set->vars, script, base,
                 terms[t]);
        int rc = system(cmd);
        if (rc != 0) {
            snprintf(err, len, "gnuplot failed on %.200s (%s): see %.300s.%s.log", script, terms[t], base, terms[t]);
            return -1;
        }
    }
    return 0;
}
