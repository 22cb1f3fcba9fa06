/* pqcrypt_int.h - what the parts of the test-only decrypting reader
 * (pqcrypt*.c) share: the state of the column chunk being read
 * (chunk_ctx) and the helpers each part offers the others. Tests use
 * pqcrypt.h. Single-threaded, like the tests that call it. */
#ifndef PQCRYPT_INT_H
#define PQCRYPT_INT_H

#include "decompress.h"
#include "decrypt.h"
#include "pqcrypt.h"
#include "thrift_read.h"

typedef struct chunk_ctx {
    pqc_file *f;
    pqc_column *c;
    const pq_crypto_key *key;  /* NULL: plaintext column */
    bool skip_crc;
    int32_t rg, col;
    const tr_node *md;         /* ColumnMetaData (decrypted if it was encrypted) */
    int codec;
    int64_t num_values;
    size_t start, end;
    /* data page header offsets, for the offset index check */
    size_t *page_off, *page_len;
    int64_t *page_first_row;
    size_t npages, pages_cap;
} chunk_ctx;

/* pqcrypt.c */
uint32_t pqc_rd_le32(const uint8_t *p);
void pqc_set_fail(pqc_file *f, int type, int32_t rg, int32_t col, int32_t page,
                  size_t off, int code);
int pqc_add_module(pqc_file *f, int type, int32_t rg, int32_t col, int32_t page,
                   size_t off, size_t len, bool gcm, bool in_footer);
int pqc_col_push(pqc_column *c, const void *p, size_t len);
int pqc_col_levels(pqc_column *c, size_t n, uint16_t **def, uint16_t **rep);

/* pqcrypt_keys.c */
const pq_crypto_key *pqc_find_key(const pqc_opts *o, const uint8_t *id, size_t len);
int pqc_module_aad(const pqc_file *f, pq_buf *aad, int type, int32_t rg, int32_t col,
                   int32_t page, pq_err *err);
int pqc_gcm_at(pqc_file *f, const pq_crypto_key *key, int type, int32_t rg, int32_t col,
               int32_t page, size_t off, size_t limit, pq_buf *out, size_t *consumed,
               pq_err *err);

/* pqcrypt_footer.c */
int pqc_read_whole(const char *path, uint8_t **out, size_t *n, pq_err *err);
int pqc_open_encrypted_footer(pqc_file *f, const pqc_opts *o, size_t start, size_t len,
                              pq_err *err);
int pqc_open_plain_footer(pqc_file *f, const pqc_opts *o, size_t start, size_t len,
                          pq_err *err);

/* pqcrypt_values.c */
int pqc_plain_values(const pqc_column *c, const uint8_t *p, size_t len, size_t n,
                     pqt_bytes *out, pq_err *err);
int pqc_decode_values(pqc_column *c, int enc, const uint8_t *p, size_t len, size_t n,
                      const pqt_bytes *dict, pq_err *err);

/* pqcrypt_pages.c */
int pqc_read_page(chunk_ctx *x, size_t *pos, int32_t *data_ordinal, bool first,
                  pqt_bytes *dict, int64_t *rows_so_far, pq_err *err);

/* pqcrypt_index.c */
int pqc_check_offset_index(chunk_ctx *x, pq_err *err);
int pqc_check_column_index(chunk_ctx *x, pq_err *err);
int pqc_read_bloom(chunk_ctx *x, pq_err *err);

/* pqcrypt_chunk.c */
int pqc_read_chunk(pqc_file *f, const pqc_opts *o, int32_t rg, int32_t col, pq_err *err);

#endif
