/* test_s3_sigv4.c - AWS Signature Version 4 (daemon/s3/s3_sigv4.c) against
 * published vectors:
 *  - AWS's SigV4 test suite (as carried by awslabs/aws-c-auth under
 *    tests/aws-signing-test-suite/v4/): get-vanilla-query-order-key-case,
 *    get-vanilla-with-session-token, post-x-www-form-urlencoded
 *    (header-canonical-request.txt, header-string-to-sign.txt);
 *    credentials AKIDEXAMPLE / wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY,
 *    us-east-1, service "service", 20150830T123600Z.
 *  - the S3 API reference, "Signature Calculations for the Authorization
 *    Header", example GET Object (examplebucket, test.txt, Range
 *    bytes=0-9, 20130524T000000Z).
 * Plus AWS URI encoding and the query rules radosgw needs. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "s3_sigv4.h"

static s3_creds suite_creds(void)
{
    s3_creds c = {0};
    strcpy(c.access_key, "AKIDEXAMPLE");
    strcpy(c.secret_key, "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY");
    return c;
}

static void assert_auth(const s3_creds *c, const char *region, const char *service,
                        const char *date, const s3_sig_request *r, const char *want)
{
    pq_buf auth;
    pq_buf_init(&auth);
    pq_err err = {0};
    assert_int_equal(s3_sign(c, region, service, date, r, &auth, &err), 0);
    assert_string_equal((const char *)auth.data, want);
    pq_buf_free(&auth);
}

static void test_s3_sigv4_suite_get_vanilla_query_order_key_case(void **state)
{
    (void)state;
    s3_creds c = suite_creds();
    s3_param q[] = {{"Param2", "value2"}, {"Param1", "value1"}};
    s3_header h[] = {{"Host", "example.amazonaws.com"}, {"X-Amz-Date", "20150830T123600Z"}};
    s3_sig_request r = {"GET", "/", q, 2, h, 2, S3_EMPTY_SHA256};
    assert_auth(&c, "us-east-1", "service", "20150830T123600Z", &r,
                "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/"
                "aws4_request, SignedHeaders=host;x-amz-date, Signature="
                "b97d918cfa904a5beff61c982a1b6f458b799221646efd99d3219ec94cdf2500");
}

static void test_s3_sigv4_suite_get_vanilla_with_session_token(void **state)
{
    (void)state;
    s3_creds c = suite_creds();
    const char *tok = "6e86291e8372ff2a2260956d9b8aae1d763fbf315fa00fa31553b73ebf194267";
    strcpy(c.session_token, tok);
    s3_header h[] = {{"Host", "example.amazonaws.com"}, {"X-Amz-Date", "20150830T123600Z"},
                     {"X-Amz-Security-Token", tok}};
    s3_sig_request r = {"GET", "/", NULL, 0, h, 3, S3_EMPTY_SHA256};
    assert_auth(&c, "us-east-1", "service", "20150830T123600Z", &r,
                "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/"
                "aws4_request, SignedHeaders=host;x-amz-date;x-amz-security-token, Signature="
                "07ec1639c89043aa0e3e2de82b96708f198cceab042d4a97044c66dd9f74e7f8");
}

static void test_s3_sigv4_suite_post_form_canonical_request_and_string_to_sign(void **state)
{
    (void)state;
    s3_header h[] = {{"Content-Type", "application/x-www-form-urlencoded"},
                     {"Host", "example.amazonaws.com"},
                     {"Content-Length", "13"},
                     {"X-Amz-Date", "20150830T123600Z"}};
    s3_sig_request r = {"POST", "/", NULL, 0, h, 4, S3_EMPTY_SHA256};
    pq_buf canon, sh, sts;
    pq_buf_init(&canon);
    pq_buf_init(&sh);
    pq_buf_init(&sts);
    pq_err err = {0};
    assert_int_equal(s3_canonical_request(&r, &canon, &sh, &err), 0);
    const char *want = "POST\n/\n\ncontent-length:13\ncontent-type:application/x-www-form-"
                       "urlencoded\nhost:example.amazonaws.com\nx-amz-date:20150830T123600Z\n\n"
                       "content-length;content-type;host;x-amz-date\n"
                       "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
    assert_int_equal(canon.len, strlen(want));
    assert_memory_equal(canon.data, want, canon.len);
    assert_int_equal(s3_string_to_sign("20150830T123600Z", "us-east-1", "service",
                                       (const char *)canon.data, canon.len, &sts), 0);
    const char *want_sts = "AWS4-HMAC-SHA256\n20150830T123600Z\n20150830/us-east-1/service/"
                           "aws4_request\n0eccf3fbe5a3c5d3df1d87c98cdf5dbde190d26aabdd91c9407db9"
                           "30a0c00896";
    assert_int_equal(sts.len, strlen(want_sts));
    assert_memory_equal(sts.data, want_sts, sts.len);
    pq_buf_free(&canon);
    pq_buf_free(&sh);
    pq_buf_free(&sts);
}

static void test_s3_sigv4_s3_reference_get_object_example(void **state)
{
    (void)state;
    s3_creds c = {0};
    strcpy(c.access_key, "AKIAIOSFODNN7EXAMPLE");
    strcpy(c.secret_key, "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY");
    s3_header h[] = {{"Host", "examplebucket.s3.amazonaws.com"},
                     {"Range", "bytes=0-9"},
                     {"x-amz-content-sha256", S3_EMPTY_SHA256},
                     {"x-amz-date", "20130524T000000Z"}};
    s3_sig_request r = {"GET", "/test.txt", NULL, 0, h, 4, S3_EMPTY_SHA256};
    assert_auth(&c, "us-east-1", "s3", "20130524T000000Z", &r,
                "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/"
                "aws4_request, SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, "
                "Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41");
}

static void test_s3_sigv4_uri_encoding_keeps_unreserved_and_slash_only(void **state)
{
    (void)state;
    pq_buf b;
    pq_buf_init(&b);
    const char *key = "dt=2024-05-01/a b+c~_.x\xe1\x88\xb4";
    assert_int_equal(s3_uri_encode(&b, key, strlen(key), 1), 0);
    const char *want = "dt%3D2024-05-01/a%20b%2Bc~_.x%E1%88%B4";
    assert_int_equal(b.len, strlen(want));
    assert_memory_equal(b.data, want, b.len);
    pq_buf_reset(&b);
    assert_int_equal(s3_uri_encode(&b, "a/b", 3, 0), 0);
    assert_memory_equal(b.data, "a%2Fb", 5);
    pq_buf_free(&b);
}

static void test_s3_sigv4_query_sorted_with_equals_on_empty_values(void **state)
{
    (void)state;
    pq_buf b;
    pq_buf_init(&b);
    s3_param q[] = {{"uploads", NULL}, {"prefix", "p/x y"}, {"max-uploads", "1000"}};
    assert_int_equal(s3_canonical_query(&b, q, 3), 0);
    const char *want = "max-uploads=1000&prefix=p%2Fx%20y&uploads=";
    assert_int_equal(b.len, strlen(want));
    assert_memory_equal(b.data, want, b.len);
    pq_buf_free(&b);
}

static void test_s3_sigv4_header_values_trimmed_and_bad_names_refused(void **state)
{
    (void)state;
    s3_header h[] = {{"host", "  h   "}, {"X-Amz-Meta-A", "a   b  c"}};
    s3_sig_request r = {"PUT", "/k", NULL, 0, h, 2, "UNSIGNED-PAYLOAD"};
    pq_buf canon, sh;
    pq_buf_init(&canon);
    pq_buf_init(&sh);
    pq_err err = {0};
    assert_int_equal(s3_canonical_request(&r, &canon, &sh, &err), 0);
    const char *want = "PUT\n/k\n\nhost:h\nx-amz-meta-a:a b c\n\nhost;x-amz-meta-a\n"
                       "UNSIGNED-PAYLOAD";
    assert_int_equal(canon.len, strlen(want));
    assert_memory_equal(canon.data, want, canon.len);
    s3_header bad[] = {{"ho st", "x"}};
    r.headers = bad;
    r.n_headers = 1;
    assert_int_equal(s3_canonical_request(&r, &canon, &sh, &err), PQ_EINVAL);
    assert_non_null(strstr(err.msg, "0x20"));
    pq_buf_free(&canon);
    pq_buf_free(&sh);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_s3_sigv4_suite_get_vanilla_query_order_key_case),
        cmocka_unit_test(test_s3_sigv4_suite_get_vanilla_with_session_token),
        cmocka_unit_test(test_s3_sigv4_suite_post_form_canonical_request_and_string_to_sign),
        cmocka_unit_test(test_s3_sigv4_s3_reference_get_object_example),
        cmocka_unit_test(test_s3_sigv4_uri_encoding_keeps_unreserved_and_slash_only),
        cmocka_unit_test(test_s3_sigv4_query_sorted_with_equals_on_empty_values),
        cmocka_unit_test(test_s3_sigv4_header_values_trimmed_and_bad_names_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
