// query.mjs - runs one SQL statement with DuckDB (@duckdb/node-api) and
// prints the rows as JSON lines: `make query` uses it to show what the
// daemon of `make run` landed.
//   node query.mjs [--config FILE] SQL
//   node query.mjs "SELECT count(*) FROM 'run-data/out/**/*.parquet'"
// When no file matches yet (DuckDB: "No files found that match the
// pattern"), it says why instead, from the daemon's configuration (FILE,
// whose relative paths are taken from the working directory, as parqd
// takes them) and its metrics endpoint (metrics.listen): parqd not
// running, nothing received, or records received but not yet published
// and when they will be (output.rotate.max_age after a file's first
// record, or at once on Ctrl-C). Exit status 1 then, as on any error.
import fs from "node:fs";
import yaml from "js-yaml";
import { DuckDBInstance } from "@duckdb/node-api";

let cfgPath = null;
const args = process.argv.slice(2);
if (args[0] === "--config") {
  cfgPath = args[1];
  args.splice(0, 2);
}
const sql = args[0];
if (!sql) {
  console.error("usage: node query.mjs [--config FILE] SQL");
  process.exit(1);
}

// The daemon's counters from its Prometheus endpoint, or null when
// nothing answers there.
async function metrics(listen) {
  try {
    const res = await fetch(`http://${listen}/metrics`, { signal: AbortSignal.timeout(2000) });
    const m = {};
    for (const line of (await res.text()).split("\n")) {
      const hit = /^(parqd_[a-z_]+) ([0-9.e+]+)$/.exec(line);
      if (hit) m[hit[1]] = Number(hit[2]);
    }
    return m;
  } catch {
    return null;
  }
}

function loadConfig(file) {
  try {
    return yaml.load(fs.readFileSync(file, "utf8")) ?? {};
  } catch (e) {
    console.error(`query: cannot read ${file}: ${e.message}`);
    return null;
  }
}

// What to say when no file matches: why, and when one will appear.
async function explainNoFiles(pattern, cfgFile) {
  const lines = [`no Parquet files yet: nothing matches ${pattern}`];
  const cfg = cfgFile ? loadConfig(cfgFile) : null;
  if (!cfg) return lines;
  const listen = cfg.metrics?.listen;
  const tcp = (cfg.inputs ?? []).find(i => i.type === "tcp")?.listen;
  const send = tcp ? `cat conf/sample.ndjson > /dev/tcp/${tcp.replace(":", "/")}` : "send it NDJSON lines";
  const age = cfg.output?.rotate?.max_age ?? "rotate.max_age";
  const m = listen ? await metrics(listen) : null;
  if (listen && m === null) {
    lines.push(`parqd is not running (nothing answers on ${listen}): start it with \`make run\`,`,
               `then send it lines from another terminal: ${send}`);
  } else if (m && !m.parqd_records_received_total) {
    lines.push(`parqd is running but has received nothing yet: ${send}`);
  } else if (m && m.parqd_records_rejected_total >= m.parqd_records_received_total &&
             !m.parqd_files_written_total) {
    lines.push(`parqd has received ${m.parqd_records_received_total} records and rejected every one:`,
               `see errors.dead_letter in ${cfgFile} for why`);
  } else if (m && !m.parqd_files_written_total) {
    lines.push(`parqd has received ${m.parqd_records_received_total} records and not published a file yet:`,
               `a file is published ${age} after its first record (output.rotate.max_age in ${cfgFile}),`,
               `or at once when parqd stops (Ctrl-C); run \`make query\` again then`);
  } else if (m) {
    lines.push(`parqd has published ${m.parqd_files_written_total} files, but none under this pattern:`,
               `output.dir and output.path in ${cfgFile} say where they go`);
    lines.published = true;
  }
  return lines;
}

const con = await (await DuckDBInstance.create(":memory:")).connect();
const noFiles = e => /No files found that match the pattern "([^"]*)"/.exec(e.message);
try {
  const rows = (await con.runAndReadAll(sql)).getRowObjectsJson();
  for (const r of rows) console.log(JSON.stringify(r));
} catch (e) {
  const none = noFiles(e);
  if (!none) throw e;
  const lines = await explainNoFiles(none[1], cfgPath);
  // parqd published its first file between the query and the metrics
  // read: the query finds it now.
  let rows = null;
  if (lines.published) {
    try { rows = (await con.runAndReadAll(sql)).getRowObjectsJson(); } catch (e2) { if (!noFiles(e2)) throw e2; }
  }
  if (rows === null) {
    for (const line of lines) console.error(`query: ${line}`);
    process.exit(1);
  }
  for (const r of rows) console.log(JSON.stringify(r));
}
