// duck_copy.mjs - DuckDB's NDJSON-to-Parquet path, timed from inside the
// process: COPY (SELECT * FROM read_json(INPUT)) TO OUTPUT (zstd) with
// `SET threads=N`. Prints the seconds the COPY took (start-up and module
// loading excluded; peak RSS is the caller's /usr/bin/time around node).
// @duckdb/node-api is the one tests/interop pins (make npm).
// usage: node duck_copy.mjs INPUT OUTPUT THREADS
import { createRequire } from 'module';
import path from 'path';
import { fileURLToPath } from 'url';

const [input, output, threads] = process.argv.slice(2);
if (!input || !output || !(Number(threads) >= 1)) {
  console.error('usage: node duck_copy.mjs INPUT OUTPUT THREADS');
  process.exit(1);
}
const interop = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'tests', 'interop', 'package.json');
const { DuckDBInstance } = createRequire(interop)('@duckdb/node-api');
const lit = s => `'${s.replaceAll("'", "''")}'`;

const con = await (await DuckDBInstance.create(':memory:')).connect();
await con.run(`SET threads=${Number(threads)}`);
const t0 = process.hrtime.bigint();
await con.run(`COPY (SELECT * FROM read_json(${lit(input)}, format='newline_delimited'))
               TO ${lit(output)} (FORMAT parquet, COMPRESSION zstd)`);
const t1 = process.hrtime.bigint();
console.log((Number(t1 - t0) / 1e9).toFixed(3));
