/* fuzz_s3_xml.c - libFuzzer target for S3's XML reply reader
 * (daemon/s3/s3_xml.c): every entry point on the same bytes; none may
 * crash, read out of bounds or leave a value unterminated. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "s3_xml.h"

static int on_upload(void *user, const char *key, const char *id)
{
    size_t *n = user;
    *n += strlen(key) + strlen(id);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *p = (const char *)data;
    pq_err err = {0};
    s3_xml_error e;
    char id[64];
    s3_xml_uploads page;
    size_t n = 0;
    if (s3_xml_error_parse(p, size, &e, &err) == 1 && strlen(e.code) >= sizeof e.code)
        __builtin_trap();
    if (s3_xml_text(p, size, "UploadId", id, sizeof id, &err) == 1 && strlen(id) >= sizeof id)
        __builtin_trap();
    s3_xml_list_uploads(p, size, on_upload, &n, &page, &err);
    return 0;
}
