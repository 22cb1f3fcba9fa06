// logs_auto.mjs - automatic Variant shredding (`shred: auto`, the default
// for a top-level Variant column without `shred:`) in the log interop test:
// each file names the tree it chose in its key-value metadata
// `parqd.shred.<column>` (compact JSON in the schema language: {"a":
// "int16", "b": ["string"]}, "variant" = not shredded). applyAutoShred
// reads it with hyparquet, checks that the footer really has the
// typed_value leaves the tree names, and gives the column the tree as its
// shred spec, so the comparisons know which paths are typed (a shredded
// integer reads back with its column's width, a double shredded into an
// integer column as an integer: both allowed by VariantShredding.md).
// Several files (rotation) may choose differently: integer widths merge to
// the widest, and the column is marked `auto` (typeOk then accepts any
// integer width that holds the value).
import fs from 'node:fs';
import { parquetMetadata } from 'hyparquet';

function isAuto(type) {
  if (type.kind !== 'variant') return false;
  const s = type.shred;
  return s === undefined || s === 'auto' || (s && typeof s === 'object' && !Array.isArray(s) &&
    Object.keys(s).length === 1 && Object.hasOwn(s, 'auto') && (s.auto === null || typeof s.auto === 'object'));
}

const INT = /^int(8|16|32|64)$/;

function merge(a, b) {
  if (a === undefined) return b;
  if (b === undefined) return a;
  if (Array.isArray(a) && Array.isArray(b)) return [merge(a[0], b[0])];
  if (a && b && typeof a === 'object' && typeof b === 'object' && !Array.isArray(a) && !Array.isArray(b)) {
    const out = { ...a };
    for (const [k, v] of Object.entries(b)) out[k] = merge(a[k], v);
    return out;
  }
  const ma = INT.exec(a), mb = INT.exec(b);
  if (ma && mb) return Number(ma[1]) >= Number(mb[1]) ? a : b;
  return a;
}

/* Leaf paths a tree shreds into, under the column name. */
function typedPaths(tree, prefix, out) {
  if (typeof tree === 'string') {
    if (tree !== 'variant') out.push(`${prefix}.typed_value`);
  } else if (Array.isArray(tree)) {
    typedPaths(tree[0], `${prefix}.typed_value.list.element`, out);
  } else {
    for (const [k, v] of Object.entries(tree)) typedPaths(v, `${prefix}.typed_value.${k}`, out);
  }
  return out;
}

function leafPaths(md) {
  /* depth-first over the flat schema list, as the footer stores it */
  const paths = [];
  let i = 1;
  const walk = (prefix) => {
    const el = md.schema[i++];
    const p = prefix ? `${prefix}.${el.name}` : el.name;
    if (!el.num_children) { paths.push(p); return; }
    for (let c = 0; c < el.num_children; c++) walk(p);
  };
  while (i < md.schema.length) walk('');
  return new Set(paths);
}

/* Gives every auto column of `columns` the tree its files chose; returns
 * {problem, notes, shredded: number of auto columns shredded somewhere}. */
export function applyAutoShred(files, columns) {
  const notes = [];
  let shredded = 0;
  const metas = files.map(f => {
    const buf = fs.readFileSync(f);
    const md = parquetMetadata(buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength));
    const kv = new Map((md.key_value_metadata || []).map(e => [e.key, e.value]));
    return { file: f, kv, leaves: leafPaths(md) };
  });
  for (const col of columns) {
    if (!isAuto(col.type)) continue;
    let tree, differs = false, first;
    for (const m of metas) {
      const text = m.kv.get(`parqd.shred.${col.name}`);
      if (text === undefined) return { problem: `${m.file}: no parqd.shred.${col.name} metadata for a shred: auto column` };
      let t;
      try { t = JSON.parse(text); } catch (e) { return { problem: `${m.file}: parqd.shred.${col.name} is not JSON: ${e.message}` }; }
      for (const p of typedPaths(t, col.name, []))
        if (![...m.leaves].some(l => l === p || l.startsWith(p + '.')))
          return { problem: `${m.file}: parqd.shred.${col.name} names ${p}, the footer has no such leaf` };
      if (first === undefined) first = text;
      else if (text !== first) differs = true;
      if (t !== 'variant') tree = merge(tree, t);
    }
    col.type.shred = tree;
    col.type.auto = true;
    if (tree !== undefined) {
      shredded++;
      notes.push(`${col.name} auto-shredded (${typedPaths(tree, col.name, []).length} typed fields${differs ? ', trees differ between files' : ''})`);
    } else {
      notes.push(`${col.name} auto: not shredded`);
    }
  }
  return { problem: null, notes, shredded };
}
