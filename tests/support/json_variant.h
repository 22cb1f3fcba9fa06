/* json_variant.h - a json_handler that feeds a JSON line's events straight
 * into a vr_builder, so tests and fuzz targets can turn JSON text into a
 * Variant with the real parser and builder:
 *     json_parse_line(&parser, line, len, &pqt_json_variant, &builder, &err);
 * Numbers go through vr_json_number (schema/variant/vnumber.c's rule). */
#ifndef PQ_TEST_JSON_VARIANT_H
#define PQ_TEST_JSON_VARIANT_H

#include "json.h"

extern const json_handler pqt_json_variant;

#endif
