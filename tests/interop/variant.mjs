// variant.mjs - an independent JS reader for Parquet Variant values
// (testdata/spec/VariantEncoding.md) and the reconstruction of shredded
// Variants (VariantShredding.md, "Reconstructing a Shredded Variant"), for
// readers that return a VARIANT column as its raw group
// {metadata, value, typed_value} (parquet-wasm; hyparquet with the VARIANT
// annotation taken off).
//
// Strict: anything the specs say a writer must not produce is an error
// (VariantError, with the path inside the value), not silently read:
// metadata version != 1, a "sorted" dictionary that is not sorted and
// unique, offsets or ids out of range, object keys not in unsigned-byte
// order or repeated, invalid UTF-8, trailing bytes after a value, a
// decimal whose unscaled value exceeds its width's precision (9/18/38),
// whose scale is not below its implied precision (parqd's promise: readers
// crash on or misprint such decimals, schema/variant/vnumber.c) or
// scale > 38; and in shredded data: value and typed_value both set for a
// non-object, a shredded field also present in `value`, an object or array
// in `value` where typed_value shreds objects/arrays, a missing array
// element, a present field whose name is not in the metadata.
//
// Values come out in the VV form of logs_json.mjs (Map, Array, string,
// boolean, null, VNum, VOther).
import { VNum, VOther } from './logs_json.mjs';

export class VariantError extends Error {
  constructor(path, msg) { super(`${path || '/'}: ${msg}`); this.vpath = path || '/'; }
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

function hex(b) { return Array.from(b, x => x.toString(16).padStart(2, '0')).join(''); }

function cmpBytes(a, b) {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return a[i] - b[i];
  return a.length - b.length;
}

function uint(b, off, width, path, what) {
  if (off + width > b.length) throw new VariantError(path, `${what} at byte ${off} runs past the end (${b.length} bytes)`);
  let v = 0;
  for (let i = 0; i < width; i++) v += b[off + i] * 2 ** (8 * i);
  return v;
}

/* ---- metadata ---------------------------------------------------------- */

const metaCache = new Map();

/* metadata bytes -> {dict: string[], bytes: Uint8Array[], sorted} */
export function decodeMetadata(b) {
  if (!(b instanceof Uint8Array)) throw new VariantError('', `metadata is ${b === null ? 'null' : typeof b}, not bytes`);
  const key = hex(b);
  const hit = metaCache.get(key);
  if (hit) return hit;
  if (b.length < 1) throw new VariantError('', 'empty metadata');
  const h = b[0];
  const version = h & 0x0f, sorted = (h >> 4) & 1, osz = ((h >> 6) & 3) + 1;
  if (version !== 1) throw new VariantError('', `metadata version ${version} (must be 1)`);
  const n = uint(b, 1, osz, '', 'metadata dictionary_size');
  const offs = [];
  for (let i = 0; i <= n; i++) offs.push(uint(b, 1 + osz * (i + 1), osz, '', `metadata offset ${i}`));
  const base = 1 + osz * (n + 2);
  if (offs[0] !== 0) throw new VariantError('', `metadata first offset ${offs[0]} (must be 0)`);
  if (base + offs[n] !== b.length)
    throw new VariantError('', `metadata is ${b.length} bytes, offsets say ${base + offs[n]}`);
  const dict = [], bytes = [];
  for (let i = 0; i < n; i++) {
    if (offs[i + 1] < offs[i]) throw new VariantError('', `metadata offsets decrease at ${i}`);
    const s = b.subarray(base + offs[i], base + offs[i + 1]);
    let str;
    try { str = utf8.decode(s); } catch { throw new VariantError('', `metadata string ${i} is not UTF-8 ({hex:${hex(s)}})`); }
    dict.push(str);
    bytes.push(s);
  }
  if (sorted)
    for (let i = 1; i < n; i++)
      if (cmpBytes(bytes[i - 1], bytes[i]) >= 0)
        throw new VariantError('', `metadata says sorted_strings but ${JSON.stringify(dict[i - 1])} is not before ${JSON.stringify(dict[i])}`);
  const m = { dict, bytes, sorted: !!sorted, index: null };
  if (metaCache.size > 10000) metaCache.clear();
  metaCache.set(key, m);
  return m;
}

/* ---- values ------------------------------------------------------------ */

const DEC_MAX = { 4: 10n ** 9n, 8: 10n ** 18n, 16: 10n ** 38n };

function readDecimal(b, off, width, path) {
  const scale = uint(b, off, 1, path, 'decimal scale');
  if (scale > 38) throw new VariantError(path, `decimal scale ${scale} > 38`);
  if (off + 1 + width > b.length) throw new VariantError(path, 'decimal runs past the end');
  const dv = new DataView(b.buffer, b.byteOffset + off + 1, width);
  let u;
  if (width === 4) u = BigInt(dv.getInt32(0, true));
  else if (width === 8) u = dv.getBigInt64(0, true);
  else u = (dv.getBigInt64(8, true) << 64n) | dv.getBigUint64(0, true);
  if ((u < 0n ? -u : u) >= DEC_MAX[width])
    throw new VariantError(path, `decimal${width} unscaled ${u} exceeds precision ${width === 4 ? 9 : width === 8 ? 18 : 38}`);
  // Valid by the spec, but what readers mishandle (DuckDB 1.5.6: SIGFPE
  // above, ".5" at equality) and what parqd promises never to write.
  const prec = (u < 0n ? -u : u).toString().length;
  if (scale > 0 && scale >= prec)
    throw new VariantError(path, `decimal scale ${scale} not below its implied precision ${prec} (unscaled ${u})`);
  return [new VNum('dec', u, scale), off + 1 + width];
}

function str(b, s, e, path) {
  if (e > b.length) throw new VariantError(path, 'string runs past the end');
  try { return utf8.decode(b.subarray(s, e)); } catch { throw new VariantError(path, `string is not UTF-8 ({hex:${hex(b.subarray(s, e))}})`); }
}

/* Decodes the value at b[off]; returns [VV, end offset]. */
function readValue(b, off, meta, path, depth) {
  if (depth > 500) throw new VariantError(path, 'nesting too deep');
  if (off >= b.length) throw new VariantError(path, `value at byte ${off} past the end (${b.length} bytes)`);
  const t = b[off], basic = t & 3, hdr = t >> 2;
  const dv = (n) => {
    if (off + 1 + n > b.length) throw new VariantError(path, 'primitive runs past the end');
    return new DataView(b.buffer, b.byteOffset + off + 1, n);
  };
  if (basic === 1) return [str(b, off + 1, off + 1 + hdr, path), off + 1 + hdr];
  if (basic === 0) {
    switch (hdr) {
      case 0: return [null, off + 1];
      case 1: return [true, off + 1];
      case 2: return [false, off + 1];
      case 3: return [new VNum('int', BigInt(dv(1).getInt8(0))), off + 2];
      case 4: return [new VNum('int', BigInt(dv(2).getInt16(0, true))), off + 3];
      case 5: return [new VNum('int', BigInt(dv(4).getInt32(0, true))), off + 5];
      case 6: return [new VNum('int', dv(8).getBigInt64(0, true)), off + 9];
      case 7: return [new VNum('double', dv(8).getFloat64(0, true)), off + 9];
      case 8: return readDecimal(b, off + 1, 4, path);
      case 9: return readDecimal(b, off + 1, 8, path);
      case 10: return readDecimal(b, off + 1, 16, path);
      case 11: return [new VOther(`date ${dv(4).getInt32(0, true)}`), off + 5];
      case 12: case 13: case 18: case 19: {
        const names = { 12: 'timestamp(us,utc)', 13: 'timestamp_ntz(us)', 18: 'timestamp(ns,utc)', 19: 'timestamp_ntz(ns)' };
        return [new VOther(`${names[hdr]} ${dv(8).getBigInt64(0, true)}`), off + 9];
      }
      case 14: return [new VNum('float', dv(4).getFloat32(0, true)), off + 5];
      case 15: case 16: {
        const n = uint(b, off + 1, 4, path, 'length');
        const s = off + 5, e = s + n;
        if (e > b.length) throw new VariantError(path, `${hdr === 15 ? 'binary' : 'string'} of ${n} bytes runs past the end`);
        if (hdr === 16) return [str(b, s, e, path), e];
        return [new VOther(`binary {hex:${hex(b.subarray(s, e))}}`), e];
      }
      case 17: return [new VOther(`time_ntz(us) ${dv(8).getBigInt64(0, true)}`), off + 9];
      case 20: return [new VOther(`uuid ${hex(b.subarray(off + 1, off + 17))}`), off + 17];
      default: throw new VariantError(path, `unknown primitive type ${hdr}`);
    }
  }
  if (basic === 2) {
    const osz = (hdr & 3) + 1, isz = ((hdr >> 2) & 3) + 1, large = (hdr >> 4) & 1;
    let p = off + 1;
    const n = uint(b, p, large ? 4 : 1, path, 'object num_elements');
    p += large ? 4 : 1;
    const ids = [];
    for (let i = 0; i < n; i++, p += isz) ids.push(uint(b, p, isz, path, 'field id'));
    const offs = [];
    for (let i = 0; i <= n; i++, p += osz) offs.push(uint(b, p, osz, path, 'field offset'));
    const base = p, end = base + offs[n];
    if (end > b.length) throw new VariantError(path, `object of ${offs[n]} value bytes runs past the end`);
    const o = new Map();
    let prev = null;
    for (let i = 0; i < n; i++) {
      if (ids[i] >= meta.dict.length) throw new VariantError(path, `field id ${ids[i]} >= dictionary size ${meta.dict.length}`);
      const k = meta.dict[ids[i]], kb = meta.bytes[ids[i]];
      const fp = `${path}/${k.replace(/~/g, '~0').replace(/\//g, '~1')}`;
      if (prev && cmpBytes(prev, kb) >= 0)
        throw new VariantError(fp, cmpBytes(prev, kb) === 0 ? 'key repeated in object' : 'object keys not in lexicographic (unsigned byte) order');
      prev = kb;
      if (offs[i] >= offs[n]) throw new VariantError(fp, `field offset ${offs[i]} past the object's ${offs[n]} value bytes`);
      const [v, e] = readValue(b, base + offs[i], meta, fp, depth + 1);
      if (e > end) throw new VariantError(fp, 'field value runs past the object');
      o.set(k, v);
    }
    return [o, end];
  }
  // array
  const osz = (hdr & 3) + 1, large = (hdr >> 2) & 1;
  let p = off + 1;
  const n = uint(b, p, large ? 4 : 1, path, 'array num_elements');
  p += large ? 4 : 1;
  const offs = [];
  for (let i = 0; i <= n; i++, p += osz) offs.push(uint(b, p, osz, path, 'element offset'));
  const base = p, end = base + offs[n];
  if (end > b.length) throw new VariantError(path, `array of ${offs[n]} value bytes runs past the end`);
  const a = [];
  for (let i = 0; i < n; i++) {
    if (offs[i] > offs[i + 1]) throw new VariantError(`${path}/${i}`, 'array element offsets decrease');
    const [v, e] = readValue(b, base + offs[i], meta, `${path}/${i}`, depth + 1);
    if (e !== base + offs[i + 1]) throw new VariantError(`${path}/${i}`, `element is ${e - base - offs[i]} bytes, offsets say ${offs[i + 1] - offs[i]}`);
    a.push(v);
  }
  return [a, end];
}

/* value bytes -> VV (the whole buffer must be one value) */
export function decodeValue(meta, b, path = '') {
  if (!(b instanceof Uint8Array)) throw new VariantError(path, `value is ${typeof b}, not bytes`);
  const [v, e] = readValue(b, 0, meta, path, 0);
  if (e !== b.length) throw new VariantError(path, `${b.length - e} bytes after the value`);
  return v;
}

/* ---- shredding --------------------------------------------------------- */

/* Shredding layout of a Variant group, from the Parquet schema (hyparquet's
 * parquetSchema() tree node of the VARIANT group or of a field/element group):
 *   {hasValue, typed: null | {kind: 'object', fields: Map name -> node}
 *                          | {kind: 'array', element: node}
 *                          | {kind: 'prim', desc, scale}} */
export function shredLayout(node, path = '') {
  const kids = new Map(node.children.map(c => [c.element.name, c]));
  const out = { hasValue: kids.has('value'), typed: null };
  const tv = kids.get('typed_value');
  if (!tv) return out;
  const el = tv.element;
  if (!tv.children.length) {
    out.typed = { kind: 'prim', desc: `${el.type}${el.logical_type ? ' ' + el.logical_type.type : ''}`, scale: el.scale ?? 0 };
  } else if (el.converted_type === 'LIST' || el.logical_type?.type === 'LIST') {
    const rep = tv.children[0];
    const elem = rep.children[0];
    if (!elem || rep.children.length !== 1) throw new Error(`${path}.typed_value: LIST without one element group`);
    out.typed = { kind: 'array', element: shredLayout(elem, `${path}.typed_value.list.element`) };
  } else {
    out.typed = { kind: 'object', fields: new Map(tv.children.map(c => [c.element.name, shredLayout(c, `${path}.typed_value.${c.element.name}`)])) };
  }
  return out;
}

/* Reconstructs one Variant from a group in the generic form
 *   {value: Uint8Array | null, typed_value: null | Map/object of field groups
 *    (object) | Array of element groups (array) | VV scalar (primitive)}
 * Returns VV, or MISSING for an absent object field. `stats` counts values
 * that sit in `value` although the shredded type would have held them. */
export const MISSING = Symbol('missing');

function kindOf(v) {
  if (v === null) return 'null';
  if (v instanceof Map) return 'object';
  if (Array.isArray(v)) return 'array';
  if (v instanceof VNum) return v.kind;
  if (v instanceof VOther) return 'other';
  return typeof v;
}

export function reconstruct(meta, g, layout, path, stats) {
  const value = g ? g.value ?? null : null;
  const tv = g ? g.typed_value ?? null : null;
  const t = layout.typed;
  if (tv !== null) {
    if (!t) throw new VariantError(path, 'typed_value set but the schema has none');
    if (t.kind === 'object') {
      const o = new Map();
      const get = (k) => tv instanceof Map ? tv.get(k) : tv[k];
      for (const [k, sub] of t.fields) {
        const fp = `${path}/${k}`;
        const r = reconstruct(meta, get(k), sub, fp, stats);
        if (r === MISSING) continue;
        if (!meta.index) meta.index = new Set(meta.dict);
        if (!meta.index.has(k)) throw new VariantError(fp, 'shredded field present but its name is not in the metadata');
        o.set(k, r);
      }
      if (value !== null) {
        const rest = decodeValue(meta, value, path);
        if (!(rest instanceof Map)) throw new VariantError(path, `typed_value is an object but value is ${kindOf(rest)} (must be an object: partially shredded)`);
        for (const [k, v] of rest) {
          if (t.fields.has(k)) throw new VariantError(`${path}/${k}`, 'shredded field also present in value');
          o.set(k, v);
        }
      }
      return o;
    }
    if (value !== null) throw new VariantError(path, `value and typed_value both set for a shredded ${t.kind}`);
    if (tv instanceof Uint8Array) return new VOther(`binary {hex:${hex(tv)}}`);
    if (t.kind === 'array') {
      if (!Array.isArray(tv)) throw new VariantError(path, 'shredded array is not a list');
      return tv.map((e, i) => {
        const r = reconstruct(meta, e, t.element, `${path}/${i}`, stats);
        if (r === MISSING) throw new VariantError(`${path}/${i}`, 'array element missing (value and typed_value both null)');
        return r;
      });
    }
    return tv;
  }
  if (value === null) return MISSING;
  const v = decodeValue(meta, value, path);
  if (t && t.kind === 'object' && v instanceof Map) throw new VariantError(path, 'object stored in value while typed_value shreds objects (typed_value must be non-null)');
  if (t && t.kind === 'array' && Array.isArray(v)) throw new VariantError(path, 'array stored in value while typed_value shreds arrays (value must be null)');
  if (t && t.kind === 'prim' && stats) {
    // same equivalence class as the shredded type, yet left in value
    const k = kindOf(v);
    if ((k === 'string' && /^BYTE_ARRAY STRING/.test(t.desc)) || (k === 'boolean' && t.desc === 'BOOLEAN') ||
        (k === 'int' && /^INT(32|64)$/.test(t.desc)) || (k === 'double' && t.desc === 'DOUBLE')) {
      stats.unshredded = (stats.unshredded || 0) + 1;
      if (!stats.firstUnshredded) stats.firstUnshredded = `${path || '/'} = ${v instanceof VNum ? v.toString() : JSON.stringify(v)} (typed_value ${t.desc})`;
    }
  }
  return v;
}

/* Top level: group null -> SQL NULL (returned as undefined). */
export function variantFromGroup(g, layout, path, stats = null) {
  if (g === null || g === undefined) return undefined;
  const meta = decodeMetadata(g.metadata);
  const r = reconstruct(meta, g, layout, path, stats);
  if (r === MISSING) throw new VariantError(path, 'top-level Variant has neither value nor typed_value');
  return r;
}

