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
// Numbers compare by parqd's number rule (numrule.mjs, schema/variant/vnumber.c):
// an int or decimal must hold the text's exact value (unscaled/scale
// normalized); a double must be the double JS parses from the text
// (correctly rounded, sign of zero included) and, unless the rule says no
// exact type holds the number ("lossy"), print back (shortest form) as the
// text's exact value; and the kind must be the one the rule gives (a
// double where the schema shreds the path as intN/decimal may come back as
// that exact type). Numbers read back as JSON text (DuckDB's CAST(v AS
// JSON)) compare the same way, by exact value.
import { checkNumber, ruleOf } from './numrule.mjs';

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

/* JSON text (a string) -> value, numbers as JNum. */
export function parseJsonText(text) {
  const p = new Parser(text);
  const v = p.value(0);
  p.ws();
  if (p.i !== p.s.length) p.fail('trailing characters');
  return v;
}

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

/* The shred spec (YAML: {key: spec}, [spec], "list<T>", a type name) one
 * level down, and whether a spec types a number as intN/decimal. */
export function shredField(sh, k) {
  return sh && typeof sh === 'object' && !Array.isArray(sh) && Object.hasOwn(sh, k) ? sh[k] : undefined;
}
export function shredElement(sh) {
  if (Array.isArray(sh)) return sh[0];
  const m = typeof sh === 'string' && /^\s*list\s*<\s*(.+?)\s*>\s*$/.exec(sh);
  return m ? m[1] : undefined;
}
export function shredIsExact(sh) {
  return typeof sh === 'string' && /^\s*(int(8|16|32|64)|decimal\b)/.test(sh);
}

/* A number read back against its source: VNum (a reader's Variant value)
 * or JNum (JSON text a reader printed). null when it holds what the rule
 * stores; ctx.stats counts numbers and lists the lossy ones. */
function compareNum(exp, got, path, ctx) {
  let why;
  if (got instanceof JNum) {
    const r = ruleOf(exp);
    const x = Number(got.text);
    if (r.kind === 'lossy') why = Object.is(x, r.double) ? null : `not the double of the text`;
    else if (got.u !== r.u || got.s !== r.s) why = 'value differs';
    else if (r.kind === 'double' && !Object.is(x, r.double)) why = 'sign of zero differs';
  } else if (got instanceof VNum) {
    why = checkNumber(exp, got, shredIsExact(ctx.shred));
  } else {
    why = 'not a number';
  }
  if (ctx.stats && !why) {
    const st = ctx.stats;
    st.numbers = (st.numbers || 0) + 1;
    const r = ruleOf(exp);
    if (r.kind === 'lossy') {
      st.lossy = (st.lossy || 0) + 1;
      st.lossyList ||= [];
      if (st.lossyList.length < 5)
        st.lossyList.push(`${ctx.col || ''}${path || (ctx.col ? '' : '/')} ${exp.text} -> ${got instanceof JNum ? got.text : String(got.a)}`);
    }
  }
  return why;
}

/* Source JSON value `exp` vs Variant value `got` (VV, or JSON text values
 * with JNum numbers). Returns null when equal (object key order ignored),
 * else {path, exp, got} of the first difference, path in JSON Pointer-ish
 * form. ctx: {shred (the column's shred spec), stats, col (a label for
 * the stats)}. */
export function compareJV(exp, got, path = '', ctx = {}) {
  const diff = (why) => ({ path: path || '/', exp: showJ(exp), got: showJ(got) + (why ? ` (${why})` : '') });
  if (exp === null) return got === null ? null : diff();
  if (typeof exp === 'boolean') return got === exp ? null : diff();
  if (typeof exp === 'string') return typeof got === 'string' && got === exp ? null : diff();
  if (exp instanceof JNum) {
    const why = compareNum(exp, got, path, ctx);
    return why ? diff(why) : null;
  }
  if (Array.isArray(exp)) {
    if (!Array.isArray(got)) return diff();
    if (got.length !== exp.length) return { path: path || '/', exp: `${exp.length} elements ${showJ(exp)}`, got: `${got.length} elements ${showJ(got)}` };
    const sub = { ...ctx, shred: shredElement(ctx.shred) };
    for (let i = 0; i < exp.length; i++) {
      const d = compareJV(exp[i], got[i], `${path}/${i}`, sub);
      if (d) return d;
    }
    return null;
  }
  if (exp instanceof Map) {
    if (!(got instanceof Map)) return diff();
    for (const [k, v] of exp) {
      const p = `${path}/${escapePtr(k)}`;
      if (!got.has(k)) return { path: p, exp: showJ(v), got: '(missing)' };
      const d = compareJV(v, got.get(k), p, { ...ctx, shred: shredField(ctx.shred, k) });
      if (d) return d;
    }
    for (const k of got.keys())
      if (!exp.has(k)) return { path: `${path}/${escapePtr(k)}`, exp: '(missing)', got: showJ(got.get(k)) };
    return null;
  }
  return diff('unknown source value');
}

export function escapePtr(k) { return k.replace(/~/g, '~0').replace(/\//g, '~1'); }
