/* gen_matrix.c - the interop matrix: every file written, one function
 * per feature (types, nesting, encodings, codecs, row groups and pages,
 * statistics, bloom filters, the writer's defaults). */
#include <errno.h>
#include <fcntl.h>
#include <float.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "gen.h"

static pq_writer_opts base_opts(void)
{
    pq_writer_opts o;
    pq_writer_opts_default(&o);
    o.page_max_rows = 500;     /* several pages per chunk everywhere */
    o.row_group_max_rows = 0;
    return o;
}

#define COLS(...) (gtype *[]){ __VA_ARGS__ }, sizeof((gtype *[]){ __VA_ARGS__ }) / sizeof(gtype *)

static void emit(const char *name, gtype **cols, size_t ncols, size_t rows, pq_writer_opts wo, unsigned flags)
{
    file_spec fs = { name, cols, ncols, rows, wo, NULL, flags };
    write_file(&fs);
}

/* A mixed table used for the codec x page version and row group files. */
static void mixed_cols(gtype **c)
{
    c[0] = l_i64("id", REQ, G_I64);
    c[1] = l_double("x", OPT, G_DOUBLE);
    c[2] = l_str("s", OPT, G_STR);
    c[3] = l_bool("b", OPT);
    c[4] = list_of("l", OPT, l_i32("element", OPT, G_I32));
    c[5] = l_int("i16", 16, true);
}

/* Files: types. */
static void matrix_types(void)
{
    pq_writer_opts o = base_opts();
    emit("types_bool_ints", COLS(
        l_bool("b_req", REQ), l_bool("b_opt", OPT),
        l_i32("i32_plain", OPT, G_I32), l_i64("i64_plain", OPT, G_I64),
        l_int("i8", 8, true), l_int("i16", 16, true), l_int("i32", 32, true), l_int("i64", 64, true),
        l_int("u8", 8, false), l_int("u16", 16, false), l_int("u32", 32, false), l_int("u64", 64, false),
        l_i64("i64_req", REQ, G_I64)), 3000, o, 0);
    emit("types_float_double_float16", COLS(
        l_float("f", OPT), l_double("d", OPT, G_DOUBLE), l_f16("h", OPT),
        leaf("f_req", REQ, PQ_FLOAT, 0, lt_none(), "float", G_FLOAT)), 3000, o, 0);
    emit("types_decimal", COLS(
        l_dec("d_i32_9_2", PQ_INT32, 0, 9, 2), l_dec("d_i32_1_0", PQ_INT32, 0, 1, 0),
        l_dec("d_i64_18_4", PQ_INT64, 0, 18, 4), l_dec("d_i64_10_10", PQ_INT64, 0, 10, 10),
        l_dec("d_flba16_38_10", PQ_FIXED_LEN_BYTE_ARRAY, 16, 38, 10),
        l_dec("d_flba9_20_0", PQ_FIXED_LEN_BYTE_ARRAY, 9, 20, 0),
        l_dec("d_flba3_5_3", PQ_FIXED_LEN_BYTE_ARRAY, 3, 5, 3),
        l_dec("d_bin_30_5", PQ_BYTE_ARRAY, 0, 30, 5)), 2000, o, 0);
    emit("types_string_enum_json_binary_uuid", COLS(
        l_str("s", OPT, G_STR), l_str("s_req", REQ, G_STR),
        leaf("e", OPT, PQ_BYTE_ARRAY, 0, lt_kind(PQ_LT_ENUM), "enum", G_ENUM),
        leaf("j", OPT, PQ_BYTE_ARRAY, 0, lt_kind(PQ_LT_JSON), "json", G_JSON),
        l_bin("bin", OPT), l_fixed("fx7", OPT, 7),
        leaf("u", OPT, PQ_FIXED_LEN_BYTE_ARRAY, 16, lt_kind(PQ_LT_UUID), "uuid", G_UUID)), 2000, o, 0);
    emit("types_date_time_timestamp", COLS(
        leaf("date", OPT, PQ_INT32, 0, lt_kind(PQ_LT_DATE), "date", G_DATE),
        leaf("t_ms_utc", OPT, PQ_INT32, 0, lt_time(PQ_LT_TIME, PQ_UNIT_MILLIS, true), "time_ms", G_TIME_MS),
        leaf("t_ms", OPT, PQ_INT32, 0, lt_time(PQ_LT_TIME, PQ_UNIT_MILLIS, false), "time_ms", G_TIME_MS),
        leaf("t_us_utc", OPT, PQ_INT64, 0, lt_time(PQ_LT_TIME, PQ_UNIT_MICROS, true), "time_us", G_TIME_US),
        leaf("t_us", OPT, PQ_INT64, 0, lt_time(PQ_LT_TIME, PQ_UNIT_MICROS, false), "time_us", G_TIME_US),
        leaf("t_ns_utc", OPT, PQ_INT64, 0, lt_time(PQ_LT_TIME, PQ_UNIT_NANOS, true), "time_ns", G_TIME_NS),
        leaf("t_ns", OPT, PQ_INT64, 0, lt_time(PQ_LT_TIME, PQ_UNIT_NANOS, false), "time_ns", G_TIME_NS),
        leaf("ts_ms_utc", OPT, PQ_INT64, 0, lt_time(PQ_LT_TIMESTAMP, PQ_UNIT_MILLIS, true), "timestamp_ms", G_TS_MS),
        leaf("ts_ms", OPT, PQ_INT64, 0, lt_time(PQ_LT_TIMESTAMP, PQ_UNIT_MILLIS, false), "timestamp_ms", G_TS_MS),
        leaf("ts_us_utc", OPT, PQ_INT64, 0, lt_time(PQ_LT_TIMESTAMP, PQ_UNIT_MICROS, true), "timestamp_us", G_TS_US),
        leaf("ts_us", OPT, PQ_INT64, 0, lt_time(PQ_LT_TIMESTAMP, PQ_UNIT_MICROS, false), "timestamp_us", G_TS_US),
        leaf("ts_ns_utc", OPT, PQ_INT64, 0, lt_time(PQ_LT_TIMESTAMP, PQ_UNIT_NANOS, true), "timestamp_ns", G_TS_NS),
        leaf("ts_ns", OPT, PQ_INT64, 0, lt_time(PQ_LT_TIMESTAMP, PQ_UNIT_NANOS, false), "timestamp_ns", G_TS_NS)),
        2000, o, 0);
    emit("types_int96", COLS(leaf("ts96", OPT, PQ_INT96, 0, lt_none(), "int96", G_INT96)), 1500, o, 0);
    emit("types_interval", COLS(
        leaf("iv", OPT, PQ_FIXED_LEN_BYTE_ARRAY, 12, lt_kind(PQ_LT_INTERVAL), "interval", G_INTERVAL)), 1500, o, 0);
    emit("types_interval_u32max", COLS(
        leaf("iv", OPT, PQ_FIXED_LEN_BYTE_ARRAY, 12, lt_kind(PQ_LT_INTERVAL), "interval", G_INTERVAL_MAX)), 300, o, 0);
    emit("types_bson", COLS(leaf("bs", OPT, PQ_BYTE_ARRAY, 0, lt_kind(PQ_LT_BSON), "bson", G_BSON)), 1000, o, 0);
    {
        pq_logical geo = lt_kind(PQ_LT_GEOGRAPHY);
        geo.algorithm = PQ_EDGE_SPHERICAL;
        emit("types_geometry_geography_wkb", COLS(
            leaf("geom", OPT, PQ_BYTE_ARRAY, 0, lt_kind(PQ_LT_GEOMETRY), "geometry", G_WKB),
            leaf("geog", OPT, PQ_BYTE_ARRAY, 0, geo, "geography", G_WKB)), 1000, o, 0);
    }
    emit("types_unknown_all_null", COLS(
        l_i64("id", REQ, G_I64),
        leaf("nothing", OPT, PQ_INT32, 0, lt_kind(PQ_LT_UNKNOWN), "unknown", G_NULL)), 1000, o, 0);
}

/* Files: nesting. */
static void matrix_nesting(void)
{
    pq_writer_opts o = base_opts();
    emit("nested_list_of_struct_with_list", COLS(
        l_i64("id", REQ, G_I64_SEQ),
        list_of("items", OPT, with_nulls(GROUP("element", OPT,
            l_i32("a", OPT, G_I32),
            list_of("tags", OPT, l_str("element", OPT, G_STR)),
            l_double("w", REQ, G_DOUBLE)), 25)),
        list_of("req_ints", REQ, l_i32("element", REQ, G_I32)),
        list_of("ll", OPT, list_of("element", OPT, l_i64("element", OPT, G_I64)))), 3000, o, 0);
    emit("nested_maps", COLS(
        map_of("m_str_list", OPT, l_str("key", REQ, G_STR_KEY), list_of("value", OPT, l_i32("element", OPT, G_I32))),
        map_of("m_i64_struct", OPT, l_i64("key", REQ, G_I64),
               GROUP("value", OPT, l_str("s", OPT, G_STR), l_bool("b", REQ))),
        map_of("m_req", REQ, l_i32("key", REQ, G_I32), l_double("value", REQ, G_DOUBLE))), 3000, o, 0);
    emit("nested_structs", COLS(
        GROUP("s", OPT,
            l_i32("x", OPT, G_I32),
            GROUP("inner", OPT, l_str("name", OPT, G_STR), list_of("nums", OPT, l_i64("element", OPT, G_I64))),
            GROUP("req_inner", REQ, l_bool("flag", OPT), l_f16("h", OPT))),
        GROUP("r", REQ, l_i64("a", REQ, G_I64), l_str("b", OPT, G_STR))), 3000, o, 0);
}

/* Files: encodings, page v1 and v2. */
static void matrix_encodings(void)
{
    pq_writer_opts o = base_opts();
    for (int v = 1; v <= 2; v++) {
        pq_writer_opts ov = o;
        char name[128];
        ov.page_version = v;
        snprintf(name, sizeof name, "enc_plain_all_types_v%d", v);
        emit(own(strdup(name)), COLS(
            with_enc(l_bool("b", OPT), PQ_ENC_PLAIN, 0),
            with_enc(l_i32("i32", OPT, G_I32), PQ_ENC_PLAIN, 0),
            with_enc(l_i64("i64", OPT, G_I64), PQ_ENC_PLAIN, 0),
            with_enc(leaf("i96", OPT, PQ_INT96, 0, lt_none(), "int96", G_INT96), PQ_ENC_PLAIN, 0),
            with_enc(l_float("f", OPT), PQ_ENC_PLAIN, 0),
            with_enc(l_double("d", OPT, G_DOUBLE), PQ_ENC_PLAIN, 0),
            with_enc(l_str("s", OPT, G_STR), PQ_ENC_PLAIN, 0),
            with_enc(l_fixed("fx", OPT, 5), PQ_ENC_PLAIN, 0)), 2000, ov, 0);
        snprintf(name, sizeof name, "enc_rle_bool_v%d", v);
        emit(own(strdup(name)), COLS(
            with_enc(l_bool("b", OPT), PQ_ENC_RLE, 0),
            with_enc(l_bool("b_req", REQ), PQ_ENC_RLE, 0)), 3000, ov, 0);
        snprintf(name, sizeof name, "enc_dictionary_v%d", v);
        emit(own(strdup(name)), COLS(
            with_enc(l_i32("i32", OPT, G_I32_FEW), PQ_ENC_AUTO, 1),
            with_enc(l_i64("i64", OPT, G_I64_FEW), PQ_ENC_AUTO, 1),
            with_enc(l_double("d", OPT, G_DOUBLE_FEW), PQ_ENC_AUTO, 1),
            with_enc(l_str("s", OPT, G_STR_FEW), PQ_ENC_AUTO, 1),
            with_enc(leaf("e", OPT, PQ_BYTE_ARRAY, 0, lt_kind(PQ_LT_ENUM), "enum", G_ENUM), PQ_ENC_AUTO, 1),
            with_enc(list_of("ls", OPT, with_enc(l_str("element", OPT, G_STR_FEW), PQ_ENC_AUTO, 1)), PQ_ENC_AUTO, 1)),
            3000, ov, 0);
        snprintf(name, sizeof name, "enc_dictionary_fallback_v%d", v);
        {
            /* Each row group's chunks decide dictionary or fallback on
             * their first page (writer/chunk/chooser.c): chunks of the
             * few-values phases keep it, the others fall back. */
            pq_writer_opts of = ov;
            of.dictionary_max_bytes = 2048;
            of.row_group_max_rows = 1000;
            emit(own(strdup(name)), COLS(
                with_enc(l_str("s", OPT, G_STR_PHASE), PQ_ENC_AUTO, 1),
                with_enc(l_i64("i64", OPT, G_I64_PHASE), PQ_ENC_AUTO, 1),
                with_enc(l_double("d", OPT, G_DOUBLE_PHASE), PQ_ENC_AUTO, 1),
                with_enc(list_of("ls", OPT, with_enc(l_str("element", OPT, G_STR_PHASE), PQ_ENC_AUTO, 1)), PQ_ENC_AUTO, 1)),
                5000, of, F_DICT_MIXED);
        }
        snprintf(name, sizeof name, "enc_dictionary_fallback_mid_row_group_v%d", v);
        {
            /* One row group: rows 0-999 repeat a few values, so the first
             * page keeps the dictionary; the unique values of rows
             * 1000-1999 pass dictionary_max_bytes a page or two later, and
             * the pages after that fall back, within the chunk. */
            pq_writer_opts of = ov;
            of.dictionary_max_bytes = 2048;
            of.page_max_rows = 250;
            of.row_group_max_rows = 0;
            emit(own(strdup(name)), COLS(
                with_enc(l_str("s", OPT, G_STR_PHASE), PQ_ENC_AUTO, 1),
                with_enc(l_i64("i64", OPT, G_I64_PHASE), PQ_ENC_AUTO, 1),
                with_enc(l_double("d", OPT, G_DOUBLE_PHASE), PQ_ENC_AUTO, 1),
                with_enc(list_of("ls", OPT, with_enc(l_str("element", OPT, G_STR_PHASE), PQ_ENC_AUTO, 1)), PQ_ENC_AUTO, 1)),
                3000, of, F_DICT_IN_CHUNK);
        }
        snprintf(name, sizeof name, "enc_delta_binary_packed_v%d", v);
        emit(own(strdup(name)), COLS(
            with_enc(l_i32("i32_full", OPT, G_I32), PQ_ENC_DELTA_BINARY_PACKED, 0),
            with_enc(l_i64("i64_full", OPT, G_I64), PQ_ENC_DELTA_BINARY_PACKED, 0),
            with_enc(l_i64("i64_seq", REQ, G_I64_SEQ), PQ_ENC_DELTA_BINARY_PACKED, 0),
            with_enc(l_i32("i32_small", OPT, G_I32_SMALLDELTA), PQ_ENC_DELTA_BINARY_PACKED, 0),
            with_enc(l_int("u32", 32, false), PQ_ENC_DELTA_BINARY_PACKED, 0),
            with_enc(l_int("u64", 64, false), PQ_ENC_DELTA_BINARY_PACKED, 0),
            with_enc(leaf("ts", OPT, PQ_INT64, 0, lt_time(PQ_LT_TIMESTAMP, PQ_UNIT_MICROS, true), "timestamp_us", G_TS_US),
                     PQ_ENC_DELTA_BINARY_PACKED, 0)), 3000, ov, 0);
        snprintf(name, sizeof name, "enc_delta_length_byte_array_v%d", v);
        emit(own(strdup(name)), COLS(
            with_enc(l_str("s", OPT, G_STR), PQ_ENC_DELTA_LENGTH_BYTE_ARRAY, 0),
            with_enc(l_bin("bin", OPT), PQ_ENC_DELTA_LENGTH_BYTE_ARRAY, 0),
            with_enc(list_of("ls", OPT, with_enc(l_str("element", OPT, G_STR), PQ_ENC_DELTA_LENGTH_BYTE_ARRAY, 0)), PQ_ENC_AUTO, -1)),
            3000, ov, 0);
        snprintf(name, sizeof name, "enc_delta_byte_array_v%d", v);
        emit(own(strdup(name)), COLS(
            with_enc(l_str("s_prefix", OPT, G_STR_PREFIX), PQ_ENC_DELTA_BYTE_ARRAY, 0),
            with_enc(l_str("s", OPT, G_STR), PQ_ENC_DELTA_BYTE_ARRAY, 0),
            with_enc(l_bin("bin", OPT), PQ_ENC_DELTA_BYTE_ARRAY, 0),
            with_enc(l_fixed("fx", OPT, 6), PQ_ENC_DELTA_BYTE_ARRAY, 0)), 3000, ov, 0);
        /* FLOAT/DOUBLE apart: DuckDB reads BYTE_STREAM_SPLIT for those only. */
        snprintf(name, sizeof name, "enc_byte_stream_split_float_double_v%d", v);
        emit(own(strdup(name)), COLS(
            with_enc(l_float("f", OPT), PQ_ENC_BYTE_STREAM_SPLIT, 0),
            with_enc(l_double("d", OPT, G_DOUBLE), PQ_ENC_BYTE_STREAM_SPLIT, 0),
            with_enc(leaf("d_req", REQ, PQ_DOUBLE, 0, lt_none(), "double", G_DOUBLE), PQ_ENC_BYTE_STREAM_SPLIT, 0)),
            3000, ov, 0);
        snprintf(name, sizeof name, "enc_byte_stream_split_int_flba_v%d", v);
        emit(own(strdup(name)), COLS(
            with_enc(l_i32("i32", OPT, G_I32), PQ_ENC_BYTE_STREAM_SPLIT, 0),
            with_enc(l_i64("i64", OPT, G_I64), PQ_ENC_BYTE_STREAM_SPLIT, 0),
            with_enc(l_fixed("fx", OPT, 5), PQ_ENC_BYTE_STREAM_SPLIT, 0),
            with_enc(l_f16("h", OPT), PQ_ENC_BYTE_STREAM_SPLIT, 0),
            with_enc(l_dec("dec", PQ_FIXED_LEN_BYTE_ARRAY, 7, 16, 3), PQ_ENC_BYTE_STREAM_SPLIT, 0)), 3000, ov, 0);
    }
}

/* Files: codecs x page versions. */
static void matrix_codecs(void)
{
    pq_writer_opts o = base_opts();
    static const struct { pq_codec c; const char *n; } codecs[] = {
        { PQ_CODEC_UNCOMPRESSED, "uncompressed" }, { PQ_CODEC_SNAPPY, "snappy" }, { PQ_CODEC_GZIP, "gzip" },
        { PQ_CODEC_BROTLI, "brotli" }, { PQ_CODEC_ZSTD, "zstd" }, { PQ_CODEC_LZ4_RAW, "lz4_raw" },
    };
    for (size_t i = 0; i < sizeof codecs / sizeof codecs[0]; i++) {
        for (int v = 1; v <= 2; v++) {
            pq_writer_opts oc = o;
            char name[128];
            gtype *c[6];
            oc.codec = codecs[i].c;
            oc.page_version = v;
            mixed_cols(c);
            snprintf(name, sizeof name, "codec_%s_v%d", codecs[i].n, v);
            emit(own(strdup(name)), c, 6, 4000, oc, 0);
        }
    }
}

/* Files: row groups and pages. */
static void matrix_row_groups(void)
{
    pq_writer_opts o = base_opts();
    {
        pq_writer_opts og = o;
        gtype *c[6];
        og.row_group_max_rows = 997;
        og.page_max_rows = 101;
        mixed_cols(c);
        emit("rowgroups_many_pages_many", c, 6, 10000, og, 0);
        og.page_version = 1;
        mixed_cols(c);
        emit("rowgroups_many_pages_many_v1", c, 6, 10000, og, 0);
        /* zstd pages under 1 KiB at level -1 (raw literals), the rest at
         * the chooser's level: partitioned output's small pages */
        for (int v = 1; v <= 2; v++) {
            og.page_version = v;
            og.small_page_bytes = 1024;
            mixed_cols(c);
            emit(v == 1 ? "pages_small_zstd_fast_v1" : "pages_small_zstd_fast_v2", c, 6, 3000,
                 og, 0);
        }
    }
    {
        pq_writer_opts op = o;
        op.page_max_rows = 7;
        emit("pages_tiny_nested_v2", COLS(
            list_of("ll", OPT, list_of("element", OPT, l_i32("element", OPT, G_I32))),
            map_of("m", OPT, l_str("key", REQ, G_STR_KEY), l_str("value", OPT, G_STR))), 2000, op, 0);
        op.page_version = 1;
        emit("pages_tiny_nested_v1", COLS(
            list_of("ll", OPT, list_of("element", OPT, l_i32("element", OPT, G_I32))),
            map_of("m", OPT, l_str("key", REQ, G_STR_KEY), l_str("value", OPT, G_STR))), 2000, op, 0);
    }
    {
        pq_writer_opts ob = o;
        ob.page_max_bytes = 4096;
        ob.page_max_rows = 20000;
        emit("pages_by_bytes_big_strings", COLS(
            leaf("big", OPT, PQ_BYTE_ARRAY, 0, lt_kind(PQ_LT_STRING), "string", G_STR_BIG),
            l_i64("i", OPT, G_I64)), 400, ob, 0);
    }
}

/* Files: statistics (rising values, small row groups and pages). */
static void matrix_statistics(void)
{
    pq_writer_opts o = base_opts();
    for (int v = 1; v <= 2; v++) {
        pq_writer_opts os = o;
        os.page_version = v;
        os.row_group_max_rows = 250;
        os.page_max_rows = 60;
        for (int dict = 0; dict <= 1; dict++) {
            char name[128];
            snprintf(name, sizeof name, "stats_rowgroups_rising%s_v%d", dict ? "_dictionary" : "", v);
            emit(own(strdup(name)), COLS(
                with_enc(l_i32("i32", OPT, G_MONO_I32), PQ_ENC_AUTO, dict),
                with_enc(leaf("u32", OPT, PQ_INT32, 0, lt_int(32, false), "uint32", G_MONO_U32), PQ_ENC_AUTO, dict),
                with_enc(l_i64("i64", OPT, G_MONO_I64), PQ_ENC_AUTO, dict),
                with_enc(leaf("u64", OPT, PQ_INT64, 0, lt_int(64, false), "uint64", G_MONO_U64), PQ_ENC_AUTO, dict),
                with_enc(leaf("f", OPT, PQ_FLOAT, 0, lt_none(), "float", G_MONO_FLOAT), PQ_ENC_AUTO, dict),
                with_enc(l_double("d", OPT, G_MONO_DOUBLE), PQ_ENC_AUTO, dict),
                with_enc(leaf("dec_flba", OPT, PQ_FIXED_LEN_BYTE_ARRAY, 16, lt_dec(38, 4), "decimal", G_MONO_DEC), PQ_ENC_AUTO, dict),
                with_enc(leaf("dec_i64", OPT, PQ_INT64, 0, lt_dec(18, 2), "decimal", G_MONO_DEC), PQ_ENC_AUTO, dict),
                with_enc(leaf("dec_bin", OPT, PQ_BYTE_ARRAY, 0, lt_dec(30, 0), "decimal", G_MONO_DEC), PQ_ENC_AUTO, dict),
                with_enc(l_str("s", OPT, G_MONO_STR), PQ_ENC_AUTO, dict),
                with_enc(leaf("date", OPT, PQ_INT32, 0, lt_kind(PQ_LT_DATE), "date", G_MONO_DATE), PQ_ENC_AUTO, dict)),
                3000, os, 0);
        }
    }
}

/* Files: bloom filters on every filterable type (duckdb-filter probes
 * them with equality on present values: a false negative loses rows). */
static void matrix_bloom(void)
{
    pq_writer_opts o = base_opts();
    {
        pq_writer_opts obf = o;
        obf.row_group_max_rows = 500;
        emit("bloom_all_types", COLS(
            with_bloom(l_i32("i32", OPT, G_I32)), with_bloom(l_i64("i64", OPT, G_I64)),
            with_bloom(l_int("u64", 64, false)), with_bloom(l_int("u32", 32, false)),
            with_bloom(l_float("f", OPT)), with_bloom(l_double("d", OPT, G_DOUBLE)),
            with_bloom(l_str("s", OPT, G_STR)), with_bloom(l_fixed("fx", OPT, 9)),
            with_bloom(l_dec("dec", PQ_FIXED_LEN_BYTE_ARRAY, 16, 38, 6)),
            with_bloom(l_dec("dec64", PQ_INT64, 0, 18, 3)),
            with_bloom(leaf("date", OPT, PQ_INT32, 0, lt_kind(PQ_LT_DATE), "date", G_DATE))), 3000, obf, 0);
        obf.page_version = 1;
        obf.codec = PQ_CODEC_SNAPPY;
        emit("bloom_dictionary_strings_v1", COLS(
            with_bloom(with_enc(l_str("s", OPT, G_STR), PQ_ENC_AUTO, 1)),
            with_bloom(with_enc(l_i64("i64", OPT, G_I64), PQ_ENC_AUTO, 1))), 3000, obf, 0);
    }
}

/* Files: the writer's own defaults, and row groups cut by bytes. */
static void matrix_defaults(void)
{
    pq_writer_opts o = base_opts();
    {
        pq_writer_opts od;
        gtype *c[6];
        pq_writer_opts_default(&od);
        mixed_cols(c);
        emit("defaults_60k_rows", c, 6, 60000, od, 0);
        pq_writer_opts_default(&od);
        od.row_group_max_rows = 0;
        od.row_group_max_bytes = 200000;
        emit("rowgroups_by_bytes_nested", COLS(
            l_i64("id", REQ, G_I64_SEQ), l_str("s", OPT, G_STR),
            list_of("items", OPT, GROUP("element", OPT, l_i32("a", OPT, G_I32),
                list_of("tags", OPT, l_str("element", OPT, G_STR)))),
            map_of("m", OPT, l_str("key", REQ, G_STR_KEY), l_double("value", OPT, G_DOUBLE))),
            20000, od, F_RG_BY_BYTES);
    }
    {
        pq_writer_opts on = o;
        on.crc = false;
        on.statistics = false;
        on.page_index = false;
        gtype *c[6];
        mixed_cols(c);
        emit("opts_no_crc_stats_index", c, 6, 2000, on, 0);
    }
    {
        gtype *c[6];
        mixed_cols(c);
        emit("empty_zero_rows", c, 6, 0, o, 0);
        mixed_cols(c);
        emit("one_row", c, 6, 1, o, 0);
    }
}

/* Every file of the matrix, in the order they are written (the PRNG
 * stream, and so every value, depends on that order). */
void matrix(void)
{
    matrix_types();
    matrix_nesting();
    matrix_encodings();
    matrix_codecs();
    matrix_row_groups();
    matrix_statistics();
    matrix_bloom();
    matrix_defaults();
}
