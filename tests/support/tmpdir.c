/* tmpdir.c - scratch directories for tests (tmpdir.h). */
#include "tmpdir.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void pqt_rm_rf(const char *path)
{
    struct stat st;
    if (lstat(path, &st) != 0)
        return;
    if (!S_ISDIR(st.st_mode)) {
        unlink(path);
        return;
    }
    DIR *d = opendir(path);
    if (d != NULL) {
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
                continue;
            char sub[4096];
            if (snprintf(sub, sizeof sub, "%s/%s", path, e->d_name) < (int)sizeof sub)
                pqt_rm_rf(sub);
        }
        closedir(d);
    }
    rmdir(path);
}

int pqt_write_file(const char *dir, const char *name, const char *text, unsigned mode)
{
    char path[4096];
    if (snprintf(path, sizeof path, "%s/%s", dir, name) >= (int)sizeof path)
        return -1;
    FILE *f = fopen(path, "w");
    if (f == NULL)
        return -1;
    int rc = fputs(text, f) < 0 ? -1 : 0;
    rc = fclose(f) != 0 ? -1 : rc;
    return rc == 0 ? chmod(path, (mode_t)mode) : -1;
}

uint8_t *pqt_read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    uint8_t *p = NULL;
    long n = -1;
    if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0) {
        p = malloc(n > 0 ? (size_t)n : 1);
        if (p != NULL && fread(p, 1, (size_t)n, f) != (size_t)n) {
            free(p);
            p = NULL;
            errno = EIO;
        }
    }
    fclose(f);
    if (p != NULL)
        *len = (size_t)n;
    return p;
}

const char *pqt_tool_outdir(int argc, char **argv, const char *tool)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s OUTDIR\n", tool);
        return NULL;
    }
    const char *dir = argv[1];
    if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
        fprintf(stderr, "%s: cannot create %s: %s\n", tool, dir, strerror(errno));
        return NULL;
    }
    return dir;
}
