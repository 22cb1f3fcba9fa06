// logs_json.mjs - the value model of the log interop check (logs.mjs): an
// exact JSON parser for the source NDJSON, and the comparison of a source
// JSON value with a value read back from Parquet (typed column or Variant).
//
// Source JSON values (JSON.parse would round numbers, so it is not used):
//   null, true/false, string, JNum (number text kept, exact decimal value),
//   Array, Map (object; key order kept, duplicate keys are an error).
// Values read back from a Variant ("VV"), whatever the reader:
//   null (Variant null), boolean, string, Array, Map,
//   VNum {kind: 'int' | 'dec' | 'double' | 'float', ...},
//   VOther {desc} for Variant types JSON never produces (date, timestamp,
//   binary, uuid, time): never equal to a JSON value.
// Numbers compare by exact decimal value (int, decimal: unscaled/scale
// normalized); a double or float compares by value with the JSON number
// as JS parses it (correctly rounded), as the Variant spec allows a writer
// to store a JSON number as a double.

export class JNum {
  constructor(text) {
    this.text = text;
    const m = /^(-?)([0-9]+)(?:\.([0-9]+))?(?:[eE]([+-]?[0-9]+))?$/.exec(text);
    if (!m) throw new Error(`bad number ${text}`);
    let u = BigInt(m[2] + (m[3] || ''));
    let s = (m[3] || '').length - (m[4] ? Number(m[4]) : 0);
    if (m[1]) u = -u;
    [this.u, this.s] = normDec(u, s);
    this.isIntLiteral = !m[3] && !m[4];
  }
  /* exact integer value, or null when not an integer */
  bigint() { return this.s === 0 ? this.u : null; }
  toString() { return this.text; }
}

export class VNum {
  constructor(kind, a, scale) {
    this.kind = kind; // 'int' (a: BigInt), 'dec' (a: unscaled BigInt, scale), 'double'/'float' (a: number)
    this.a = a;
    this.scale = scale || 0;
  }
  toString() {
    if (this.kind === 'int') return `${this.a} (int)`;
    if (this.kind === 'dec') return `${formatDec(this.a, this.scale)} (decimal scale ${this.scale})`;
    return `${Object.is(this.a, -0) ? '-0' : String(this.a)} (${this.kind})`;
  }
}

export class VOther {
  constructor(desc) { this.desc = desc; }
  toString() { return this.desc; }
}

/* (u, s) with s >= 0 and no trailing zero in the fraction */
export function normDec(u, s) {
  if (s < 0) return [u * 10n ** BigInt(-s), 0];
  while (s > 0 && u % 10n === 0n) { u /= 10n; s--; }
  return [u, s];
}

export function formatDec(u, s) {
  const neg = u < 0n;
  let d = (neg ? -u : u).toString();
  if (s > 0) {
    d = d.padStart(s + 1, '0');
    d = d.slice(0, d.length - s) + '.' + d.slice(d.length - s);
  }
  return (neg ? '-' : '') + d;
}

/* ---- parser ------------------------------------------------------------ */

class Parser {
  constructor(s) { this.s = s; this.i = 0; }
  fail(msg) { throw new Error(`${msg} at character ${this.i}`); }
  ws() {
    const s = this.s;
    while (this.i < s.length) {
      const c = s.charCodeAt(this.i);
      if (c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d) this.i++;
      else break;
    }
  }
  value(depth) {
    if (depth > 1000) this.fail('nesting too deep');
    this.ws();
    const c = this.s[this.i];
    if (c === '{') return this.object(depth);
    if (c === '[') return this.array(depth);
    if (c === '"') return this.string();
    if (c === 't' && this.s.startsWith('true', this.i)) { this.i += 4; return true; }
    if (c === 'f' && this.s.startsWith('false', this.i)) { this.i += 5; return false; }
    if (c === 'n' && this.s.startsWith('null', this.i)) { this.i += 4; return null; }
    const m = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;
    m.lastIndex = this.i;
    const r = m.exec(this.s);
    if (!r || r[0] === '' || r[0] === '-') this.fail('unexpected character');
    this.i += r[0].length;
    return new JNum(r[0]);
  }
  object(depth) {
    this.i++;
    const o = new Map();
    this.ws();
    if (this.s[this.i] === '}') { this.i++; return o; }
    for (;;) {
      this.ws();
      if (this.s[this.i] !== '"') this.fail('expected a key');
      const k = this.string();
      this.ws();
      if (this.s[this.i] !== ':') this.fail("expected ':'");
      this.i++;
      const v = this.value(depth + 1);
      if (o.has(k)) this.fail(`duplicate key ${JSON.stringify(k)}`);
      o.set(k, v);
      this.ws();
      if (this.s[this.i] === ',') { this.i++; continue; }
      if (this.s[this.i] === '}') { this.i++; return o; }
      this.fail("expected ',' or '}'");
    }
  }
  array(depth) {
    this.i++;
    const a = [];
    this.ws();
    if (this.s[this.i] === ']') { this.i++; return a; }
    for (;;) {
      a.push(this.value(depth + 1));
      this.ws();
      if (this.s[this.i] === ',') { this.i++; continue; }
      if (this.s[this.i] === ']') { this.i++; return a; }
      this.fail("expected ',' or ']'");
    }
  }
  string() {
    const s = this.s;
    let out = '';
    let j = ++this.i;
    for (;;) {
      if (j >= s.length) this.fail('unterminated string');
      const c = s.charCodeAt(j);
      if (c === 0x22) { out += s.slice(this.i, j); this.i = j + 1; return out; }
      if (c < 0x20) { this.i = j; this.fail('control character in string'); }
      if (c !== 0x5c) { j++; continue; }
      out += s.slice(this.i, j);
      const e = s[j + 1];
      const simple = { '"': '"', '\\': '\\', '/': '/', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' };
      if (e in simple) { out += simple[e]; j += 2; }
      else if (e === 'u' && /^[0-9a-fA-F]{4}$/.test(s.slice(j + 2, j + 6))) {
        out += String.fromCharCode(parseInt(s.slice(j + 2, j + 6), 16));
        j += 6;
      } else { this.i = j; this.fail('bad escape'); }
      this.i = j;
    }
  }
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/* One NDJSON line (a Buffer/Uint8Array without the newline) -> value. */
export function parseJsonLine(bytes) {
  const p = new Parser(utf8.decode(bytes));
  const v = p.value(0);
  p.ws();
  if (p.i !== p.s.length) p.fail('trailing characters');
  return v;
}

/* A whole NDJSON file -> [{lineno, bytes}] (1-based line numbers; empty
 * lines skipped, as parqd's framer does; the samples have none). */
export function splitLines(buf) {
  const out = [];
  let start = 0, lineno = 0;
  for (let i = 0; i <= buf.length; i++) {
    if (i === buf.length || buf[i] === 0x0a) {
      if (i === buf.length && start === i) break;
      lineno++;
      if (i > start) out.push({ lineno, bytes: buf.subarray(start, i) });
      start = i + 1;
    }
  }
  return out;
}

/* ---- display ----------------------------------------------------------- */

export function showJ(v, max = 160) {
  const s = showRaw(v);
  return s.length > max ? s.slice(0, max) + '...' : s;
}

function showRaw(v) {
  if (v === undefined) return '(missing)';
  if (v === null) return 'null';
  if (v instanceof JNum) return v.text;
  if (v instanceof VNum || v instanceof VOther) return v.toString();
  if (typeof v === 'bigint') return `${v}`;
  if (typeof v === 'string') return JSON.stringify(v);
  if (typeof v === 'number') return Object.is(v, -0) ? '-0' : String(v);
  if (typeof v === 'boolean') return String(v);
  if (Array.isArray(v)) return '[' + v.map(showRaw).join(',') + ']';
  if (v instanceof Map) return '{' + [...v].map(([k, x]) => `${JSON.stringify(k)}:${showRaw(x)}`).join(',') + '}';
  if (v && v.desc) return v.desc;
  try { return JSON.stringify(v, (k, x) => typeof x === 'bigint' ? String(x) : x); } catch { return String(v); }
}

/* ---- comparison -------------------------------------------------------- */

/* Source JSON value `exp` vs Variant value `got` (VV). Returns null when
 * equal (object key order ignored), else {path, exp, got} of the first
 * difference, path in JSON Pointer-ish form. */
export function compareJV(exp, got, path = '') {
  const diff = (why) => ({ path: path || '/', exp: showJ(exp), got: showJ(got) + (why ? ` (${why})` : '') });
  if (exp === null) return got === null ? null : diff();
  if (typeof exp === 'boolean') return got === exp ? null : diff();
  if (typeof exp === 'string') return typeof got === 'string' && got === exp ? null : diff();
  if (exp instanceof JNum) {
    if (!(got instanceof VNum)) return diff();
    if (got.kind === 'int' || got.kind === 'dec') {
      const [u, s] = normDec(got.a, got.scale);
      return u === exp.u && s === exp.s ? null : diff();
    }
    const d = Number(exp.text);
    const g = got.kind === 'float' ? got.a : got.a;
    if (got.kind === 'float' && Math.fround(d) !== d) return diff('float cannot hold it');
    return g === d ? null : diff();
  }
  if (Array.isArray(exp)) {
    if (!Array.isArray(got)) return diff();
    if (got.length !== exp.length) return { path: path || '/', exp: `${exp.length} elements ${showJ(exp)}`, got: `${got.length} elements ${showJ(got)}` };
    for (let i = 0; i < exp.length; i++) {
      const d = compareJV(exp[i], got[i], `${path}/${i}`);
      if (d) return d;
    }
    return null;
  }
  if (exp instanceof Map) {
    if (!(got instanceof Map)) return diff();
    for (const [k, v] of exp) {
      const p = `${path}/${escapePtr(k)}`;
      if (!got.has(k)) return { path: p, exp: showJ(v), got: '(missing)' };
      const d = compareJV(v, got.get(k), p);
      if (d) return d;
    }
    for (const k of got.keys())
      if (!exp.has(k)) return { path: `${path}/${escapePtr(k)}`, exp: '(missing)', got: showJ(got.get(k)) };
    return null;
  }
  return diff('unknown source value');
}

export function escapePtr(k) { return k.replace(/~/g, '~0').replace(/\//g, '~1'); }
