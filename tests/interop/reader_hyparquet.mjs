// hyparquet.mjs - reads a Parquet file with hyparquet (pure JS) plus
// hyparquet-compressors for the codecs, and turns its values into the
// canonical internal form (canon.mjs).
//
// hyparquet's default parsers turn timestamps into Date (millisecond
// precision) and JSON/WKB into parsed objects; the parsers below keep the
// raw units and bytes instead, which is hyparquet's documented way to do it.
import fs from 'node:fs';
import { parquetMetadata, parquetReadObjects } from 'hyparquet';
import { compressors } from 'hyparquet-compressors';
import {
  Mismatch, bytesToHex, convertUnit, decodeUtf8, isBytes, isInt, isIntLike, isStringy, unitOf,
} from './canon.mjs';

export const name = 'hyparquet';
export const preservesNegZero = true;

class Ts { constructor(unit, v) { this.unit = unit; this.v = BigInt(v); } }
class Days { constructor(v) { this.v = BigInt(v); } }

const parsers = {
  timestampFromMilliseconds: v => new Ts('ms', v),
  timestampFromMicroseconds: v => new Ts('us', v),
  timestampFromNanoseconds: v => new Ts('ns', v),
  dateFromDays: v => new Days(v),
  jsonFromBytes: b => b,
  geometryFromBytes: b => b,
  geographyFromBytes: b => b,
};

function bad(t, v) {
  let s;
  try { s = typeof v === 'object' && v ? JSON.stringify(v, (k, x) => typeof x === 'bigint' ? String(x) : x) : String(v); } catch { s = String(v); }
  return new Mismatch(`${v?.constructor?.name || typeof v} ${s} (read as ${t.type})`);
}

/* Map keys come back as JS object property names; recover the key value. */
export function keyFromString(t, k) {
  if (isStringy(t)) return k;
  if (isInt(t) && /^-?[0-9]+$/.test(k)) return BigInt(k);
  return new Mismatch(`object key ${JSON.stringify(k)} (map key of type ${t.type})`);
}

export function normalize(t, v) {
  if (v === null || v === undefined) return null;
  if (isIntLike(t)) {
    if (v instanceof Ts) return convertUnit(v.v, v.unit, unitOf(t));
    if (v instanceof Days) return t.type === 'date' ? v.v : bad(t, v);
    if (t.type.startsWith('timestamp') || t.type === 'int96' || t.type === 'date') return bad(t, v);
    if (typeof v === 'number' && Number.isInteger(v)) return BigInt(v);
    if (typeof v === 'bigint') return v;
    return bad(t, v);
  }
  switch (t.type) {
    case 'bool': return typeof v === 'boolean' ? v : bad(t, v);
    case 'float': case 'double': case 'float16': return typeof v === 'number' ? v : bad(t, v);
    case 'decimal': return typeof v === 'number' ? v : bad(t, v); // lossy: see limits.mjs
    case 'uuid': return typeof v === 'string' ? v : bad(t, v);
    case 'interval': return bad(t, v);
    case 'unknown': return bad(t, v);
    case 'list': return Array.isArray(v) ? v.map(e => normalize(t.element, e)) : bad(t, v);
    case 'map':
      if (typeof v !== 'object' || Array.isArray(v)) return bad(t, v);
      return Object.entries(v).map(([k, x]) => [keyFromString(t.key, k), normalize(t.value, x)]);
    case 'struct': {
      if (typeof v !== 'object' || Array.isArray(v)) return bad(t, v);
      const o = {};
      for (const f of t.fields) if (f.name in v) o[f.name] = normalize(f, v[f.name]);
      return o;
    }
  }
  if (isStringy(t)) {
    if (typeof v === 'string') return v;
    if (v instanceof Uint8Array) return decodeUtf8(v);
    return bad(t, v);
  }
  if (isBytes(t)) return v instanceof Uint8Array ? bytesToHex(v) : bad(t, v);
  return bad(t, v);
}

function arrayBufferOf(file) {
  const buf = fs.readFileSync(file);
  return buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength);
}

export async function read(file, columns) {
  const ab = arrayBufferOf(file);
  const rows = await parquetReadObjects({ file: ab, compressors, parsers, utf8: false });
  const out = {};
  const present = new Set(rows.length ? Object.keys(rows[0]) : []);
  if (!rows.length) {
    const md = parquetMetadata(ab);
    for (const s of md.schema.slice(1)) present.add(s.name);
  }
  for (const col of columns) {
    if (!present.has(col.name)) continue;
    out[col.name] = rows.map(r => normalize(col, r[col.name]));
  }
  return { columns: out, nrows: rows.length, info: '' };
}

/* Codec and encoding features of the file, from its footer. */
export function fileFeatures(file) {
  const md = parquetMetadata(arrayBufferOf(file));
  const f = new Set();
  for (const rg of md.row_groups) {
    for (const c of rg.columns) {
      const m = c.meta_data;
      if (!m) continue;
      f.add(`codec:${m.codec}`);
      for (const e of m.encodings || []) {
        f.add(`encoding:${e}`);
        f.add(`encoding:${e}:${m.type}`);
      }
      for (const s of m.encoding_stats || []) f.add(`page:${s.page_type}`);
    }
  }
  return f;
}
