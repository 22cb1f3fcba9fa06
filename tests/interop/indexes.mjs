#!/usr/bin/env node
// indexes.mjs - page index acceptance with a reader that is not ours: for
// every .parquet in DIR, hyparquet's readOffsetIndex / readColumnIndex
// decode every column chunk's OffsetIndex and (when present) ColumnIndex
// (PageIndex.md, parquet.thrift OffsetIndex / ColumnIndex), and the lists
// must describe the chunk's pages:
//   - each structure lies inside the file and uses exactly its length;
//   - OffsetIndex: at least one page; offsets strictly increasing, page 0
//     at the chunk's data_page_offset, every page inside the chunk and
//     clear of the next; first_row_index 0 for page 0, strictly
//     increasing, below the row group's num_rows;
//     unencoded_byte_array_data_bytes, if present, one entry per page;
//   - ColumnIndex: only with an OffsetIndex; null_pages, min_values,
//     max_values, null_counts, nan_counts one entry per page (histograms a
//     whole number per page); a known boundary_order; null pages with
//     empty bounds, other pages with bounds of the type's width (fixed-
//     width types) and, where hyparquet converts them to numbers or
//     strings, min <= max.
// A file has page indexes for all of its chunks or for none (a writer
// option); a mix fails.
//
// Each ColumnIndex is decoded twice: with the leaf's SchemaElement (typed
// bounds, what a reader gets) and with a bare FIXED_LEN_BYTE_ARRAY element,
// for which hyparquet's convertMetadata returns the bounds' bytes as
// stored. hyparquet 1.31.5 cannot convert the empty (byte[0]) bounds that
// PageIndex.md prescribes for null pages of DATE / TIMESTAMP columns
// (convertMetadata reads 4 or 8 bytes from them and throws); such chunks
// are counted and named in the PASS line, and checked from the raw decode.
// Legacy files whose data_page_offset points at the dictionary page
// (no dictionary_page_offset; parquet-mr 1.12) are accepted and counted.
// One line per file, PASS or FAIL (first problem); then "N passed, M
// failed"; exit 1 on any FAIL.
//
//   node indexes.mjs DIR
// The values inside the bounds are pq_walk's business (tests/tools).
import fs from 'node:fs';
import path from 'node:path';
import { parquetMetadata, readColumnIndex, readOffsetIndex } from 'hyparquet';

class Problem extends Error {}
const fail = (msg) => { throw new Problem(msg); };
const big = (v) => (v === undefined || v === null ? null : BigInt(v));

// Leaves in schema order = column chunk order.
function leaves(schema) {
  const out = [];
  let i = 1;
  function walk(el) {
    const idx = i++;
    if (!el.num_children) { out.push(schema[idx]); return; }
    for (let k = 0; k < el.num_children; k++) walk(schema[i]);
  }
  const root = schema[0];
  for (let k = 0; k < (root.num_children || 0); k++) walk(schema[i]);
  return out;
}

// Decodes the struct at [off, off + len) with fn, which must use all of it.
function decodeAt(buf, off, len, what, fn) {
  if (off === null || len === null) fail(`${what}: offset ${off} and length ${len} must both be set`);
  if (off < 4n || len <= 0n || off + len > BigInt(buf.byteLength - 8))
    fail(`${what} [${off}, +${len}) is not inside the data area`);
  const reader = { view: new DataView(buf, Number(off), Number(len)), offset: 0 };
  let v;
  try {
    v = fn(reader);
  } catch (e) {
    fail(`${what} at ${off}: hyparquet cannot decode it: ${e.message}`);
  }
  if (reader.offset !== Number(len)) fail(`${what} at ${off} uses ${reader.offset} of its ${len} bytes`);
  return v;
}

function checkOffsetIndex(oi, cc, md, rgRows, n) {
  const locs = oi.page_locations;
  if (!Array.isArray(locs) || locs.length === 0) fail('OffsetIndex lists no pages');
  const start = big(md.dictionary_page_offset) ?? big(md.data_page_offset);
  const end = start + big(md.total_compressed_size);
  for (let k = 0; k < locs.length; k++) {
    const off = big(locs[k].offset), size = big(locs[k].compressed_page_size);
    const row = big(locs[k].first_row_index);
    const dict = (md.encodings || []).some((e) => e === 'PLAIN_DICTIONARY' || e === 'RLE_DICTIONARY');
    const legacy = k === 0 && dict && big(md.dictionary_page_offset) === null &&
      off > big(md.data_page_offset);
    if (legacy) n.legacy++;
    if (k === 0 && off !== big(md.data_page_offset) && !legacy)
      fail(`page_locations[0].offset ${off}, data_page_offset is ${md.data_page_offset}`);
    if (k === 0 && row !== 0n) fail(`page_locations[0].first_row_index is ${row}, not 0`);
    if (size <= 0n || off < start || off + size > end)
      fail(`page_locations[${k}] [${off}, +${size}) is not inside the chunk [${start}, ${end})`);
    if (row < 0n || row >= big(rgRows))
      fail(`page_locations[${k}].first_row_index ${row} is outside the row group's ${rgRows} rows`);
    if (k > 0) {
      const prev = locs[k - 1];
      if (off <= big(prev.offset)) fail(`page_locations[${k}].offset ${off} does not follow ${prev.offset}`);
      if (big(prev.offset) + big(prev.compressed_page_size) > off)
        fail(`page_locations[${k - 1}] runs into page ${k} at ${off}`);
      if (row <= big(prev.first_row_index))
        fail(`page_locations[${k}].first_row_index ${row} is not above ${prev.first_row_index}`);
    }
  }
  const ub = oi.unencoded_byte_array_data_bytes;
  if (ub !== undefined && ub.length !== locs.length)
    fail(`unencoded_byte_array_data_bytes has ${ub.length} entries for ${locs.length} pages`);
  return locs.length;
}

const WIDTH = { BOOLEAN: 1, INT32: 4, FLOAT: 4, INT64: 8, DOUBLE: 8, INT96: 12 };

// Typed bounds that can be ordered here: numbers (not NaN) and bigints;
// strings of text columns, by code point (= UTF-8 byte order), unless a
// replacement character says the bytes were not UTF-8. hyparquet turns
// every BYTE_ARRAY bound into a string (DECIMAL and binary too), so only
// STRING / ENUM / JSON leaves are compared.
function ordered(a, b, leaf) {
  const num = (v) => (typeof v === 'number' && !Number.isNaN(v)) || typeof v === 'bigint';
  if (num(a) && num(b)) return a <= b;
  const text = leaf.converted_type === 'UTF8' || leaf.converted_type === 'ENUM' ||
    leaf.converted_type === 'JSON' || ['STRING', 'ENUM', 'JSON'].includes(leaf.logical_type?.type);
  if (!text || typeof a !== 'string' || typeof b !== 'string' || a.includes('\uFFFD') || b.includes('\uFFFD'))
    return true;
  const x = Array.from(a, (ch) => ch.codePointAt(0)), y = Array.from(b, (ch) => ch.codePointAt(0));
  for (let i = 0; i < x.length && i < y.length; i++) if (x[i] !== y[i]) return x[i] < y[i];
  return x.length <= y.length;
}

function checkColumnIndex(ci, pages, leaf, typed) {
  const width = leaf.type === 'FIXED_LEN_BYTE_ARRAY' ? leaf.type_length : WIDTH[leaf.type];
  const lists = { null_pages: ci.null_pages, min_values: ci.min_values, max_values: ci.max_values };
  for (const [name, l] of Object.entries(lists))
    if (!Array.isArray(l) || l.length !== pages) fail(`ColumnIndex.${name} has ${l?.length} entries for ${pages} pages`);
  for (const name of ['null_counts', 'nan_counts'])
    if (ci[name] !== undefined && ci[name].length !== pages)
      fail(`ColumnIndex.${name} has ${ci[name].length} entries for ${pages} pages`);
  for (const name of ['repetition_level_histograms', 'definition_level_histograms'])
    if (ci[name] !== undefined && (ci[name].length === 0 || ci[name].length % pages !== 0))
      fail(`ColumnIndex.${name} has ${ci[name].length} entries, not a whole number per page (${pages})`);
  if (!['UNORDERED', 'ASCENDING', 'DESCENDING'].includes(ci.boundary_order))
    fail(`ColumnIndex.boundary_order is ${ci.boundary_order}`);
  for (let k = 0; k < pages; k++) {
    const min = ci.min_values[k], max = ci.max_values[k];
    if (!(min instanceof Uint8Array) || !(max instanceof Uint8Array))
      fail(`ColumnIndex: bounds of page ${k} do not decode as bytes`);
    if (ci.null_pages[k] && (min.length || max.length))
      fail(`ColumnIndex: null page ${k} has bounds of ${min.length} and ${max.length} bytes (byte[0] required)`);
    if (!ci.null_pages[k] && width && (min.length !== width || max.length !== width))
      fail(`ColumnIndex: page ${k} has bounds of ${min.length} and ${max.length} bytes, ${leaf.type} values have ${width}`);
    if (typed && !ci.null_pages[k] && !ordered(typed.min_values[k], typed.max_values[k], leaf))
      fail(`ColumnIndex: page ${k} min ${typed.min_values[k]} > max ${typed.max_values[k]}`);
  }
  if (typed && (typed.min_values.length !== pages || typed.max_values.length !== pages))
    fail('ColumnIndex: typed and raw decodes differ in length');
}

// "" when fine, else the first problem; stats counts into `n`.
function checkFile(file, n) {
  const data = fs.readFileSync(file);
  const buf = data.buffer.slice(data.byteOffset, data.byteOffset + data.byteLength);
  let meta;
  try {
    meta = parquetMetadata(buf);
  } catch (e) {
    fail(`hyparquet cannot read the footer: ${e.message}`);
  }
  const leafs = leaves(meta.schema);
  let with_oi = 0, without_oi = 0;
  meta.row_groups.forEach((rg, r) => {
    if (rg.columns.length !== leafs.length) fail(`row group ${r}: ${rg.columns.length} chunks for ${leafs.length} leaves`);
    rg.columns.forEach((cc, c) => {
      const md = cc.meta_data;
      const where = `row group ${r}, column ${c} '${md?.path_in_schema?.join('.')}'`;
      try {
        if (!md) fail('no ColumnMetaData (encrypted?)');
        n.chunks++;
        const oiOff = big(cc.offset_index_offset), ciOff = big(cc.column_index_offset);
        if (oiOff === null) {
          without_oi++;
          if (ciOff !== null) fail('ColumnIndex without an OffsetIndex');
          return;
        }
        with_oi++;
        const oi = decodeAt(buf, oiOff, big(cc.offset_index_length), 'OffsetIndex', readOffsetIndex);
        const pages = checkOffsetIndex(oi, cc, md, rg.num_rows, n);
        n.pages += pages;
        if (ciOff === null) return;
        const ciLen = big(cc.column_index_length);
        const raw = decodeAt(buf, ciOff, ciLen, 'ColumnIndex',
          (reader) => readColumnIndex(reader, { type: 'FIXED_LEN_BYTE_ARRAY' }));
        let typed = null;
        try {
          typed = decodeAt(buf, ciOff, ciLen, 'ColumnIndex', (reader) => readColumnIndex(reader, leafs[c]));
        } catch (e) {
          const known = /outside the bounds of the DataView/.test(e.message) &&
            raw.null_pages?.some((np, k) => np && raw.min_values[k]?.length === 0);
          if (!known) throw e;
          n.unconverted.push(`${c} '${md.path_in_schema.join('.')}'`);
        }
        checkColumnIndex(raw, pages, leafs[c], typed);
        n.cis++;
      } catch (e) {
        if (e instanceof Problem) fail(`${where}: ${e.message}`);
        throw e;
      }
    });
  });
  if (with_oi && without_oi) fail(`${with_oi} chunks have an OffsetIndex, ${without_oi} do not`);
  n.rgs = meta.row_groups.length;
}

function main() {
  const dir = process.argv[2];
  if (!dir || process.argv.length !== 3 || !fs.existsSync(dir)) {
    console.error('usage: node indexes.mjs DIR');
    process.exit(2);
  }
  const files = fs.readdirSync(dir).filter((f) => f.endsWith('.parquet')).sort();
  let passed = 0, failed = 0;
  for (const f of files) {
    const n = { rgs: 0, chunks: 0, pages: 0, cis: 0, legacy: 0, unconverted: [] };
    try {
      checkFile(path.join(dir, f), n);
      passed++;
      const notes = [];
      if (n.unconverted.length)
        notes.push(`${n.unconverted.length} with null-page bounds hyparquet cannot convert, checked raw: column ${[...new Set(n.unconverted)].slice(0, 3).join(', ')}`);
      if (n.legacy) notes.push(`${n.legacy} legacy chunks with data_page_offset at the dictionary page`);
      console.log(`PASS  ${f}: ${n.rgs} row groups, ${n.chunks} chunks, ${n.pages} pages in OffsetIndexes, ` +
        `${n.cis} ColumnIndexes${notes.length ? ` (${notes.join('; ')})` : ''}`);
    } catch (e) {
      failed++;
      console.log(`FAIL  ${f}: ${e instanceof Problem ? e.message : e.stack}`);
    }
  }
  if (files.length === 0) {
    failed++;
    console.log(`FAIL  no .parquet files in ${dir}`);
  }
  console.log(`${passed} passed, ${failed} failed`);
  process.exit(failed ? 1 : 0);
}

main();
