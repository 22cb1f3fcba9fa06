// logs_cdecoder.mjs - the `c-decoder` check of the log interop test
// (logs.mjs): parqd's own test decoder (tests/support/variant_read.c, via
// tests/tools/variant_dump) reads every unshredded top-level Variant column
// and prints each row as canonical JSON, which must parse and equal the
// source value, numbers by exact value (logs_json.mjs compareJV; the
// canonical JSON carries values, not Variant types: DuckDB's
// variant_typeof and the raw decoders check those). variant_dump also
// validates every value with VREAD_CANONICAL, which refuses a decimal
// whose scale is not below its implied precision.
import { spawnSync } from 'node:child_process';
import { compareJV, parseJsonText, showJ } from './logs_json.mjs';

export function checkCDecoder(tool, files, exp, star) {
  const cols = exp.columns.filter(c => c.type.kind === 'variant' && !c.ingestTime);
  if (!cols.length) return { status: 'PASS', msg: 'no top-level Variant columns' };
  const stats = {};
  const notes = [];
  let values = 0;
  for (const col of cols) {
    const lines = [];
    let shredded = false;
    for (const f of files) {
      const r = spawnSync(tool, [f, col.name], { encoding: 'utf8', maxBuffer: 1 << 30 });
      if (r.status !== 0) {
        const msg = (r.stderr || '').trim() || `exit ${r.status} ${r.signal || ''}`;
        if (/is shredded/.test(msg)) { shredded = true; break; }
        return { status: 'FAIL', msg: `variant_dump ${col.name}: ${msg}` };
      }
      lines.push(...r.stdout.split('\n').slice(0, -1));
    }
    if (shredded) { notes.push(`${col.name} shredded: not read`); continue; }
    if (lines.length !== exp.kept.length) return { status: 'FAIL', msg: `${col.name}: ${lines.length} rows, expected ${exp.kept.length}` };
    for (let r = 0; r < lines.length; r++) {
      const want = exp.kept[r].cols[col.name];
      const where = `row ${r} (line ${exp.kept[r].lineno}) ${col.name}`;
      if (lines[r] === 'NULL') {
        if (want === undefined || (col.name === star && want instanceof Map && want.size === 0)) continue;
        return { status: 'FAIL', msg: `${where}: expected ${showJ(want)}, got NULL` };
      }
      if (want === undefined) return { status: 'FAIL', msg: `${where}: expected NULL, got ${lines[r].slice(0, 120)}` };
      let got;
      try { got = parseJsonText(lines[r]); } catch (e) { return { status: 'FAIL', msg: `${where}: not JSON (${e.message})` }; }
      const d = compareJV(want, got, '', { shred: col.type.shred, stats, col: col.name });
      if (d) return { status: 'FAIL', msg: `${where}${d.path === '/' ? '' : d.path}: expected ${d.exp}, got ${d.got}` };
      values++;
    }
  }
  const n = stats.numbers || 0;
  const lossy = stats.lossy ? `, ${n - stats.lossy} exact, ${stats.lossy} the nearest double by rule 4` : ', all exact';
  return { status: 'PASS', msg: [`${values} Variant values (${n} numbers${n ? lossy : ''})`, ...notes].join('; ') };
}
