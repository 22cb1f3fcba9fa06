// reload_check.mjs - the verdict of test_daemon_reload.sh: the files
// published before the schema change have the default schema (event,
// _ingest_ts) and hold exactly the records sent before it; the files after
// have the typed schema (id, msg, n, rest) and hold exactly the records
// sent after it, typed values and the rest column included.
//
//   node reload_check.mjs --out DIR --before N --after-first A --after-last B
//
// Records are {"id":i,"msg":"m<i>","n":i,"x":"y<i>"}; ids 1..N before,
// A..B after.
import { listParquet, tempFiles, query, sqlStr, sqlList } from './pq.mjs';
import { parseArgs } from './prng.mjs';

const o = parseArgs(process.argv.slice(2));
let failed = 0;
const pass = n => console.log(`PASS ${n}`);
const fail = (n, why) => { failed++; console.log(`FAIL ${n}${why ? `: ${why}` : ''}`); };
const check = (n, cond, why) => (cond ? pass(n) : fail(n, why));
const range = (a, b) => Array.from({ length: b - a + 1 }, (_, i) => a + i);
const sameIds = (got, want) => got.length === want.length && got.every((v, i) => v === want[i]);

check('no temporary files left', tempFiles(o.out).length === 0);
const files = listParquet(o.out);
const byCols = new Map();
for (const f of files) {
  const d = await query(`DESCRIBE SELECT * FROM read_parquet(${sqlStr(f)}, hive_partitioning = false)`);
  const sig = d.map(c => `${c.column_name} ${c.column_type}`).join(', ');
  if (!byCols.has(sig)) byCols.set(sig, []);
  byCols.get(sig).push(f);
}
for (const [sig, fs] of byCols) console.log(`note: ${fs.length} files with columns (${sig})`);
const oldSig = [...byCols.keys()].find(s => /^event VARIANT, _ingest_ts TIMESTAMP WITH TIME ZONE$/.test(s));
const newSig = [...byCols.keys()].find(s => /^id BIGINT, msg VARCHAR, n INTEGER, rest VARIANT/.test(s));
check('files before the reload have the default schema (event VARIANT, _ingest_ts)', oldSig !== undefined);
check('files after the reload have the typed schema (id BIGINT, msg VARCHAR, n INTEGER, rest VARIANT)', newSig !== undefined);
check('no file has any other schema', byCols.size === (oldSig ? 1 : 0) + (newSig ? 1 : 0),
      [...byCols.keys()].filter(s => s !== oldSig && s !== newSig).join(' | '));

const before = Number(o.before), a = Number(o['after-first']), b = Number(o['after-last']);
if (oldSig) {
  const rows = await query(`SELECT CAST(event AS JSON)::VARCHAR AS j FROM read_parquet(${sqlList(byCols.get(oldSig))}, hive_partitioning = false)`);
  const recs = rows.map(r => JSON.parse(r.j));
  const ids = recs.map(r => r.id).sort((x, y) => x - y);
  check(`old-schema files hold exactly the ${before} records sent before the reload (${ids.length})`,
        sameIds(ids, range(1, before)), `ids ${ids.slice(0, 5).join(',')}..${ids.slice(-3).join(',')}`);
  const wrong = recs.filter(r => r.msg !== `m${r.id}` || r.n !== r.id || r.x !== `y${r.id}`);
  check('  ... with every field intact in event', wrong.length === 0, JSON.stringify(wrong[0]));
}
if (newSig) {
  const rows = await query(`SELECT id, msg, n, CAST(rest AS JSON)::VARCHAR AS rest FROM read_parquet(${sqlList(byCols.get(newSig))}, hive_partitioning = false) ORDER BY id`);
  const ids = rows.map(r => Number(r.id));
  check(`new-schema files hold exactly the records ${a}..${b} sent after the reload (${ids.length})`,
        sameIds(ids, range(a, b)), `ids ${ids.slice(0, 5).join(',')}..${ids.slice(-3).join(',')}`);
  const wrong = rows.filter(r => r.msg !== `m${r.id}` || Number(r.n) !== Number(r.id) ||
                                 JSON.stringify(JSON.parse(r.rest)) !== JSON.stringify({ x: `y${r.id}` }));
  check('  ... typed columns and the rest column hold the right values', wrong.length === 0, JSON.stringify(wrong[0]));
}
process.exit(failed ? 1 : 0);
