// drift_layout.mjs OUT - the layout checks of test_auto_shred_drift.sh,
// through DuckDB's parquet_kv_metadata and parquet_schema: the shredded
// layout is in use where the case says, and only there. One PASS/FAIL line
// per check; exit 1 on any FAIL. Also: filters on shredded fields return
// the rows the unshredded file returns (compared by count and a hash of
// the rows' JSON).
import { DuckDBInstance } from '@duckdb/node-api';
import fs from 'node:fs';
import path from 'node:path';

const out = process.argv[2];
const con = await (await DuckDBInstance.create(':memory:')).connect();
const rows = async (sql) => (await con.runAndReadAll(sql)).getRowObjectsJson();
const lit = (s) => `'${s.replaceAll("'", "''")}'`;
let failed = 0;
const check = (name, ok, msg) => {
  console.log(`${ok ? 'PASS' : 'FAIL'}  drift-layout-${name}: ${msg}`);
  if (!ok) failed++;
};
const files = (base) => fs.readdirSync(out).filter(n => n === `${base}.parquet` ||
  (n.startsWith(`${base}-`) && n.endsWith('.parquet'))).sort().map(n => path.join(out, n));
async function tree(file, col) {
  const r = await rows(`SELECT decode(value) AS v FROM parquet_kv_metadata(${lit(file)}) WHERE decode(key) = ${lit('parqd.shred.' + col)}`);
  return r.length ? JSON.parse(r[0].v) : undefined;
}
async function typedLeaves(file) {
  const r = await rows(`SELECT name FROM parquet_schema(${lit(file)}) WHERE name = 'typed_value'`);
  return r.length;
}

{ // default: the first row group is stable, so the drifting fields are typed
  const [f] = files('default');
  const t = await tree(f, 'event');
  /* "Small" and "small" differ only in case: readers fold it, one is shredded */
  const ok = t && t.status === 'int16' && t.Small === 'int8' && t.small === undefined && t.lat === 'double' &&
    t.obj && t.obj.a === 'int8' && t.obj.deep && Array.isArray(t.arr) && t.gone === 'string' &&
    t.value === undefined && t['dotted.key'] === 'string';
  check('default', ok, `event shredded as ${JSON.stringify(t)}; ${await typedLeaves(f)} typed_value nodes`);
}
{ // rotate: every file decides; the later files see drifted data
  const fs_ = files('rotate');
  const trees = [];
  for (const f of fs_) trees.push(JSON.stringify(await tree(f, 'event')));
  const distinct = new Set(trees).size;
  const first = JSON.parse(trees[0]), last = JSON.parse(trees[trees.length - 1]);
  const changed = Object.keys({ ...first, ...last }).filter(k => JSON.stringify(first[k]) !== JSON.stringify(last[k]));
  check('rotate', fs_.length >= 3 && distinct >= 2 && first.status === 'int16' && changed.length > 0,
    `${fs_.length} files, ${distinct} distinct trees; first and last file differ in ${changed.join(', ')}`);
}
{ // limits: at most 3 fields, nothing nested
  const [f] = files('limits');
  const t = await tree(f, 'event');
  const vals = t && typeof t === 'object' ? Object.values(t) : [];
  check('limits', vals.length > 0 && vals.length <= 3 && vals.every(v => typeof v === 'string'),
    `event shredded as ${JSON.stringify(t)}`);
}
{ // none: the unshredded layout and no tree
  const [f] = files('none');
  const n = await typedLeaves(f), t = await tree(f, 'event');
  check('none', n === 0 && t === undefined, `${n} typed_value nodes, tree ${JSON.stringify(t)}`);
}
{ // rest: the `*` column shreds automatically, without the typed columns' fields
  const [f] = files('rest');
  const t = await tree(f, 'rest');
  check('rest', t && t.status === 'int16' && t.level === undefined && t.flag === undefined,
    `rest shredded as ${JSON.stringify(t)}`);
}
{ // a Variant column from a path, null where the path is missing
  const [f] = files('column');
  const t = await tree(f, 'obj');
  const nulls = (await rows(`SELECT count(*) AS n FROM read_parquet(${lit(f)}) WHERE obj IS NULL`))[0].n;
  check('column', t && t.a === 'int8' && t.b === 'string' && Number(nulls) > 0,
    `obj shredded as ${JSON.stringify(t)}, null in ${nulls} rows`);
}
{ // filters on shredded fields return the rows the unshredded file returns
  const [auto] = files('default'), [none] = files('none');
  const filters = {
    'status = 202': `TRY_CAST(variant_extract(event, 'status') AS INTEGER) = 202`,
    "status = '200' (drifted to a string)": `variant_typeof(variant_extract(event, 'status')) = 'VARCHAR'`,
    "level = 'warn'": `variant_extract(event, 'level')::VARCHAR = 'warn'`,
    'obj.a = 3': `TRY_CAST(variant_extract(variant_extract(event, 'obj'), 'a') AS INTEGER) = 3`,
    'small > 100': `TRY_CAST(variant_extract(event, 'small') AS BIGINT) > 100`,
  };
  for (const [name, where] of Object.entries(filters)) {
    const q = (f) => `SELECT count(*) AS n, md5(coalesce(string_agg(CAST(event AS JSON)::VARCHAR, '\n' ORDER BY CAST(event AS JSON)::VARCHAR), '')) AS h FROM read_parquet(${lit(f)}) WHERE ${where}`;
    const a = (await rows(q(auto)))[0], b = (await rows(q(none)))[0];
    check(`filter ${name}`, a.n === b.n && a.h === b.h && Number(a.n) > 0,
      `${a.n} rows from the shredded file, ${b.n} from the unshredded one${a.h === b.h ? ', the same' : ', DIFFERENT'}`);
  }
}
process.exit(failed ? 1 : 0);
