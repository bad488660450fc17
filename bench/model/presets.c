/*
 * Finding the model a --model names (bench/model/arch.h, gm_arch_load): a
 * preset of share/models/ (NAME.json, a config.json as its family
 * publishes it, with a "_source" field saying where from), a config.json
 * file, or a Hugging Face model folder holding one. The names of the
 * retired share/models.ini say which preset replaces them.
 */
#include "bench/model/arch.h"

#include "lib/datafile.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The shapes models.ini held, and the presets of the same shape. */
static const struct {
    const char *name, *preset;
} retired[] = {
    {"gpt-125m", "gpt2"},
    {"llama-1b", "llama-3.2-1b"},
    {"llama-7b", "llama-2-7b"},
};

void gm_arch_presets(char *buf, size_t len)
{
    char names[128][GM_DATA_NAME_LEN];
    int n = gm_data_file_names("models", ".json", names, 128);
    buf[0] = '\0';
    for (int i = 0, used = 0; i < n && (size_t)used < len; i++)
        used += snprintf(buf + used, len - (size_t)used, "%s%s", i ? ", " : "", names[i]);
}

static bool is_folder(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* The text of file `path` (at most 64MiB), NUL-terminated, into *out (to
 * free). Returns 0, or 2 with err. */
static int read_text(const char *path, char **out, char *err, size_t err_len)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, err_len, "%s: cannot read: %s", path, strerror(errno));
        return 2;
    }
    char *text = NULL;
    size_t cap = 0, len = 0;
    for (;;) {
        if (len + 4096 + 1 > cap) {
            bool too_large = cap > (64u << 20);
            char *p = too_large ? NULL : realloc(text, cap * 2 + 8192);
            if (!p) {
                fclose(f);
                free(text);
                snprintf(err, err_len, "%s: %s", path, too_large ? "larger than 64MiB, not a config.json"
                                                                 : "out of host memory");
                return 2;
            }
            text = p;
            cap = cap * 2 + 8192;
        }
        size_t got = fread(text + len, 1, 4096, f);
        len += got;
        if (got < 4096)
            break;
    }
    fclose(f);
    text[len] = '\0';
    *out = text;
    return 0;
}

/* Where `model` is read from into path: the preset's file, the
 * config.json given, or the one in the folder given. Sets *preset when a
 * preset. Returns 0, or 2 with err. */
static int locate(const char *model, char *path, size_t len, bool *preset, char *err, size_t err_len)
{
    size_t n = strlen(model);
    bool looks_like_path = strchr(model, '/') || (n > 5 && strcmp(model + n - 5, ".json") == 0);
    char rel[300];
    *preset = false;
    if (!looks_like_path && n < 200) {
        snprintf(rel, sizeof rel, "models/%s.json", model);
        if (gm_find_data_file(rel, path, len)) {
            *preset = true;
            return 0;
        }
        for (size_t i = 0; i < sizeof retired / sizeof retired[0]; i++)
            if (strcmp(model, retired[i].name) == 0) {
                snprintf(err, err_len, "--model '%s': the shapes of models.ini are retired; use the preset %s "
                         "(share/models/%s.json, the whole model)", model, retired[i].preset, retired[i].preset);
                return 2;
            }
    }
    if (is_folder(model)) {
        snprintf(path, len, "%s%sconfig.json", model, model[n - 1] == '/' ? "" : "/");
        if (access(path, R_OK) == 0)
            return 0;
        snprintf(err, err_len, "--model '%.200s': a folder without a readable config.json", model);
        return 2;
    }
    if (looks_like_path) {
        snprintf(path, len, "%s", model);
        return 0;
    }
    char presets[1200];
    gm_arch_presets(presets, sizeof presets);
    snprintf(err, err_len, "--model '%.100s': no such preset (presets: %s) and no such model folder or "
             "config.json", model, presets[0] ? presets : "none found: gpumem info lists the data folders");
    return 2;
}

int gm_arch_load(const char *model, gm_arch *out, char *err, size_t err_len)
{
    char path[4200], *text;
    bool preset;
    int rc = locate(model, path, sizeof path, &preset, err, err_len);
    if (rc == 0)
        rc = read_text(path, &text, err, err_len);
    if (rc != 0)
        return rc;
    rc = gm_arch_parse(path, text, out, err, err_len);
    free(text);
    if (rc == 0 && preset)
        snprintf(out->name, sizeof out->name, "%s", model);
    return rc;
}
