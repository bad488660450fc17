#include "run/journal.h"

#include "run/meta.h"
#include "run/results.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define JOURNAL_FORMAT 1

static void journal_path(const char *dir, char *path, size_t len) { snprintf(path, len, "%s/points.journal", dir); }

/* One write(2) of the whole line, then fsync. */
static int append(int fd, const char *line)
{
    size_t len = strlen(line);
    ssize_t n;
    do
        n = write(fd, line, len);
    while (n < 0 && errno == EINTR);
    if (n >= 0 && (size_t)n != len)
        errno = ENOSPC;
    return n >= 0 && (size_t)n == len && fsync(fd) == 0 ? 0 : -1;
}

int gm_journal_create(const char *dir, off_t results_len, off_t samples_len, char *err, size_t err_len)
{
    /* Written aside and renamed: the journal exists only with its whole
     * first line. */
    char path[4200], tmp[4300], line[256];
    journal_path(dir, path, sizeof path);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    if (access(path, F_OK) == 0) {
        snprintf(err, err_len, "cannot create %s: %s", path, strerror(EEXIST));
        return -1;
    }
    int fd = open(tmp, O_WRONLY | O_APPEND | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (fd < 0) {
        snprintf(err, err_len, "cannot create %s: %s", tmp, strerror(errno));
        return -1;
    }
    snprintf(line, sizeof line, "gpumem-journal %d %d %jd %jd %s\n", JOURNAL_FORMAT, GM_SCHEMA_VERSION,
             (intmax_t)results_len, (intmax_t)samples_len, gm_suite_version());
    if (append(fd, line) != 0 || rename(tmp, path) != 0) {
        snprintf(err, err_len, "cannot write %s: %s", path, strerror(errno));
        close(fd);
        unlink(tmp);
        return -1;
    }
    return fd;
}

int gm_journal_point(int fd, int index, off_t results_len, off_t samples_len, int rows)
{
    char line[128];
    snprintf(line, sizeof line, "point %d %jd %jd %d\n", index, (intmax_t)results_len, (intmax_t)samples_len, rows);
    return append(fd, line);
}

int gm_journal_end(int fd, const char *status)
{
    char line[64];
    snprintf(line, sizeof line, "end %.40s\n", status);
    return append(fd, line);
}

/* Reads the whole file into a malloc'd, NUL-terminated buffer. */
static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *buf = NULL;
    size_t cap = 0;
    *len = 0;
    for (;;) {
        if (*len + 4097 > cap) {
            char *grown = realloc(buf, cap = cap * 2 + 8192);
            if (!grown) {
                free(buf);
                fclose(f);
                errno = ENOMEM;
                return NULL;
            }
            buf = grown;
        }
        size_t n = fread(buf + *len, 1, 4096, f);
        *len += n;
        if (n < 4096)
            break;
    }
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        free(buf);
        errno = EIO;
        return NULL;
    }
    buf[*len] = '\0';
    return buf;
}

static int corrupt(char *err, size_t err_len, const char *path, int line_no, const char *why)
{
    snprintf(err, err_len, "%s is corrupt (line %d: %s)", path, line_no, why);
    return -1;
}

/* Parses the journal text; returns 0 or -1 with err. */
static int parse(const char *path, char *text, gm_journal_state *st, char *err, size_t err_len)
{
    char *save = NULL, *line;
    int line_no = 0;
    memset(st, 0, sizeof *st);
    for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        line_no++;
        intmax_t r, s;
        int a, b, consumed = 0;
        char word[48];
        if (line_no == 1) {
            if (sscanf(line, "gpumem-journal %d %d %jd %jd %n", &a, &b, &r, &s, &consumed) != 4 || !consumed)
                return corrupt(err, err_len, path, 1, "not a gpumem journal");
            if (a != JOURNAL_FORMAT || b != GM_SCHEMA_VERSION || strcmp(line + consumed, gm_suite_version()) != 0) {
                snprintf(err, err_len, "%s was written by another version (journal %d, schema %d, suite %s); "
                         "this is journal %d, schema %d, suite %s", path, a, b, line + consumed, JOURNAL_FORMAT,
                         GM_SCHEMA_VERSION, gm_suite_version());
                return -1;
            }
            st->results_len = (off_t)r;
            st->samples_len = (off_t)s;
        } else if (st->ended) {
            return corrupt(err, err_len, path, line_no, "a line after the end");
        } else if (sscanf(line, "point %d %jd %jd %d%n", &a, &r, &s, &b, &consumed) == 4 && !line[consumed]) {
            if (a != st->points || r < st->results_len || s < st->samples_len || b < st->rows)
                return corrupt(err, err_len, path, line_no, "points out of order");
            st->points++;
            st->results_len = (off_t)r;
            st->samples_len = (off_t)s;
            st->rows = b;
        } else if (sscanf(line, "end %40s%n", word, &consumed) == 1 && !line[consumed]) {
            st->ended = true;
            snprintf(st->end_status, sizeof st->end_status, "%s", word);
        } else {
            return corrupt(err, err_len, path, line_no, "unreadable");
        }
    }
    if (line_no == 0)
        return corrupt(err, err_len, path, 1, "empty");
    return 0;
}

/* The CSV's size must reach the journal's length for it. */
static int check_length(const char *dir, const char *name, off_t want, char *err, size_t err_len)
{
    char path[4200];
    struct stat sb;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    if (stat(path, &sb) != 0) {
        snprintf(err, err_len, "%s: %s", path, strerror(errno));
        return -1;
    }
    if (sb.st_size < want) {
        snprintf(err, err_len, "%s is shorter (%jd bytes) than its journal says (%jd)", path, (intmax_t)sb.st_size,
                 (intmax_t)want);
        return -1;
    }
    return 0;
}

int gm_journal_open(const char *dir, gm_journal_state *st, char *err, size_t err_len)
{
    char path[4200];
    journal_path(dir, path, sizeof path);
    size_t len = 0;
    char *text = slurp(path, &len);
    if (!text) {
        if (errno == ENOENT)
            snprintf(err, err_len, "%s is not a gpumem bench run (it has no points.journal)", dir);
        else
            snprintf(err, err_len, "cannot read %s: %s", path, strerror(errno));
        return -1;
    }
    /* A last line without its newline: a point that did not finish. */
    char *last_nl = strrchr(text, '\n');
    size_t whole = last_nl ? (size_t)(last_nl - text) + 1 : 0;
    text[whole] = '\0';
    if (strlen(text) != whole) {
        free(text);
        return corrupt(err, err_len, path, 0, "a NUL byte");
    }
    int rc = parse(path, text, st, err, err_len);
    free(text);
    if (rc != 0 || check_length(dir, "results.csv", st->results_len, err, err_len) != 0 ||
        check_length(dir, "samples.csv", st->samples_len, err, err_len) != 0)
        return -1;
    int fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
    if (fd < 0 || (whole < len && ftruncate(fd, (off_t)whole) != 0)) {
        snprintf(err, err_len, "cannot write %s: %s", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    return fd;
}

int gm_journal_save_args(const char *dir, int argc, char **argv, char *err, size_t err_len)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/command", dir);
    FILE *f = fopen(path, "wb");
    int bad = !f;
    for (int i = 0; i < argc && !bad; i++)
        bad = fwrite(argv[i], 1, strlen(argv[i]) + 1, f) != strlen(argv[i]) + 1;
    if (f) {
        bad |= fflush(f) != 0 || fsync(fileno(f)) != 0;
        bad |= fclose(f) != 0;
    }
    if (bad) {
        snprintf(err, err_len, "cannot write %s: %s", path, strerror(errno));
        return -1;
    }
    return 0;
}

char **gm_journal_load_args(const char *dir, int *argc, char *err, size_t err_len)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/command", dir);
    size_t len = 0;
    char *text = slurp(path, &len);
    if (!text || len == 0 || text[len - 1] != '\0') {
        snprintf(err, err_len, "cannot read the run's options from %s: %s", path,
                 text ? "not a list of arguments" : strerror(errno));
        free(text);
        return NULL;
    }
    int n = 0;
    for (size_t i = 0; i < len; i++)
        n += text[i] == '\0';
    char **argv = calloc((size_t)n + 2, sizeof *argv);
    if (!argv) {
        free(text);
        snprintf(err, err_len, "out of memory");
        return NULL;
    }
    /* argv[n + 1] keeps the buffer for gm_journal_free_args. */
    char *p = text;
    for (int i = 0; i < n; i++, p += strlen(p) + 1)
        argv[i] = p;
    argv[n + 1] = text;
    *argc = n;
    return argv;
}

void gm_journal_free_args(char **argv)
{
    if (!argv)
        return;
    int n = 0;
    while (argv[n])
        n++;
    free(argv[n + 1]);
    free(argv);
}
