// gen.mjs - NDJSON test input of a chosen size: line i is
// {"id":i,"tag":"<name>","r":"<base64 of --payload random bytes>"}, so
// records are unique and do not compress (a full disk fills for real).
//
//   node gen.mjs --lines N --payload BYTES --seed S --tag NAME --out FILE
import fs from 'node:fs';
import { prng, seedFrom, parseArgs } from './prng.mjs';

const o = parseArgs(process.argv.slice(2), { payload: '700', tag: 'gen' });
const rand = prng(seedFrom(o.seed));
const fd = fs.openSync(o.out, 'w');
const n = Number(o.lines), payload = Number(o.payload);
let bytes = 0, buf = [];
for (let i = 1; i <= n; i++) {
  buf.push(JSON.stringify({ id: i, tag: o.tag, r: rand.bytes(payload).toString('base64') }));
  if (buf.length === 1000 || i === n) {
    const s = buf.join('\n') + '\n';
    fs.writeSync(fd, s);
    bytes += Buffer.byteLength(s);
    buf = [];
  }
}
fs.closeSync(fd);
console.log(`gen: ${n} lines, ${bytes} bytes -> ${o.out}`);
