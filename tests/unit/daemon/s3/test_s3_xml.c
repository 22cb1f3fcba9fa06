/* test_s3_xml.c - S3's XML replies (daemon/s3/s3_xml.c): the documents
 * S3 and radosgw send (Error, InitiateMultipartUploadResult, a 200
 * CompleteMultipartUpload holding an Error, ListMultipartUploadsResult
 * with paging), entities, CDATA, and malformed input refused. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "s3_xml.h"

#define DOC(s) s, sizeof(s) - 1

static void test_s3_xml_error_document_fields(void **state)
{
    (void)state;
    s3_xml_error e;
    pq_err err = {0};
    assert_int_equal(s3_xml_error_parse(DOC("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        "<Error><Code>NoSuchBucket</Code><Message>The specified bucket does not exist"
        "</Message><BucketName>logs</BucketName><Key>a&amp;b.parquet</Key>"
        "<RequestId>tx0001</RequestId><HostId>h</HostId></Error>"), &e, &err), 1);
    assert_string_equal(e.code, "NoSuchBucket");
    assert_string_equal(e.message, "The specified bucket does not exist");
    assert_string_equal(e.key, "a&b.parquet");
    assert_string_equal(e.request_id, "tx0001");
    /* radosgw's bare error: code only */
    assert_int_equal(s3_xml_error_parse(DOC("<Error><Code>AccessDenied</Code></Error>"), &e,
                                        &err), 1);
    assert_string_equal(e.code, "AccessDenied");
    assert_string_equal(e.message, "");
}

static void test_s3_xml_complete_result_or_error_inside_a_200(void **state)
{
    (void)state;
    s3_xml_error e;
    pq_err err = {0};
    char etag[80];
    const char ok[] = "<CompleteMultipartUploadResult xmlns=\"http://s3.amazonaws.com/doc/"
                      "2006-03-01/\"><Location>http://h/b/k</Location><Bucket>b</Bucket>"
                      "<Key>k</Key><ETag>&quot;3858f62230ac3c915f300c664312c11f-9&quot;</ETag>"
                      "</CompleteMultipartUploadResult>";
    assert_int_equal(s3_xml_error_parse(ok, sizeof ok - 1, &e, &err), 0);
    assert_int_equal(s3_xml_text(ok, sizeof ok - 1, "ETag", etag, sizeof etag, &err), 1);
    assert_string_equal(etag, "\"3858f62230ac3c915f300c664312c11f-9\"");
    assert_int_equal(s3_xml_error_parse(DOC("<?xml version=\"1.0\"?>\n\n<Error><Code>"
                     "InternalError</Code><Message>We encountered an internal error. Please "
                     "try again.</Message></Error>"), &e, &err), 1);
    assert_string_equal(e.code, "InternalError");
}

static void test_s3_xml_initiate_gives_the_upload_id(void **state)
{
    (void)state;
    char id[128];
    pq_err err = {0};
    assert_int_equal(s3_xml_text(DOC("<?xml version=\"1.0\"?><InitiateMultipartUploadResult "
                     "xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"><Bucket>b</Bucket>"
                     "<Key>p/k.parquet</Key><UploadId>2~abc_DEF-123</UploadId>"
                     "</InitiateMultipartUploadResult>"), "UploadId", id, sizeof id, &err), 1);
    assert_string_equal(id, "2~abc_DEF-123");
    assert_int_equal(s3_xml_text(DOC("<A><B>x</B></A>"), "UploadId", id, sizeof id, &err), 0);
    assert_string_equal(id, "");
}

typedef struct seen {
    int n;
    char keys[4][64], ids[4][64];
} seen;

static int on_upload(void *user, const char *key, const char *id)
{
    seen *s = user;
    if (s->n < 4) {
        strncpy(s->keys[s->n], key, 63);
        strncpy(s->ids[s->n], id, 63);
    }
    s->n++;
    return 0;
}

static void test_s3_xml_list_uploads_with_paging(void **state)
{
    (void)state;
    seen s = {0};
    s3_xml_uploads page;
    pq_err err = {0};
    assert_int_equal(s3_xml_list_uploads(DOC("<ListMultipartUploadsResult><Bucket>b</Bucket>"
        "<KeyMarker></KeyMarker><NextKeyMarker>p/b.parquet</NextKeyMarker>"
        "<NextUploadIdMarker>2~y</NextUploadIdMarker><MaxUploads>2</MaxUploads>"
        "<IsTruncated>true</IsTruncated>"
        "<Upload><Key>p/a.parquet</Key><UploadId>2~x</UploadId><Initiator><ID>u</ID>"
        "</Initiator><Initiated>2024-05-01T00:00:00.000Z</Initiated></Upload>"
        "<Upload><Key><![CDATA[p/b<1>.parquet]]></Key><UploadId>2~y</UploadId></Upload>"
        "</ListMultipartUploadsResult>"), on_upload, &s, &page, &err), 0);
    assert_int_equal(s.n, 2);
    assert_string_equal(s.keys[0], "p/a.parquet");
    assert_string_equal(s.ids[0], "2~x");
    assert_string_equal(s.keys[1], "p/b<1>.parquet");
    assert_true(page.truncated);
    assert_string_equal(page.next_key, "p/b.parquet");
    assert_string_equal(page.next_upload_id, "2~y");
}

static void test_s3_xml_character_references_decode_to_utf8(void **state)
{
    (void)state;
    char out[32];
    pq_err err = {0};
    assert_int_equal(s3_xml_text(DOC("<K>&#65;&#x1234;&lt;&apos;</K>"), "K", out, sizeof out,
                                 &err), 1);
    assert_string_equal(out, "A\xe1\x88\xb4<'");
}

static void test_s3_xml_malformed_documents_are_refused(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "<A><B>x</A></B>", "<A>", "<A>&bogus;</A>", "<A>&#0;</A>", "<A>&#xD800;</A>",
        "<A><!-- x </A>", "<A x=\"1>", "</A>", "junk<A/>", "<A><B x='<'/></A>", "<>x</>",
        "<A>&#12345678901;</A>",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        pq_err err = {0};
        char out[8];
        int rc = s3_xml_text(bad[i], strlen(bad[i]), "Z", out, sizeof out, &err);
        if (rc != PQ_EPARSE)
            fail_msg("accepted: %s", bad[i]);
        assert_non_null(strstr(err.msg, "malformed XML"));
    }
    /* deeply nested */
    char deep[200] = "";
    for (int i = 0; i < 20; i++)
        strcat(deep, "<a>");
    pq_err err = {0};
    char out[8];
    assert_int_equal(s3_xml_text(deep, strlen(deep), "Z", out, sizeof out, &err), PQ_EPARSE);
}

static void test_s3_xml_long_values_are_truncated_not_overflowed(void **state)
{
    (void)state;
    char doc[9000] = "<Error><Code>";
    memset(doc + strlen(doc), 'C', 6000);
    strcat(doc, "</Code></Error>");
    s3_xml_error e;
    pq_err err = {0};
    assert_int_equal(s3_xml_error_parse(doc, strlen(doc), &e, &err), 1);
    assert_int_equal(strlen(e.code), sizeof e.code - 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_s3_xml_error_document_fields),
        cmocka_unit_test(test_s3_xml_complete_result_or_error_inside_a_200),
        cmocka_unit_test(test_s3_xml_initiate_gives_the_upload_id),
        cmocka_unit_test(test_s3_xml_list_uploads_with_paging),
        cmocka_unit_test(test_s3_xml_character_references_decode_to_utf8),
        cmocka_unit_test(test_s3_xml_malformed_documents_are_refused),
        cmocka_unit_test(test_s3_xml_long_values_are_truncated_not_overflowed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
