/* fuzz_spool.c - libFuzzer target for the spool's open-time repair and
 * replay (daemon/durability/spool*.c).
 *
 * The input becomes one or two segment files (and optionally a
 * checkpoint) in a scratch directory; then sp_open, a full replay, a few
 * appends, a flush, another replay and a reopen. The expectations come
 * from an independent parse of the input bytes (its own bitwise CRC32C,
 * not the library's tables):
 *   - a segment whose valid header names a newer version fails sp_open
 *     with PQ_EINVAL; otherwise (without a raw checkpoint) it succeeds;
 *   - every record returned passes the independent CRC over its own raw
 *     bytes, and seqs strictly increase;
 *   - without a checkpoint: the records returned are exactly the intact
 *     records (overlaps skipped), the last segment holding one is cut to
 *     its intact prefix, later ones are removed, earlier ones untouched;
 *     bytes_cut is exactly what went, and a cut is reported; a damaged
 *     earlier segment makes exactly one PQ_EPARSE;
 *   - appended records replay byte for byte, and a reopen cuts nothing.
 *
 * Input layout:
 *   byte 0   bits 0-1 checkpoint: 1 valid (structured), 2 raw bytes, else none
 *            bit 2    split the segment bytes into two segment files
 *            bit 3    the pending intent's final file exists
 *            bits 4-7 segment_bytes = 64 * value (0: the default)
 *   mode 1:  committed (1 + byte % 32), intent (0: none, else end = committed + byte % 16)
 *   mode 2:  length byte, then that many checkpoint bytes
 *   split:   le16 offset of the second segment in the segment bytes
 *   1 byte   records to append after sp_open (% 8)
 *   rest     the segment bytes (a segment is named for its header's first seq)
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "spool.h"
#include "spool_int.h"

#define CHECK(cond) do { if (!(cond)) { \
        fprintf(stderr, "fuzz_spool: check failed: %s (line %d)\n", #cond, __LINE__); \
        abort(); } } while (0)

static char root[256], dir[300], final_path[300];

static void scratch_clear(void);

static void scratch_remove(void)
{
    scratch_clear();
    rmdir(root);
}

/* One scratch directory per process (tmpfs when there is one: the spool
 * fsyncs), removed at exit. */
static void scratch_init(void)
{
    if (root[0])
        return;
    atexit(scratch_remove);
    const char *base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    snprintf(root, sizeof root, "%s/fuzz_spool_XXXXXX", base);
    CHECK(mkdtemp(root) != NULL);
    snprintf(dir, sizeof dir, "%s/spool", root);
    snprintf(final_path, sizeof final_path, "%s/final.parquet", root);
}

static void scratch_clear(void)
{
    DIR *d = opendir(dir);
    if (d != NULL) {
        struct dirent *e;
        char p[600];
        while ((e = readdir(d)) != NULL) {
            if (e->d_name[0] == '.')
                continue;
            snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
            unlink(p);
        }
        closedir(d);
        rmdir(dir);
    }
    unlink(final_path);
}

/* ---- the independent reference ----------------------------------------------- */

static uint32_t ref_crc(uint32_t crc, const uint8_t *p, size_t n)
{
    crc = ~crc;
    while (n--) {
        crc ^= *p++;
        for (int k = 0; k < 8; k++)
            crc = (crc >> 1) ^ (0x82F63B78u & (0u - (crc & 1)));
    }
    return ~crc;
}

static uint64_t le(const uint8_t *p, int n)
{
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

typedef struct ref_seg {
    const uint8_t *p;
    size_t n;
    uint64_t name;
    bool newer;            /* a valid header of a newer version */
    size_t prefix;         /* end of the intact prefix (0: bad header) */
    uint64_t count;
    uint64_t *seqs;
} ref_seg;

static void ref_scan(ref_seg *r)
{
    const uint8_t *p = r->p;
    const size_t n = r->n;
    r->seqs = malloc((n / 25 + 1) * sizeof *r->seqs);
    if (n < 24 || memcmp(p, "PQSPOOL\0", 8) != 0 || le(p + 20, 4) != ref_crc(0, p, 20))
        return;
    if (le(p + 8, 4) > 1) {
        r->newer = true;
        return;
    }
    if (le(p + 8, 4) != 1 || le(p + 12, 8) != r->name || r->name == 0 ||
        r->name >= SP_SEQ_MAX)
        return;
    size_t off = 24;
    uint64_t expect = r->name;
    while (n - off >= 8) {
        const uint64_t len = le(p + off, 4);
        if (len < 17 || len > 17 + 255 + ((uint64_t)1 << 30) || n - off - 8 < len)
            break;
        const uint8_t *b = p + off + 8;
        if (le(p + off + 4, 4) != ref_crc(ref_crc(0, p + off, 4), b, len) ||
            le(b, 8) != expect || expect >= SP_SEQ_MAX || 17u + b[16] > len)
            break;
        r->seqs[r->count++] = expect++;
        off += 8 + len;
    }
    r->prefix = off;
}

static uint64_t file_size(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (uint64_t)st.st_size : UINT64_MAX;
}

static void spit(const char *path, const void *p, size_t n)
{
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL);
    CHECK(n == 0 || fwrite(p, 1, n, f) == n);
    CHECK(fclose(f) == 0);
}

/* The bytes of the segment files the spool holds: from its first held
 * segment on. sp_open queues the segments wholly below the checkpoint's
 * watermark for the remover (drop_committed), which this target never
 * starts, so their files stay until sp_close; like the segments sp_trim
 * queues, they are no longer counted in sp_disk_bytes. */
static uint64_t segments_bytes(const sp_spool *s)
{
    uint64_t *v = NULL, sum = 0;
    size_t k = 0;
    pq_err err = {0};
    const uint64_t held_from = s->nsegs > 0 ? s->segs[0].first : UINT64_MAX;
    CHECK(sp_seg_list(dir, &v, &k, &err) == 0);
    for (size_t i = 0; i < k; i++) {
        if (v[i] < held_from)
            continue;
        char p[400];
        snprintf(p, sizeof p, "%s/%020llu.spool", dir, (unsigned long long)v[i]);
        sum += file_size(p);
    }
    free(v);
    return sum;
}

/* ---- reading back ------------------------------------------------------------ */

/* The raw record behind rec (the reader's buffer holds it whole): its CRC
 * by the reference, and the fields it decodes to. */
static void check_raw(const sp_record *rec)
{
    const uint8_t *raw = (const uint8_t *)rec->source - 25;
    const uint64_t len = le(raw, 4);
    CHECK(len == 17 + rec->source_len + rec->len);
    CHECK(le(raw + 4, 4) == ref_crc(ref_crc(0, raw, 4), raw + 8, len));
    CHECK(le(raw + 8, 8) == rec->seq);
    CHECK(raw[24] == rec->source_len);
    CHECK((const uint8_t *)rec->line == raw + 25 + rec->source_len);
}

typedef struct got {
    uint64_t seqs[8192];
    size_t n;
    int parse_errors;
} got;

static void replay(const sp_spool *s, uint64_t from, got *g)
{
    sp_reader *r;
    pq_err err = {0};
    CHECK(sp_reader_open(&r, s, from, &err) == 0);
    sp_record rec;
    int rc;
    g->n = 0;
    g->parse_errors = 0;
    uint64_t prev = 0;
    while ((rc = sp_reader_next(r, &rec, &err)) != 0) {
        if (rc == PQ_EPARSE) {
            CHECK(strstr(err.msg, "offset") != NULL || strstr(err.msg, "header") != NULL ||
                  strstr(err.msg, "magic") != NULL || strstr(err.msg, "version") != NULL ||
                  strstr(err.msg, "seq") != NULL);
            CHECK(++g->parse_errors < 16);
            continue;
        }
        CHECK(rc == 1);
        check_raw(&rec);
        CHECK(rec.seq >= from);
        CHECK(g->n == 0 || rec.seq > prev);
        prev = rec.seq;
        CHECK(g->n < sizeof g->seqs / sizeof g->seqs[0]);
        g->seqs[g->n++] = rec.seq;
    }
    sp_reader_close(r);
}

/* ---- the run ------------------------------------------------------------------ */

typedef struct input {
    const uint8_t *p;
    size_t n;
} input;

static uint8_t take(input *in)
{
    if (in->n == 0)
        return 0;
    in->n--;
    return *in->p++;
}

/* Without a checkpoint the outcome is fully predictable from the
 * reference: check sp_open's repair and the replay against it. */
static void check_exact(const sp_spool *s, const sp_open_report *rep, ref_seg *seg, size_t k)
{
    size_t last = SIZE_MAX;
    uint64_t total = 0, max_end = 0;
    for (size_t i = 0; i < k; i++) {
        total += seg[i].count;
        if (seg[i].count > 0) {
            last = i;
            const uint64_t end = seg[i].seqs[seg[i].count - 1] + 1;
            max_end = end > max_end ? end : max_end;
        }
    }
    uint64_t cut = 0;
    int damaged_middle = 0;
    for (size_t i = 0; i < k; i++) {
        char p[400];
        snprintf(p, sizeof p, "%s/%020llu.spool", dir, (unsigned long long)seg[i].name);
        if (last == SIZE_MAX || i > last) {
            CHECK(file_size(p) == UINT64_MAX);
            cut += seg[i].n;
        } else if (i == last) {
            CHECK(file_size(p) == seg[i].prefix);
            cut += seg[i].n - seg[i].prefix;
        } else {
            CHECK(file_size(p) == seg[i].n);
            damaged_middle += seg[i].prefix == 0 || seg[i].prefix != seg[i].n;
        }
    }
    CHECK(rep->records == total);
    CHECK(rep->bytes_cut == cut);
    CHECK(cut == 0 || rep->warning[0] != '\0');
    CHECK(sp_next_seq(s) == (max_end > 1 ? max_end : 1));
    got g;
    replay(s, 0, &g);
    CHECK(g.parse_errors == damaged_middle);
    size_t j = 0;
    uint64_t prev = 0;
    for (size_t i = 0; last != SIZE_MAX && i <= last; i++)
        for (uint64_t r = 0; r < seg[i].count; r++) {
            if (j > 0 && seg[i].seqs[r] <= prev)
                continue;                  /* an overlap: replay skips repeats */
            CHECK(j < g.n && g.seqs[j] == seg[i].seqs[r]);
            prev = g.seqs[j++];
        }
    CHECK(j == g.n);
}

/* Appends records derived from the input, flushes, and checks they replay
 * byte for byte after everything that was there. */
static void check_appends(sp_spool *s, unsigned count, const input *in)
{
    pq_err err = {0};
    const uint64_t first = sp_next_seq(s);
    for (unsigned i = 0; i < count; i++) {
        const size_t len = in->n ? (in->p[i % in->n] * 7u + i) % 300 : i;
        char line[300];
        for (size_t b = 0; b < len; b++)
            line[b] = (char)(i * 31 + b);
        uint64_t seq;
        CHECK(sp_append(s, (int64_t)i, "fz", 2, line, len, &seq, &err) == 0);
        CHECK(seq == first + i);
    }
    int rc = sp_flush(s, &err);
    if (rc != 0)
        fprintf(stderr, "fuzz_spool: %s\n", err.msg);
    CHECK(rc == 0);
    sp_reader *r;
    CHECK(sp_reader_open(&r, s, first, &err) == 0);
    sp_record rec;
    for (unsigned i = 0; i < count; i++) {
        CHECK(sp_reader_next(r, &rec, &err) == 1);
        check_raw(&rec);
        const size_t len = in->n ? (in->p[i % in->n] * 7u + i) % 300 : i;
        CHECK(rec.seq == first + i && rec.len == len && rec.ingest_us == (int64_t)i);
        for (size_t b = 0; b < len; b++)
            CHECK(rec.line[b] == (char)(i * 31 + b));
    }
    CHECK(sp_reader_next(r, &rec, &err) == 0);
    sp_reader_close(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    scratch_init();
    scratch_clear();
    input in = {data, size};
    const uint8_t flags = take(&in);
    const int mode = flags & 3;
    const uint64_t segment_bytes = (uint64_t)(flags >> 4) * 64;
    CHECK(mkdir(dir, 0700) == 0);
    char p[400];
    snprintf(p, sizeof p, "%s/checkpoint", dir);
    if (mode == 1) {
        const uint64_t committed = 1 + take(&in) % 32;
        const uint8_t intent = take(&in);
        sp_ckpt c = {.committed = committed};
        if (intent != 0) {
            c.intent_end = committed + intent % 16;
            c.intent_path = final_path;
        }
        pq_err err = {0};
        CHECK(sp_ckpt_write(dir, &c, NULL, &err) == 0);
        if (flags & 8)
            spit(final_path, "PAR1", 4);
    } else if (mode == 2) {
        size_t n = take(&in);
        n = n < in.n ? n : in.n;
        spit(p, in.p, n);
        in.p += n;
        in.n -= n;
    }
    size_t split = SIZE_MAX;
    if (flags & 4) {
        split = take(&in);
        split |= (size_t)take(&in) << 8;
    }
    const unsigned appends = take(&in) % 8;
    split = split == SIZE_MAX ? in.n : split % (in.n + 1);
    ref_seg seg[2] = {{.p = in.p, .n = split}, {.p = in.p + split, .n = in.n - split}};
    size_t k = split == in.n ? 1 : 2;
    for (size_t i = 0; i < k; i++)
        seg[i].name = seg[i].n >= 20 ? le(seg[i].p + 12, 8) : 1;
    for (size_t i = 0; i < k; i++)        /* names outside 1 .. 2^63-1: never the header's */
        if (seg[i].name == 0 || seg[i].name >= SP_SEQ_MAX)
            seg[i].name = 1;
    if (k == 2 && seg[0].name == seg[1].name) {
        k = 1;
        seg[0].n = in.n;
    }
    if (k == 2 && seg[0].name > seg[1].name) {
        ref_seg t = seg[0];
        seg[0] = seg[1];
        seg[1] = t;
    }
    bool newer = false;
    for (size_t i = 0; i < k; i++) {
        ref_scan(&seg[i]);
        newer |= seg[i].newer;
        snprintf(p, sizeof p, "%s/%020llu.spool", dir, (unsigned long long)seg[i].name);
        spit(p, seg[i].p, seg[i].n);
    }

    sp_spool *s = NULL;
    sp_open_report rep;
    pq_err err = {0};
    int rc = sp_open(&s, dir, segment_bytes, &rep, &err);
    if (mode == 2)
        CHECK(rc == 0 || rc == PQ_EIO || rc == PQ_EINVAL);
    else if (newer)
        CHECK(rc == PQ_EINVAL && strstr(err.msg, "newer") != NULL);
    else
        CHECK(rc == 0);
    if (rc == 0) {
        CHECK(s != NULL);
        CHECK(sp_next_seq(s) >= sp_committed(s));
        CHECK(sp_disk_bytes(s) == segments_bytes(s));
        if (mode != 1 && mode != 2)
            check_exact(s, &rep, seg, k);
        got g;
        replay(s, sp_committed(s), &g);
        CHECK(g.n <= rep.records);
        const uint64_t next = sp_next_seq(s), committed = sp_committed(s);
        check_appends(s, appends, &in);
        CHECK(sp_disk_bytes(s) == segments_bytes(s));
        CHECK(sp_sync(s, &err) == 0);
        sp_close(s);
        s = NULL;
        CHECK(sp_open(&s, dir, segment_bytes, &rep, &err) == 0);
        CHECK(rep.bytes_cut == 0);
        CHECK(sp_committed(s) == committed);
        CHECK(sp_next_seq(s) == (appends ? next + appends : next));
        sp_close(s);
    } else {
        CHECK(s == NULL);
    }
    for (size_t i = 0; i < 2; i++)
        free(seg[i].seqs);
    return 0;
}
