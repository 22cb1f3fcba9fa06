/* http_bulk.h - the Elasticsearch bulk API (POST /_bulk, /{index}/_bulk;
 * README.md "Inputs over HTTP"): action and document lines in, documents
 * of index and create actions out to the spool as records, update and
 * delete answered per item with an error, and Elasticsearch's bulk
 * response back (one item per action, errors true when any failed).
 *
 * Thread: the loop thread. */
#ifndef PQ_HTTP_BULK_H
#define PQ_HTTP_BULK_H

#include <stddef.h>

#include "http_reply.h"
#include "json.h"

/* index: the path's default index (index_len 0: none). */
void hb_bulk(const hp_route_ctx *ctx, const hp_request *rq, const char *index,
             size_t index_len, hp_reply *r);

/* The action line's parts (hb_action_parse): the action (0 index, 1
 * create, 2 update, 3 delete, -1 other) and its _index / _id, pointing
 * into the line or the parser's scratch (valid until the next parse). */
typedef struct hb_action {
    int kind;
    char index[256], id[256];
    size_t index_len, id_len;
} hb_action;

/* 0, or PQ_EPARSE with err saying why ("expected one action object"). */
int hb_action_parse(json_parser *p, const char *line, size_t len, hb_action *a, pq_err *err);

#endif
