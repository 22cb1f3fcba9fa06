/* config.h - parqd's configuration (DESIGN.md "Configuration (YAML)"):
 * loading and validating the YAML file, the built-in defaults used when no
 * file is given, and the mapping onto pq_writer_opts.
 *
 *     cf_config cf;
 *     if (cf_config_load("/etc/parqd/parqd.yaml", &cf, &err) != 0)
 *         fprintf(stderr, "parqd: %s\n", err.msg);   // FILE:LINE:COL: key: ...
 *     ...
 *     cf_config_free(&cf);
 *
 * Defaults (no file, or a key left out): inputs tcp 127.0.0.1:5170 and unix
 * ./parqd.sock; output.dir ./out; output.path
 * "dt=%Y-%m-%d/%H%M%S-{host}-{pid}-{seq}.parquet"; rotate 256MiB / no row
 * limit / 5m; row_group 64MiB / 1000000 rows / 60s; page 1MiB, v2, crc;
 * zstd at its default level; dictionary 1MiB; statistics on, truncate 64;
 * page_index on; no encryption; spool ./spool with sync batch; limits
 * 1MiB line, 1024 connections, 512MiB buffered, 5m idle timeout; log
 * level info; dead letters to
 * ./rejects.ndjson; metrics off; the default schema (sc_schema_default).
 *
 * Paths: `schema:` is relative to the configuration file's directory (so a
 * config and its schemas move together); every other path is used as
 * written (relative ones to the daemon's working directory). Key files are
 * only recorded here, never read.
 *
 * Sizes take B/KiB/MiB/GiB/TiB (KB/MB/GB are refused as ambiguous);
 * durations ms/s/m/h (see units.h). */
#ifndef PQ_CONFIG_H
#define PQ_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "colspec.h"
#include "crypto.h"
#include "err.h"
#include "pq_writer.h"

typedef struct cf_pos {
    uint32_t line, col;          /* 1-based; 0 for built-in defaults */
} cf_pos;

typedef struct cf_addr {
    char *host;                  /* "127.0.0.1", "::1" (no brackets), "localhost" */
    uint16_t port;
} cf_addr;

/* An input's transport (the socket it listens on)... */
typedef enum cf_input_type { CF_INPUT_TCP, CF_INPUT_UNIX } cf_input_type;
/* ... and its protocol, what the bytes on its connections are: NDJSON
 * lines (`type: tcp` and `type: unix`) or HTTP/1.1 requests (`type:
 * http`, over TCP with `listen:` or over a Unix socket with `path:`). */
typedef enum cf_input_proto { CF_PROTO_LINES, CF_PROTO_HTTP } cf_input_proto;

#define CF_HTTP_MAX_BODY_DEFAULT ((uint64_t)16 << 20)
/* An http input's header limits: the request line and headers (431
 * beyond), their count (431), the time from a request's first byte to the
 * end of its headers (408: slowloris). */
#define CF_HTTP_MAX_HEADER_BYTES_DEFAULT ((uint64_t)16 << 10)
#define CF_HTTP_MAX_HEADERS_DEFAULT 100
#define CF_HTTP_HEADER_TIMEOUT_DEFAULT_MS 10000

/* An http input's own settings (config_input.c). The auth files are only
 * recorded here; the daemon reads them after kf_check_mode
 * (daemon/ingest/http_auth.c). */
typedef struct cf_http {
    uint64_t max_body_bytes;     /* body after gzip decoding too; 413 beyond */
    uint64_t max_header_bytes;   /* 1 KiB .. 1 MiB */
    uint64_t max_headers;        /* 8 .. 10000 */
    uint64_t header_timeout_ms;  /* 100 ms .. 1 h */
    char *bearer_token_file;     /* "Authorization: Bearer <file's first line>" */
    char *basic_file;            /* "user:password" on its first line */
} cf_http;

#define CF_TLS_HANDSHAKE_TIMEOUT_MS 10000

/* A TCP input's `tls:` (config_sec.c). Files are only recorded here; the
 * daemon reads them (daemon/ingest/tls.c), the key only after kf_check_mode. */
typedef struct cf_tls {
    char *cert;                  /* PEM: the server certificate (chain) */
    char *key;                   /* PEM: its private key (mode 0600 or stricter) */
    char *client_ca;             /* PEM: CAs for client certificates; NULL: none asked */
    char **allow_subjects;       /* "CN=web-7" or "CN=web-7,O=Example"; NULL if none */
    size_t n_allow_subjects;
    int min_version;             /* 12 (TLS 1.2, default) or 13 */
    uint64_t handshake_timeout_ms;
    cf_pos pos;
} cf_tls;

typedef struct cf_input {
    cf_input_type type;          /* the transport */
    cf_input_proto proto;
    cf_http http;                /* proto == CF_PROTO_HTTP */
    cf_addr listen;              /* tcp */
    cf_tls *tls;                 /* tcp: NULL for plaintext */
    char *path;                  /* unix */
    int mode;                    /* unix: permission bits, -1 = leave to umask */
    /* unix: peers allowed by SO_PEERCRED (uid in allow_uids, or the
     * peer's primary or a supplementary gid in allow_gids); both empty:
     * anyone who can open the socket file */
    uint32_t *allow_uids, *allow_gids;
    size_t n_allow_uids, n_allow_gids;
    cf_pos pos;
} cf_input;

/* Row-group and file limits; 0 = no limit on that axis. */
typedef struct cf_roll {
    uint64_t max_bytes;
    uint64_t max_rows;
    uint64_t max_age_ms;
} cf_roll;

typedef struct cf_key {
    char *id;
    char *file;                  /* path of the hex key file (not read here) */
} cf_key;

typedef struct cf_column_key {
    char *column;                /* column or struct field path, "user.email" */
    cf_key key;
    cf_pos pos;
} cf_column_key;

typedef struct cf_encryption {
    bool enabled;
    pq_crypto_algorithm algorithm;   /* default PQ_AES_GCM_V1 */
    bool footer_encrypted;           /* footer: encrypted (default) | plaintext */
    cf_key footer_key;
    cf_column_key *columns;
    size_t n_columns;
    char *aad_prefix;                /* NULL: none */
    bool store_aad_prefix;           /* default true */
} cf_encryption;

/* output.s3 (config_s3.c): where files go instead of output.dir. */
typedef enum cf_s3_creds { CF_S3_ENV, CF_S3_PROFILE, CF_S3_FILES } cf_s3_creds;
typedef struct cf_s3 {
    char *bucket;
    char *prefix;                /* "" or ends in '/' as given */
    char *endpoint;              /* NULL: https://s3.REGION.amazonaws.com */
    char *region;                /* NULL: AWS_REGION / AWS_DEFAULT_REGION / us-east-1 */
    bool path_style;
    cf_s3_creds creds;
    char *profile;               /* CF_S3_PROFILE */
    char *key_id_file, *secret_file; /* CF_S3_FILES */
    char *ca_file;
    uint64_t part_size;          /* 5MiB..5GiB, default 16MiB */
    cf_pos pos;
} cf_s3;

void cf_s3_free(cf_s3 *s);

#define CF_MAX_OPEN_FILES_DEFAULT 256
#define CF_MAX_OPEN_FILES_MAX 65536

typedef struct cf_output {
    char *dir;
    cf_s3 *s3;                   /* NULL: files go to dir */
    char *path;                  /* template: strftime % fields (UTC), {host} {pid} {seq} */
    bool partitioned;            /* path has {{FIELD}}s or time_from: records are
                                    routed by them */
    char *time_from;             /* strftime fields from this column (event
                                    time, evtime.h); NULL: the ingestion time */
    cf_pos time_from_pos;
    uint32_t max_open_files;     /* files open at once with {{FIELD}}s: 1..65536,
                                    default CF_MAX_OPEN_FILES_DEFAULT */
    cf_roll rotate, row_group;
    size_t page_max_bytes;
    int page_version;            /* 1 or 2 */
    bool crc;
    pq_codec codec;
    int codec_level;             /* 0: the codec's default */
    size_t dictionary_max_bytes;
    bool statistics;
    size_t stats_truncate;
    bool page_index;
    cf_encryption encryption;
} cf_output;

typedef enum cf_sync { CF_SYNC_NONE, CF_SYNC_BATCH, CF_SYNC_ALWAYS } cf_sync;

/* log.level: what reaches stderr (syslog priorities, most severe first). */
typedef enum cf_log_level {
    CF_LOG_ERROR, CF_LOG_WARNING, CF_LOG_INFO, CF_LOG_DEBUG
} cf_log_level;

typedef struct cf_config {
    char *file;                  /* NULL: built-in defaults */
    cf_input *inputs;
    size_t n_inputs;
    sc_schema *schema;           /* always set once loaded */
    char *schema_file;           /* where it came from; NULL inline or default */
    cf_output output;
    struct { char *dir; cf_sync sync; } spool;
    struct {
        size_t max_line_bytes, max_connections, max_buffered_bytes;
        uint64_t idle_timeout_ms;    /* 0: never close an idle connection */
    } limits;
    struct { char *dead_letter; } errors;
    struct { bool enabled; cf_addr listen; } metrics;
    struct { cf_log_level level; } log;
} cf_config;

/* All return 0 or a PQ_E* code with err filled; *out needs cf_config_free
 * either way. */
int cf_config_default(cf_config *out, pq_err *err);
int cf_config_load(const char *path, cf_config *out, pq_err *err);
/* As cf_config_load, but schema_file (relative to the working directory)
 * replaces the file's `schema:`, which is then not loaded at all. */
int cf_config_load_ex(const char *path, const char *schema_file, cf_config *out, pq_err *err);
/* From memory: `name` is used in messages and as the base for `schema:`. */
int cf_config_load_buffer(const char *name, const void *buf, size_t len, cf_config *out,
                          pq_err *err);
/* Replaces the schema (e.g. `--schema` without `--config`). */
int cf_config_use_schema_file(cf_config *c, const char *schema_file, pq_err *err);
void cf_config_free(cf_config *c);

/* Writer options from output.* (row-group limits, page, codec, ...). */
void cf_writer_opts(const cf_config *c, pq_writer_opts *o);

/* "host:port", "[v6]:port". Returns 0 or PQ_EINVAL with *why. */
int cf_parse_listen(const char *s, cf_addr *out, const char **why);

/* Whether two TCP addresses would take the same port on one host: the
 * same port and the same host, or either host is a wildcard (0.0.0.0, ::). */
bool cf_addr_overlaps(const cf_addr *a, const cf_addr *b);

/* Frees t and what it owns; NULL is a no-op. */
void cf_tls_free(cf_tls *t);

#endif
