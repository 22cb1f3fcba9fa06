/* schema_thrift.c - the footer's schema: the tree as FileMetaData's list
 * of SchemaElement (depth-first pre-order), with LogicalType, in the Thrift
 * compact protocol, field ids as in parquet.thrift. Here, not in
 * writer/file/metadata.c, because pq_schema_finish encodes it once for
 * every footer of the schema (a partitioned convert writes one per file)
 * and the schema must not depend on the file module that uses it.
 *
 * Threads: any; reads the schema only. */
#include "schema.h"
#include "schema_tree.h"
#include "thrift.h"

static void write_time_unit(pq_thrift *t, int16_t fid, pq_time_unit unit)
{
    pq_thrift_field_struct_begin(t, fid);
    pq_thrift_field_struct_begin(t, (int16_t)unit); /* MILLIS=1 MICROS=2 NANOS=3 */
    pq_thrift_struct_end(t);
    pq_thrift_struct_end(t);
}

static void write_logical_type(pq_thrift *t, const pq_logical *lt)
{
    pq_thrift_field_struct_begin(t, 10);
    pq_thrift_field_struct_begin(t, (int16_t)lt->kind);
    switch (lt->kind) {
    case PQ_LT_DECIMAL:
        pq_thrift_field_i32(t, 1, lt->scale);
        pq_thrift_field_i32(t, 2, lt->precision);
        break;
    case PQ_LT_TIME: case PQ_LT_TIMESTAMP:
        pq_thrift_field_bool(t, 1, lt->utc);
        write_time_unit(t, 2, lt->unit);
        break;
    case PQ_LT_INTEGER:
        pq_thrift_field_i8(t, 1, lt->bit_width);
        pq_thrift_field_bool(t, 2, lt->is_signed);
        break;
    case PQ_LT_VARIANT:
        if (lt->variant_version > 0)
            pq_thrift_field_i8(t, 1, lt->variant_version);
        break;
    case PQ_LT_GEOMETRY:
        if (lt->crs)
            pq_thrift_field_string(t, 1, lt->crs);
        break;
    case PQ_LT_GEOGRAPHY:
        if (lt->crs)
            pq_thrift_field_string(t, 1, lt->crs);
        pq_thrift_field_i32(t, 2, (int32_t)lt->algorithm);
        break;
    default:
        break;
    }
    pq_thrift_struct_end(t);
    pq_thrift_struct_end(t);
}

static void write_schema_element(pq_thrift *t, const pq_node *n, bool root)
{
    pq_thrift_struct_begin(t);
    if (n->is_leaf) {
        pq_thrift_field_i32(t, 1, n->type);
        if (n->type == PQ_FIXED_LEN_BYTE_ARRAY)
            pq_thrift_field_i32(t, 2, n->type_length);
    }
    if (!root)
        pq_thrift_field_i32(t, 3, n->repetition);
    pq_thrift_field_string(t, 4, n->name);
    if (!n->is_leaf)
        pq_thrift_field_i32(t, 5, (int32_t)n->n_children);
    if (n->converted != PQ_CT_NONE && !root)
        pq_thrift_field_i32(t, 6, n->converted);
    if (n->logical.kind == PQ_LT_DECIMAL) {
        pq_thrift_field_i32(t, 7, n->logical.scale);
        pq_thrift_field_i32(t, 8, n->logical.precision);
    }
    if (n->field_id >= 0)
        pq_thrift_field_i32(t, 9, n->field_id);
    if (n->logical.kind != PQ_LT_NONE && n->logical.kind != PQ_LT_INTERVAL && !root)
        write_logical_type(t, &n->logical);
    pq_thrift_struct_end(t);
}

/* The flattened schema is the depth-first pre-order of the tree. */
static void write_schema_tree(pq_thrift *t, const pq_schema *s, int id)
{
    const pq_node *n = &s->nodes[id];
    write_schema_element(t, n, id == 0);
    for (size_t i = 0; i < n->n_children; i++)
        write_schema_tree(t, s, n->children[i]);
}

void pq_schema_write_elements(pq_thrift *t, const pq_schema *s)
{
    write_schema_tree(t, s, 0);
}
