/*
 * A profile (share/profiles/NAME.ini) found as --profile finds it, and its
 * entries read as text for the help that shows them beside each default.
 * Applying a profile's entries to a command's options is options.c's
 * gm_profile_load.
 */
#ifndef GM_PROFILE_TEXT_H
#define GM_PROFILE_TEXT_H

#include <stdbool.h>
#include <stddef.h>

/* The path of profile `name` into path (len bytes): a name holding '/' is
 * the path itself, else NAME.ini in $GPUMEM_PROFILE_DIR or in the data
 * folders' profiles/. Returns whether a readable file is there. */
bool gm_profile_find(const char *name, char *path, size_t len);

/* A profile's entries as text, for help. */
typedef struct {
    char name[256];             /* the profile, as --profile names it */
    int n;
    struct {
        char section[32], name[40], value[160];
    } entry[128];
    char said[800];             /* gm_profile_says's last answer */
} gm_profile_text;

/* Reads the entries of profile `name` (found as --profile finds it) into
 * t. Returns 0, or -1 with t->n = 0 when it cannot be read. */
int gm_profile_text_read(const char *name, gm_profile_text *t);

/* What profile t sets for option `name`, as help shows it ("1:16:x4,
 * [swap] 1": the [bench] section's value, then each other section's);
 * NULL where it sets nothing. */
const char *gm_profile_says(gm_profile_text *t, const char *name);

#endif
