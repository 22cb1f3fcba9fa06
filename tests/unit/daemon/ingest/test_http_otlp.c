/* test_http_otlp.c - OTLP/HTTP logs in JSON (daemon/ingest/http_otlp_json.c)
 * against the proto3 JSON mapping as OTLP uses it: enums as numbers or
 * their names, 64-bit integers as strings or numbers, field names in
 * lowerCamelCase or as in the .proto, trace and span ids as hex (OTLP's
 * exception to proto3's base64). Each test compares the records emitted
 * with the JSON lines README.md "Inputs over HTTP" names. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "http_otlp.h"

typedef struct out {
    char text[8192];
    size_t len;
} out;

static int collect(void *user, const char *line, size_t len)
{
    out *o = user;
    assert_true(o->len + len + 1 < sizeof o->text);
    memcpy(o->text + o->len, line, len);
    o->len += len;
    o->text[o->len++] = '\n';
    o->text[o->len] = '\0';
    return 0;
}

/* The records of a request with one resource, one scope and these log
 * records (a JSON array's members), one line each. */
static int decode(const char *records, out *o, pq_err *err)
{
    char body[4096];
    snprintf(body, sizeof body,
             "{\"resourceLogs\":[{\"resource\":{\"attributes\":[]},\"scopeLogs\":[{"
             "\"logRecords\":[%s]}]}]}", records);
    memset(o, 0, sizeof *o);
    return ot_decode_json(body, strlen(body), collect, o, err);
}

static void expect(const char *records, const char *want)
{
    out o;
    pq_err err = {0};
    int rc = decode(records, &o, &err);
    if (rc != 0)
        fail_msg("%s: rc %d: %s", records, rc, err.msg);
    if (strcmp(o.text, want) != 0)
        fail_msg("%s:\n got  %s want %s", records, o.text, want);
}

static void test_otlp_json_severity_number_as_enum_name_or_number(void **state)
{
    (void)state;
    expect("{\"severityNumber\":\"SEVERITY_NUMBER_INFO\"}", "{\"severity_number\":9}\n");
    expect("{\"severityNumber\":\"SEVERITY_NUMBER_TRACE\"}", "{\"severity_number\":1}\n");
    expect("{\"severityNumber\":\"SEVERITY_NUMBER_WARN3\"}", "{\"severity_number\":15}\n");
    expect("{\"severityNumber\":\"SEVERITY_NUMBER_FATAL4\"}", "{\"severity_number\":24}\n");
    expect("{\"severityNumber\":17}", "{\"severity_number\":17}\n");
    expect("{\"severityNumber\":\"21\"}", "{\"severity_number\":21}\n");
    /* the default and names OTLP does not have: left out, as absent fields are */
    expect("{\"severityNumber\":\"SEVERITY_NUMBER_UNSPECIFIED\"}", "{}\n");
    expect("{\"severityNumber\":\"SEVERITY_NUMBER_INFO5\"}", "{}\n");
    expect("{\"severityNumber\":\"SEVERITY_NUMBER_LOUD\"}", "{}\n");
    expect("{\"severityNumber\":\"INFO\"}", "{}\n");
    expect("{\"severityNumber\":25}", "{}\n");
}

/* 1700000000.123456789 s is 2023-11-14T22:13:20.123456789Z. */
static void test_otlp_json_int64_as_string_or_number(void **state)
{
    (void)state;
    const char *t = "{\"time\":\"2023-11-14T22:13:20.123456789Z\","
                    "\"observed_time\":\"2023-11-14T22:13:21.000000000Z\"}\n";
    expect("{\"timeUnixNano\":\"1700000000123456789\","
           "\"observedTimeUnixNano\":\"1700000001000000000\"}", t);
    expect("{\"timeUnixNano\":1700000000123456789,\"observedTimeUnixNano\":1700000001000000000}", t);
    expect("{\"body\":{\"intValue\":\"-9223372036854775808\"}}",
           "{\"body\":-9223372036854775808}\n");
    expect("{\"body\":{\"intValue\":42}}", "{\"body\":42}\n");
    out o;
    pq_err err = {0};
    assert_int_not_equal(decode("{\"timeUnixNano\":\"17e17\"}", &o, &err), 0);
    assert_int_not_equal(decode("{\"body\":{\"intValue\":\"9223372036854775808\"}}", &o, &err), 0);
}

/* traceId / spanId are hex in OTLP JSON (not proto3's base64); upper case
 * comes out lower case. */
static void test_otlp_json_ids_are_hex(void **state)
{
    (void)state;
    expect("{\"traceId\":\"5B8EFFF798038103D269B633813FC60C\",\"spanId\":\"eee19b7ec3c1b174\","
           "\"flags\":1}",
           "{\"trace_id\":\"5b8efff798038103d269b633813fc60c\","
           "\"span_id\":\"eee19b7ec3c1b174\",\"flags\":1}\n");
    expect("{\"traceId\":\"\",\"spanId\":\"\"}", "{}\n");     /* empty: absent */
    out o;
    pq_err err = {0};
    assert_int_equal(decode("{\"traceId\":\"W47/95gDgQPSabYzgT/GDA==\"}", &o, &err), PQ_EPARSE);
    assert_int_equal(o.len, 0);
}

/* Field names as in the .proto (snake_case) read as their lowerCamelCase
 * forms, as proto3 JSON parsers must accept both. */
static void test_otlp_json_proto_field_names(void **state)
{
    (void)state;
    const char *snake =
        "{\"resource_logs\":[{\"resource\":{\"attributes\":[{\"key\":\"service.name\","
        "\"value\":{\"string_value\":\"svc\"}}]},\"scope_logs\":[{\"scope\":{\"name\":\"s\"},"
        "\"log_records\":[{\"time_unix_nano\":\"1700000000000000000\",\"severity_number\":"
        "\"SEVERITY_NUMBER_ERROR\",\"severity_text\":\"ERROR\",\"body\":{\"kvlist_value\":"
        "{\"values\":[{\"key\":\"k\",\"value\":{\"bool_value\":true}}]}},\"trace_id\":"
        "\"5b8efff798038103d269b633813fc60c\"}]}]}]}";
    out o = {0};
    pq_err err = {0};
    assert_int_equal(ot_decode_json(snake, strlen(snake), collect, &o, &err), 0);
    assert_string_equal(o.text,
                        "{\"time\":\"2023-11-14T22:13:20.000000000Z\",\"severity_text\":\"ERROR\","
                        "\"severity_number\":17,\"body\":{\"k\":true},"
                        "\"trace_id\":\"5b8efff798038103d269b633813fc60c\","
                        "\"resource\":{\"service.name\":\"svc\"},\"scope\":{\"name\":\"s\"}}\n");
    /* a near miss is not the field */
    expect("{\"time_unixNano\":\"1700000000000000000\",\"severitynumber\":9}", "{}\n");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_otlp_json_severity_number_as_enum_name_or_number),
        cmocka_unit_test(test_otlp_json_int64_as_string_or_number),
        cmocka_unit_test(test_otlp_json_ids_are_hex),
        cmocka_unit_test(test_otlp_json_proto_field_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
