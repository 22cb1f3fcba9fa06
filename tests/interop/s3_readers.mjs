// s3_readers.mjs - the second and third readers for objects parqd wrote to
// S3 (downloaded into --dir): parquet-wasm (arrow-rs) and hyparquet read
// every file; the row counts must equal the non-blank lines sent, and the
// `event` Variant values hyparquet decodes must equal the lines sent as a
// multiset, loosely: numbers by value as doubles (hyparquet turns decimals
// and large integers into JS numbers / bigints) and null fields dropped
// (hyparquet gives a shredded field missing from a row as null). DuckDB, the first reader, is tests/daemon/verify.mjs. Here (not in tests/daemon)
// so that the npm packages resolve.
//
//   node s3_readers.mjs --dir DIR SENT.ndjson...
import fs from 'node:fs';
import { readParquet } from 'parquet-wasm/node';
import { tableFromIPC } from 'apache-arrow';
import { parquetReadObjects } from 'hyparquet';
import { compressors } from 'hyparquet-compressors';
import { listParquet } from '../daemon/pq.mjs';
import { parseArgs } from '../daemon/prng.mjs';

const o = parseArgs(process.argv.slice(2), {});
let failed = 0;
const check = (n, ok, why) => {
  if (ok) console.log(`PASS ${n}`);
  else { failed++; console.log(`FAIL ${n}${why ? `: ${why}` : ''}`); }
};
const files = listParquet(o.dir);

/* The loose form both sides are compared in (see the header). */
function norm(v) {
  if (v === null || v === undefined) return null;
  if (typeof v === 'bigint') return Number(v);
  if (Array.isArray(v)) return v.map(norm);
  if (typeof v === 'object' && !(v instanceof Uint8Array)) {
    const out = {};
    for (const k of Object.keys(v).sort()) {
      const n = norm(v[k]);
      if (n !== null) out[k] = n;
    }
    return out;
  }
  return v;
}
const key = v => JSON.stringify(norm(v));
const src = [];
for (const f of o._) {
  for (const line of fs.readFileSync(f, 'utf8').split('\n'))
    if (line.trim() !== '') src.push(key(JSON.parse(line)));
}

let wasmRows = 0, wasmErr = null;
for (const f of files) {
  try {
    const t = tableFromIPC(readParquet(new Uint8Array(fs.readFileSync(f))).intoIPCStream());
    wasmRows += t.numRows;
  } catch (e) { wasmErr = `${f}: ${String(e.message || e).split('\n')[0]}`; }
}
check(`parquet-wasm reads every object (${wasmRows} rows, ${src.length} lines sent)`,
      wasmErr === null && wasmRows === src.length, wasmErr || '');

const got = [];
let hyErr = null;
for (const f of files) {
  try {
    const b = fs.readFileSync(f);
    const ab = b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength);
    const rows = await parquetReadObjects({ file: ab, columns: ['event'], compressors });
    for (const r of rows) got.push(key(r.event));
  } catch (e) { hyErr = `${f}: ${String(e.message || e).split('\n')[0]}`; }
}
const count = new Map();
for (const s of src) count.set(s, (count.get(s) || 0) + 1);
const extra = [];
for (const g of got) {
  const n = count.get(g) || 0;
  if (n > 0) count.set(g, n - 1);
  else extra.push(g);
}
const missing = [...count.entries()].filter(([, n]) => n > 0);
check(`hyparquet reads every object and its events equal the lines sent (${got.length} records)`,
      hyErr === null && missing.length === 0 && extra.length === 0 && got.length === src.length,
      hyErr || `${missing.length} missing, ${extra.length} extra` +
      (extra[0] ? `; e.g. extra ${extra[0].slice(0, 200)}` : ''));
process.exit(failed ? 1 : 0);
