// query.mjs - runs one SQL statement with DuckDB (@duckdb/node-api) and
// prints the rows as JSON lines: `make query` uses it to show what the
// daemon of `make run` landed.
//   node query.mjs "SELECT count(*) FROM 'run-data/out/**/*.parquet'"
import { DuckDBInstance } from "@duckdb/node-api";

const sql = process.argv[2];
if (!sql) {
  console.error("usage: node query.mjs SQL");
  process.exit(1);
}
const con = await (await DuckDBInstance.create(":memory:")).connect();
const rows = (await con.runAndReadAll(sql)).getRowObjectsJson();
for (const r of rows) console.log(JSON.stringify(r));
