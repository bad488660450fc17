/*
 * A fleet's points (fleet.h): found by their key through a hash table of
 * the joined key fields (open addressing, at most half full), so each row
 * read costs one lookup however many run folders there are; and the
 * fleet's life cycle.
 */
#include "analysis/fleet.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void gm_fleet_init(gm_fleet *f) { memset(f, 0, sizeof *f); }

void gm_fleet_release(gm_fleet *f)
{
    for (int i = 0; i < f->n_gpus; i++)
        free(f->gpus[i].dir);
    for (int i = 0; i < f->n_points; i++) {
        free(f->points[i].key[0]);
        free(f->points[i].unit);
        free(f->points[i].obs);
    }
    free(f->gpus);
    free(f->points);
    free(f->slots);
    memset(f, 0, sizeof *f);
}

static uint64_t hash_key(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

/* Rebuilds the hash table at twice the size. */
static int grow_slots(gm_fleet *f)
{
    size_t n = f->n_slots ? 2 * f->n_slots : 1024;
    int *s = calloc(n, sizeof *s);
    if (!s)
        return -1;
    for (int i = 0; i < f->n_points; i++) {
        char joined[4096];
        gm_point_key_join((const char *const *)f->points[i].key, joined, sizeof joined);
        size_t at = hash_key(joined) & (n - 1);
        while (s[at])
            at = (at + 1) & (n - 1);
        s[at] = i + 1;
    }
    free(f->slots);
    f->slots = s;
    f->n_slots = n;
    return 0;
}

static bool same_key(const gm_fleet_point *p, char **fields)
{
    for (int k = 0; k < GM_POINT_KEY_FIELDS; k++)
        if (strcmp(p->key[k], fields[k]) != 0)
            return false;
    return true;
}

gm_fleet_point *gm_fleet_point_find(gm_fleet *f, char **fields, const char *unit)
{
    if (unit && (size_t)(f->n_points + 1) * 2 > f->n_slots && grow_slots(f) != 0)
        return NULL;
    if (!f->n_slots)
        return NULL;
    char joined[4096];
    if (gm_point_key_join((const char *const *)fields, joined, sizeof joined) != 0)
        return NULL;    /* no row gpumem writes has a key this long */
    size_t at = hash_key(joined) & (f->n_slots - 1);
    while (f->slots[at]) {
        gm_fleet_point *p = &f->points[f->slots[at] - 1];
        if (same_key(p, fields))
            return p;
        at = (at + 1) & (f->n_slots - 1);
    }
    if (!unit)
        return NULL;
    if (f->n_points == f->cap_points) {
        int cap = f->cap_points ? 2 * f->cap_points : 256;
        gm_fleet_point *np = realloc(f->points, (size_t)cap * sizeof *np);
        if (!np)
            return NULL;
        f->points = np;
        f->cap_points = cap;
    }
    gm_fleet_point *p = &f->points[f->n_points];
    memset(p, 0, sizeof *p);
    char *copy = strdup(joined);
    p->unit = strdup(unit);
    if (!copy || !p->unit) {
        free(copy);
        free(p->unit);
        return NULL;
    }
    char *s = copy;
    for (int k = 0; k < GM_POINT_KEY_FIELDS; k++) {
        p->key[k] = s;
        s = strchr(s, GM_POINT_KEY_SEP);
        *s++ = '\0';
    }
    f->slots[at] = ++f->n_points;
    return p;
}

