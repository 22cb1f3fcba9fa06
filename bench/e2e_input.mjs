// e2e_input.mjs - builds the end-to-end benchmark input: the real log
// samples repeated until TARGET bytes, each repetition with its digits
// rewritten (seeded), so ids, counters and timestamps vary like a real
// stream instead of repeating verbatim (verbatim repeats flatter every
// dictionary encoder and say nothing about real logs).
// usage: node e2e_input.mjs LOGDIR OUT [TARGET_MB]
import fs from 'fs';
import path from 'path';

const [logdir, out, targetMb = '200'] = process.argv.slice(2);
const target = Number(targetMb) * 1024 * 1024;
const files = [];
for (const d of fs.readdirSync(logdir, { withFileTypes: true }))
  if (d.isDirectory())
    for (const f of fs.readdirSync(path.join(logdir, d.name)))
      if (f.endsWith('.json')) files.push(path.join(logdir, d.name, f));
files.sort();
const lines = files.flatMap(f => fs.readFileSync(f, 'utf8').split('\n').filter(l => l.length));

let seed = 42;
const rand = () => (seed = (seed * 1103515245 + 12345) >>> 0) / 4294967296;
// Rewrites runs of 4+ digits (ids, counters, ports, hashes' digits) and
// keeps short numbers (levels, codes) so low-cardinality fields stay so.
const vary = line => line.replace(/\d{4,}/g, m => {
  let s = '';
  for (let i = 0; i < m.length; i++) s += i === 0 ? m[0] : String(Math.floor(rand() * 10));
  return s;
});

const fd = fs.openSync(out, 'w');
let written = 0, rep = 0;
while (written < target) {
  const chunk = (rep === 0 ? lines : lines.map(vary)).join('\n') + '\n';
  fs.writeSync(fd, chunk);
  written += Buffer.byteLength(chunk);
  rep++;
}
fs.closeSync(fd);
console.log(`${out}: ${(written / 1048576).toFixed(1)} MiB, ${rep} repetitions of ${lines.length} lines`);
