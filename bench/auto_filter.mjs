// auto_filter.mjs - the same DuckDB filter queries on an auto-shredded file
// and on the `shred: none` file of the same input (issue 10, must-hold 3):
// both must return the same rows; prints the rows, the best of N timings
// of each query and the bytes of the Variant leaves each file holds
// (DuckDB 1.5.6 reads every leaf of a Variant it extracts from). Not a
// test: timings depend on the machine.
//   node auto_filter.mjs AUTO.parquet NONE.parquet [N]
import { createRequire } from 'module';
import path from 'path';
import { fileURLToPath } from 'url';

const [auto, none, nArg] = process.argv.slice(2);
if (!auto || !none) {
  console.error('usage: node auto_filter.mjs AUTO.parquet NONE.parquet [N]');
  process.exit(1);
}
const N = Number(nArg || 3);
const interop = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'tests', 'interop', 'package.json');
const { DuckDBInstance } = createRequire(interop)('@duckdb/node-api');
const lit = s => `'${s.replaceAll("'", "''")}'`;
const con = await (await DuckDBInstance.create(':memory:')).connect();
await con.run('SET threads=1');
const rows = async sql => (await con.runAndReadAll(sql)).getRowObjectsJson();

const QUERIES = {
  'status = 500 (count)': f => `SELECT count(*) AS n FROM read_parquet(${lit(f)}) WHERE TRY_CAST(variant_extract(variant_extract(event, 'response'), 'status') AS INTEGER) = 500`,
  'status = 500 (rows)': f => `SELECT md5(string_agg(CAST(event AS JSON)::VARCHAR, '\n' ORDER BY _ingest_ts, CAST(event AS JSON)::VARCHAR)) AS h, count(*) AS n FROM read_parquet(${lit(f)}) WHERE TRY_CAST(variant_extract(variant_extract(event, 'response'), 'status') AS INTEGER) = 500`,
  "method = 'POST' (count)": f => `SELECT count(*) AS n FROM read_parquet(${lit(f)}) WHERE variant_extract(variant_extract(event, 'request'), 'method')::VARCHAR = 'POST'`,
};

let same = true;
for (const [name, q] of Object.entries(QUERIES)) {
  const res = {};
  for (const [label, f] of [['auto', auto], ['none', none]]) {
    let best = Infinity, out;
    for (let i = 0; i < N; i++) {
      const t0 = performance.now();
      out = await rows(q(f));
      best = Math.min(best, performance.now() - t0);
    }
    res[label] = { out: JSON.stringify(out), ms: best };
  }
  const eq = res.auto.out === res.none.out;
  same &&= eq;
  console.log(`${name}: ${eq ? 'same result' : 'DIFFERENT'} ${res.auto.out}; auto ${res.auto.ms.toFixed(0)} ms, none ${res.none.ms.toFixed(0)} ms (${(res.none.ms / res.auto.ms).toFixed(2)}x)`);
}
for (const [label, f] of [['auto', auto], ['none', none]]) {
  const r = await rows(`SELECT sum(total_compressed_size) AS b, count(*) AS leaves FROM parquet_metadata(${lit(f)}) WHERE path_in_schema LIKE 'event%'`);
  console.log(`${label}: event leaves ${r[0].leaves} chunks, ${r[0].b} compressed bytes`);
}
process.exit(same ? 0 : 1);
