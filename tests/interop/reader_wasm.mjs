// wasm.mjs - reads a Parquet file with parquet-wasm (arrow-rs compiled to
// WebAssembly), decodes the Arrow IPC stream it returns with apache-arrow, and
// walks the Arrow buffers directly so no value goes through a lossy JS
// conversion (Arrow JS turns timestamps into float milliseconds, for one).
import fs from 'node:fs';
import { readParquet } from 'parquet-wasm/node';
import { tableFromIPC, Type, TimeUnit, IntervalUnit, DateUnit, Precision } from 'apache-arrow';
import {
  Mismatch, beTwosToBigInt, bytesToHex, bytesToUuid, convertUnit, decodeUtf8, halfToNumber,
  isBytes, isInt, isStringy, unitOf,
} from './canon.mjs';

export const name = 'parquet-wasm';
export const preservesNegZero = true;

const UNIT = { [TimeUnit.SECOND]: 's', [TimeUnit.MILLISECOND]: 'ms', [TimeUnit.MICROSECOND]: 'us', [TimeUnit.NANOSECOND]: 'ns' };

function bad(t, data, what) {
  return new Mismatch(`Arrow ${String(data.type)}${what !== undefined ? ' ' + what : ''} (read as ${t.type})`);
}

/* Bytes of element i of a Binary/Utf8/LargeBinary/LargeUtf8/FixedSizeBinary
 * Data, or null if the Arrow type holds no bytes. */
function bytesAt(data, i) {
  switch (data.type.typeId) {
    case Type.Binary: case Type.Utf8: case Type.LargeBinary: case Type.LargeUtf8: {
      const o = data.valueOffsets;
      return data.values.subarray(Number(o[i]), Number(o[i + 1]));
    }
    case Type.FixedSizeBinary: {
      const w = data.type.byteWidth;
      return data.values.subarray(i * w, (i + 1) * w);
    }
    case Type.BinaryView: case Type.Utf8View:
      return null;
  }
  return null;
}

/* Raw integer (BigInt) of element i of an Int/Date/Time/Timestamp Data. */
function intAt(data, i) {
  const v = data.values[i * data.stride];
  return typeof v === 'bigint' ? v : BigInt(v);
}

/* Element i of Arrow Data `data`, as the canonical form of expected type t. */
export function cell(t, data, i) {
  const tid = data.type.typeId;
  if (tid === Type.Null) return null;
  if (!data.getValid(i)) return null;
  if (tid === Type.Dictionary) {
    const key = Number(data.values[i]);
    const dict = data.dictionary;
    const [chunk, j] = locate(dict.data, key);
    return cell(t, chunk, j);
  }
  if (isInt(t)) return tid === Type.Int ? intAt(data, i) : bad(t, data);
  switch (t.type) {
    case 'bool':
      if (tid !== Type.Bool) return bad(t, data);
      return ((data.values[(data.offset + i) >> 3] >> ((data.offset + i) & 7)) & 1) === 1;
    case 'float': case 'double': case 'float16':
      if (tid !== Type.Float) return bad(t, data);
      if (data.type.precision === Precision.HALF) return halfToNumber(data.values[i]);
      return data.values[i];
    case 'decimal': {
      if (tid !== Type.Decimal) return bad(t, data);
      if (data.type.scale !== t.scale) return bad(t, data, `scale ${data.type.scale}`);
      const words = data.type.bitWidth / 32;
      let v = 0n;
      for (let w = words - 1; w >= 0; w--) v = (v << 32n) | BigInt(data.values[i * words + w] >>> 0);
      if (data.values[i * words + words - 1] & 0x80000000) v -= 1n << BigInt(data.type.bitWidth);
      return v;
    }
    case 'uuid': {
      const b = bytesAt(data, i);
      if (!b || b.length !== 16) return bad(t, data, b ? `${b.length} bytes` : undefined);
      return bytesToUuid(b);
    }
    case 'date':
      if (tid !== Type.Date) return bad(t, data);
      if (data.type.unit === DateUnit.DAY) return intAt(data, i);
      {
        const ms = intAt(data, i);
        return ms % 86400000n === 0n ? ms / 86400000n : bad(t, data, `${ms} ms`);
      }
    case 'time_ms': case 'time_us': case 'time_ns':
      if (tid !== Type.Time) return bad(t, data);
      return convertUnit(intAt(data, i), UNIT[data.type.unit], unitOf(t));
    case 'timestamp_ms': case 'timestamp_us': case 'timestamp_ns': case 'int96': {
      if (tid !== Type.Timestamp) return bad(t, data);
      // arrow-rs gives isAdjustedToUTC=true a timezone ("+00:00"), false none.
      const utc = !!data.type.timezone;
      if (t.utc !== undefined && utc !== t.utc) return bad(t, data, `(${utc ? 'UTC-adjusted' : 'local'}; expected ${t.utc ? 'UTC-adjusted' : 'local'})`);
      return convertUnit(intAt(data, i), UNIT[data.type.unit], unitOf(t));
    }
    case 'interval': {
      if (tid === Type.FixedSizeBinary && data.type.byteWidth === 12) {
        const b = bytesAt(data, i);
        const dv = new DataView(b.buffer, b.byteOffset, 12);
        return { months: dv.getUint32(0, true), days: dv.getUint32(4, true), millis: dv.getUint32(8, true) };
      }
      if (tid !== Type.Interval) return bad(t, data);
      const s = data.stride, v = data.values;
      // DAY_TIME has no months field: 'dropped' never equals a number.
      if (data.type.unit === IntervalUnit.DAY_TIME) return { months: 'dropped', days: v[i * s] >>> 0, millis: v[i * s + 1] >>> 0 };
      if (data.type.unit === IntervalUnit.MONTH_DAY_NANO) {
        const nanos = BigInt(v[i * s + 2] >>> 0) | (BigInt(v[i * s + 3]) << 32n);
        const ms = convertUnit(nanos, 'ns', 'ms');
        if (ms instanceof Mismatch) return ms;
        return { months: v[i * s] >>> 0, days: v[i * s + 1] >>> 0, millis: Number(ms) };
      }
      return bad(t, data);
    }
    case 'unknown': return bad(t, data, 'non-null');
    case 'list': {
      if (tid !== Type.List && tid !== Type.LargeList && tid !== Type.FixedSizeList) return bad(t, data);
      let a, b;
      if (tid === Type.FixedSizeList) { a = i * data.type.listSize; b = a + data.type.listSize; }
      else { a = Number(data.valueOffsets[i]); b = Number(data.valueOffsets[i + 1]); }
      const child = data.children[0], out = [];
      for (let k = a; k < b; k++) out.push(cell(t.element, child, k));
      return out;
    }
    case 'map': {
      if (tid !== Type.Map) return bad(t, data);
      const a = Number(data.valueOffsets[i]), b = Number(data.valueOffsets[i + 1]);
      const entries = data.children[0], out = [];
      if (!entries.getValid(0) && b > a) return bad(t, data, 'null entries');
      for (let k = a; k < b; k++) out.push([cell(t.key, entries.children[0], k), cell(t.value, entries.children[1], k)]);
      return out;
    }
    case 'struct': {
      if (tid !== Type.Struct) return bad(t, data);
      const o = {};
      data.type.children.forEach((f, k) => {
        const ft = t.fields.find(x => x.name === f.name);
        if (ft) o[f.name] = cell(ft, data.children[k], i);
      });
      return o;
    }
  }
  if (isStringy(t)) {
    const b = bytesAt(data, i);
    if (!b) return bad(t, data);
    return decodeUtf8(b);
  }
  if (isBytes(t)) {
    const b = bytesAt(data, i);
    if (!b) return bad(t, data);
    return bytesToHex(b);
  }
  return bad(t, data);
}

function locate(chunks, i) {
  for (const c of chunks) {
    if (i < c.length) return [c, i];
    i -= c.length;
  }
  throw new Error(`row ${i} past the end of the column`);
}

export async function read(file, columns) {
  const bytes = new Uint8Array(fs.readFileSync(file));
  const wasmTable = readParquet(bytes);
  const table = tableFromIPC(wasmTable.intoIPCStream());
  const out = {};
  for (const col of columns) {
    const vec = table.getChild(col.name);
    if (!vec) continue;
    const vals = [];
    for (const chunk of vec.data)
      for (let i = 0; i < chunk.length; i++) vals.push(cell(col, chunk, i));
    out[col.name] = vals;
  }
  const info = table.schema.fields.map(f => `${f.name} ${String(f.type)}`).join(', ');
  return { columns: out, nrows: table.numRows, info };
}
