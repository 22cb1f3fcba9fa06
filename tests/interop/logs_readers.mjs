// logs_readers.mjs - the three readers of the log interop check (logs.mjs),
// each turning a parqd file into, per schema column, one value per row:
//   typed columns: canon.mjs's internal form (via the harness's own
//     normalizers for scalars: reader_duckdb.normalize, reader_wasm.cell,
//     and a copy of reader_hyparquet.normalize with raw-unit parsers);
//   Variant columns (also inside structs): the VV form of logs_json.mjs,
//     `undefined` for SQL NULL, or a VErr when the value cannot be read.
//
// How each reader gives back a VARIANT column:
//   duckdb        DuckDBVariantValue (node-api 1.5.6): DuckDB reconstructs
//                 shredded values itself; objects are DuckDBStructValue,
//                 arrays DuckDBListValue, numbers JS number/bigint or
//                 DuckDBDecimalValue, with the DuckDB type alongside.
//   parquet-wasm  arrow-rs has no VARIANT type: the raw Arrow struct
//                 {metadata, value, typed_value}; decoded by variant.mjs.
//   hyparquet     decodes VARIANT itself, but turns decimals into JS numbers
//                 and gives missing shredded fields as null; so the file is
//                 read a second time with the VARIANT annotation removed
//                 from the footer (raw {metadata, value, typed_value}
//                 groups, decoded by variant.mjs: the checked values), and
//                 hyparquet's own decoding is compared with that (a note).
import fs from 'node:fs';
import {
  DuckDBInstance, DuckDBVariantValue, DuckDBStructValue, DuckDBListValue, DuckDBArrayValue,
  DuckDBDecimalValue, DuckDBMapValue,
} from '@duckdb/node-api';
import { readParquet } from 'parquet-wasm/node';
import { tableFromIPC, Type, Precision } from 'apache-arrow';
import { parquetMetadata, parquetReadObjects, parquetSchema } from 'hyparquet';
import { compressors } from 'hyparquet-compressors';
import { Mismatch, convertUnit, decodeUtf8, isInt, isIntLike, isStringy, unitOf } from './canon.mjs';
import * as duckReader from './reader_duckdb.mjs';
import * as wasmReader from './reader_wasm.mjs';
import { VNum, VOther } from './logs_json.mjs';
import { VariantError, shredLayout, variantFromGroup } from './variant.mjs';

export class VErr {
  constructor(msg) { this.msg = msg; }
  toString() { return `unreadable Variant: ${this.msg}`; }
}

/* Variant layouts of the file's top-level columns (and of Variant fields
 * inside structs/lists), keyed by dotted column path, from the footer. */
export function variantLayouts(ab) {
  const md = parquetMetadata(ab);
  const tree = parquetSchema(md);
  const out = new Map();
  const walk = (node, path) => {
    if (node.element.logical_type?.type === 'VARIANT') {
      out.set(path.join('.'), shredLayout(node, path.join('.')));
      return;
    }
    for (const c of node.children) walk(c, [...path, c.element.name]);
  };
  for (const c of tree.children) walk(c, [c.element.name]);
  return { layouts: out, topNames: tree.children.map(c => c.element.name), md };
}

/* Finds the layout for a Variant at a typed path (list elements skip the
 * list/element levels of the Parquet schema). */
function layoutFor(layouts, path) {
  const key = path.join('.');
  if (layouts.has(key)) return layouts.get(key);
  for (const [k, v] of layouts) if (k.replace(/\.list\.element|\.list\.item|\.element/g, '') === key) return v;
  return null;
}

function variantOrErr(fn) {
  try {
    return fn();
  } catch (e) {
    if (e instanceof VariantError) return new VErr(e.message);
    return new VErr(`${e.message}`);
  }
}

function shredNotes(stats) {
  if (!stats.unshredded) return [];
  return [`${stats.unshredded} Variant values of a shredded type left in value, not typed_value (first ${stats.firstUnshredded})`];
}

/* ---- DuckDB ------------------------------------------------------------- */

let duckCon = null;

function duckToVV(x, type) {
  if (x instanceof DuckDBVariantValue) return duckToVV(x.value, x.type ?? type);
  if (x === null || x === undefined) return null;
  if (typeof x === 'boolean' || typeof x === 'string') return x;
  if (typeof x === 'bigint') return new VNum('int', x);
  if (typeof x === 'number') {
    const tn = type ? String(type) : '';
    if (tn === 'DOUBLE') return new VNum('double', x);
    if (tn === 'FLOAT') return new VNum('float', x);
    if (Number.isInteger(x) && tn !== '') return new VNum('int', BigInt(x));
    return new VNum('double', x); // no type: compare by value
  }
  if (x instanceof DuckDBDecimalValue) return new VNum('dec', x.value, x.scale);
  if (x instanceof DuckDBStructValue) {
    const m = new Map();
    for (const k of Object.keys(x.entries)) {
      let et;
      try { et = type && type.typeForEntry ? type.typeForEntry(k) : undefined; } catch { et = undefined; }
      m.set(k, duckToVV(x.entries[k], et));
    }
    return m;
  }
  if (x instanceof DuckDBListValue || x instanceof DuckDBArrayValue) return x.items.map(e => duckToVV(e, type?.valueType));
  if (x instanceof DuckDBMapValue) return new VOther(`DuckDB MAP ${String(x)}`);
  let s;
  try { s = String(x); } catch { s = '?'; }
  return new VOther(`${x?.constructor?.name || typeof x} ${s}`);
}

function duckConv(type, v) {
  switch (type.kind) {
    case 'variant':
      if (v === null || v === undefined) return undefined;
      if (!(v instanceof DuckDBVariantValue)) return new VErr(`DuckDB returned ${v?.constructor?.name || typeof v}, not a VARIANT`);
      return variantOrErr(() => duckToVV(v));
    case 'scalar': return duckReader.normalize(type.canon, v);
    case 'list':
      if (v === null || v === undefined) return null;
      if (!(v instanceof DuckDBListValue || v instanceof DuckDBArrayValue)) return new Mismatch(`${v?.constructor?.name} ${v} (not a list)`);
      return v.items.map(e => duckConv(type.element, e));
    case 'struct': {
      if (v === null || v === undefined) return null;
      if (!(v instanceof DuckDBStructValue)) return new Mismatch(`${v?.constructor?.name} ${v} (not a struct)`);
      const o = {};
      for (const f of type.fields) if (f.name in v.entries) o[f.name] = duckConv(f.type, v.entries[f.name]);
      return o;
    }
  }
  return new Mismatch('unknown type kind');
}

async function readDuckdb(files, columns) {
  if (!duckCon) duckCon = await (await DuckDBInstance.create(':memory:')).connect();
  const out = Object.fromEntries(columns.map(c => [c.name, []]));
  let nrows = 0, names = null;
  for (const f of files) {
    const r = await duckCon.runAndReadAll('SELECT * FROM read_parquet(?)', [f]);
    names = r.columnNames();
    const rows = r.getRows();
    for (const c of columns) {
      const j = names.indexOf(c.name);
      if (j < 0) continue;
      for (const row of rows) out[c.name].push(duckConv(c.type, row[j]));
    }
    nrows += rows.length;
  }
  for (const c of columns) if (!names || !names.includes(c.name)) delete out[c.name];
  return { nrows, columns: out, names: names || [], notes: [] };
}

/* ---- parquet-wasm (Arrow) ---------------------------------------------- */

function locate(chunks, i) {
  for (const c of chunks) {
    if (i < c.length) return [c, i];
    i -= c.length;
  }
  throw new Error(`dictionary index ${i} out of range`);
}

/* Arrow element -> generic value for variant.mjs: Struct -> object,
 * List -> array, Binary -> Uint8Array, other leaves -> VV. */
function arrowGeneric(data, i) {
  const tid = data.type.typeId;
  if (tid === Type.Null || !data.getValid(i)) return null;
  switch (tid) {
    case Type.Dictionary: {
      const [c, j] = locate(data.dictionary.data, Number(data.values[i]));
      return arrowGeneric(c, j);
    }
    case Type.Struct: {
      const o = {};
      data.type.children.forEach((f, k) => { o[f.name] = arrowGeneric(data.children[k], i); });
      return o;
    }
    case Type.List: case Type.LargeList: {
      const a = Number(data.valueOffsets[i]), b = Number(data.valueOffsets[i + 1]);
      const out = [];
      for (let k = a; k < b; k++) out.push(arrowGeneric(data.children[0], k));
      return out;
    }
    case Type.Binary: case Type.LargeBinary: {
      const o = data.valueOffsets;
      return data.values.subarray(Number(o[i]), Number(o[i + 1]));
    }
    case Type.Utf8: case Type.LargeUtf8: {
      const o = data.valueOffsets;
      const s = decodeUtf8(data.values.subarray(Number(o[i]), Number(o[i + 1])));
      return s instanceof Mismatch ? new VOther(s.desc) : s;
    }
    case Type.Int: {
      const v = data.values[i * (data.stride || 1)];
      return new VNum('int', typeof v === 'bigint' ? v : BigInt(v));
    }
    case Type.Float:
      return new VNum(data.type.precision === Precision.DOUBLE ? 'double' : 'float', data.values[i]);
    case Type.Bool:
      return ((data.values[(data.offset + i) >> 3] >> ((data.offset + i) & 7)) & 1) === 1;
    case Type.Decimal: {
      const words = data.type.bitWidth / 32;
      let v = 0n;
      for (let w = words - 1; w >= 0; w--) v = (v << 32n) | BigInt(data.values[i * words + w] >>> 0);
      if (data.values[i * words + words - 1] & 0x80000000) v -= 1n << BigInt(data.type.bitWidth);
      return new VNum('dec', v, data.type.scale);
    }
  }
  return new VOther(`Arrow ${String(data.type)} value`);
}

function wasmConv(type, data, i, path, layouts, stats) {
  switch (type.kind) {
    case 'variant': {
      if (data.type.typeId !== Type.Struct) return new VErr(`Arrow ${String(data.type)}, not a struct`);
      if (!data.getValid(i)) return undefined;
      const layout = layoutFor(layouts, path);
      if (!layout) return new VErr(`${path.join('.')} is not annotated VARIANT in the footer`);
      return variantOrErr(() => variantFromGroup(arrowGeneric(data, i), layout, '', stats));
    }
    case 'scalar': return wasmReader.cell(type.canon, data, i);
    case 'list': {
      if (!data.getValid(i)) return null;
      if (data.type.typeId !== Type.List && data.type.typeId !== Type.LargeList) return new Mismatch(`Arrow ${String(data.type)} (not a list)`);
      const a = Number(data.valueOffsets[i]), b = Number(data.valueOffsets[i + 1]);
      const out = [];
      for (let k = a; k < b; k++) out.push(wasmConv(type.element, data.children[0], k, path, layouts, stats));
      return out;
    }
    case 'struct': {
      if (!data.getValid(i)) return null;
      if (data.type.typeId !== Type.Struct) return new Mismatch(`Arrow ${String(data.type)} (not a struct)`);
      const o = {};
      data.type.children.forEach((f, k) => {
        const ft = type.fields.find(x => x.name === f.name);
        if (ft) o[f.name] = wasmConv(ft.type, data.children[k], i, [...path, f.name], layouts, stats);
      });
      return o;
    }
  }
  return new Mismatch('unknown type kind');
}

async function readWasm(files, columns) {
  const out = Object.fromEntries(columns.map(c => [c.name, []]));
  const stats = {};
  let nrows = 0, names = [];
  for (const f of files) {
    const buf = fs.readFileSync(f);
    const ab = buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength);
    const { layouts } = variantLayouts(ab);
    const table = tableFromIPC(readParquet(new Uint8Array(buf)).intoIPCStream());
    names = table.schema.fields.map(x => x.name);
    for (const c of columns) {
      const vec = table.getChild(c.name);
      if (!vec) continue;
      for (const chunk of vec.data)
        for (let i = 0; i < chunk.length; i++) out[c.name].push(wasmConv(c.type, chunk, i, [c.name], layouts, stats));
    }
    nrows += table.numRows;
  }
  for (const c of columns) if (!names.includes(c.name)) delete out[c.name];
  return { nrows, columns: out, names, notes: shredNotes(stats) };
}

/* ---- hyparquet ---------------------------------------------------------- */

class Ts { constructor(unit, v) { this.unit = unit; this.v = BigInt(v); } }
const hyParsers = {
  timestampFromMilliseconds: v => new Ts('ms', v),
  timestampFromMicroseconds: v => new Ts('us', v),
  timestampFromNanoseconds: v => new Ts('ns', v),
  dateFromDays: v => v,
  jsonFromBytes: b => b,
  geometryFromBytes: b => b,
  geographyFromBytes: b => b,
};

/* scalar part of reader_hyparquet.normalize, with this module's Ts */
function hyScalar(t, v) {
  if (v === null || v === undefined) return null;
  const bad = () => new Mismatch(`${v?.constructor?.name || typeof v} ${String(v)} (read as ${t.type})`);
  if (isIntLike(t)) {
    if (v instanceof Ts) return t.type.startsWith('timestamp') ? convertUnit(v.v, v.unit, unitOf(t)) : bad();
    if (t.type.startsWith('timestamp')) return bad();
    if (typeof v === 'number' && Number.isInteger(v)) return BigInt(v);
    if (typeof v === 'bigint') return v;
    return bad();
  }
  if (t.type === 'bool') return typeof v === 'boolean' ? v : bad();
  if (t.type === 'float' || t.type === 'double') return typeof v === 'number' ? v : bad();
  if (isStringy(t)) {
    if (typeof v === 'string') return v;
    if (v instanceof Uint8Array) return decodeUtf8(v);
  }
  return bad();
}

/* hyparquet raw group -> generic value for variant.mjs, driven by the layout */
function hyGeneric(g, layout) {
  if (g === null || g === undefined) return null;
  const out = { value: g.value ?? null, typed_value: null };
  if (g.metadata !== undefined) out.metadata = g.metadata;
  const tv = g.typed_value;
  const t = layout.typed;
  if (tv === null || tv === undefined || !t) return out;
  if (t.kind === 'object') {
    const o = {};
    for (const [k, sub] of t.fields) o[k] = hyGeneric(tv[k], sub);
    out.typed_value = o;
  } else if (t.kind === 'array') {
    out.typed_value = Array.isArray(tv) ? tv.map(e => hyGeneric(e, t.element)) : new VOther('hyparquet: shredded array is not an array');
  } else {
    out.typed_value = hyPrim(tv, t);
  }
  return out;
}

function hyPrim(v, t) {
  const desc = t.desc;
  if (/DECIMAL/.test(desc)) {
    // read raw (readHyparquet strips the annotation): unscaled integer
    // (INT32/INT64) or big-endian two's complement bytes (FLBA/BYTE_ARRAY)
    let u;
    if (typeof v === 'bigint') u = v;
    else if (typeof v === 'number' && Number.isInteger(v)) u = BigInt(v);
    else if (v instanceof Uint8Array && v.length) {
      u = 0n;
      for (const b of v) u = (u << 8n) | BigInt(b);
      if (v[0] & 0x80) u -= 1n << BigInt(8 * v.length);
    } else return new VOther(`hyparquet ${v?.constructor?.name || typeof v} ${String(v)} for ${desc}`);
    return new VNum('dec', u, t.scale);
  }
  if (typeof v === 'boolean' || typeof v === 'string') return v;
  if (typeof v === 'bigint') return new VNum('int', v);
  if (typeof v === 'number') {
    if (desc.startsWith('DOUBLE')) return new VNum('double', v);
    if (desc.startsWith('FLOAT')) return new VNum('float', v);
    if (desc.startsWith('INT')) return new VNum('int', BigInt(v));
  }
  if (v instanceof Uint8Array && /STRING/.test(desc)) {
    const s = decodeUtf8(v);
    return s instanceof Mismatch ? new VOther(s.desc) : s;
  }
  if (v instanceof Uint8Array) return v;
  return new VOther(`hyparquet ${v?.constructor?.name || typeof v} ${String(v)} for ${desc}`);
}

function hyConv(type, v, path, layouts, stats) {
  switch (type.kind) {
    case 'variant': {
      if (v === null || v === undefined) return undefined;
      const layout = layoutFor(layouts, path);
      if (!layout) return new VErr(`${path.join('.')} is not annotated VARIANT in the footer`);
      if (typeof v !== 'object' || !('metadata' in v)) return new VErr(`hyparquet returned ${typeof v}, not the raw group`);
      return variantOrErr(() => variantFromGroup(hyGeneric(v, layout), layout, '', stats));
    }
    case 'scalar': return hyScalar(type.canon, v);
    case 'list':
      if (v === null || v === undefined) return null;
      if (!Array.isArray(v)) return new Mismatch(`${typeof v} (not a list)`);
      return v.map(e => hyConv(type.element, e, path, layouts, stats));
    case 'struct': {
      if (v === null || v === undefined) return null;
      if (typeof v !== 'object' || Array.isArray(v)) return new Mismatch(`${typeof v} (not a struct)`);
      const o = {};
      for (const f of type.fields) if (f.name in v) o[f.name] = hyConv(f.type, v[f.name], [...path, f.name], layouts, stats);
      return o;
    }
  }
  return new Mismatch('unknown type kind');
}

/* hyparquet's own VARIANT decoding vs the raw decoding (VV), allowing what
 * hyparquet documents/does: decimals as Number(unscaled) * 10 ** -scale,
 * int8..int32 as numbers, int64 as bigint, missing shredded object fields
 * as null. Returns null or a difference text; `seen` collects what was
 * allowed. */
function cmpNative(vv, nat, path, seen) {
  if (vv === undefined) return nat === null || nat === undefined ? null : `${path}: expected SQL NULL`;
  if (vv === null) return nat === null ? null : `${path}: expected null, got ${typeof nat}`;
  if (vv instanceof VNum) {
    if (vv.kind === 'int') return (typeof nat === 'bigint' ? nat === vv.a : Number.isInteger(nat) && BigInt(nat) === vv.a) ? null : `${path}: expected ${vv}, got ${String(nat)}`;
    if (vv.kind === 'dec') {
      const approx = Number(vv.a) * 10 ** -vv.scale;
      if (nat === approx) { seen.add('decimal as JS number'); return null; }
      return `${path}: expected ${vv} ~ ${approx}, got ${String(nat)}`;
    }
    return Object.is(nat, vv.a) || nat === vv.a ? null : `${path}: expected ${vv}, got ${String(nat)}`;
  }
  if (vv instanceof VOther) return null;
  if (typeof vv !== 'object') return nat === vv ? null : `${path}: expected ${JSON.stringify(vv)}, got ${JSON.stringify(nat)}`;
  if (Array.isArray(vv)) {
    if (!Array.isArray(nat) || nat.length !== vv.length) return `${path}: expected array of ${vv.length}`;
    for (let i = 0; i < vv.length; i++) { const d = cmpNative(vv[i], nat[i], `${path}/${i}`, seen); if (d) return d; }
    return null;
  }
  if (nat === null || typeof nat !== 'object' || Array.isArray(nat)) return `${path}: expected object, got ${nat === null ? 'null' : typeof nat}`;
  for (const [k, x] of vv) {
    if (!(k in nat)) return `${path}/${k}: missing`;
    const d = cmpNative(x, nat[k], `${path}/${k}`, seen);
    if (d) return d;
  }
  for (const k of Object.keys(nat)) {
    if (vv.has(k)) continue;
    if (nat[k] === null) { seen.add('missing shredded field as null'); continue; }
    return `${path}/${k}: not in the value, got ${String(nat[k])}`;
  }
  return null;
}

async function readHyparquet(files, columns) {
  const out = Object.fromEntries(columns.map(c => [c.name, []]));
  let nrows = 0, names = [];
  const notes = [];
  const stats = {};
  const seen = new Set();
  let nativeDiff = null, nativeErr = null;
  for (const f of files) {
    const buf = fs.readFileSync(f);
    const ab = buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength);
    const { layouts, topNames, md } = variantLayouts(ab);
    names = topNames;
    // raw read: VARIANT annotation removed, groups come back as they are
    // stored; DECIMAL typed_values too (hyparquet turns DECIMAL into JS
    // numbers, which cannot hold 38 digits): hyPrim scales them exactly
    const undecimal = (node, inVariant) => {
      const el = node.element;
      const v = inVariant || el.logical_type?.type === 'VARIANT';
      if (v && el.converted_type === 'DECIMAL') {
        delete el.converted_type;
        if (el.logical_type?.type === 'DECIMAL') delete el.logical_type;
      }
      for (const c of node.children) undecimal(c, v);
    };
    undecimal(parquetSchema(md), false);
    for (const el of md.schema) {
      if (el.logical_type?.type === 'VARIANT') delete el.logical_type;
    }
    const rows = await parquetReadObjects({ file: ab, metadata: md, compressors, parsers: hyParsers, utf8: false });
    const base = nrows;
    for (const c of columns) {
      if (!topNames.includes(c.name)) continue;
      for (const r of rows) out[c.name].push(hyConv(c.type, r[c.name], [c.name], layouts, stats));
    }
    nrows += rows.length;
    // hyparquet's own VARIANT decoding, top-level Variant columns only
    const vcols = columns.filter(c => c.type.kind === 'variant' && topNames.includes(c.name));
    if (vcols.length && !nativeDiff && !nativeErr) {
      try {
        const nat = await parquetReadObjects({ file: ab, columns: vcols.map(c => c.name), compressors, utf8: true });
        for (const c of vcols) {
          for (let i = 0; i < nat.length && !nativeDiff; i++) {
            const vv = out[c.name][base + i];
            if (vv instanceof VErr) continue;
            const d = cmpNative(vv, nat[i][c.name], '', seen);
            if (d) nativeDiff = `row ${base + i} column ${c.name}${d}`;
          }
        }
      } catch (e) {
        nativeErr = String(e.message).split('\n')[0];
      }
    }
  }
  const nativeProblem = nativeErr ? `throws: ${nativeErr}` : nativeDiff ? `differs: ${nativeDiff}` : null;
  if (nativeErr) notes.push(`hyparquet's own VARIANT decoding throws: ${nativeErr}`);
  else if (nativeDiff) notes.push(`hyparquet's own VARIANT decoding differs: ${nativeDiff}`);
  else if (columns.some(c => c.type.kind === 'variant')) notes.push(`hyparquet's own VARIANT decoding agrees${seen.size ? ' (allowing ' + [...seen].join(', ') + ')' : ''}`);
  for (const c of columns) if (!names.includes(c.name)) delete out[c.name];
  return { nrows, columns: out, names, notes: [...shredNotes(stats), ...notes], nativeProblem };
}

export const READERS = {
  duckdb: readDuckdb,
  'parquet-wasm': readWasm,
  hyparquet: readHyparquet,
};
export const READER_NAMES = Object.keys(READERS);
