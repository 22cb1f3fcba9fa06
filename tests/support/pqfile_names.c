/* pqfile_names.c - names of physical types, codecs, encodings, page
 * types, repetitions and converted types, for messages and dumps. */
#include "pqfile.h"

#define NAME_AT(tab, i) \
    (((i) >= 0 && (size_t)(i) < sizeof tab / sizeof tab[0] && tab[i]) ? tab[i] : "?")

const char *pqf_type_name(int type)
{
    static const char *const t[] = { "BOOLEAN", "INT32", "INT64", "INT96",
        "FLOAT", "DOUBLE", "BYTE_ARRAY", "FIXED_LEN_BYTE_ARRAY" };
    return NAME_AT(t, type);
}

const char *pqf_codec_name(int codec)
{
    static const char *const t[] = { "UNCOMPRESSED", "SNAPPY", "GZIP", "LZO",
        "BROTLI", "LZ4", "ZSTD", "LZ4_RAW" };
    return NAME_AT(t, codec);
}

const char *pqf_encoding_name(int enc)
{
    static const char *const t[] = { "PLAIN", NULL, "PLAIN_DICTIONARY", "RLE",
        "BIT_PACKED", "DELTA_BINARY_PACKED", "DELTA_LENGTH_BYTE_ARRAY",
        "DELTA_BYTE_ARRAY", "RLE_DICTIONARY", "BYTE_STREAM_SPLIT", "ALP" };
    return NAME_AT(t, enc);
}

const char *pqf_page_type_name(int type)
{
    static const char *const t[] = { "DATA_PAGE", "INDEX_PAGE",
        "DICTIONARY_PAGE", "DATA_PAGE_V2" };
    return NAME_AT(t, type);
}

const char *pqf_repetition_name(int rep)
{
    static const char *const t[] = { "required", "optional", "repeated" };
    return NAME_AT(t, rep);
}

const char *pqf_converted_name(int ct)
{
    static const char *const t[] = { "UTF8", "MAP", "MAP_KEY_VALUE", "LIST",
        "ENUM", "DECIMAL", "DATE", "TIME_MILLIS", "TIME_MICROS",
        "TIMESTAMP_MILLIS", "TIMESTAMP_MICROS", "UINT_8", "UINT_16", "UINT_32",
        "UINT_64", "INT_8", "INT_16", "INT_32", "INT_64", "JSON", "BSON",
        "INTERVAL" };
    return NAME_AT(t, ct);
}
